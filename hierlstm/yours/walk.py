"""Every layer of a user's model in graph order, inside TimeDistributed, Bidirectional (both
directions), RNN's cell and nested models: its symbolic shape (Keras's, None where any size goes)
and its concrete one at the user's sizes (Keras's shape inference run again with the sizes filled
in: nothing allocated, nothing run), its parameters and FLOPs where the formula is known
(`hierlstm.model.cost`), and whether it runs under a mask."""

from __future__ import annotations

import dataclasses
import math

import keras

from hierlstm.model import cost
from hierlstm.yours.folded import FoldedTimeDistributed

DEFAULT_SIZES = {"batch": 2, "time": 8}
OTHER_SIZE = 4
# Layers that only move data or work elementwise: 0 FLOPs by the cost model's convention
# (elementwise work is left out).
FREE = set(
    """InputLayer Reshape Permute Flatten RepeatVector Dropout SpatialDropout1D SpatialDropout2D
    SpatialDropout3D GaussianNoise GaussianDropout AlphaDropout Masking Activation ReLU LeakyReLU
    ELU PReLU Softmax Add Subtract Multiply Average Maximum Minimum Concatenate Identity
    Cropping1D Cropping2D Cropping3D ZeroPadding1D ZeroPadding2D ZeroPadding3D UpSampling1D
    UpSampling2D UpSampling3D BatchNormalization LayerNormalization Embedding FoldTime
    UnfoldTime""".split()
)
POOLING = ("MaxPooling", "AveragePooling")
RECURRENT = (keras.layers.LSTM, keras.layers.GRU, keras.layers.SimpleRNN)


@dataclasses.dataclass(frozen=True)
class LayerStep:
    """One layer (or a wrapper's child, a cell) of the model, at the user's sizes."""

    path: str  # "bidirectional/forward_gru": the layer names from the model down
    layer: str  # Keras class name
    symbolic_shape: tuple
    concrete_shape: tuple
    params: int
    flops: int | None  # over all calls in one forward pass; None: no formula for this layer
    depth: int = 0
    calls: int = 1  # calls per forward pass (a TimeDistributed child: time)
    masked: bool = False  # a mask reaches this layer's call
    input_shape: tuple = ()  # concrete, of its first input

    def to_dict(self) -> dict:
        return {
            **dataclasses.asdict(self),
            "symbolic_shape": list(self.symbolic_shape),
            "concrete_shape": list(self.concrete_shape),
            "input_shape": list(self.input_shape),
        }


@dataclasses.dataclass(frozen=True)
class FreeDimension:
    """A None dimension of a model input the user gives a size for."""

    name: str  # "batch", "time", "axis2", or "<input>.time" with several inputs
    input_index: int
    axis: int


def free_dimensions(model: keras.Model) -> list[FreeDimension]:
    """Every None dimension of the model's inputs, named: axis 0 "batch" (shared by all inputs);
    an input's only other None axis "time" (any axis: the question's is the third), else
    "axis<N>"; with several inputs, the non-batch names prefixed by the input's name."""
    found = []
    several = len(model.inputs) > 1
    for index, tensor in enumerate(model.inputs):
        free = [axis for axis, size in enumerate(tensor.shape) if size is None and axis]
        for axis, size in enumerate(tensor.shape):
            if size is not None:
                continue
            name = "batch" if axis == 0 else ("time" if len(free) == 1 else f"axis{axis}")
            if several and axis:
                name = f"{tensor.name}.{name}"
            found.append(FreeDimension(name, index, axis))
    return found


def default_size(name: str) -> int:
    return DEFAULT_SIZES.get(name.rsplit(".", 1)[-1], OTHER_SIZE)


def input_shapes(model: keras.Model, sizes: dict[str, int]) -> list[tuple]:
    """Each model input's concrete shape: its None dimensions from `sizes` (by
    `free_dimensions` name; a missing one takes `default_size`)."""
    shapes = [list(tensor.shape) for tensor in model.inputs]
    for dimension in free_dimensions(model):
        size = sizes.get(dimension.name, default_size(dimension.name))
        shapes[dimension.input_index][dimension.axis] = int(size)
    return [tuple(shape) for shape in shapes]


def _graph(model: keras.Model):
    """The Functional graph of a model: a Sequential's own, built from its Input."""
    return getattr(model, "_functional", None) or model


def _spec(shape, dtype="float32"):
    return keras.KerasTensor(tuple(shape), dtype=dtype)


def _first(structure):
    return keras.tree.flatten(structure)[0]


def trace_layers(model: keras.Model, sizes: dict[str, int]) -> list[LayerStep]:
    """One `LayerStep` per layer in graph order, children after their parent."""
    specs = [
        _spec(shape, tensor.dtype)
        for shape, tensor in zip(input_shapes(model, sizes), model.inputs, strict=True)
    ]
    return _walk(model, specs, prefix="", depth=0)


def _walk(model: keras.Model, specs: list, prefix: str, depth: int) -> list[LayerStep]:
    """The layers of a (nested) model run on concrete `specs`, as Keras's `_run_through_graph`
    walks them (deepest first), each node's output shape inferred again."""
    graph = _graph(model)
    concrete = {id(tensor): spec for tensor, spec in zip(graph.inputs, specs, strict=True)}
    steps = []
    for depth_key in sorted(graph._nodes_by_depth, reverse=True):
        for node in graph._nodes_by_depth[depth_key]:
            layer = node.operation
            if node.is_input or not isinstance(layer, keras.layers.Layer):
                continue
            args, kwargs = node.arguments.fill_in(concrete)
            masked = kwargs.pop("mask", None) is not None or any(
                getattr(tensor, "_keras_mask", None) is not None for tensor in node.input_tensors
            )
            outputs = layer.compute_output_spec(*args, **kwargs)
            for tensor, spec in zip(node.outputs, keras.tree.flatten(outputs), strict=True):
                concrete[id(tensor)] = spec
            inputs = [x for x in keras.tree.flatten(args) if isinstance(x, keras.KerasTensor)]
            out_shape = tuple(_first(outputs).shape)
            steps.extend(_layer_steps(layer, inputs, out_shape, node, prefix, depth, masked))
    return steps


def _layer_steps(layer, inputs, out_shape, node, prefix, depth, masked) -> list[LayerStep]:
    symbolic = tuple(_first(node.outputs).shape)
    in_shape = tuple(inputs[0].shape) if inputs else ()
    symbolic_in = tuple(node.input_tensors[0].shape) if node.input_tensors else ()
    path = f"{prefix}{layer.name}"
    return _steps(layer, inputs, in_shape, symbolic_in, out_shape, symbolic, path, depth, masked)


def _child(layer, in_shape, symbolic_in, path, depth, calls=1, masked=False) -> list[LayerStep]:
    """A layer called inside a wrapper on `in_shape` (symbolically `symbolic_in`), and its own
    children."""
    spec = _spec(in_shape)
    out_shape = tuple(_first(layer.compute_output_spec(spec)).shape)
    symbolic = tuple(_first(layer.compute_output_spec(_spec(symbolic_in))).shape)
    inputs = [spec]
    return _steps(
        layer, inputs, tuple(in_shape), symbolic_in, out_shape, symbolic, path, depth, masked, calls
    )


def _steps(
    layer, inputs, in_shape, symbolic_in, out_shape, symbolic, path, depth, masked, calls=1
) -> list[LayerStep]:
    """`layer`'s step (its FLOPs over its `calls` per forward pass) and its children's."""
    children = _children(layer, inputs, symbolic_in, path, depth, masked)
    flops = layer_flops(layer, in_shape, out_shape, children)
    step = LayerStep(
        path=path,
        layer=type(layer).__name__,
        symbolic_shape=symbolic,
        concrete_shape=out_shape,
        params=layer.count_params() if layer.built else 0,
        flops=None if flops is None else flops * calls,
        depth=depth,
        calls=calls,
        masked=masked,
        input_shape=in_shape,
    )
    return [step, *children]


def _children(layer, inputs, symbolic_in, path, depth, masked) -> list[LayerStep]:
    """What `summary()` hides: a wrapper's layer(s), an RNN's cell, a nested model's layers."""
    in_shape = tuple(inputs[0].shape) if inputs else ()
    if isinstance(layer, keras.Model):
        return _walk(layer, inputs, f"{path}/", depth + 1)
    if isinstance(layer, keras.layers.TimeDistributed):  # (B, T, ...) -> T calls on (B, ...)
        inner, symbolic = (in_shape[0], *in_shape[2:]), (symbolic_in[0], *symbolic_in[2:])
        child_path = f"{path}/{layer.layer.name}"
        return _child(layer.layer, inner, symbolic, child_path, depth + 1, in_shape[1])
    if isinstance(layer, FoldedTimeDistributed):  # (B, T, ...) -> one call on (B*T, ...)
        inner = (in_shape[0] * in_shape[1], *in_shape[2:])
        symbolic = (None, *symbolic_in[2:])
        return _child(layer.layer, inner, symbolic, f"{path}/{layer.layer.name}", depth + 1)
    if isinstance(layer, keras.layers.Bidirectional):
        return [
            step
            for child in (layer.forward_layer, layer.backward_layer)
            for step in _child(
                child, in_shape, symbolic_in, f"{path}/{child.name}", depth + 1, masked=masked
            )
        ]
    if isinstance(layer, keras.layers.RNN) and not isinstance(layer, RECURRENT):
        cell = layer.cell
        units = cell.output_size if isinstance(cell.output_size, int) else None
        step = LayerStep(
            path=f"{path}/{cell.name}",
            layer=type(cell).__name__,
            symbolic_shape=(None, units),
            concrete_shape=(in_shape[0], units),
            params=cell.count_params() if cell.built else 0,
            flops=0 if _units_and_gates(layer) else None,  # a Keras cell's: counted on the RNN
            depth=depth + 1,
            calls=in_shape[1] if len(in_shape) > 1 else 1,
            input_shape=(in_shape[0], *in_shape[2:]),
        )
        # A custom cell's own recurrent layers (the question's inner LSTM), once per time step.
        inner = [sub for sub in getattr(cell, "_layers", []) if isinstance(sub, keras.layers.RNN)]
        step_in, symbolic_step = (in_shape[0], *in_shape[2:]), (symbolic_in[0], *symbolic_in[2:])
        calls = step.calls
        return [step] + [
            found
            for sub in inner
            for found in _child(sub, step_in, symbolic_step, f"{step.path}/{sub.name}",
                                depth + 2, calls)
        ]  # fmt: skip
    return []


def _units_and_gates(layer) -> tuple[int, int] | None:
    """(units, gates) of a recurrent layer, or of an RNN over a Keras cell; None otherwise."""
    for name, gates in cost.GATES.items():
        if isinstance(layer, getattr(keras.layers, name)):
            return layer.units, gates
        if isinstance(layer, keras.layers.RNN) and type(layer.cell) is getattr(
            keras.layers, f"{name}Cell"
        ):
            return layer.cell.units, gates
    return None


def layer_flops(layer, in_shape: tuple, out_shape: tuple, children: list[LayerStep]) -> int | None:
    """FLOPs of one forward call at these concrete shapes (`hierlstm.model.cost`); None where no
    formula is known (a custom layer, attention, ...)."""
    name = type(layer).__name__
    wrappers = (keras.Model, keras.layers.Bidirectional, keras.layers.TimeDistributed)
    if isinstance(layer, wrappers + (FoldedTimeDistributed,)):
        direct = [c for c in children if c.depth == children[0].depth] if children else []
        if any(child.flops is None for child in direct):
            return None
        return sum(child.flops for child in direct)
    if name in FREE:
        return 0
    elements = math.prod(out_shape)
    if isinstance(layer, keras.layers.Dense):
        return cost.dense_flops(in_shape[-1], layer.units, elements // layer.units)
    if isinstance(layer, keras.layers.Conv1D | keras.layers.Conv2D | keras.layers.Conv3D) and (
        name in ("Conv1D", "Conv2D", "Conv3D")
    ):
        channels = in_shape[-1] if layer.data_format == "channels_last" else in_shape[1]
        window = math.prod(layer.kernel_size)
        return cost.window_flops(window, channels // layer.groups, elements)
    if name.startswith(POOLING):
        return cost.pooling_flops(math.prod(layer.pool_size), elements)
    if name.startswith(("GlobalMaxPooling", "GlobalAveragePooling")):
        return math.prod(in_shape) - elements
    recurrent = _units_and_gates(layer)
    if recurrent and len(in_shape) == 3:
        units, gates = recurrent
        return cost.recurrent_flops(gates, in_shape[-1], units, in_shape[1], in_shape[0])
    return None

"""One walker for any Keras model: every layer in graph order, the model's inputs first, then
inside TimeDistributed, Bidirectional (both directions), an RNN's cell (a custom cell's own layers
too), nested models and this project's own layers (the vectorized summariser's LSTM, the fused
layer's stages). Each step has its symbolic shape (Keras's, None where any size goes), its concrete
one at the given input shapes (Keras's shape inference run again with the sizes filled in: nothing
allocated; the fused stages alone run, on zeros), its parameters, its FLOPs where the formula is
known (`hierlstm.model.cost`) and whether it runs under a mask. The Shape trace (`trace`) is this
walk of a variant plus its notes; "Your model" (`hierlstm.yours`) is this walk of a user's file."""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Sequence

import keras

from hierlstm.model import cost

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
CELLS = tuple(getattr(keras.layers, f"{name}Cell") for name in cost.GATES)


@dataclasses.dataclass(frozen=True)
class LayerStep:
    """One layer (or a wrapper's child, a cell, a fused stage) of a model, at concrete sizes."""

    path: str  # "bidirectional/forward_gru": the layer names from the model down
    layer: str  # Keras class name ("ops" for a fused stage)
    symbolic_shape: tuple  # its output's, None where any size goes
    concrete_shape: tuple
    params: int
    flops: int | None  # over all calls in one forward pass; None: no formula for this layer
    depth: int = 0  # 0: a layer of the model; 1: inside a wrapper, cell or nested model; ...
    calls: int = 1  # calls per forward pass (a TimeDistributed child: time)
    masked: bool = False  # a mask reaches this layer's call
    input_shape: tuple = ()  # concrete, of its first input
    dtype: str = "float32"  # of its output

    @property
    def output_bytes(self) -> int:
        """One call's output, in bytes."""
        return math.prod(self.concrete_shape) * _itemsize(self.dtype)

    def to_dict(self) -> dict:
        return {
            **dataclasses.asdict(self),
            "symbolic_shape": list(self.symbolic_shape),
            "concrete_shape": list(self.concrete_shape),
            "input_shape": list(self.input_shape),
            "output_bytes": self.output_bytes,
        }


def _itemsize(dtype: str) -> int:
    digits = "".join(character for character in dtype if character.isdigit())
    return int(digits) // 8 if digits else 1  # "bool": 1


def _spec(shape, dtype="float32"):
    return keras.KerasTensor(tuple(shape), dtype=dtype)


def _first(structure):
    return keras.tree.flatten(structure)[0]


def walk(model: keras.Model, input_shapes: Sequence[tuple]) -> list[LayerStep]:
    """One `LayerStep` per input, then per layer in graph order, children after their parent;
    `input_shapes`: each model input's concrete shape (no None)."""
    specs = [
        _spec(shape, tensor.dtype) for shape, tensor in zip(input_shapes, model.inputs, strict=True)
    ]
    inputs = [
        LayerStep(
            path=tensor._keras_history.operation.name,
            layer="InputLayer",
            symbolic_shape=tuple(tensor.shape),
            concrete_shape=tuple(spec.shape),
            params=0,
            flops=0,
            dtype=spec.dtype,
        )
        for tensor, spec in zip(model.inputs, specs, strict=True)
    ]
    return inputs + _walk(model, specs, prefix="", depth=0, calls=1)


def _graph(model: keras.Model):
    """The Functional graph of a model: a Sequential's own, built from its Input."""
    return getattr(model, "_functional", None) or model


def _walk(model: keras.Model, specs: list, prefix: str, depth: int, calls: int) -> list[LayerStep]:
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
            call = _Call(
                inputs=[x for x in keras.tree.flatten(args) if isinstance(x, keras.KerasTensor)],
                symbolic_in=tuple(node.input_tensors[0].shape) if node.input_tensors else (),
                output=_first(outputs),
                symbolic=tuple(_first(node.outputs).shape),
                path=f"{prefix}{layer.name}",
                depth=depth,
                calls=calls,
                masked=masked,
            )
            steps.extend(_steps(layer, call))
    return steps


@dataclasses.dataclass(frozen=True)
class _Call:
    """One layer's call as the walk found it: concrete inputs and output, symbolic shapes."""

    inputs: list  # concrete KerasTensors
    symbolic_in: tuple
    output: keras.KerasTensor
    symbolic: tuple
    path: str
    depth: int
    calls: int  # per forward pass
    masked: bool = False

    @property
    def in_shape(self) -> tuple:
        return tuple(self.inputs[0].shape) if self.inputs else ()

    def child(self, layer, in_shape, symbolic_in, calls: int = 1, masked: bool = False) -> _Call:
        """`layer` called inside this call's layer, `calls` times per call of it."""
        dtype = self.inputs[0].dtype if self.inputs else "float32"
        spec = _spec(in_shape, dtype)
        return _Call(
            inputs=[spec],
            symbolic_in=tuple(symbolic_in),
            output=_first(layer.compute_output_spec(spec)),
            symbolic=tuple(_first(layer.compute_output_spec(_spec(symbolic_in, dtype))).shape),
            path=f"{self.path}/{layer.name}",
            depth=self.depth + 1,
            calls=self.calls * calls,
            masked=masked,
        )


def _steps(layer, call: _Call) -> list[LayerStep]:
    """`layer`'s step and its children's: a layer with children costs what they cost, a leaf its
    formula's FLOPs per call times its calls."""
    children = _children(layer, call)
    flops = _sum_of_direct(children, call.depth) if children else _leaf_flops(layer, call)
    return [_step(layer, call, flops), *children]


def _step(layer, call: _Call, flops: int | None) -> LayerStep:
    return LayerStep(
        path=call.path,
        layer=type(layer).__name__,
        symbolic_shape=call.symbolic,
        concrete_shape=tuple(call.output.shape),
        params=layer.count_params() if layer.built else 0,
        flops=flops,
        depth=call.depth,
        calls=call.calls,
        masked=call.masked,
        input_shape=call.in_shape,
        dtype=call.output.dtype,
    )


def _sum_of_direct(children: list[LayerStep], depth: int) -> int | None:
    direct = [child.flops for child in children if child.depth == depth + 1]
    return None if None in direct else sum(direct)


def _leaf_flops(layer, call: _Call) -> int | None:
    per_call = layer_flops(layer, call.in_shape, tuple(call.output.shape))
    return None if per_call is None else per_call * call.calls


def _loaded(module: str, name: str):
    """Class `name` of `module` if that module was imported (a model holding one imported it),
    else None: the walk imports no TensorFlow for a model that has none of its layers."""
    return getattr(sys.modules.get(module), name, None)


def _children(layer, call: _Call) -> list[LayerStep]:
    """What `summary()` hides: a wrapper's layer(s), an RNN's cell, a nested model's layers, the
    summariser's LSTM and the fused layer's stages."""
    in_shape, symbolic_in = call.in_shape, call.symbolic_in
    summariser = _loaded("hierlstm.model.layers_tf", "VectorizedSummariser")
    fused = _loaded("hierlstm.model.fused", "FusedHierarchicalLSTM")
    if isinstance(layer, keras.Model):
        return _walk(layer, call.inputs, f"{call.path}/", call.depth + 1, call.calls)
    per_step = isinstance(layer, keras.layers.TimeDistributed)
    if per_step or (summariser and isinstance(layer, summariser)):  # T calls on (B, ...)
        child = layer.layer if per_step else layer.inner_lstm
        inner, symbolic = (in_shape[0], *in_shape[2:]), (symbolic_in[0], *symbolic_in[2:])
        return _steps(child, call.child(child, inner, symbolic, calls=in_shape[1]))
    if isinstance(layer, keras.layers.Wrapper) and getattr(layer, "folds_time", False):
        inner = (in_shape[0] * in_shape[1], *in_shape[2:])  # one call on (B*T, ...)
        return _steps(layer.layer, call.child(layer.layer, inner, (None, *symbolic_in[2:])))
    if isinstance(layer, keras.layers.Bidirectional):
        return [
            step
            for child in (layer.forward_layer, layer.backward_layer)
            for step in _steps(child, call.child(child, in_shape, symbolic_in, masked=call.masked))
        ]
    if fused and isinstance(layer, fused):
        return _fused_stages(layer, call)
    if isinstance(layer, keras.layers.RNN) and not isinstance(layer, RECURRENT):
        return _cell_steps(layer.cell, call)
    return []


def _cell_call(call: _Call, cell, in_shape: tuple, symbolic_in: tuple, calls: int) -> _Call:
    """`cell` called `calls` times per call of `call`'s layer, one step on (B, ...) -> (B, units)
    (a cell's call takes states, so its output is read from its size, not inferred)."""
    units = cell.output_size if isinstance(cell.output_size, int) else None
    return _Call(
        inputs=[_spec(in_shape, call.inputs[0].dtype)],
        symbolic_in=symbolic_in,
        output=_spec((in_shape[0], units), cell.compute_dtype),
        symbolic=(None, units),
        path=f"{call.path}/{cell.name}",
        depth=call.depth + 1,
        calls=call.calls * calls,
    )


def _cell_steps(cell, call: _Call) -> list[LayerStep]:
    """An RNN's cell, once per time step on (B, ...) of the RNN's (B, T, ...)."""
    in_shape, symbolic_in = call.in_shape, call.symbolic_in
    step_in, symbolic_step = (in_shape[0], *in_shape[2:]), (symbolic_in[0], *symbolic_in[2:])
    time = in_shape[1] if len(in_shape) > 1 else 1
    return _in_cell(cell, _cell_call(call, cell, step_in, symbolic_step, time))


def _in_cell(cell, call: _Call) -> list[LayerStep]:
    """A cell's step and, for a custom cell, its own recurrent layers (the nested cell's inner
    LSTM, on the step's input) and Keras cells (on (B, their kernel's input size)), once per
    call of the cell."""
    children = []
    if not isinstance(cell, CELLS):
        for sub in getattr(cell, "_layers", []):
            if isinstance(sub, keras.layers.RNN):
                children += _steps(sub, call.child(sub, call.in_shape, call.symbolic_in))
            elif isinstance(sub, CELLS) and sub.built:
                features = sub.kernel.shape[0]
                step_in = (call.in_shape[0], features)
                children += _in_cell(sub, _cell_call(call, sub, step_in, (None, features), 1))
    flops = _sum_of_direct(children, call.depth) if children else _leaf_flops(cell, call)
    return [_step(cell, call, flops), *children]


def _fused_stages(layer, call: _Call) -> list[LayerStep]:
    """The fused layer's three stages, each run on the real output of the one before (its
    while-loop's TensorArray hides the time length from shape inference, so these run)."""
    import tensorflow as tf  # the fused layer is TensorFlow's: a model holding one loaded it

    def traced(function, spec):  # output spec of `function` traced on `spec`, no execution
        return tf.function(function).get_concrete_function(spec).structured_outputs

    batch, height, time = call.in_shape[:3]
    pooled = layer.pooled_rows(tf.zeros(call.in_shape, call.inputs[0].dtype))  # (R, T, B, C)
    summaries = layer.inner_lstm(pooled)  # -> (T, B, inner)
    outputs = layer.outer_lstm(summaries)  # -> (T, B, outer)
    # Symbolic shapes: TensorFlow's shape inference over the same methods, batch and time None.
    any_size = tf.TensorSpec((None, height, None, 1), call.inputs[0].dtype)
    pooled_symbolic = traced(layer.pooled_rows, any_size)
    summaries_symbolic = traced(layer.inner_lstm, pooled_symbolic)
    outputs_symbolic = traced(layer.outer_lstm, summaries_symbolic)
    pooled_height, channels = pooled.shape[0], pooled.shape[3]
    conv = layer_flops(layer.conv, call.in_shape, (batch, height, time, layer.filters))
    stages = [
        (
            "pool",
            pooled,
            pooled_symbolic,
            conv + cost.pooling_flops(layer.pool_height, math.prod(pooled.shape)),
        ),
        (
            "inner_lstm",
            summaries,
            summaries_symbolic,
            cost.lstm_flops(channels, layer.inner_units, pooled_height, time * batch),
        ),
        (
            "outer_lstm",
            outputs,
            outputs_symbolic,
            cost.lstm_flops(layer.inner_units, layer.outer_units, time, batch),
        ),
    ]
    return [
        LayerStep(
            path=f"{call.path}/{name}",
            layer="ops",
            symbolic_shape=tuple(symbolic.shape.as_list()),
            concrete_shape=tuple(value.shape.as_list()),
            params=0,
            flops=flops * call.calls,
            depth=call.depth + 1,
            calls=call.calls,
            input_shape=call.in_shape,
            dtype=value.dtype.name,
        )
        for name, value, symbolic, flops in stages
    ]


def _units_and_gates(layer) -> tuple[int, int] | None:
    """(units, gates) of a recurrent layer, a Keras cell, or an RNN over a Keras cell; None
    otherwise."""
    for name, gates in cost.GATES.items():
        if isinstance(layer, (getattr(keras.layers, name), getattr(keras.layers, f"{name}Cell"))):
            return layer.units, gates
        if isinstance(layer, keras.layers.RNN) and type(layer.cell) is getattr(
            keras.layers, f"{name}Cell"
        ):
            return layer.cell.units, gates
    return None


def layer_flops(layer, in_shape: tuple, out_shape: tuple) -> int | None:
    """FLOPs of one forward call of a layer without children at these concrete shapes
    (`hierlstm.model.cost`); None where no formula is known (a custom layer, attention, ...)."""
    name = type(layer).__name__
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
    if recurrent and len(in_shape) in (2, 3):  # a cell's one step on (B, features): 1 step
        units, gates = recurrent
        steps = in_shape[1] if len(in_shape) == 3 else 1
        return cost.recurrent_flops(gates, in_shape[-1], units, steps, in_shape[0])
    return None

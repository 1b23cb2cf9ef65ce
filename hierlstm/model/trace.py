"""Shape tracing: every step a tensor takes through a variant, wrappers and cells included, with
symbolic shapes (Keras's inference, None where any size goes) and concrete ones (TensorFlow's
inference over the ops that run, as cheap at batch 4096 as at 2), parameters, FLOPs, bytes and a
note key (`trace_notes`). Under a strategy the concrete numbers are one replica's."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import keras
import numpy as np
import tensorflow as tf

from hierlstm.config import RunConfig, SettingError, per_replica_batch
from hierlstm.model import cost, trace_notes
from hierlstm.model.builders import build_model
from hierlstm.model.fused import FusedHierarchicalLSTM
from hierlstm.model.layers import NestedCell, VectorizedSummariser
from hierlstm.model.shapes import AXES, Shape
from hierlstm.model.trace_notes import step_note
from hierlstm.registry import VARIANTS


@dataclasses.dataclass(frozen=True)
class TraceStep:
    path: str  # e.g. "summarise/inner_lstm"
    layer: str  # Keras class name
    symbolic_shape: Shape
    concrete_shape: Shape
    axes: tuple[str, ...]  # one name per dimension
    params: int
    flops: int  # over all calls of this step in one forward pass
    output_bytes: int  # one call's output
    note_key: str  # a `note.*` message of hierlstm.i18n
    note_values: dict = dataclasses.field(hash=False)  # the numbers that message takes
    depth: int = 0  # 0: a layer of the model; 1: inside a wrapper or cell
    calls: int = 1  # calls per forward pass (TimeDistributed's child: time_steps)
    replicas: int = 1  # replicas running this step at once, each with the shapes above

    @property
    def note(self) -> str:
        """The note in English (the CLI's text and the JSON's `note`)."""
        return step_note(self)

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "layer": self.layer,
            "symbolic_shape": list(self.symbolic_shape),
            "concrete_shape": list(self.concrete_shape),
            "axes": list(self.axes),
            "params": self.params,
            "flops": self.flops,
            "output_bytes": self.output_bytes,
            "note": self.note,
            "note_key": self.note_key,
            "note_values": dict(self.note_values),
            "depth": self.depth,
            "calls": self.calls,
            "replicas": self.replicas,
        }


STEP_AXES = ("batch", "units")  # a per-time-step call inside a wrapper or cell


def _flops(name: str, config: RunConfig) -> int:
    b, t = config.batch_size, config.time_steps
    if name == "conv":
        return cost.conv_flops(config, b, t)
    if name == "pool":
        return cost.pool_flops(config, b, t)
    if name in ("inner_lstm", "inner_rnn", "summarise"):
        return cost.inner_lstm_flops(config, b, t)
    if name == "outer_lstm":
        return cost.outer_lstm_flops(config, b, t)
    if name == "nested_rnn":
        return cost.inner_lstm_flops(config, b, t) + cost.outer_lstm_flops(config, b, t)
    if name == "fused_lstm":
        return cost.model_flops(config)
    return 0


def _traced(function: Callable, *specs) -> list[tf.TensorSpec]:
    """Output specs of `function` traced on `specs`: the real ops, no execution."""
    outputs = tf.function(function).get_concrete_function(*specs).structured_outputs
    return [tf.TensorSpec(o.shape, o.dtype) for o in tf.nest.flatten(outputs)]


def _nbytes(spec: tf.TensorSpec) -> int:
    return int(np.prod(spec.shape.as_list(), dtype=np.int64)) * spec.dtype.size


def _layer_inputs(model: keras.Model, layer) -> list:
    """Indices (into model.layers) of the layers feeding `layer`."""
    node = layer._inbound_nodes[0]
    return [model.layers.index(t._keras_history.operation) for t in node.input_tensors]


def trace_shapes(
    config: RunConfig, model: keras.Model | None = None, replicas: int | None = None
) -> list[TraceStep]:
    """One `TraceStep` per layer of `config.variant`'s model, children after their parent. Under a
    strategy the shapes are one replica's and every step carries `replicas` (`config.devices`'
    count, else the caller's). SettingError if the batch does not split evenly."""
    replicas = replicas or _named_replicas(config)
    if config.strategy != "none":
        global_batch = config.batch_size
        config = config.replace(
            strategy="none", devices="", batch_size=per_replica_batch(global_batch, replicas)
        )
    steps = _model_steps(config, model or build_model(config))
    if replicas == 1:
        return steps
    key, values = trace_notes.replicas_note(config, global_batch, replicas)
    steps[0] = dataclasses.replace(steps[0], note_key=key, note_values=values)
    return [dataclasses.replace(step, replicas=replicas) for step in steps]


def _named_replicas(config: RunConfig) -> int:
    if config.strategy == "none":
        return 1
    if not config.device_list:
        raise SettingError(
            f"tracing strategy {config.strategy} without named devices needs the number of "
            "replicas (hierlstm.distributed.distribute.planned_replicas)."
        )
    return len(config.device_list)


def _model_steps(config: RunConfig, model: keras.Model) -> list[TraceStep]:
    layers = model.layers[1:]  # after the InputLayer
    input_spec = tf.TensorSpec((config.batch_size, config.height, config.time_steps, 1), tf.float32)
    probe = keras.Model(model.input, [layer.output for layer in layers])
    specs = [input_spec, *_traced(lambda x: probe(x, training=False), input_spec)]
    steps = [_step(config, "input", "InputLayer", model.inputs[0].shape, input_spec, 0, 0)]
    for index, layer in enumerate(layers, start=1):
        steps.append(
            _step(
                config,
                layer.name,
                type(layer).__name__,
                layer.output.shape,
                specs[index],
                layer.count_params(),
                _flops(layer.name, config),
            )
        )
        parent_inputs = [specs[i] for i in _layer_inputs(model, layer)]
        steps.extend(_children(config, layer, parent_inputs))
    return steps


def _step(config, path, layer, symbolic, spec, params, flops, depth=0, calls=1, axes=None):
    concrete = tuple(spec.shape.as_list())
    note_key, note_values = trace_notes.note(config, path)
    return TraceStep(
        path=path,
        layer=layer,
        symbolic_shape=tuple(symbolic),
        concrete_shape=concrete,
        axes=axes or AXES.get(path.split("/")[-1], STEP_AXES),
        params=int(params),
        flops=int(flops),
        output_bytes=_nbytes(spec),
        note_key=note_key,
        note_values=note_values,
        depth=depth,
        calls=calls,
    )


def _children(config: RunConfig, layer, parent_inputs) -> list[TraceStep]:
    """What Keras `summary()` hides: the layer or cell called inside a wrapper, per call."""
    b, t, rows = config.batch_size, config.time_steps, config.rows
    (parent_input, *_) = parent_inputs  # (B, T, R, C) for every wrapper below
    inner_flops = cost.inner_lstm_flops(config, b, t)
    if type(layer) in (keras.layers.TimeDistributed, VectorizedSummariser):  # one LSTM per step
        child = layer.layer if isinstance(layer, keras.layers.TimeDistributed) else layer.inner_lstm
        spec = _traced(lambda x: child(x[:, 0]), parent_input)[0]  # (B, R, C) -> (B, inner)
        symbolic = child.compute_output_shape((None, rows, config.filters))
        return [
            _step(
                config,
                f"{layer.name}/{child.name}",
                type(child).__name__,
                symbolic,
                spec,
                child.count_params(),
                inner_flops,
                depth=1,
                calls=t,
                axes=STEP_AXES,
            )
        ]
    if isinstance(layer, FusedHierarchicalLSTM):
        return _fused_children(config, layer, parent_input)
    if isinstance(layer, keras.layers.RNN) and isinstance(layer.cell, NestedCell):
        return _nested_children(config, layer, parent_input)
    if type(layer) is keras.layers.RNN and isinstance(layer.cell, keras.layers.LSTMCell):
        cell = layer.cell
        spec = _traced(lambda x: cell(x[:, 0], cell.get_initial_state(b * t))[0], parent_input)[0]
        return [
            _step(
                config,
                f"{layer.name}/{cell.name}",
                type(cell).__name__,
                (None, cell.units),
                spec,
                cell.count_params(),
                inner_flops,
                depth=1,
                calls=rows,
                axes=("batch*time", "units"),
            )
        ]
    return []


def _fused_children(config, layer, parent_input) -> list[TraceStep]:
    """The fused layer's three stages, each run on the real output of the one before (its
    while-loop's TensorArray hides the time length from shape inference, so these run)."""
    b, t = config.batch_size, config.time_steps
    inputs = tf.zeros(parent_input.shape, parent_input.dtype)  # (B, H, T, 1)
    pooled_value = layer.pooled_rows(inputs)  # -> (R, T, B, C)
    summaries_value = layer.inner_lstm(pooled_value)  # -> (T, B, inner)
    outputs_value = layer.outer_lstm(summaries_value)  # -> (T, B, outer)
    pooled, summaries, outputs = (
        tf.TensorSpec(value.shape, value.dtype)
        for value in (pooled_value, summaries_value, outputs_value)
    )
    # Symbolic shapes: TensorFlow's shape inference over the same methods, batch and time None.
    any_size = tf.TensorSpec((None, *parent_input.shape[1:2], None, 1), parent_input.dtype)
    (pooled_symbolic,) = _traced(layer.pooled_rows, any_size)
    (summaries_symbolic,) = _traced(layer.inner_lstm, pooled_symbolic)
    (outputs_symbolic,) = _traced(layer.outer_lstm, summaries_symbolic)
    symbolic = {
        "pooled_rows": pooled_symbolic.shape.as_list(),
        "inner_lstm": summaries_symbolic.shape.as_list(),
        "outer_lstm": outputs_symbolic.shape.as_list(),
    }
    stages = [
        (
            "pooled_rows",
            pooled,
            ("height", "time", "batch", "channels"),
            cost.conv_flops(config, b, t) + cost.pool_flops(config, b, t),
        ),
        (
            "inner_lstm",
            summaries,
            ("time", "batch", "units"),
            cost.inner_lstm_flops(config, b, t),
        ),
        (
            "outer_lstm",
            outputs,
            ("time", "batch", "units"),
            cost.outer_lstm_flops(config, b, t),
        ),
    ]
    return [
        _step(
            config,
            f"{layer.name}/{name}",
            "ops",
            symbolic[name],
            spec,
            0,
            flops,
            depth=1,
            axes=axes,
        )
        for name, spec, axes, flops in stages
    ]


def _nested_children(config, layer, parent_input) -> list[TraceStep]:
    b, t, rows = config.batch_size, config.time_steps, config.rows
    cell = layer.cell

    def inner(x):  # (B, T, R, C) -> one outer step's (B, R, C) -> (B, inner)
        return cell.inner_lstm(x[:, 0])

    def outer(x):  # (B, inner) + states [(B, outer), (B, outer)] -> (B, outer)
        summary = cell.inner_lstm(x[:, 0])
        return cell.outer_cell(summary, cell.outer_cell.get_initial_state(b))[0]

    inner_spec = _traced(inner, parent_input)[0]
    outer_spec = _traced(outer, parent_input)[0]
    return [
        _step(
            config,
            f"{layer.name}/{cell.name}/inner_lstm",
            "RNN(LSTMCell)",
            cell.inner_lstm.compute_output_shape((None, rows, config.filters)),
            inner_spec,
            cell.inner_lstm.count_params(),
            cost.inner_lstm_flops(config, b, t),
            depth=1,
            calls=t,
            axes=STEP_AXES,
        ),
        _step(
            config,
            f"{layer.name}/{cell.name}/outer_cell",
            "LSTMCell",
            (None, cell.outer_cell.units),
            outer_spec,
            cell.outer_cell.count_params(),
            cost.outer_lstm_flops(config, b, t),
            depth=1,
            calls=t,
            axes=STEP_AXES,
        ),
    ]


def trace_report(
    config: RunConfig, model: keras.Model | None = None, replicas: int | None = None
) -> dict:
    """The JSON form: config, replicas, layers, and totals over the depth-0 layers."""
    steps = trace_shapes(config, model, replicas)
    top = [step for step in steps if step.depth == 0]
    return {
        "config": config.to_dict(),
        "replicas": steps[0].replicas,
        "per_replica_batch": steps[0].concrete_shape[0],
        "layers": [step.to_dict() for step in steps],
        "total_params": sum(step.params for step in top),
        "total_flops": sum(step.flops for step in top),
        "dependent_steps": VARIANTS[config.variant].chain(config.rows, config.time_steps),
    }

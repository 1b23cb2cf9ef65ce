"""The answer's advice applied where it is mechanical: `keras.models.clone_model` with a
`clone_function` turns `RNN(LSTMCell)` / `RNN(GRUCell)` into `LSTM` / `GRU` (the same arguments,
so the same function, now eligible for cuDNN) and `TimeDistributed` over an LSTM, a GRU or a
layer that treats each row alone (Dense, a convolution, ...) into `FoldedTimeDistributed` (one call
over batch x time, which also escapes Keras 3's unknown-length path); the original's weights are
copied over.
`check` compares outputs and gradients at the user's sizes; `bench` times both, forward and a
training step, in interleaved rounds (`hierlstm.timing.rounds.timer_rounds`)."""

from __future__ import annotations

import dataclasses

import keras
import numpy as np
import tensorflow as tf

from hierlstm.records import Stats
from hierlstm.timing.calls import timed_call
from hierlstm.timing.rounds import timer_rounds
from hierlstm.yours.folded import FoldedTimeDistributed
from hierlstm.yours.verify import sample_inputs

RECURRENT = (keras.layers.LSTM, keras.layers.GRU)
# Layers that compute each row of a batch alone, so one call over batch x time folded is the same
# function as TimeDistributed's call per time step (BatchNormalization is not: its statistics
# would span every time step). `check` confirms outputs and gradients either way.
ROW_BY_ROW = (
    keras.layers.Dense,
    keras.layers.EinsumDense,
    keras.layers.Conv1D,
    keras.layers.Conv2D,
    keras.layers.Conv3D,
    keras.layers.MaxPooling1D,
    keras.layers.MaxPooling2D,
    keras.layers.AveragePooling1D,
    keras.layers.AveragePooling2D,
    keras.layers.GlobalAveragePooling1D,
    keras.layers.GlobalMaxPooling1D,
    keras.layers.Flatten,
    keras.layers.Activation,
    keras.layers.Embedding,
    keras.layers.LayerNormalization,
)
_CELL_LAYER = {keras.layers.LSTMCell: keras.layers.LSTM, keras.layers.GRUCell: keras.layers.GRU}
# An RNN's own arguments that its LSTM or GRU takes too.
_RNN_ARGUMENTS = ("return_sequences", "return_state", "go_backwards", "stateful", "unroll")
# A cell's config entries that are not constructor arguments of the layer.
_CELL_ONLY = ("name", "trainable", "dtype", "seed")
FLOAT32_TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


@dataclasses.dataclass(frozen=True)
class Change:
    """One layer rewritten: its path, what it was and what it becomes."""

    path: str
    before: str
    after: str


def _as_layer(rnn: keras.layers.RNN) -> keras.layers.Layer | None:
    """An `RNN(LSTMCell)` or `RNN(GRUCell)` as the `LSTM` or `GRU` of the same arguments; None
    for any other layer."""
    target = _CELL_LAYER.get(type(rnn.cell)) if type(rnn) is keras.layers.RNN else None
    if target is None:
        return None
    config = {k: v for k, v in rnn.cell.get_config().items() if k not in _CELL_ONLY}
    config.update({name: getattr(rnn, name) for name in _RNN_ARGUMENTS})
    return target(**config, name=rnn.name)


def _rewritten(layer, changes: list[Change], path: str):
    """`layer` rewritten, or a fresh copy of it from its config (clone_model's default)."""
    if replaced := _as_layer(layer):
        changes.append(Change(path, f"RNN({type(layer.cell).__name__})", type(replaced).__name__))
        return replaced
    if isinstance(layer, keras.layers.TimeDistributed):
        inner = _as_layer(layer.layer) or layer.layer
        if isinstance(inner, RECURRENT + ROW_BY_ROW):
            before = f"TimeDistributed({_label(layer.layer)})"
            changes.append(Change(path, before, f"FoldedTimeDistributed({type(inner).__name__})"))
            inner = inner.__class__.from_config(inner.get_config())
            return FoldedTimeDistributed(inner, name=layer.name)
    if isinstance(layer, keras.layers.Bidirectional) and _as_layer(layer.forward_layer):
        forward = _as_layer(layer.forward_layer)
        changes.append(Change(path, f"Bidirectional({_label(layer.forward_layer)})",
                              f"Bidirectional({type(forward).__name__})"))  # fmt: skip
        backward = _as_layer(layer.backward_layer)
        return keras.layers.Bidirectional(
            forward, merge_mode=layer.merge_mode, backward_layer=backward, name=layer.name
        )
    return layer.__class__.from_config(layer.get_config())


def _label(layer) -> str:
    if type(layer) is keras.layers.RNN:
        return f"RNN({type(layer.cell).__name__})"
    return type(layer).__name__


def rewrite(model: keras.Model) -> tuple[keras.Model | None, list[Change]]:
    """(the rewritten model with the original's weights, the changes); (None, []) when nothing
    applies. Nested models are rewritten too."""
    changes: list[Change] = []
    rewritten = keras.models.clone_model(
        model,
        clone_function=lambda layer: _rewritten(layer, changes, _path_of(model, layer)),
        recursive=True,
    )
    if not changes:
        return None, []
    rewritten.set_weights(model.get_weights())
    return rewritten, changes


def _path_of(model, layer) -> str:
    """`layer`'s path in `model` (nested models' names before it), as the trace names it."""
    for child in getattr(model, "layers", []):
        if child is layer:
            return layer.name
        if isinstance(child, keras.Model):
            inner = _path_of(child, layer)
            if inner:
                return f"{child.name}/{inner}"
    return ""


@dataclasses.dataclass(frozen=True)
class Check:
    """Outputs and gradients of the rewrite against the original's on the same inputs."""

    output_diff: float  # largest absolute difference
    gradient_diff: float  # largest absolute difference over every weight's gradient
    outputs_match: bool
    gradients_match: bool

    @property
    def matches(self) -> bool:
        return self.outputs_match and self.gradients_match

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "matches": self.matches}


def _call(model, inputs, training=False):
    return model(inputs[0] if len(inputs) == 1 else list(inputs), training=training)


def _loss(outputs, projections):
    """A scalar that reads every output element: a fixed random projection of each."""
    flat = keras.tree.flatten(outputs)
    return sum(
        tf.reduce_sum(tf.cast(o, tf.float32) * p) for o, p in zip(flat, projections, strict=True)
    )


def check(original: keras.Model, rewritten: keras.Model, shapes: list[tuple]) -> Check:
    """Both models on the same inputs at `shapes`: outputs, and the gradients of a scalar that
    reads every output with respect to every weight (in the same order), within float32's
    tolerance (`FLOAT32_TOLERANCE`)."""
    inputs = [tf.constant(x) for x in sample_inputs(original, shapes)]
    rng = np.random.default_rng(1)
    results = []
    for model in (original, rewritten):
        with tf.GradientTape() as tape:
            outputs = _call(model, inputs)
            flat = keras.tree.flatten(outputs)
            if not results:
                projections = [rng.standard_normal(o.shape).astype("float32") for o in flat]
            loss = _loss(outputs, projections)
        gradients = tape.gradient(loss, [w.value for w in model.trainable_weights])
        gradients = [  # an Embedding's gradient is IndexedSlices; an unused weight's None
            np.zeros(w.shape, "float32") if g is None else np.asarray(tf.convert_to_tensor(g))
            for g, w in zip(gradients, model.trainable_weights, strict=True)
        ]
        results.append(([np.asarray(o) for o in flat], gradients))
    (outputs_a, grads_a), (outputs_b, grads_b) = results
    return Check(
        output_diff=_largest_diff(outputs_a, outputs_b),
        gradient_diff=_largest_diff(grads_a, grads_b),
        outputs_match=_close(outputs_a, outputs_b),
        gradients_match=_close(grads_a, grads_b),
    )


def _largest_diff(first, second) -> float:
    if len(first) != len(second):
        return float("inf")
    return max(
        (float(np.max(np.abs(a - b))) for a, b in zip(first, second, strict=True)), default=0.0
    )


def _close(first, second) -> bool:
    return len(first) == len(second) and all(
        a.shape == b.shape and np.allclose(a, b, **FLOAT32_TOLERANCE)
        for a, b in zip(first, second, strict=True)
    )


@dataclasses.dataclass(frozen=True)
class Timing:
    """Seconds per round of each (model, phase): "original" / "rewritten", "forward" / "step"."""

    samples: dict[tuple[str, str], list[float]]

    def stats(self, model: str, phase: str) -> Stats:
        return Stats.of(self.samples[(model, phase)])

    def speedup(self, phase: str) -> float:
        """Median original time / median rewritten time."""
        return self.stats("original", phase).median / self.stats("rewritten", phase).median

    def to_dict(self) -> dict:
        return {
            f"{model}/{phase}": {"median_s": self.stats(model, phase).median, "samples": times}
            for (model, phase), times in self.samples.items()
        }


def _step_function(model):
    """A training step: forward, the mean square of the outputs as loss, gradients, an SGD
    update (learning rate 0: the weights stay as they were, the update's work is done)."""
    optimizer = keras.optimizers.SGD(learning_rate=0.0)
    optimizer.build(model.trainable_variables)

    @tf.function
    def step(*inputs):
        with tf.GradientTape() as tape:
            outputs = keras.tree.flatten(_call(model, inputs, training=True))
            loss = sum(tf.reduce_mean(tf.square(tf.cast(o, tf.float32))) for o in outputs)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply(gradients, model.trainable_variables)
        return loss

    return step


def bench(
    original: keras.Model, rewritten: keras.Model, shapes: list[tuple], repeats: int = 5
) -> Timing:
    """Both models' forward pass and training step at `shapes`, each traced and called once
    first (not timed), then `repeats` interleaved rounds with the order rotated each round."""
    inputs = [tf.constant(x) for x in sample_inputs(original, shapes)]
    timers = {}
    for name, model in (("original", original), ("rewritten", rewritten)):
        forward = tf.function(lambda *xs, model=model: _call(model, xs))
        step = _step_function(model)
        for phase, function in (("forward", forward), ("step", step)):
            function(*inputs)  # traced and run once: the first call is not the steady state
            timers[(name, phase)] = lambda function=function: timed_call(function, *inputs)
    return Timing(timer_rounds(timers, repeats, warmup=1, rotate=True))

"""Weight sharing, two ways, checked live: one `LSTMCell` in two `RNN` layers (the source answer's
recipe) and one `LSTM` layer called twice. `sharing_report` shows that the variables are the same
objects, the states are not, and both paths' gradients add up in one variable."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import keras
import numpy as np
import tensorflow as tf

from hierlstm.config import QUICK_TIMING, Timing
from hierlstm.model.cudnn import graph_op_types, ran_cudnn

FORMS = ("shared_cell", "shared_layer")


def build_pair(
    form: str, units: int, rows: int, features: int, *, use_cudnn="auto", dtype=None
) -> keras.Model:
    """[(S, rows, features), (S, rows, features)] -> [(S, units), (S, units)], one LSTM's weights.

    "shared_cell": `RNN(cell)` twice around one `LSTMCell` (never the cuDNN kernel).
    "shared_layer": one `LSTM` layer called twice (cuDNN-eligible on a GPU).
    """
    input_a = keras.Input((rows, features), name="input_a")
    input_b = keras.Input((rows, features), name="input_b")
    if form == "shared_cell":
        cell = keras.layers.LSTMCell(units, name="shared_cell", dtype=dtype)
        output_a = keras.layers.RNN(cell, name="rnn_a", dtype=dtype)(input_a)  # -> (S, units)
        output_b = keras.layers.RNN(cell, name="rnn_b", dtype=dtype)(input_b)  # -> (S, units)
    elif form == "shared_layer":
        lstm = keras.layers.LSTM(units, use_cudnn=use_cudnn, name="shared_lstm", dtype=dtype)
        output_a = lstm(input_a)  # (S, rows, features) -> (S, units)
        output_b = lstm(input_b)
    else:
        raise ValueError(f"form must be one of {', '.join(FORMS)}; got {form!r}.")
    return keras.Model([input_a, input_b], [output_a, output_b], name=form)


@dataclasses.dataclass(frozen=True)
class SharingReport:
    """What one form shares. Differences are max absolute differences over all outputs."""

    form: str
    variables_a: tuple[str, ...]  # the variables path a's output depends on
    variables_b: tuple[str, ...]
    same_objects: bool  # path a and path b use the very same variable objects
    param_count: int  # the model's parameters: shared weights counted once
    unshared_param_count: int  # what two separate LSTMs would hold
    different_inputs_diff: float  # |out_a - out_b| for different inputs: > 0
    equal_inputs_diff: float  # |out_a - out_b| for equal inputs: 0
    state_leak_diff: float  # |out_b| with another input on path a: 0, no state crosses
    gradient_norms_a: tuple[float, ...]  # per variable, of sum(out_a)
    gradient_norms_b: tuple[float, ...]  # per variable, of sum(out_b)
    gradient_norms_total: tuple[float, ...]  # per variable, of sum(out_a) + sum(out_b)
    gradient_sum_relative_error: float  # max |g_total - (g_a + g_b)| / max |g_total|: ~0 (float
    # rounding): both paths' gradients add up in the one shared variable


def pair_inputs(sequences: int, rows: int, features: int, seed: int = 0):
    """Three different standard-normal inputs (S, rows, features) float32: a, b and c."""
    rng = np.random.default_rng(seed)
    shape = (sequences, rows, features)
    return tuple(rng.standard_normal(shape, dtype=np.float32) for _ in range(3))


def _used_variables(tape, target, variables) -> list:
    gradients = tape.gradient(target, variables, unconnected_gradients="none")
    return [
        variable
        for variable, gradient in zip(variables, gradients, strict=True)
        if gradient is not None
    ]


def sharing_report(model: keras.Model, inputs) -> SharingReport:
    """Runs `model` (from `build_pair`) on `inputs` = (a, b, c); does not change its weights."""
    input_a, input_b, input_c = (tf.constant(value) for value in inputs)
    variables = list(model.trainable_variables)
    with tf.GradientTape(persistent=True) as tape:
        output_a, output_b = model([input_a, input_b], training=False)
        loss_a, loss_b = tf.reduce_sum(output_a), tf.reduce_sum(output_b)
        loss_total = loss_a + loss_b
    used_a = _used_variables(tape, loss_a, variables)
    used_b = _used_variables(tape, loss_b, variables)
    gradients_a = tape.gradient(loss_a, variables)
    gradients_b = tape.gradient(loss_b, variables)
    gradients_total = tape.gradient(loss_total, variables)
    del tape
    equal_a, equal_b = model([input_a, input_a], training=False)
    _, other_b = model([input_c, input_b], training=False)
    units = int(output_a.shape[-1])
    features = int(input_a.shape[-1])

    def max_diff(first, second) -> float:
        return float(
            tf.reduce_max(tf.abs(tf.cast(first, tf.float32) - tf.cast(second, tf.float32)))
        )

    def norms(gradients) -> tuple[float, ...]:
        return tuple(float(tf.norm(tf.cast(gradient, tf.float32))) for gradient in gradients)

    sum_error = max(
        max_diff(total, first + second)
        for total, first, second in zip(gradients_total, gradients_a, gradients_b, strict=True)
    )
    largest = max(float(tf.reduce_max(tf.abs(gradient))) for gradient in gradients_total)
    return SharingReport(
        form=model.name,
        variables_a=tuple(variable.path for variable in used_a),
        variables_b=tuple(variable.path for variable in used_b),
        same_objects=len(used_a) == len(used_b)
        and all(first is second for first, second in zip(used_a, used_b, strict=True)),
        param_count=int(model.count_params()),
        unshared_param_count=2 * 4 * units * (features + units + 1),
        different_inputs_diff=max_diff(output_a, output_b),
        equal_inputs_diff=max_diff(equal_a, equal_b),
        state_leak_diff=max_diff(output_b, other_b),
        gradient_norms_a=norms(gradients_a),
        gradient_norms_b=norms(gradients_b),
        gradient_norms_total=norms(gradients_total),
        gradient_sum_relative_error=sum_error / largest if largest > 0 else sum_error,
    )


@dataclasses.dataclass(frozen=True)
class PairTiming:
    form: str
    first_call_s: float  # tracing plus the first execution
    median_s: float
    p10_s: float
    p90_s: float
    repeats: int
    kernel: str  # "cudnn" when the traced graph holds a CudnnRNN op, else "generic"


def time_pair(model: keras.Model, inputs, timing: Timing = QUICK_TIMING) -> PairTiming:
    """Times one forward pass of both paths, [(S, rows, features)] * 2 -> [(S, units)] * 2, the way
    `hierlstm.timing.harness` times a model."""
    input_a, input_b = (tf.constant(value) for value in inputs[:2])
    forward = tf.function(lambda a, b: model([a, b], training=False))

    def timed() -> float:
        start = time.perf_counter()
        forward(input_a, input_b)
        tf.test.experimental.sync_devices()
        return time.perf_counter() - start

    first_call_s = timed()
    for _ in range(timing.warmup):
        timed()
    samples = np.array([timed() for _ in range(timing.repeats)])
    ops = graph_op_types(forward.get_concrete_function(input_a, input_b))
    p10, p90 = np.percentile(samples, [10, 90])
    return PairTiming(
        form=model.name,
        first_call_s=first_call_s,
        median_s=float(np.median(samples)),
        p10_s=float(p10),
        p90_s=float(p90),
        repeats=timing.repeats,
        kernel="cudnn" if ran_cudnn(ops) else "generic",
    )


def time_forms(
    units: int,
    rows: int,
    features: int,
    sequences: int,
    *,
    device: str = "/CPU:0",
    use_cudnn="auto",
    timing: Timing = QUICK_TIMING,
    on_progress: Callable[[float, str], None] | None = None,
) -> list[PairTiming]:
    """Both forms, each freshly built on `device`, timed on the same (sequences, rows,
    features) inputs."""
    inputs = pair_inputs(sequences, rows, features)
    timings = []
    for index, form in enumerate(FORMS):
        if on_progress is not None:
            on_progress(index / len(FORMS), f"timing {form}")
        with tf.device(device):
            model = build_pair(form, units, rows, features, use_cudnn=use_cudnn)
            timings.append(time_pair(model, inputs, timing))
    if on_progress is not None:
        on_progress(1.0, "done")
    return timings

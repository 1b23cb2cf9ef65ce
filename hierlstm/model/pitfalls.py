"""Live reproductions of traps the source answer walks into, tested so a test notices the day Keras
fixes them. Keras 3's `TimeDistributed.call` with a time length unknown at trace time
vectorized-maps over `input_shape[0]` taken before its batch/time transpose: over the batch, not
time. The output is (batch, batch, units) when batch < time and fails when batch > time."""

from __future__ import annotations

import dataclasses
import re

import keras
import numpy as np
import tensorflow as tf

from hierlstm.config import RunConfig
from hierlstm.model.trunk import outer_lstm, trunk


@dataclasses.dataclass(frozen=True)
class PitfallOutcome:
    batch_size: int
    time_steps: int
    via: str  # "tf.function" or "model.predict"
    expected_shape: tuple
    actual_shape: tuple | None  # None when the call failed
    error: str  # first line of the error, "" when the call returned

    @property
    def broken(self) -> bool:
        return self.actual_shape != self.expected_shape


def build_time_distributed_unknown_length(config: RunConfig) -> keras.Model:
    """The answer's model exactly as written: (B, H, None, 1) -> TimeDistributed(LSTM) -> LSTM."""
    inputs, x = trunk(config)  # time axis None
    inner = keras.layers.LSTM(config.inner_units, name="inner_lstm", dtype=config.precision)
    summaries = keras.layers.TimeDistributed(inner, name="summarise", dtype=config.precision)(x)
    return keras.Model(inputs, outer_lstm(config, summaries), name="time_distributed_dynamic")


def time_distributed_unknown_length(
    batch_size: int, time_steps: int, *, via: str = "tf.function", config: RunConfig | None = None
) -> PitfallOutcome:
    """Runs the answer's model on (batch_size, height, time_steps, 1) with time unknown when traced,
    and reports the shape it returned (or its error) beside the right (batch, time, outer_units)."""
    config = (config or RunConfig()).replace(
        variant="time_distributed", batch_size=batch_size, time_steps=time_steps
    )
    model = build_time_distributed_unknown_length(config)
    x = np.zeros((batch_size, config.height, time_steps, 1), np.float32)
    expected = (batch_size, time_steps, config.outer_units)
    try:
        if via == "tf.function":
            spec = tf.TensorSpec((None, config.height, None, 1), tf.float32)
            forward = tf.function(lambda inputs: model(inputs), input_signature=[spec])
            actual = tuple(forward(x).shape)
        elif via == "model.predict":
            # predict's function is traced with reduce_retracing: the first length is traced
            # as a concrete shape (correct), a second length relaxes time to None (the bug).
            first = np.zeros((batch_size, config.height, time_steps + 1, 1), np.float32)
            model.predict(first, batch_size=batch_size, verbose=0)
            actual = tuple(model.predict(x, batch_size=batch_size, verbose=0).shape)
        else:
            raise ValueError(f"via must be tf.function or model.predict; got {via!r}.")
    except (tf.errors.InvalidArgumentError, tf.errors.OutOfRangeError) as error:
        return PitfallOutcome(batch_size, time_steps, via, expected, None, short_error(error))
    return PitfallOutcome(batch_size, time_steps, via, expected, actual, "")


def short_error(error: BaseException) -> str:
    """The one informative line of a TensorFlow error: the kernel's own message, without the
    graph-node prefixes and the Python stack that graph execution errors carry."""
    skipped = ("[[", "File ", "Detected at node", "Graph execution error:")
    candidates = []
    for line in str(error).splitlines():
        line = re.sub(r"\{\{function_node [^}]*\}\}\s*", "", line).strip()
        if line and not line.startswith(skipped) and not line.endswith("call last):"):
            candidates.append(line)
    return candidates[-1] if candidates else type(error).__name__

"""Each layer's output shape from the config alone, as Keras will infer it: the axes of every
named layer (`AXES`, which the trace names too), and a variant's top-level steps predicted without
Keras, so a cold server draws the Shape trace's first figure while TensorFlow still loads. The
trace (`hierlstm.model.trace`) confirms the prediction once Keras can infer it
(`disagreement`). Imports no Keras."""

from __future__ import annotations

import dataclasses

from hierlstm.config import RunConfig
from hierlstm.registry import VARIANTS

Shape = tuple  # of int, or None for a dimension the model accepts at any size

# Axis names of each layer's output, by layer name (the builders name every layer).
AXES = {
    "input": ("batch", "height", "time", "channels"),
    "conv": ("batch", "height", "time", "channels"),
    "pool": ("batch", "height", "time", "channels"),
    "permute": ("batch", "time", "height", "channels"),
    "fold": ("batch*time", "height", "channels"),
    "inner_lstm": ("batch*time", "units"),
    "inner_rnn": ("batch*time", "units"),
    "unfold": ("batch", "time", "units"),
    "summarise": ("batch", "time", "units"),
    "nested_rnn": ("batch", "time", "units"),
    "outer_lstm": ("batch", "time", "units"),
    "fused_lstm": ("batch", "time", "units"),
}


@dataclasses.dataclass(frozen=True)
class ShapeStep:
    """A top-level layer's output, as the axis-flow figure reads a `TraceStep`."""

    path: str
    axes: tuple[str, ...]
    symbolic_shape: Shape
    concrete_shape: Shape
    depth: int = 0


def _sizes(config: RunConfig, name: str) -> tuple[tuple, tuple]:
    """(symbolic, concrete) output of layer `name`; time is symbolic unless the variant is built
    for one length."""
    batch, time, pooled = config.batch_size, config.time_steps, config.pooled_height
    any_time = time if VARIANTS[config.variant].static_time else None
    units = {"inner": config.inner_units, "outer": config.outer_units}
    if name in ("input", "conv", "pool"):
        height = config.height if name != "pool" else pooled
        channels = 1 if name == "input" else config.filters
        return (None, height, any_time, channels), (batch, height, time, channels)
    if name == "permute":
        return (None, any_time, pooled, config.filters), (batch, time, pooled, config.filters)
    if name == "fold":  # (batch, time, height, filters) -> (batch*time, height, filters)
        return (None, pooled, config.filters), (batch * time, pooled, config.filters)
    if name in ("inner_lstm", "inner_rnn"):
        return (None, units["inner"]), (batch * time, units["inner"])
    if name == "unfold":
        return (None, None, units["inner"]), (batch, time, units["inner"])
    inner = name == "summarise"
    size = units["inner" if inner else "outer"]
    return (None, any_time, size), (batch, time, size)


def predicted_steps(config: RunConfig) -> tuple[ShapeStep, ...]:
    """`config.variant`'s top-level steps, input first, as Keras will infer them; () under a
    distribution strategy, whose per-replica batch only TensorFlow's devices can say."""
    if config.strategy != "none":
        return ()
    steps = []
    for name in VARIANTS[config.variant].layers:
        symbolic, concrete = _sizes(config, name)
        steps.append(ShapeStep(name, AXES[name], symbolic, concrete))
    return tuple(steps)


def disagreement(predicted, traced) -> str:
    """The first top-level step where a prediction and a trace differ, in one line ("" if they
    agree): path, axes and both shapes are compared."""

    def key(step) -> tuple:
        return (step.path, tuple(step.axes), tuple(step.symbolic_shape), step.concrete_shape)

    expected = [key(step) for step in predicted]
    found = [key(step) for step in traced if step.depth == 0]
    for index, (guess, truth) in enumerate(zip(expected, found, strict=False)):
        if guess != truth:
            return f"step {index}: predicted {guess}, traced {truth}"
    if len(expected) != len(found):
        return f"predicted {len(expected)} top-level steps, traced {len(found)}"
    return ""

"""Shape tracing: every step a tensor takes through a variant, wrappers, cells and the fused
layer's stages included: the one walker's steps (`hierlstm.model.walk`: symbolic and concrete
shapes, parameters, FLOPs, bytes) with each step's axes and note key (`trace_notes`) on top, so
the Shape trace and "Your model" agree by construction. Under a strategy the concrete numbers are
one replica's."""

from __future__ import annotations

import dataclasses

import keras

from hierlstm.config import RunConfig, SettingError, per_replica_batch
from hierlstm.model import trace_notes
from hierlstm.model.builders import build_model
from hierlstm.model.shapes import AXES
from hierlstm.model.trace_notes import step_note
from hierlstm.model.walk import LayerStep, walk
from hierlstm.registry import VARIANTS

# The axes of a step inside a wrapper, cell or the fused layer, where not (batch, units).
STEP_AXES = ("batch", "units")  # a per-time-step call inside a wrapper or cell
CHILD_AXES = {
    "inner_rnn/inner_cell": ("batch*time", "units"),
    "fused_lstm/pool": ("height", "time", "batch", "channels"),
    "fused_lstm/inner_lstm": ("time", "batch", "units"),
    "fused_lstm/outer_lstm": ("time", "batch", "units"),
}


@dataclasses.dataclass(frozen=True)
class TraceStep(LayerStep):
    """A walker's step (`hierlstm.model.walk.LayerStep`, every field as walked) with what the
    variant adds: its axes' names and its note."""

    axes: tuple[str, ...] = ()  # one name per dimension
    note_key: str = ""  # a `note.*` message of hierlstm.i18n
    note_values: dict = dataclasses.field(default_factory=dict, hash=False)  # its numbers
    replicas: int = 1  # replicas running this step at once, each with the shapes above

    @property
    def note(self) -> str:
        """The note in English (the CLI's text and the JSON's `note`)."""
        return step_note(self)

    def to_dict(self) -> dict:
        return {
            **super().to_dict(),
            "axes": list(self.axes),
            "note": self.note,
            "note_values": dict(self.note_values),
        }


def trace_shapes(
    config: RunConfig, model: keras.Model | None = None, replicas: int | None = None
) -> list[TraceStep]:
    """One `TraceStep` per layer of `config.variant`'s model, children after their parent: the
    walk of the model at (batch_size, height, time_steps, 1) with each step's axes and note.
    Under a strategy the shapes are one replica's and every step carries `replicas`
    (`config.devices`' count, else the caller's). SettingError if the batch does not split
    evenly."""
    replicas = replicas or _named_replicas(config)
    if config.strategy != "none":
        global_batch = config.batch_size
        config = config.replace(
            strategy="none", devices="", batch_size=per_replica_batch(global_batch, replicas)
        )
    model = model or build_model(config)
    input_shape = (config.batch_size, config.height, config.time_steps, 1)
    steps = [_noted(config, step) for step in walk(model, [input_shape])]
    if replicas == 1:
        return steps
    key, values = trace_notes.replicas_note(config, global_batch, replicas)
    steps[0] = dataclasses.replace(steps[0], note_key=key, note_values=values)
    return [dataclasses.replace(step, replicas=replicas) for step in steps]


def _noted(config: RunConfig, step: LayerStep) -> TraceStep:
    """`step` with its axes and the variant's note on it."""
    axes = AXES[step.path] if step.depth == 0 else CHILD_AXES.get(step.path, STEP_AXES)
    note_key, note_values = trace_notes.note(config, step.path)
    fields = {field.name: getattr(step, field.name) for field in dataclasses.fields(LayerStep)}
    return TraceStep(**fields, axes=axes, note_key=note_key, note_values=note_values)


def _named_replicas(config: RunConfig) -> int:
    if config.strategy == "none":
        return 1
    if not config.device_list:
        raise SettingError(
            f"tracing strategy {config.strategy} without named devices needs the number of "
            "replicas (hierlstm.distributed.distribute.planned_replicas)."
        )
    return len(config.device_list)


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
        "dependent_steps": VARIANTS[config.variant].chain(config.pooled_height, config.time_steps),
    }

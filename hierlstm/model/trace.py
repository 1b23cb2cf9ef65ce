"""Shape tracing: every step a tensor takes through a variant, wrappers, cells and the fused
layer's stages included: the one walker's steps (`hierlstm.model.walk`: symbolic and concrete
shapes, parameters, FLOPs, bytes) with each step's axes and note key (`trace_notes`) on top, so
the Shape trace and "Your model" agree by construction. Under a strategy the concrete numbers are
one replica's. The steps come as a `Trace`, a list that a notebook shows as the Shape trace's
table."""

from __future__ import annotations

import dataclasses

import keras

from hierlstm.config import RunConfig, SettingError, per_replica_batch
from hierlstm.i18n import DEFAULT_LANGUAGE, t
from hierlstm.model import trace_notes
from hierlstm.model.builders import build_model
from hierlstm.model.shapes import AXES
from hierlstm.model.trace_notes import step_note
from hierlstm.model.walk import LayerStep, walk
from hierlstm.registry import VARIANTS
from hierlstm.tables import Shown, Table

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


class Trace(Shown, list):
    """`trace_shapes`'s answer: its `TraceStep`s as a list, and the config traced (`config`). A
    notebook shows it as the Shape trace's table, with the totals below it; `show("zh")` in
    Chinese."""

    def __init__(self, steps=(), config: RunConfig | None = None):
        super().__init__(steps)
        self.config = config

    def tables(self, lang: str = DEFAULT_LANGUAGE) -> list[Table]:
        top = [step for step in self if step.depth == 0]
        totals = [
            f"{t('trace.metric.params', lang)} {sum(step.params for step in top):,}",
            f"{t('trace.metric.flops', lang)} {sum(step.flops for step in top) / 1e9:.3g} GFLOP",
        ]
        title = ""
        if self.config is not None:
            config = self.config
            chain = VARIANTS[config.variant].chain(config.pooled_height, config.time_steps)
            totals.append(f"{t('trace.metric.chain', lang)} {chain:,}")
            sizes = {"batch": top[0].concrete_shape[0], "time": config.time_steps}
            title = t("trace.table", lang, variant=config.variant, **sizes)
        frame = trace_notes.trace_table(self, lang)
        return [Table(title, frame, (" · ".join(totals),))]


def trace_shapes(
    config: RunConfig, model: keras.Model | None = None, replicas: int | None = None
) -> Trace:
    """The Shape trace of `config.variant`: one `TraceStep` per layer, children after their
    parent, the walk of the model at (batch_size, height, time_steps, 1) with each step's axes
    and note. Under a strategy the shapes are one replica's and every step carries `replicas`
    (`config.devices`' count, else the caller's).

    Args:
        config: the variant and its sizes.
        model: `config`'s model when already built (any batch and time: they are symbolic).
        replicas: the replicas a strategy splits the batch over, when `config.devices` does
            not name them.

    Returns:
        A `Trace` (a list of `TraceStep`s), shown in a notebook as the Shape trace's table.

    Raises:
        SettingError: the batch does not split evenly over the replicas.

    Example:
        `trace_shapes(RunConfig(variant="folded", batch_size=4, time_steps=10))[3]` is the
        permute: concrete shape (4, 10, 12, 16), axes (batch, time, height, channels).
    """
    traced = config
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
        return Trace(steps, traced)
    key, values = trace_notes.replicas_note(config, global_batch, replicas)
    steps[0] = dataclasses.replace(steps[0], note_key=key, note_values=values)
    return Trace([dataclasses.replace(step, replicas=replicas) for step in steps], traced)


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

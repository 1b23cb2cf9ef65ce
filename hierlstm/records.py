"""The plain records that flow out of the harness, and the one flat row a result becomes in every
table, the store and the exports: `variant`, the config's fields, the measured fields, the versions
(`ROW_COLUMNS`), each column's kind read from its field's type (`COLUMN_KINDS`)."""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from hierlstm.config import RunConfig
from hierlstm.i18n import DEFAULT_LANGUAGE, t
from hierlstm.tables import Shown, Table, headed

if TYPE_CHECKING:
    import pandas as pd


PHASES = ("forward", "forward_backward", "update")  # a training step's timed phases


@dataclasses.dataclass(frozen=True)
class Stats:
    """Timed samples (seconds, in the order taken) and their spread, as `torch.utils.benchmark`'s
    Measurement keeps them: `Stats.of(samples)` derives every other field. Read back from a row,
    it holds what a row stores (a step: median, p10, p90, iqr, mean, std, min and its samples; a
    phase: median, p10 and p90), NaN for the rest."""

    median: float = math.nan
    p10: float = math.nan
    p90: float = math.nan
    p25: float = math.nan
    p75: float = math.nan
    iqr: float = math.nan  # p75 - p25
    mean: float = math.nan
    std: float = math.nan  # with one degree of freedom less (0.0 for a single sample)
    min: float = math.nan
    samples: tuple[float, ...] = ()

    @classmethod
    def of(cls, samples: Iterable[float]) -> Stats:
        import numpy as np  # here, not at the top: a record read from a row needs none of it

        values = np.asarray(list(samples), dtype=np.float64)
        p10, p25, p75, p90 = (float(value) for value in np.percentile(values, [10, 25, 75, 90]))
        return cls(
            median=float(np.median(values)),
            p10=p10,
            p90=p90,
            p25=p25,
            p75=p75,
            iqr=p75 - p25,
            mean=float(np.mean(values)),
            std=float(np.std(values, ddof=1)) if len(values) > 1 else 0.0,
            min=float(np.min(values)),
            samples=tuple(float(value) for value in values),
        )


@dataclasses.dataclass(frozen=True)
class BenchResult:
    """One measurement of one config: first call apart, then the steady-state distribution of
    the step (`step`, one `Stats`), in seconds per forward pass or per training step. A training
    run also has `phases` ("forward", "forward_backward", "update"; one `Stats` each), with
    `phase_sum_s` and `backward_s` derived; NaN for inference. A failed run has status "failed",
    its line in `error` and NaN times."""

    config: RunConfig
    first_call_s: float  # tracing/compilation plus the first execution
    step: Stats  # the steady state: its samples (stored as `samples_json`) and their spread
    repeats: int
    warmup: int
    noisy: bool  # step.iqr / step.median > 0.10
    samples_per_s: float  # batch_size / step.median
    steps_per_s: float  # batch_size * time_steps / step.median
    flops: int  # analytic, from hierlstm.model.cost
    gflops_per_s: float
    peak_memory_bytes: int
    peak_memory_kind: str  # "gpu_allocator_peak" or "cpu_rss_growth"
    kernel: str  # "cudnn" or "generic"
    kernel_reason: str  # why generic ran ("" for cudnn)
    trace_count: int  # how many times the forward function was traced
    device: str  # e.g. "/CPU:0" or "/GPU:0 (NVIDIA A100)"
    versions: dict[str, str]  # python, tensorflow, keras, numpy
    # training: one Stats per phase of `PHASES`, stored as <phase>_median_s, _p10_s, _p90_s
    phases: dict[str, Stats] = dataclasses.field(default_factory=dict)
    kept_activation_bytes: int = 0  # training: estimated activations kept for backward (cost)
    status: str = "ok"  # "ok" or "failed"
    error: str = ""

    def phase(self, name: str) -> Stats:
        """The Stats of phase `name` (one of `PHASES`); all NaN when the run has no phases."""
        return self.phases.get(name, Stats())

    @property
    def phase_sum_s(self) -> float:
        """forward_backward median + update median (NaN for inference)."""
        return self.phase("forward_backward").median + self.phase("update").median

    @property
    def backward_s(self) -> float:
        """The backward pass alone, derived: forward_backward median - forward median (NaN for
        inference; noise can make it slightly negative on a tiny model)."""
        return self.phase("forward_backward").median - self.phase("forward").median

    def _measured(self) -> dict[str, Any]:
        """The measured columns (`MEASURED_COLUMNS`): the flat fields, `step` and `phases`
        flattened, the step's samples as a JSON list."""
        values = {name: getattr(self, name) for name in (*_MEASURED_FIELDS, "phase_sum_s")}
        values.update({column: getattr(self.step, stat) for stat, column in STEP_COLUMNS.items()})
        values["samples_json"] = json.dumps(self.step.samples)
        for phase in PHASES:
            values.update(
                {f"{phase}_{stat}_s": getattr(self.phase(phase), stat) for stat in _PHASE_STATS}
            )
        return {column: values[column] for column in MEASURED_COLUMNS}

    def to_dict(self) -> dict[str, Any]:
        """The nested JSON form the CLI prints: `variant`, `config` as a dict, the measured
        columns, `versions` as a dict, then the derived `backward_s`."""
        return {
            "variant": self.config.variant,
            "config": self.config.to_dict(),
            **self._measured(),
            "versions": dict(self.versions),
            "backward_s": self.backward_s,
        }

    def to_row(self) -> dict[str, Any]:
        """The result as one flat row with the columns `ROW_COLUMNS`, in that order."""
        settings = self.config.to_dict()
        row = {column: settings[name] for name, column in CONFIG_COLUMNS.items()}
        row.update(self._measured())
        row.update({column: self.versions.get(key, "") for key, column in VERSION_COLUMNS.items()})
        return row

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> BenchResult:
        """The inverse of `to_row`, for rows of typed values (numpy scalars and SQLite's 0/1
        and NULL included); a row from outside is validated first (hierlstm.results)."""
        value = {column: _typed(COLUMN_KINDS[column], row[column]) for column in ROW_COLUMNS}
        phases = {
            phase: Stats(**{stat: value[f"{phase}_{stat}_s"] for stat in _PHASE_STATS})
            for phase in PHASES
            if not math.isnan(value[f"{phase}_median_s"])
        }
        step = Stats(
            **{stat: value[column] for stat, column in STEP_COLUMNS.items()},
            samples=tuple(float(sample) for sample in json.loads(value["samples_json"])),
        )
        return cls(
            config=RunConfig(**{name: value[column] for name, column in CONFIG_COLUMNS.items()}),
            step=step,
            versions={
                key: value[column] for key, column in VERSION_COLUMNS.items() if value[column]
            },  # a backend's version only where it ran (no TensorFlow version for a JAX run)
            phases=phases,
            **{name: value[name] for name in _MEASURED_FIELDS},
        )


# RunConfig field -> column. The config's device ("auto", "cpu", "gpu:N") is renamed because
# the result's `device` column holds where the run actually ran.
CONFIG_COLUMNS = {
    field.name: "device_spec" if field.name == "device" else field.name
    for field in dataclasses.fields(RunConfig)
}
VERSION_COLUMNS = {  # key in BenchResult.versions -> column
    "python": "python_version",
    "tensorflow": "tensorflow_version",
    "keras": "keras_version",
    "numpy": "numpy_version",
    "jax": "jax_version",  # "" unless the run was on the JAX backend
    "torch": "torch_version",  # "" unless the run was on the torch backend
    "onnxruntime": "onnxruntime_version",  # "" unless the run was on ONNX Runtime
    "openvino": "openvino_version",  # "" unless the run was on OpenVINO
}
# What a row keeps of the step's Stats: Stats field -> column.
STEP_COLUMNS = {
    "median": "median_s",
    "p10": "p10_s",
    "p90": "p90_s",
    "iqr": "iqr_s",  # p75 - p25
    "mean": "mean_s",
    "std": "std_s",
    "min": "min_s",
}
# The times only a training run has (NaN in an inference run's row): `phases`, flattened.
_PHASE_STATS = ("median", "p10", "p90")  # what a row keeps of each phase's Stats
PHASE_COLUMNS = (
    *(f"{phase}_{stat}_s" for phase in PHASES for stat in _PHASE_STATS),
    "phase_sum_s",
)
_MEASURED_FIELDS = tuple(  # BenchResult's flat fields, each its own column
    field.name
    for field in dataclasses.fields(BenchResult)
    if field.name not in ("config", "versions", "phases", "step")
)
# The fields that become several columns, in field order: `step` and `phases` flattened where
# the field is, and the step's samples (JSON, "[]" in every row before results schema 5) after
# the activations kept, where schema 5 put them.
_FLATTENED = {
    "step": tuple(STEP_COLUMNS.values()),
    "phases": PHASE_COLUMNS,
    "kept_activation_bytes": ("kept_activation_bytes", "samples_json"),
}
MEASURED_COLUMNS = tuple(
    column
    for field in dataclasses.fields(BenchResult)
    if field.name not in ("config", "versions")
    for column in _FLATTENED.get(field.name, (field.name,))
)
ROW_COLUMNS = (*CONFIG_COLUMNS.values(), *MEASURED_COLUMNS, *VERSION_COLUMNS.values())

_KINDS = {float: "float", int: "int", bool: "bool", str: "text"}


def field_kinds(record: type, names: Iterable[str] | None = None) -> dict[str, str]:
    """The column kind ("float", "int", "bool", "text") of each field of a dataclass, from its
    resolved type (`X | None` as X). TypeError, naming the field, for a type a row cannot hold."""
    hints = typing.get_type_hints(record)
    names = [field.name for field in dataclasses.fields(record)] if names is None else names
    return {name: _kind(record, name, hints[name]) for name in names}


def _kind(record: type, name: str, annotation: Any) -> str:
    members = [annotation]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [member for member in typing.get_args(annotation) if member is not type(None)]
    if len(members) != 1 or members[0] not in _KINDS:
        raise TypeError(
            f"{record.__name__}.{name} is typed {annotation}; a result row holds float, int, "
            "bool or str fields (or one of them | None)."
        )
    return _KINDS[members[0]]


def _column_kinds() -> dict[str, str]:
    config_kinds = field_kinds(RunConfig)
    kinds = {column: config_kinds[name] for name, column in CONFIG_COLUMNS.items()}
    measured = field_kinds(BenchResult, _MEASURED_FIELDS) | dict.fromkeys(PHASE_COLUMNS, "float")
    measured |= dict.fromkeys(STEP_COLUMNS.values(), "float") | {"samples_json": "text"}
    kinds.update({column: measured[column] for column in MEASURED_COLUMNS})
    kinds.update(dict.fromkeys(VERSION_COLUMNS.values(), "text"))
    return kinds


COLUMN_KINDS = _column_kinds()  # column -> "float", "int", "bool" or "text", in row order


def _typed(kind: str, value: Any) -> Any:
    if kind == "float":
        return math.nan if value is None else float(value)
    return {"int": int, "bool": bool, "text": str}[kind](value)


PHASE_FRAME_COLUMNS = ("variant", "xla", "phase", "median_s", "p10_s", "p90_s", "step_median_s")


def phase_frame(results: Iterable[BenchResult]) -> pd.DataFrame:
    """The phases of every ok training result, long-form for a chart: one row per (result,
    phase) with phase "forward", "backward" (derived: forward_backward - forward; no p10/p90)
    and "update", so the three stack to `phase_sum_s`, and `step_median_s` (the whole step)
    beside them. Columns `PHASE_FRAME_COLUMNS`; inference and failed results give no rows."""
    rows = []
    for result in results:
        if result.status != "ok" or result.config.task != "training":
            continue
        point = {"variant": result.config.variant, "xla": result.config.xla}
        forward, update = result.phase("forward"), result.phase("update")
        spreads = {
            "forward": (forward.median, forward.p10, forward.p90),
            "backward": (result.backward_s, math.nan, math.nan),
            "update": (update.median, update.p10, update.p90),
        }
        for phase, (median, p10, p90) in spreads.items():
            rows.append(
                {**point, "phase": phase, "median_s": median, "p10_s": p10, "p90_s": p90}
                | {"step_median_s": result.step.median}
            )
    import pandas as pd  # here, not at the top: a record needs none of it

    return pd.DataFrame(rows, columns=list(PHASE_FRAME_COLUMNS))


@dataclasses.dataclass(frozen=True)
class CompareEntry:
    """One config's part in a comparison: its result; its speed-up, the median, p10 and p90 over
    rounds of baseline time / its time, the two taken in the same round so drift cancels (NaN
    where either failed); what a run under a strategy adds (strategy, replicas,
    per_replica_batch, workers, output_checksum, replica_devices; {} for a single-device or
    failed run); its timed rounds (`hierlstm.timing.rounds.Sample`s, a worker's with its own
    timers beside them); and the worker process that ran it (0: this process)."""

    result: BenchResult
    speedup: Stats = Stats()
    details: dict = dataclasses.field(default_factory=dict)
    samples: tuple = ()
    pid: int = 0


# What a comparison's table shows of each row (the Benchmark page's table has every column).
COMPARE_TABLE_COLUMNS = (
    "variant",
    "backend",
    "status",
    "median_s",
    "p10_s",
    "p90_s",
    "iqr_s",
    "noisy",
    "speedup_vs_baseline",
    "speedup_p10",
    "speedup_p90",
    "first_call_s",
    "samples_per_s",
    "kernel",
    "device",
    "error",
)


@dataclasses.dataclass(frozen=True, repr=False)
class CompareResult(Shown):
    """Several configs timed in interleaved rounds: one entry per config, in the order given;
    entry `baseline` is the one every speed-up divides. A notebook shows it as a table, a row
    per config in the Benchmark page's columns and words (`show("zh")`: in Chinese)."""

    entries: tuple[CompareEntry, ...]
    baseline: int = 0

    @property
    def results(self) -> list[BenchResult]:
        return [entry.result for entry in self.entries]

    def to_frame(self) -> pd.DataFrame:  # pandas is imported here: a record needs none of it
        """One `BenchResult.to_row()` per config, then its strategy details and speed-ups."""
        rows = []
        for index, entry in enumerate(self.entries):
            row = entry.result.to_row()
            if entry.details:
                row.update(entry.details)
                row["replica_devices"] = ",".join(row["replica_devices"])
            row["speedup_vs_baseline"] = entry.speedup.median
            row["speedup_p10"] = entry.speedup.p10
            row["speedup_p90"] = entry.speedup.p90
            row["is_baseline"] = index == self.baseline
            rows.append(row)
        import pandas as pd

        return pd.DataFrame(rows)

    def table(self, lang: str = DEFAULT_LANGUAGE) -> pd.DataFrame:
        """`to_frame()`'s `COMPARE_TABLE_COLUMNS`, headed in `lang` (times in seconds)."""
        return headed(self.to_frame().reindex(columns=list(COMPARE_TABLE_COLUMNS)), lang)

    def tables(self, lang: str = DEFAULT_LANGUAGE) -> list[Table]:
        baseline = self.entries[self.baseline].result.config.variant if self.entries else ""
        note = t("chart.speedup.title", lang, baseline=baseline)
        return [Table(t("bench.compared", lang), self.table(lang), (note,))]

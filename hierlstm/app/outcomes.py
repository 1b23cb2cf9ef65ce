"""What the timing pages run, through the CLI's run-and-store functions (`hierlstm.measure`): the
benchmark with its per-layer split and the sweeps over time, batch or replicas. Each returns an
outcome keeping its records; `kept` shows a run the store refused as measured but not stored."""

from __future__ import annotations

import dataclasses
import functools
import socket
from collections.abc import Sequence

import pandas as pd

from hierlstm import measure
from hierlstm.app import state
from hierlstm.app.caches import note_write, result_store
from hierlstm.app.runs import Progress
from hierlstm.app.sidebar import Controls
from hierlstm.config import RunConfig
from hierlstm.records import CONFIG_COLUMNS, CompareResult
from hierlstm.refusals import Refused
from hierlstm.registry import BACKENDS, VARIANTS
from hierlstm.timing import RUN_FAILURES, error_line, layer_breakdown
from hierlstm.timing.basics import share


def kept(run_and_store, *arguments, **options):
    """`run_and_store(*arguments, the results store, **options)`'s return value, also when the
    store refused its writes (the run's records are shown all the same; the banner says why
    they were not kept)."""
    try:
        measured = run_and_store(*arguments, result_store(), **options)
    except measure.NotStored as error:
        note_write(error.refused)
        return error.measured
    note_write(None)
    return measured


def settings_of(controls: Controls) -> dict:
    """What a run depends on, to say when the sidebar has changed since it ran."""
    return {
        "variants": controls.variants,
        "backends": controls.backends,
        "config": controls.config,
        "timing": controls.timing,
    }


@dataclasses.dataclass(frozen=True)
class BenchmarkOutcome:
    compared: CompareResult  # its results keep the RunConfigs they measured
    baseline: str
    breakdown: pd.DataFrame | None
    breakdown_variant: str
    breakdown_error: str
    stored: int
    settings: dict  # `settings_of` the controls it ran with
    ids: tuple[str, ...] = ()  # the stored rows of this run, in the order of its results

    @functools.cached_property
    def frame(self) -> pd.DataFrame:
        """`CompareResult.to_frame()`, with each row's `label` (its backend beside the variant
        when several backends ran)."""
        frame = self.compared.to_frame()
        several = frame["backend"].nunique() > 1
        frame["label"] = [state.label(r.config, several) for r in self.compared.results]
        return frame


def baseline_of(configs: Sequence[RunConfig]) -> int:
    """The speed-ups' baseline: nested (on TensorFlow, when it ran there too), else the first."""
    nested = [i for i, config in enumerate(configs) if config.variant == "nested"]
    on_tensorflow = [i for i in nested if configs[i].backend == "tensorflow"]
    return (on_tensorflow or nested or [0])[0]


def run_benchmark(controls: Controls, breakdown_variant: str, progress: Progress):
    """The controls' configs (variants x backends) compared and stored, then the per-layer
    split of `breakdown_variant` on TensorFlow."""
    configs = controls.configs
    baseline = baseline_of(configs)
    compared, ids = kept(
        measure.compare_and_store,
        configs,
        controls.timing,
        baseline=baseline,
        on_progress=lambda f, m: progress(0.8 * f, m),
    )
    breakdown, breakdown_error = None, ""
    try:
        breakdown = layer_breakdown(
            controls.config.replace(variant=breakdown_variant),
            controls.timing,
            on_progress=lambda f, m: progress(0.8 + 0.2 * f, f"{breakdown_variant}: {m}"),
        )
    except RUN_FAILURES as error:
        breakdown_error = error_line(error)
    return BenchmarkOutcome(
        compared=compared,
        baseline=state.label(configs[baseline], controls.several_backends),
        breakdown=breakdown,
        breakdown_variant=breakdown_variant,
        breakdown_error=breakdown_error,
        stored=len(ids),
        settings=settings_of(controls),
        ids=tuple(ids),
    )


def _each_variant(configs: Sequence[RunConfig], progress: Progress, run) -> pd.DataFrame:
    """`run(config, on_progress)` for each config, the progress bar split evenly between
    them and prefixed with the variant (and its backend, when several run); their frames in
    one."""
    several = len({config.backend for config in configs}) > 1
    frames = [
        run(config, share(progress, index, len(configs), f"{state.label(config, several)}: "))
        for index, config in enumerate(configs)
    ]
    return pd.concat(frames, ignore_index=True)


def run_sweeps(controls: Controls, axis: str, values: Sequence[int], progress: Progress):
    """Every selected variant swept over `axis`; each point is stored as it finishes."""
    frame = _each_variant(
        controls.configs,
        progress,
        lambda config, on_progress: kept(
            measure.sweep_and_store, config, axis, values, controls.timing, on_progress=on_progress
        ),
    )
    return {"frame": frame, "settings": {**settings_of(controls), "axis": axis}}


def replica_configs(controls: Controls) -> list[RunConfig]:
    """The selected variants as one replica's run: the sidebar's batch is each replica's.
    tf.distribute is TensorFlow's, so each variant runs there whatever the Backend choice."""
    variants = dict.fromkeys(config.variant for config in controls.configs)
    return [
        controls.config.replace(variant=name, strategy="mirrored", device="auto")
        for name in variants
    ]


def run_replica_sweeps(controls: Controls, counts: Sequence[int], progress: Progress):
    """Every selected variant on 1, 2, ... mirrored replicas (weak scaling); each measured
    count is stored as it finishes."""

    def run(config, on_progress):
        frame = kept(
            measure.replica_sweep_and_store,
            config,
            counts,
            controls.timing,
            on_progress=on_progress,
        )
        return frame.assign(variant=config.variant)[["variant", *frame.columns]]

    frame = _each_variant(replica_configs(controls), progress, run)
    return {"frame": frame, "settings": {**settings_of(controls), "axis": "replicas"}}


# --- the Lesson's numbers for the three backends -----------------------------------------------
# The newest stored row that ran on JAX or torch, and the newest row of each variant and backend
# with its settings: every config column but the variant and the backend, which are compared.
SAME_SETTINGS = tuple(
    column for column in CONFIG_COLUMNS.values() if column not in ("variant", "backend")
)
COMPARISON_COLUMNS = (
    *("variant", "backend", "median_s", "p10_s", "p90_s", "vs_tensorflow", "created_at"),
)


def latest_comparison(rows: pd.DataFrame, host: str | None = None) -> pd.DataFrame:
    """This host's latest stored comparison of several backends, one row per (variant, backend):
    `COMPARISON_COLUMNS`, `vs_tensorflow` the median over the same variant's TensorFlow median (NaN
    without one). Empty when there is none."""
    host = socket.gethostname() if host is None else host
    empty = pd.DataFrame(columns=list(COMPARISON_COLUMNS))
    if rows is None or rows.empty:
        return empty
    here = rows[(rows["host"] == host) & (rows["status"] == "ok")]
    others = here[here["backend"] != "tensorflow"]
    if others.empty:
        return empty
    newest = others.sort_values("created_at").iloc[-1]
    same = here
    for column in SAME_SETTINGS:
        same = same[same[column] == newest[column]]
    latest = same.sort_values("created_at").groupby(["variant", "backend"], sort=False).tail(1)
    if latest["backend"].nunique() < 2:
        return empty
    order = {name: index for index, name in enumerate(BACKENDS)}
    variants = {name: index for index, name in enumerate(VARIANTS)}
    latest = latest.assign(
        _variant=latest["variant"].map(variants), _backend=latest["backend"].map(order)
    ).sort_values(["_variant", "_backend"])
    tensorflow = latest[latest["backend"] == "tensorflow"].set_index("variant")["median_s"]
    ratio = latest["median_s"].to_numpy() / latest["variant"].map(tensorflow).to_numpy(float)
    frame = latest.assign(vs_tensorflow=ratio)[list(COMPARISON_COLUMNS)].reset_index(drop=True)
    frame.attrs.update(
        settings={column: newest[column] for column in SAME_SETTINGS},
        host=host,
        device=newest["device"],
    )
    return frame


def stored_comparison(store) -> pd.DataFrame:
    """`latest_comparison` of `store`'s rows; empty when there is no store or it refuses to be
    read (the banner and the Results page say why)."""
    if store is None:
        return pd.DataFrame(columns=list(COMPARISON_COLUMNS))
    try:
        rows = store.rows()
    except Refused:
        return pd.DataFrame(columns=list(COMPARISON_COLUMNS))
    return latest_comparison(rows)

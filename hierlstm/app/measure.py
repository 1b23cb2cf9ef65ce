"""What the timing pages run: the benchmark with its per-layer split, the sweeps over time,
batch or replicas; each stores its results and returns an outcome the page draws."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pandas as pd

try:  # raised inside a running script when the browser asks for a rerun
    from streamlit.runtime.scriptrunner_utils.exceptions import RerunException
except ImportError:  # moved in another Streamlit version: never matches, runs are just dropped
    RerunException = type("RerunException", (BaseException,), {})
from hierlstm.app.caches import result_store
from hierlstm.app.runs import Progress
from hierlstm.app.sidebar import Controls
from hierlstm.config import RunConfig
from hierlstm.timing.breakdown import layer_breakdown
from hierlstm.timing.failures import error_line
from hierlstm.timing.harness import compare
from hierlstm.timing.sweeps import sweep


def store_results(results) -> int:
    store = result_store()
    for result in results:
        store.add(result)
    return len(results)


@dataclasses.dataclass(frozen=True)
class BenchmarkOutcome:
    frame: pd.DataFrame  # CompareResult.to_frame()
    configs: tuple  # the RunConfigs measured, in the frame's row order
    baseline: str
    breakdown: pd.DataFrame | None
    breakdown_variant: str
    breakdown_error: str
    stored: int
    settings: dict  # the controls it ran with, to say when they have changed since


def settings_of(controls: Controls) -> dict:
    return {
        "variants": controls.variants,
        "config": controls.config,
        "warmup": controls.warmup,
        "repeats": controls.repeats,
    }


def run_benchmark(controls: Controls, breakdown_variant: str, progress: Progress):
    configs = controls.configs()
    baseline = controls.variants.index("nested") if "nested" in controls.variants else 0
    result = compare(
        configs,
        warmup=controls.warmup,
        repeats=controls.repeats,
        baseline=baseline,
        on_progress=lambda f, m: progress(0.8 * f, m),
    )
    stored = store_results(result.results)
    breakdown, breakdown_error = None, ""
    try:
        breakdown = layer_breakdown(
            controls.config.replace(variant=breakdown_variant),
            warmup=controls.warmup,
            repeats=controls.repeats,
            on_progress=lambda f, m: progress(0.8 + 0.2 * f, f"{breakdown_variant}: {m}"),
        )
    except Exception as error:
        breakdown_error = error_line(error)
    return BenchmarkOutcome(
        frame=result.to_frame(),
        configs=tuple(configs),
        baseline=controls.variants[baseline],
        breakdown=breakdown,
        breakdown_variant=breakdown_variant,
        breakdown_error=breakdown_error,
        stored=stored,
        settings=settings_of(controls),
    )


def _each_variant(configs: Sequence[RunConfig], progress: Progress, measure) -> pd.DataFrame:
    """`measure(config, on_progress)` for each config, the progress bar split evenly between
    them and prefixed with the variant; their frames in one."""
    frames = []
    for index, config in enumerate(configs):
        start, end = index / len(configs), (index + 1) / len(configs)
        frames.append(
            measure(
                config,
                lambda f, m, s=start, e=end, v=config.variant: progress(
                    s + (e - s) * f, f"{v}: {m}"
                ),
            )
        )
    return pd.concat(frames, ignore_index=True)


def run_sweeps(controls: Controls, axis: str, values: Sequence[int], progress: Progress):
    """Every selected variant swept over `axis`; each point is stored as it finishes."""
    store = result_store()
    frame = _each_variant(
        controls.configs(),
        progress,
        lambda config, on_progress: sweep(
            config,
            axis,
            values,
            warmup=controls.warmup,
            repeats=controls.repeats,
            on_progress=on_progress,
            on_point=store.add,
        ),
    )
    return {"frame": frame, "axis": axis, "settings": settings_of(controls)}


def replica_configs(controls: Controls) -> list[RunConfig]:
    """The selected variants as one replica's run: the sidebar's batch is each replica's."""
    return [config.replace(strategy="mirrored", device="auto") for config in controls.configs()]


def run_replica_sweeps(controls: Controls, counts: Sequence[int], progress: Progress):
    """Every selected variant on 1, 2, ... mirrored replicas (weak scaling); each measured
    count is stored as it finishes."""
    from hierlstm.timing.sweeps import replica_sweep

    store = result_store()

    def measure(config, on_progress):
        frame = replica_sweep(
            config,
            counts,
            warmup=controls.warmup,
            repeats=controls.repeats,
            on_progress=on_progress,
            on_point=store.add,
        )
        return frame.assign(variant=config.variant)[["variant", *frame.columns]]

    frame = _each_variant(replica_configs(controls), progress, measure)
    return {"frame": frame, "axis": "replicas", "settings": settings_of(controls)}

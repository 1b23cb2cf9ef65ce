"""What the timing pages run, through the same run-and-store functions as the command line
(`hierlstm.measure`): the benchmark with its per-layer split, the sweeps over time, batch
or replicas, and the TensorFlow Profiler's captures beside the separate-call split. Each
returns an outcome that keeps the records it measured (with their `RunConfig`s); the page draws
it."""

from __future__ import annotations

import dataclasses
import functools
import tempfile
from collections.abc import Sequence

import pandas as pd

from hierlstm import measure
from hierlstm.app.caches import note_write, result_store
from hierlstm.app.runs import Progress
from hierlstm.app.sidebar import Controls
from hierlstm.config import RunConfig, data_folder
from hierlstm.profiling import ProfileResult, zip_logdir
from hierlstm.records import CompareResult
from hierlstm.refusals import Refused, writable_folder
from hierlstm.timing import RUN_FAILURES, error_line, layer_breakdown


def kept(run):
    """`run()`'s return value, also when the store refused its writes (the run's records are
    shown all the same; the banner says why they were not kept)."""
    try:
        measured = run()
    except measure.NotStored as error:
        note_write(error.refused)
        return error.measured
    note_write(None)
    return measured


def settings_of(controls: Controls) -> dict:
    """What a run depends on, to say when the sidebar has changed since it ran."""
    return {"variants": controls.variants, "config": controls.config, "timing": controls.timing}


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
        return self.compared.to_frame()


def run_benchmark(controls: Controls, breakdown_variant: str, progress: Progress):
    configs = controls.configs
    baseline = controls.variants.index("nested") if "nested" in controls.variants else 0
    compared, ids = kept(
        lambda: measure.compare_and_store(
            configs,
            controls.timing,
            result_store(),
            baseline=baseline,
            on_progress=lambda f, m: progress(0.8 * f, m),
        )
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
        baseline=controls.variants[baseline],
        breakdown=breakdown,
        breakdown_variant=breakdown_variant,
        breakdown_error=breakdown_error,
        stored=len(ids),
        settings=settings_of(controls),
        ids=tuple(ids),
    )


def _each_variant(configs: Sequence[RunConfig], progress: Progress, run) -> pd.DataFrame:
    """`run(config, on_progress)` for each config, the progress bar split evenly between
    them and prefixed with the variant; their frames in one."""
    frames = []
    for index, config in enumerate(configs):
        start, end = index / len(configs), (index + 1) / len(configs)
        frames.append(
            run(
                config,
                lambda f, m, s=start, e=end, v=config.variant: progress(
                    s + (e - s) * f, f"{v}: {m}"
                ),
            )
        )
    return pd.concat(frames, ignore_index=True)


def run_sweeps(controls: Controls, axis: str, values: Sequence[int], progress: Progress):
    """Every selected variant swept over `axis`; each point is stored as it finishes."""
    frame = _each_variant(
        controls.configs,
        progress,
        lambda config, on_progress: kept(
            lambda: measure.sweep_and_store(
                config, axis, values, controls.timing, result_store(), on_progress=on_progress
            )
        ),
    )
    return {"frame": frame, "axis": axis, "settings": settings_of(controls)}


def replica_configs(controls: Controls) -> list[RunConfig]:
    """The selected variants as one replica's run: the sidebar's batch is each replica's."""
    return [config.replace(strategy="mirrored", device="auto") for config in controls.configs]


def run_replica_sweeps(controls: Controls, counts: Sequence[int], progress: Progress):
    """Every selected variant on 1, 2, ... mirrored replicas (weak scaling); each measured
    count is stored as it finishes."""

    def run(config, on_progress):
        frame = kept(
            lambda: measure.replica_sweep_and_store(
                config, counts, controls.timing, result_store(), on_progress=on_progress
            )
        )
        return frame.assign(variant=config.variant)[["variant", *frame.columns]]

    frame = _each_variant(replica_configs(controls), progress, run)
    return {"frame": frame, "axis": "replicas", "settings": settings_of(controls)}


@dataclasses.dataclass(frozen=True)
class VariantProfile:
    """One variant on the Profile page: its profile (or why it failed), the separate-call
    split of the same layers, the capture as a .zip, the stored row's id."""

    variant: str
    result: ProfileResult | None
    separate: pd.DataFrame | None
    archive: bytes
    stored_id: str | None
    error: str = ""


def capture_folder() -> str | None:
    """Where a profile's capture goes: the default folder (None) when the data folder takes
    files, else a new temporary folder, so a profile still runs and shows (the banner says
    that results are not kept, and why)."""
    try:
        writable_folder("profile", data_folder() / "profiles")
    except Refused:
        return tempfile.mkdtemp(prefix="hierlstm-profile-")
    return None


@dataclasses.dataclass(frozen=True)
class ProfileOutcome:
    profiles: tuple[VariantProfile, ...]
    settings: dict  # `settings_of` the controls it ran with, and the steps


def run_profiles(controls: Controls, steps: int, progress: Progress) -> ProfileOutcome:
    """Each selected variant profiled for `steps` steps (its summary row stored), then its
    layers timed as separate calls on the same settings; a variant's failure is its one line,
    the others still run."""
    profiles = []
    count = len(controls.configs)
    for index, config in enumerate(controls.configs):

        def part(start, end, offset=index, prefix=config.variant):
            return lambda f, m: progress(
                (offset + start + (end - start) * f) / count, f"{prefix}: {m}"
            )

        try:
            result, stored = kept(
                lambda config=config: measure.profile_and_store(
                    config,
                    controls.timing,
                    result_store(),
                    steps=steps,
                    logdir=capture_folder(),
                    on_progress=part(0, 0.7),
                )
            )
            separate = layer_breakdown(config, controls.timing, on_progress=part(0.7, 1))
        except RUN_FAILURES as error:
            failed = VariantProfile(config.variant, None, None, b"", None, error_line(error))
            profiles.append(failed)
            continue
        archive = zip_logdir(result.logdir)
        profiles.append(VariantProfile(config.variant, result, separate, archive, stored))
    settings = {**settings_of(controls), "steps": steps}
    return ProfileOutcome(tuple(profiles), settings)

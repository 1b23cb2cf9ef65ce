"""Run and store: the timing entry points that the command line and every app page call, so
that what is timed is stored the same way everywhere.

Each function times through `hierlstm.timing` with one `Timing`, stores every result it gets
(a failed one too) in `store` when one is given, and returns the records. A sweep stores each
point as it finishes, so a sweep stopped half-way keeps what it measured. A profile that fails
raises (there is no failed profile record) and stores nothing. None of them takes the device
lock: the caller holds it around the call (`hierlstm.timing.runlock.hold`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from hierlstm.config import RunConfig, Timing
from hierlstm.results.store import ResultStore
from hierlstm.timing.harness import Progress, compare
from hierlstm.timing.profiler import DEFAULT_STEPS, ProfileResult, profile
from hierlstm.timing.records import CompareResult
from hierlstm.timing.sweeps import replica_sweep, scaling, sweep


def _add_all(store: ResultStore | None, results) -> list[str]:
    return [store.add(result) for result in results if result is not None] if store else []


def compare_and_store(
    configs: Sequence[RunConfig],
    timing: Timing,
    store: ResultStore | None,
    *,
    baseline: int = 0,
    on_progress: Progress | None = None,
) -> tuple[CompareResult, list[str]]:
    """`compare` in interleaved rounds, then every result stored; (outcome, stored ids)."""
    outcome = compare(configs, timing, baseline=baseline, on_progress=on_progress)
    return outcome, _add_all(store, outcome.results)


def scaling_and_store(
    config: RunConfig,
    timing: Timing,
    store: ResultStore | None,
    *,
    on_progress: Progress | None = None,
):
    """`scaling` (the strategy's run beside one replica), both stored; (outcome, stored ids)."""
    outcome = scaling(config, timing, on_progress=on_progress)
    return outcome, _add_all(store, (outcome.result, outcome.one_replica))


def sweep_and_store(
    config: RunConfig,
    axis: str,
    values: Iterable[int],
    timing: Timing,
    store: ResultStore | None,
    *,
    on_progress: Progress | None = None,
) -> pd.DataFrame:
    """`sweep` over `axis`, each point stored as it finishes."""
    on_point = store.add if store else None
    return sweep(config, axis, values, timing, on_progress=on_progress, on_point=on_point)


def replica_sweep_and_store(
    config: RunConfig,
    counts: Iterable[int],
    timing: Timing,
    store: ResultStore | None,
    *,
    on_progress: Progress | None = None,
) -> pd.DataFrame:
    """`replica_sweep` over 1, 2, ... replicas, each measured count stored as it finishes."""
    on_point = store.add if store else None
    return replica_sweep(config, counts, timing, on_progress=on_progress, on_point=on_point)


def profile_and_store(
    config: RunConfig,
    timing: Timing,
    store: ResultStore | None,
    *,
    steps: int = DEFAULT_STEPS,
    logdir: str | Path | None = None,
    on_progress: Progress | None = None,
) -> tuple[ProfileResult, str | None]:
    """`profile` of `steps` steps, then its summary row stored; (result, stored id or None)."""
    result = profile(config, timing, steps=steps, logdir=logdir, on_progress=on_progress)
    return result, store.add_profile(result) if store else None

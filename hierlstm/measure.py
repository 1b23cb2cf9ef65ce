"""Run and store: the timing entry points that the command line and every app page call, so
that what is timed is stored the same way everywhere.

Each function times through `hierlstm.timing` with one `Timing`, stores every result it gets
(a failed one too) in `store` when one is given, and returns the records. A sweep stores each
point as it finishes, so a sweep stopped half-way keeps what it measured. A profile that fails
raises (there is no failed profile record) and stores nothing. None of them takes the device
lock: the caller holds it around the call (`hierlstm.admission.runlock.hold`).

When the store refuses a write (a full disk, a folder gone read-only), nothing measured is lost:
the run goes on unstored and then raises `NotStored`, which carries what it measured, the ids
stored before the refusal, and the refusal, for the caller to show the result and say why it was
not kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from hierlstm.config import RunConfig, Timing
from hierlstm.profiling import DEFAULT_STEPS, ProfileResult, profile
from hierlstm.records import CompareResult
from hierlstm.refusals import Refused
from hierlstm.results.store import ResultStore
from hierlstm.timing import replica_sweep, scaling, sweep
from hierlstm.timing.harness import Progress, compare


class NotStored(Exception):
    """A run that was measured but not (all) stored: `measured` is what the function would have
    returned, `ids` what was stored before `refused`."""

    def __init__(self, measured: Any, ids: list[str], refused: Refused):
        super().__init__(str(refused))
        self.measured, self.ids, self.refused = measured, ids, refused


class _Keeper:
    """Stores each result until the store first refuses one; then remembers why and stores no
    more, so the run itself goes on."""

    def __init__(self, store: ResultStore | None, add=None):
        self.store, self.ids, self.refused = store, [], None
        self._add = add or (store.add if store else None)

    def __call__(self, result) -> None:
        if self._add is None or self.refused is not None or result is None:
            return
        try:
            self.ids.append(self._add(result))
        except Refused as error:
            self.refused = error

    def done(self, measured):
        """`measured`, or `NotStored` if a write was refused."""
        if self.refused is not None:
            raise NotStored(measured, self.ids, self.refused)
        return measured


def _add_all(store: ResultStore | None, results, outcome):
    """(outcome, the stored ids), or NotStored carrying them."""
    keeper = _Keeper(store)
    for result in results:
        keeper(result)
    return keeper.done((outcome, keeper.ids))


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
    return _add_all(store, outcome.results, outcome)


def scaling_and_store(
    config: RunConfig,
    timing: Timing,
    store: ResultStore | None,
    *,
    on_progress: Progress | None = None,
):
    """`scaling` (the strategy's run beside one replica), both stored; (outcome, stored ids)."""
    outcome = scaling(config, timing, on_progress=on_progress)
    return _add_all(store, (outcome.result, outcome.one_replica), outcome)


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
    keeper = _Keeper(store)
    return keeper.done(
        sweep(config, axis, values, timing, on_progress=on_progress, on_point=keeper)
    )


def replica_sweep_and_store(
    config: RunConfig,
    counts: Iterable[int],
    timing: Timing,
    store: ResultStore | None,
    *,
    on_progress: Progress | None = None,
) -> pd.DataFrame:
    """`replica_sweep` over 1, 2, ... replicas, each measured count stored as it finishes."""
    keeper = _Keeper(store)
    return keeper.done(
        replica_sweep(config, counts, timing, on_progress=on_progress, on_point=keeper)
    )


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
    keeper = _Keeper(store, store.add_profile if store else None)
    keeper(result)
    keeper.done((result, None))
    return result, keeper.ids[0] if keeper.ids else None

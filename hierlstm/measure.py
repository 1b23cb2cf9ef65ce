"""Run and store: the one path from configs to stored results for the CLI and every app page. Where
a run happens is `hierlstm.backends.dispatch`'s decision. Every result (a failed one too) is stored
as it arrives; a failed profile raises and stores nothing. The caller holds the device lock. Each
function returns one `Stored` record to both faces: what was measured, the ids stored and, when the
store refused a write, why (the run goes on unstored: `Keeper`). No TensorFlow imported here."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hierlstm.backends.dispatch import place
from hierlstm.config import RunConfig, Timing
from hierlstm.refusals import Refused
from hierlstm.timing.basics import Progress, no_progress
from hierlstm.timing.points import sweep_points


@dataclasses.dataclass(frozen=True)
class Stored:
    """A run-and-store call's outcome: `value`, what it measured (a comparison, a sweep's frame, a
    profile, ...); `ids`, the rows stored, in the order of its results; `refused`, why the store
    refused a write (the rest went unstored), None when every write landed."""

    value: Any
    ids: tuple[str, ...] = ()
    refused: Refused | None = None

    @property
    def reason(self) -> str:
        """Why it was not (all) stored, in one sentence; "" when it was."""
        return "" if self.refused is None else str(self.refused)

    @property
    def first_id(self) -> str | None:
        """The first stored row's id (a profile's or a rewrite's one row), None when none."""
        return self.ids[0] if self.ids else None


class Keeper:
    """Stores each result until the store first refuses one; then remembers why and stores no
    more, so the run itself goes on. `add` takes the store's own method for other records (a
    profile's summary row)."""

    def __init__(self, store, add=None):
        self.ids: list[str] = []
        self.refused: Refused | None = None
        self._add = add or (store.add if store is not None else None)

    def __call__(self, *results) -> None:
        for result in results:
            if self._add is None or self.refused is not None:
                return
            if result is None:
                continue
            try:
                self.ids.append(self._add(result))
            except Refused as error:
                self.refused = error

    def done(self, measured) -> Stored:
        """`measured` with the ids stored and why a write was refused, if one was."""
        return Stored(measured, tuple(self.ids), self.refused)


def _stored(store, results, outcome) -> Stored:
    keeper = Keeper(store)
    keeper(*results)
    return keeper.done(outcome)


def compare_and_store(
    configs: Sequence[RunConfig],
    timing: Timing,
    store,
    *,
    baseline: int = 0,
    on_progress: Progress | None = None,
) -> Stored:
    """`configs` compared in interleaved rounds, in this process or the backends' workers (the
    process's shared pool), then every result stored: a `CompareResult`'s `Stored`."""
    configs = list(configs)
    outcome = place(configs).compare(configs, timing, baseline=baseline, on_progress=on_progress)
    return _stored(store, outcome.results, outcome)


def scaling_and_store(config: RunConfig, timing: Timing, store, *, on_progress=None) -> Stored:
    """`scaling` (the strategy's run beside one replica, in this process: tf.distribute is
    TensorFlow's), both stored: a `ScalingResult`'s `Stored`."""
    from hierlstm.timing import scaling

    outcome = scaling(config, timing, on_progress=on_progress)
    return _stored(store, (outcome.result, outcome.one_replica), outcome)


def sweep_and_store(
    config: RunConfig,
    axis: str,
    values: Iterable[int],
    timing: Timing,
    store,
    *,
    on_progress: Progress | None = None,
):
    """`config` timed at each value of `axis` where its backend runs (`dispatch.place`), each point
    stored as it finishes; a value the config refuses is a failed row (`points.sweep_points`): a
    frame's `Stored`, columns variant, axis, value, status, error, then the result's row."""
    keeper, where = Keeper(store), place([config])
    frame = sweep_points(
        config,
        axis,
        values,
        lambda point, progress: where.benchmark(point, timing, on_progress=progress),
        on_progress=on_progress,
        on_point=keeper,
    )
    return keeper.done(frame)


def replica_sweep_and_store(
    config: RunConfig,
    counts: Iterable[int],
    timing: Timing,
    store,
    *,
    on_progress: Progress | None = None,
) -> Stored:
    """`replica_sweep` over 1, 2, ... replicas, each measured count stored as it finishes: a
    frame's `Stored`."""
    from hierlstm.timing import replica_sweep

    keeper = Keeper(store)
    return keeper.done(
        replica_sweep(config, counts, timing, on_progress=on_progress, on_point=keeper)
    )


def profile_and_store(
    config: RunConfig,
    timing: Timing,
    store,
    *,
    steps: int,
    logdir: str | Path | None = None,
    on_progress: Progress | None = None,
):
    """`config` profiled for `steps` steps where its backend runs (`dispatch.place`) and its summary
    row stored: a `ProfileResult`'s `Stored`. The capture goes to `logdir` (default a new folder
    under the data folder). A failed run raises (the pool's `RunFailed` from a worker)."""
    result = place([config]).profile(
        config, timing, steps=steps, logdir=logdir, on_progress=on_progress
    )
    keeper = Keeper(store, store.add_profile if store is not None else None)
    keeper(result)
    return keeper.done(result)


def rewrite_bench_and_store(model, info, shapes, repeats: int, store, *, on_progress=None):
    """A user's model and its rewrite (`hierlstm.yours.rewrite`) timed side by side at `shapes`,
    forward and training step in interleaved rounds, and the run's row stored with the model's
    name and file hash (`info`, a `hierlstm.yours.load.ModelFile`): the `Stored` of (changes,
    check, timing), its value None when nothing can be rewritten."""
    from hierlstm.hardware import versions
    from hierlstm.results.audits import audit_row
    from hierlstm.yours import rewrite

    progress = on_progress or no_progress
    rewritten, changes = rewrite.rewrite(model)
    if rewritten is None:
        return Stored(None)
    check = rewrite.check(model, rewritten, shapes)
    progress(0.1, "timing the original and the rewrite")
    timing = rewrite.bench(model, rewritten, shapes, repeats)
    progress(1.0, "timed")
    row = audit_row(
        model_name=info.name,
        file_sha256=info.sha256,
        input_shapes=shapes,
        changes=[vars(change) for change in changes],
        check=check.to_dict(),
        medians={name: value["median_s"] for name, value in timing.to_dict().items()},
        rounds=repeats,
        versions=versions(),
    )
    keeper = Keeper(store, store.add_audit if store is not None else None)
    keeper(row)
    return keeper.done((changes, check, timing))

"""Run and store: the one path from configs to stored results for the CLI and every app page. Where
a run happens is `backends.pool.compare`'s decision. Every result (a failed one too) is stored as it
arrives; a failed profile raises and stores nothing. The caller holds the device lock. When the
store refuses a write, the run goes on unstored and then raises `NotStored` with what it measured
(`Keeper`). No TensorFlow imported here."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from hierlstm.config import RunConfig, Timing
from hierlstm.records import CompareResult
from hierlstm.refusals import Refused
from hierlstm.timing.basics import Progress, no_progress, share

IN_PROCESS = "tensorflow"  # the backend that runs in this process; every other has a worker


class NotStored(Exception):
    """A run that was measured but not (all) stored: `measured` is what the function would have
    returned, `ids` what was stored before `refused`."""

    def __init__(self, measured: Any, ids: list[str], refused: Refused):
        super().__init__(str(refused))
        self.measured, self.ids, self.refused = measured, ids, refused


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

    def done(self, measured):
        """`measured`, or `NotStored` carrying it if a write was refused."""
        if self.refused is not None:
            raise NotStored(measured, self.ids, self.refused)
        return measured


def _stored(store, results, outcome):
    """(outcome, the stored ids), or NotStored carrying them."""
    keeper = Keeper(store)
    keeper(*results)
    return keeper.done((outcome, keeper.ids))


def compare_and_store(
    configs: Sequence[RunConfig],
    timing: Timing,
    store,
    *,
    baseline: int = 0,
    on_progress: Progress | None = None,
) -> tuple[CompareResult, list[str]]:
    """`configs` compared in interleaved rounds, in this process or the backends' workers (the
    process's shared pool), then every result stored; (outcome, stored ids)."""
    from hierlstm.backends.pool import compare

    outcome = compare(list(configs), timing, baseline=baseline, on_progress=on_progress, lock=False)
    return _stored(store, outcome.results, outcome)


def scaling_and_store(config: RunConfig, timing: Timing, store, *, on_progress=None):
    """`scaling` (the strategy's run beside one replica), both stored; (outcome, stored ids)."""
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
    """`config` timed at each value of `axis`, each point stored as it finishes: a frame with
    columns variant, axis, value, status, error, then the result's row."""
    keeper = Keeper(store)
    if config.backend == IN_PROCESS:
        from hierlstm.timing import sweep

        return keeper.done(
            sweep(config, axis, values, timing, on_progress=on_progress, on_point=keeper)
        )
    import pandas as pd

    from hierlstm.backends.pool import compare

    values, rows = list(values), []
    for index, value in enumerate(values):
        progress = share(on_progress or no_progress, index, len(values), f"{axis}={value}: ")
        point = config.replace(**{axis: value})
        (result,) = compare([point], timing, on_progress=progress, lock=False).results
        keeper(result)
        rows.append({**result.to_row(), "axis": axis, "value": value})
    frame = pd.DataFrame(rows)
    first = ["variant", "axis", "value", "status", "error"]
    return keeper.done(frame[first + [c for c in frame.columns if c not in first]])


def replica_sweep_and_store(
    config: RunConfig,
    counts: Iterable[int],
    timing: Timing,
    store,
    *,
    on_progress: Progress | None = None,
):
    """`replica_sweep` over 1, 2, ... replicas, each measured count stored as it finishes."""
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
    """`config` profiled for `steps` steps and its summary row stored: (`ProfileResult`, stored id
    or None). JAX's and torch's profiles run in the backend's worker; the capture goes to `logdir`
    (default a new folder under the data folder). A failed run raises the pool's `RunFailed`."""
    if config.backend == IN_PROCESS:
        from hierlstm.profiling import profile

        result = profile(config, timing, steps=steps, logdir=logdir, on_progress=on_progress)
    else:
        from hierlstm.backends.pool import shared_pool
        from hierlstm.backends.profiles import read_profile
        from hierlstm.profiling.record import new_capture_folder

        logdir = logdir if logdir is not None else new_capture_folder(config)
        here = importlib.util.find_spec("tensorflow") is not None  # else the worker reads it
        document = shared_pool().profile(config, timing, steps=steps, logdir=logdir, read=not here)
        result = read_profile(document)
    keeper = Keeper(store, store.add_profile if store is not None else None)
    keeper(result)
    keeper.done((result, None))
    return result, keeper.ids[0] if keeper.ids else None


def rewrite_bench_and_store(model, info, shapes, repeats: int, store, *, on_progress=None):
    """A user's model and its rewrite (`hierlstm.yours.rewrite`) timed side by side at `shapes`,
    forward and training step in interleaved rounds, and the run's row stored with the model's
    name and file hash (`info`, a `hierlstm.yours.load.ModelFile`): (changes, check, timing,
    stored id or None). (None, None, None, None) when nothing can be rewritten."""
    from hierlstm.hardware import versions
    from hierlstm.results.audits import audit_row
    from hierlstm.yours import rewrite

    progress = on_progress or no_progress
    rewritten, changes = rewrite.rewrite(model)
    if rewritten is None:
        return None, None, None, None
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
    return keeper.done((changes, check, timing, keeper.ids[0] if keeper.ids else None))

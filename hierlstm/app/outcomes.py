"""What every page's run shares: the outcome's one shape (the settings it ran with, its table,
its records), a run-and-store call of `hierlstm.measure` whose refused writes the banner says
(`stored_run`), the settings a run depends on, and a run per config with the
progress bar shared between them."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pandas as pd

from hierlstm.app import state
from hierlstm.app.caches import note_write, result_store
from hierlstm.app.runs import Progress
from hierlstm.app.sidebar import Controls
from hierlstm.config import RunConfig
from hierlstm.measure import Stored
from hierlstm.timing.basics import share


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What a page's run leaves to draw: the settings it ran with (`settings_of`, and the
    page's own inputs), to say when the sidebar has changed since; its table; its records."""

    settings: dict
    frame: pd.DataFrame | None = None
    records: tuple = ()


def stored_run(run_and_store, *arguments, **options) -> Stored:
    """`run_and_store(*arguments, the results store, **options)`'s `Stored` record, its refusal
    noted for the banner (the run's records are shown all the same; the banner says why they
    were not kept) or its landing noted."""
    stored = run_and_store(*arguments, result_store(), **options)
    note_write(stored.refused)
    return stored


def settings_of(controls: Controls) -> dict:
    """What a run depends on, to say when the sidebar has changed since it ran."""
    return {
        "variants": controls.variants,
        "backends": controls.backends,
        "config": controls.config,
        "timing": controls.timing,
    }


def each_variant(configs: Sequence[RunConfig], progress: Progress, run) -> pd.DataFrame:
    """`run(config, on_progress)` for each config, the progress bar split evenly between
    them and prefixed with the variant (and its backend, when several run); their frames in
    one."""
    several = len({config.backend for config in configs}) > 1
    frames = [
        run(config, share(progress, index, len(configs), f"{state.label(config, several)}: "))
        for index, config in enumerate(configs)
    ]
    return pd.concat(frames, ignore_index=True)

"""A sweep's points: one config measured at each value of an axis (time steps, batch size), a
row each, status first. The one loop of every sweep, here (`sweeps.sweep`) and in the backends'
workers (`hierlstm.measure`), so a value the config refuses is treated one way: a "failed" row
saying why, and the sweep goes on. The points come as a `SweepFrame`, which a notebook shows as
the Scaling page's table. No TensorFlow."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import pandas as pd

from hierlstm.config import SWEEP_AXES, RunConfig, SettingError
from hierlstm.i18n import DEFAULT_LANGUAGE, t
from hierlstm.records import COLUMN_KINDS, ROW_COLUMNS, BenchResult
from hierlstm.tables import Shown, Table, headed
from hierlstm.timing.basics import Progress, no_progress, scaled_progress

_MAX_ERROR_CHARS = 300
# A sweep row is the point (variant, axis, value) and then the result's row, status first.
_SWEEP_COLUMNS = (
    "variant",
    "axis",
    "value",
    "status",
    "error",
    *(column for column in ROW_COLUMNS if column not in ("variant", "status", "error")),
)
# What a sweep's table shows of each point (the frame keeps every column).
SWEEP_TABLE_COLUMNS = (
    "variant",
    "backend",
    "value",
    "status",
    "median_s",
    "p10_s",
    "p90_s",
    "samples_per_s",
    "kernel",
    "error",
)
# What a rejected value, which has no config to measure, holds in each column of its kind.
_NO_VALUE = {"float": math.nan, "int": math.nan, "bool": math.nan, "text": ""}


def _sweep_row(variant: str, axis: str, value, result: BenchResult | None, error: str = ""):
    point = {"variant": variant, "axis": axis, "value": value}
    if result is None:  # the value itself was rejected: there is no config to measure
        missing = {column: _NO_VALUE[kind] for column, kind in COLUMN_KINDS.items()}
        return {**missing, **point, "status": "failed", "error": error}
    return {**result.to_row(), **point}


def sweep_table(frame: pd.DataFrame, lang: str = DEFAULT_LANGUAGE) -> pd.DataFrame:
    """A sweep's points (`sweep_points`' columns, one variant's or several's) as the Scaling
    page's table: `SWEEP_TABLE_COLUMNS`, headed in `lang`, the value headed by its axis."""
    shown = frame.reindex(columns=list(SWEEP_TABLE_COLUMNS))
    axes = set(frame["axis"]) if "axis" in frame else set()
    if len(axes) == 1:
        shown = shown.rename(columns={"value": t("axis_name." + axes.pop(), lang)})
    return headed(shown, lang)


class SweepFrame(Shown, pd.DataFrame):
    """`sweep_points`' answer: a DataFrame with every column, which a notebook shows as the
    Scaling page's table (`SWEEP_TABLE_COLUMNS`; `show("zh")`: in Chinese). What is made from
    it (a selection, a copy, a concatenation) is a plain DataFrame."""

    def tables(self, lang: str = DEFAULT_LANGUAGE) -> list[Table]:
        axes = set(self["axis"])
        axis = t("axis_name." + axes.pop(), lang) if len(axes) == 1 else ""
        return [Table(t("scaling.table", lang, axis=axis), sweep_table(self, lang))]


def setting_line(error: ValueError) -> str:
    """A refused setting in one line: "invalid setting: " and its message's first line."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return f"invalid setting: {lines[0] if lines else type(error).__name__}"[:_MAX_ERROR_CHARS]


def sweep_points(
    config: RunConfig,
    axis: str,
    values: Iterable[int],
    measure: Callable[[RunConfig, Progress], BenchResult],
    *,
    on_progress: Progress | None = None,
    on_point: Callable[[BenchResult], None] | None = None,
) -> pd.DataFrame:
    """`measure(point, on_progress)` of `config` at each value of `axis` ("time_steps" or
    "batch_size"); a value the config refuses is a "failed" row (no point to measure or to
    give `on_point`). Columns: variant, axis, value, status, error, then `BenchResult.to_row`'s."""
    if axis not in SWEEP_AXES:
        raise ValueError(f"axis must be one of {', '.join(SWEEP_AXES)}; got {axis!r}.")
    progress = on_progress or no_progress
    values = list(values)
    rows = []
    for index, value in enumerate(values):
        # Each point starts just above where the previous ended, so fractions keep increasing.
        start, end = (index + 0.01) / len(values), (index + 1) / len(values)
        point_progress = scaled_progress(progress, start, end, f"{axis}={value}: ")
        try:
            point = config.replace(**{axis: value})
        except SettingError as error:
            rows.append(_sweep_row(config.variant, axis, value, None, setting_line(error)))
            point_progress(1.0, "rejected")
            continue
        result = measure(point, point_progress)  # a failing point is a failed result
        if on_point is not None:
            on_point(result)
        rows.append(_sweep_row(config.variant, axis, value, result))
    return SweepFrame(rows, columns=list(_SWEEP_COLUMNS))

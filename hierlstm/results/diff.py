"""Two stored runs compared: the settings that differ, the ratio of medians B / A with an interval,
and a verdict. 0.8 means B takes 80 % of A's time (B is faster).

The interval (`CONFIDENCE`) is a percentile bootstrap of the ratio from both runs' samples,
resampled independently (the runs are not paired, and a median of skewed times has no closed form);
a row stored without samples falls back to the normal approximation of a median's error, 1.2533 *
(IQR / 1.349) / sqrt(n), on the log scale. B is faster when the whole interval lies below 1 -
`BAND`, slower above 1 + `BAND` (1 %, as torch.utils.benchmark's `Compare`), within noise otherwise.
`DiffError` refuses an unknown id, a failed run, or two different tasks."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hierlstm.i18n import MessageError, t
from hierlstm.records import CONFIG_COLUMNS, VERSION_COLUMNS

CONFIDENCE = 0.95
BAND = 0.01  # torch.utils.benchmark Compare: within 1 % of the best counts as the best
RESAMPLES = 2000
SEED = 0
# The columns compared for `changed`: the settings, where the run ran, the library versions.
COMPARED_COLUMNS = (*CONFIG_COLUMNS.values(), "device", *VERSION_COLUMNS.values())
VERDICTS = ("faster", "slower", "within_noise")
_Z = 1.959963984540054  # the normal quantile of (1 + CONFIDENCE) / 2
_SIGMA_PER_IQR = 1 / 1.3489795003921634  # a normal distribution's sigma over its IQR
_MEDIAN_SE_FACTOR = math.sqrt(math.pi / 2)  # sd of a sample median = 1.2533 sigma / sqrt(n)


class DiffError(MessageError, ValueError):
    """Two runs that cannot be compared: a catalogue key (`results.diff.refuse.*`) and its
    values; `str()` is the English sentence, `sentence(lang)` any language's."""


@dataclasses.dataclass(frozen=True)
class RunDiff:
    """Run B against run A. `ratio` = median_b / median_a, `low`-`high` its `confidence`
    interval by `method` ("bootstrap" of samples, or "iqr": the stored IQR and repeats),
    `verdict` one of `VERDICTS` (of B against A), `changed` {column: [a, b]} for every column
    of `COMPARED_COLUMNS` that differs."""

    id_a: str
    id_b: str
    median_a_s: float
    median_b_s: float
    ratio: float
    low: float
    high: float
    verdict: str
    method: str
    changed: dict[str, list]
    confidence: float = CONFIDENCE
    band: float = BAND

    def rule(self, lang: str = "en") -> str:
        """The rule that gave the interval and the verdict, in one paragraph."""
        interval = t(
            f"results.diff.rule.{self.method}",
            lang,
            confidence=round(self.confidence * 100),
            resamples=RESAMPLES,
            seed=SEED,
        )
        verdict = t(
            "results.diff.rule.verdict",
            lang,
            below=1 - self.band,
            above=1 + self.band,
            band=round(self.band * 100),
        )
        return f"{interval} {verdict}"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: every field, then `rule` (English)."""
        return {**dataclasses.asdict(self), "rule": self.rule("en")}


def compare_rows(
    row_a: Mapping[str, Any],
    row_b: Mapping[str, Any],
    samples_a: Sequence[float] | None = None,
    samples_b: Sequence[float] | None = None,
) -> RunDiff:
    """Run B (`row_b`) against run A (`row_a`), rows of `ResultStore.rows()`. `samples_*`: each
    run's times, shape (repeats,), by default the rows' `samples_json`. Raises DiffError for a
    failed run or two runs of different tasks."""
    for row in (row_a, row_b):
        if row["status"] != "ok" or not math.isfinite(row["median_s"]):
            raise DiffError(
                "results.diff.refuse.failed", id=_short(row["id"]), error=row["error"] or "—"
            )
    if row_a["task"] != row_b["task"]:
        raise DiffError(
            "results.diff.refuse.task",
            a=_short(row_a["id"]),
            b=_short(row_b["id"]),
            task_a=row_a["task"],
            task_b=row_b["task"],
        )
    samples_a = _stored_samples(row_a) if samples_a is None else samples_a
    samples_b = _stored_samples(row_b) if samples_b is None else samples_b
    if _usable(samples_a) and _usable(samples_b):
        method = "bootstrap"
        a, b = np.asarray(samples_a, np.float64), np.asarray(samples_b, np.float64)
        median_a, median_b = float(np.median(a)), float(np.median(b))
        low, high = bootstrap_interval(a, b)
    else:
        method = "iqr"
        median_a, median_b = float(row_a["median_s"]), float(row_b["median_s"])
        low, high = iqr_interval(row_a, row_b)
    ratio = median_b / median_a
    return RunDiff(
        id_a=str(row_a["id"]),
        id_b=str(row_b["id"]),
        median_a_s=median_a,
        median_b_s=median_b,
        ratio=ratio,
        low=low,
        high=high,
        verdict=verdict(low, high),
        method=method,
        changed=changed(row_a, row_b),
    )


def verdict(low: float, high: float, band: float = BAND) -> str:
    """ "faster" (B) when the whole interval lies below 1 - band, "slower" when above 1 + band,
    else "within_noise"."""
    if high < 1 - band:
        return "faster"
    if low > 1 + band:
        return "slower"
    return "within_noise"


def changed(row_a: Mapping[str, Any], row_b: Mapping[str, Any]) -> dict[str, list]:
    """{column: [a, b]} for each of `COMPARED_COLUMNS` whose values differ, as plain Python."""
    return {
        column: [_plain(row_a[column]), _plain(row_b[column])]
        for column in COMPARED_COLUMNS
        if _plain(row_a[column]) != _plain(row_b[column])
    }


def bootstrap_interval(
    samples_a: np.ndarray, samples_b: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED
) -> tuple[float, float]:
    """The `CONFIDENCE` percentile interval of median(b*) / median(a*) over `resamples`
    independent resamples (with replacement) of each run's samples, shapes (n_a,) and (n_b,)."""
    generator = np.random.default_rng(seed)
    picks_a = generator.integers(0, len(samples_a), (resamples, len(samples_a)))
    picks_b = generator.integers(0, len(samples_b), (resamples, len(samples_b)))
    ratios = np.median(samples_b[picks_b], axis=1) / np.median(samples_a[picks_a], axis=1)
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(ratios, [tail, 1 - tail])
    return float(low), float(high)


def iqr_interval(row_a: Mapping[str, Any], row_b: Mapping[str, Any]) -> tuple[float, float]:
    """The `CONFIDENCE` interval of median_b / median_a from each row's IQR and repeats: each
    median's relative standard error `1.2533 * (IQR / 1.349) / sqrt(n) / median`, added in
    quadrature on the log scale. A run of one repeat (IQR 0) counts as exact."""
    spread = math.hypot(_relative_median_se(row_a), _relative_median_se(row_b))
    ratio = row_b["median_s"] / row_a["median_s"]
    return ratio * math.exp(-_Z * spread), ratio * math.exp(_Z * spread)


def find_row(rows: Sequence[Mapping[str, Any]], wanted: str) -> Mapping[str, Any]:
    """The row whose id is `wanted`, or the one row whose id starts with it.

    Raises DiffError when none does, or when several start with it.
    """
    wanted = wanted.strip()
    exact = [row for row in rows if row["id"] == wanted]
    found = exact or [row for row in rows if wanted and str(row["id"]).startswith(wanted)]
    if not found:
        raise DiffError("results.diff.refuse.unknown", id=wanted)
    if len(found) > 1:
        raise DiffError("results.diff.refuse.ambiguous", id=wanted, count=len(found))
    return found[0]


def previous_row(
    rows: Sequence[Mapping[str, Any]], row: Mapping[str, Any], exclude: Sequence[str] = ()
) -> Mapping[str, Any] | None:
    """The newest ok row stored before `row` with the same settings (every config column) on
    the same device, skipping the ids in `exclude` (the run `row` belongs to); None if none."""
    earlier = [
        other
        for other in rows
        if other["id"] != row["id"]
        and other["id"] not in exclude
        and other["status"] == "ok"
        and other["created_at"] < row["created_at"]
        and all(
            _plain(other[column]) == _plain(row[column])
            for column in (*CONFIG_COLUMNS.values(), "device")
        )
    ]
    return max(earlier, key=lambda other: other["created_at"], default=None)


def _relative_median_se(row: Mapping[str, Any]) -> float:
    repeats, iqr = int(row["repeats"]), float(row["iqr_s"])
    if repeats < 2 or not math.isfinite(iqr):
        return 0.0
    return _MEDIAN_SE_FACTOR * iqr * _SIGMA_PER_IQR / math.sqrt(repeats) / row["median_s"]


def _stored_samples(row: Mapping[str, Any]) -> list[float]:
    """A stored row's samples (`samples_json`, results schema 5); [] for a row kept without."""
    return json.loads(row.get("samples_json") or "[]")


def _usable(samples) -> bool:
    return samples is not None and len(samples) >= 2


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def _short(identifier) -> str:
    return str(identifier)[:8]

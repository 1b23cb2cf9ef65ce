"""Two runs compared, ready to draw (`hierlstm.results.diff`): the pickers' labels and their
default pair, the summary sentence, the changed settings as a table, and the Benchmark page's
table of each variant against the previous run of its settings. Plain values and frames, in the
session's language; no Streamlit, no TensorFlow."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from hierlstm.i18n import t
from hierlstm.results import diff

Row = Mapping[str, Any]


def run_label(row: Row, lang: str) -> str:
    """A stored run in a picker: the start of its id, variant, task, sizes, precision, XLA,
    device and time (UTC, to the minute)."""
    parts = [str(row["id"])[:8], str(row["variant"])]
    if row["task"] == "training":
        parts.append(t("task.training", lang))
    parts += [
        f"b{row['batch_size']} t{row['time_steps']}",
        str(row["precision"]) + (" · XLA" if row["xla"] else ""),
        str(row["device"]).split(" ")[0],
        str(row["created_at"])[:16].replace("T", " "),
    ]
    return " · ".join(parts)


def default_pair(rows: Sequence[Row]) -> tuple[int, int]:
    """(index of A, index of B) in `rows` (newest first, at least two): B the newest run, A the
    newest one before it of the same task, else the second."""
    same_task = [i for i in range(1, len(rows)) if rows[i]["task"] == rows[0]["task"]]
    return (same_task[0] if same_task else 1), 0


def summary(compared: diff.RunDiff, lang: str) -> str:
    """The verdict, the ratio B/A with its interval and both medians, in one sentence."""
    return t(
        f"results.diff.summary.{compared.verdict}",
        lang,
        ratio=compared.ratio,
        low=compared.low,
        high=compared.high,
        confidence=round(compared.confidence * 100),
        a_ms=compared.median_a_s * 1e3,
        b_ms=compared.median_b_s * 1e3,
    )


def changed_frame(compared: diff.RunDiff, lang: str) -> pd.DataFrame:
    """One row per changed setting: its name (the column's header) and A's and B's values."""
    headers = [t(f"results.diff.col.{name}", lang) for name in ("setting", "a", "b")]
    rows = [
        (t(f"column.{column}", lang), str(a), str(b)) for column, (a, b) in compared.changed.items()
    ]
    return pd.DataFrame(rows, columns=headers)


def against_previous(
    rows: Sequence[Row], run_ids: Sequence[str], lang: str
) -> tuple[pd.DataFrame, list[str]]:
    """Each ok row of this run (`run_ids`, stored; `rows` every stored row) against the newest
    earlier stored run of the same settings (its backend too) on the same device, each named
    "variant · backend" when the run had several: that run, the ratio now /
    previous, its interval, the verdict and what changed (library versions); "no earlier run
    of these settings" where there is none. Then the rules the comparisons followed (one per
    interval method, in order)."""
    by_id = {row["id"]: row for row in rows}
    ran = [by_id[run_id] for run_id in run_ids if run_id in by_id]
    several = len({row["backend"] for row in ran}) > 1  # each name says its backend, as charts do
    table, rules = [], []
    for row in ran:
        if row["status"] != "ok":
            continue
        previous = diff.previous_row(rows, row, exclude=run_ids)
        line = {"variant": f"{row['variant']} · {row['backend']}" if several else row["variant"]}
        if previous is None:
            none = t("bench.diff.none", lang)
            line |= {"previous": none, "ratio": math.nan, "interval": "—", "verdict": "—"}
            line["changed"] = "—"
        else:
            compared = diff.compare_rows(previous, row)
            if compared.rule(lang) not in rules:
                rules.append(compared.rule(lang))
            line |= {
                "previous": run_label(previous, lang),
                "ratio": round(compared.ratio, 3),
                "interval": f"{compared.low:.3f}–{compared.high:.3f}",
                "verdict": t(f"results.diff.verdict.{compared.verdict}", lang),
                "changed": ", ".join(
                    f"{t(f'column.{column}', lang)} {a} → {b}"
                    for column, (a, b) in compared.changed.items()
                )
                or "—",
            }
        table.append(line)
    columns = ("variant", "previous", "ratio", "interval", "verdict", "changed")
    frame = pd.DataFrame(table, columns=list(columns))
    headers = {name: t(f"bench.diff.col.{name}", lang) for name in columns}
    return frame.rename(columns=headers), rules

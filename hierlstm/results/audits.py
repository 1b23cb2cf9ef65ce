"""The `audits` table: one row per timed run of the Your model page beside `results` in the same
file: the model's name and its file's hash, the input shapes, the rewrite's changes and check, the
median seconds of the original's and the rewrite's forward pass and training step, the rounds and
the versions. The audit itself is recomputed from the file, so only what was measured is kept."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from hierlstm.records import VERSION_COLUMNS
from hierlstm.results.profiles import table_sql

AUDIT_KINDS = {
    **dict.fromkeys(("id", "created_at", "host", "model_name", "file_sha256"), "text"),
    **dict.fromkeys(("input_shapes_json", "changes_json"), "text"),
    "check_matches": "bool",
    "output_diff": "float",
    "gradient_diff": "float",
    **dict.fromkeys(
        ("original_forward_s", "rewritten_forward_s", "original_step_s", "rewritten_step_s"),
        "float",
    ),
    "rounds": "int",
    **dict.fromkeys(VERSION_COLUMNS.values(), "text"),
}
AUDIT_COLUMNS = tuple(AUDIT_KINDS)
CREATE_AUDITS, CREATE_AUDITS_INDEX, INSERT_AUDIT, SELECT_AUDITS = table_sql("audits", AUDIT_KINDS)


def audit_row(
    *,
    model_name: str,
    file_sha256: str,
    input_shapes: Sequence[Sequence[int]],
    changes: Sequence[Mapping[str, str]],
    check: Mapping[str, Any],
    medians: Mapping[str, float],
    rounds: int,
    versions: Mapping[str, str],
) -> dict[str, Any]:
    """The row of one timed run without its context (id, created_at, host). `medians`: seconds
    by "original/forward", "rewritten/forward", "original/step", "rewritten/step"."""
    row = {
        "model_name": model_name,
        "file_sha256": file_sha256,
        "input_shapes_json": json.dumps([list(shape) for shape in input_shapes]),
        "changes_json": json.dumps([dict(change) for change in changes]),
        "check_matches": bool(check["matches"]),
        "output_diff": float(check["output_diff"]),
        "gradient_diff": float(check["gradient_diff"]),
        "rounds": int(rounds),
    }
    for name, seconds in medians.items():
        model, phase = name.split("/")
        row[f"{model}_{phase}_s"] = float(seconds)
    row.update({column: versions.get(key, "") for key, column in VERSION_COLUMNS.items()})
    return row

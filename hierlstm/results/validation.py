"""Checking a row before it is stored, whether measured or imported: each column by its kind, the
config by `RunConfig` itself (so messages name the field, value and range). `checked_rows` checks a
whole file and raises one ValueError naming the bad rows."""

from __future__ import annotations

import json
import math
import numbers
import re
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from hierlstm.config import RunConfig
from hierlstm.records import CONFIG_COLUMNS, PHASE_COLUMNS, ROW_COLUMNS
from hierlstm.results.schema import (
    COLUMNS,
    KINDS,
    V1_COLUMNS,
    V2_COLUMNS,
    V4_COLUMNS,
    V6_COLUMNS,
    ResultsError,
    row_from_v1,
    row_from_v2,
    row_from_v4,
    row_from_v6,
)

STATUSES = ("ok", "failed")
KERNELS = ("cudnn", "generic")
MISMATCHED = object()  # marks a CSV row with more or fewer fields than its header
_ERRORS_SHOWN = 3  # bad rows named in an import error; the rest are counted
_LARGEST_WHOLE = 2**63 - 1  # SQLite INTEGER
_RESULT_COLUMNS = tuple(column for column in ROW_COLUMNS if column not in CONFIG_COLUMNS.values())


def checked_rows(raw_rows: list[Any], export_version: int) -> list[dict[str, Any]]:
    """Every row of an import, validated and normalised; one ValueError naming the bad rows
    (numbered from 1) if any is bad."""
    columns, as_today = _FORMATS.get(export_version, (COLUMNS, None))
    rows, problems = [], []
    for number, raw in enumerate(raw_rows, start=1):
        try:
            _require_columns(raw, columns)
            rows.append(checked_row(raw if as_today is None else as_today(raw)))
        except ValueError as error:
            problems.append(f"row {number}: {error}")
    if problems:
        named = " ".join(problems[:_ERRORS_SHOWN])
        more = f"; the first {_ERRORS_SHOWN} shown" if len(problems) > _ERRORS_SHOWN else ""
        summary = f"({len(problems)} of {len(raw_rows)} rows bad{more})"
        raise ResultsError(f"import rejected: {named} {summary}".replace("\n", " "))
    return rows


def checked_row(raw: Any) -> dict[str, Any]:
    """A row with the columns `COLUMNS`, as the typed values to store (None for a missing
    time). Raises ValueError naming the first bad column."""
    _require_columns(raw, COLUMNS)
    failed = _choice("status", raw["status"], STATUSES) == "failed"
    settings = _config(raw).to_dict()
    row = {
        "id": _uuid(raw["id"]),
        "created_at": utc_timestamp(raw["created_at"]),
        "host": _text("host", raw["host"]),
    }
    row.update({column: settings[name] for name, column in CONFIG_COLUMNS.items()})
    # A forward pass has no phase times; a training step has them unless it failed.
    phases_missing = failed or settings["task"] != "training"
    for column in _RESULT_COLUMNS:
        missing = phases_missing if column in PHASE_COLUMNS else failed
        row[column] = _result_value(column, raw[column], failed=failed, may_be_missing=missing)
    return row


def _v1_row(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A version-1 row (config and versions as objects, or JSON text in a CSV) as today's."""
    settings = _json_object("config", raw["config"])
    known = list(CONFIG_COLUMNS)
    unknown = [name for name in settings if name not in known]
    if unknown:
        raise ResultsError(
            f"config has unknown setting {unknown[0]!r}; known settings are {', '.join(known)}."
        )
    configured = settings.get("variant", RunConfig.variant)  # RunConfig's default if missing
    if raw["variant"] != configured:
        raise ResultsError(
            f"variant {shown(raw['variant'])} differs from the config's {shown(configured)}."
        )
    _check_versions(raw["versions"])
    return row_from_v1(raw, settings)


# An older export's version -> the columns its rows have, and its row as today's: version 1 kept
# the config as an object, version 2 had no training columns (a forward pass), version 3 no
# backend columns (a TensorFlow run), version 4 no runtime versions (no runtime ran it).
_FORMATS = {
    1: (V1_COLUMNS, _v1_row),
    2: (V2_COLUMNS, row_from_v2),
    3: (V4_COLUMNS, row_from_v4),
    4: (V6_COLUMNS, row_from_v6),
}


def format_columns(export_version: int) -> tuple[str, ...]:
    """The columns every row of an export of `export_version` has."""
    return _FORMATS.get(export_version, (COLUMNS, None))[0]


def _require_columns(raw: Any, columns: tuple[str, ...]):
    if not isinstance(raw, Mapping):
        raise ResultsError(f"a row must be an object; got {shown(raw)}.")
    if MISMATCHED in raw or MISMATCHED in raw.values():
        raise ResultsError("has a different number of fields from the header.")
    missing = [column for column in columns if column not in raw]
    if missing:
        raise ResultsError(f"missing {', '.join(missing)}.")


def _config(raw: Mapping[str, Any]) -> RunConfig:
    """The row's RunConfig; its ValueError names the field, the value and the range."""
    return RunConfig(
        **{name: _setting(KINDS[column], raw[column]) for name, column in CONFIG_COLUMNS.items()}
    )


def _setting(kind: str, value: Any) -> Any:
    """A config value as its type where the text or number plainly is one ("4" or 4.0 for an
    int, "true" for a bool); anything else as given, for RunConfig to refuse."""
    if kind == "int":
        if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d{1,12}\s*", value):
            return int(value)
        if isinstance(value, float) and value.is_integer():
            return int(value)
    if kind == "bool":
        flag = _flag_value(value)
        return value if flag is None else flag
    return value


def _result_value(column: str, value: Any, *, failed: bool, may_be_missing: bool) -> Any:
    if column == "status":
        return _choice(column, value, STATUSES)
    if column == "kernel":  # a run that failed before its first call never chose a kernel
        return _choice(column, value, (*KERNELS, "") if failed else KERNELS)
    if column == "samples_json":
        return _samples(column, value)
    kind = KINDS[column]
    if kind == "float":
        return _time(column, value, may_be_missing=may_be_missing)
    if kind == "int":
        return _whole(column, value)
    if kind == "bool":
        return _flag(column, value)
    return _text(column, value)


def _samples(name: str, value: Any) -> str:
    """A JSON list of times in seconds (finite, not negative), as its JSON text."""
    try:
        samples = json.loads(_text(name, value))
    except json.JSONDecodeError:
        samples = None
    if not isinstance(samples, list) or not all(
        isinstance(sample, numbers.Real)
        and not isinstance(sample, bool)
        and math.isfinite(sample)
        and sample >= 0
        for sample in samples
    ):
        raise ResultsError(
            f"{name} must be a JSON list of times in seconds (numbers, not negative); "
            f"got {shown(value)}."
        )
    return json.dumps(samples)


def shown(value: Any) -> str:
    """A short one-line repr for messages, whatever size the value is."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ResultsError(f"{name} must be text; got {shown(value)}.")
    return value


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ResultsError(f"{name} must be one of {', '.join(allowed)}; got {shown(value)}.")
    return value


def _uuid(value: Any) -> str:
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        raise ResultsError(f"id must be a UUID; got {shown(value)}.") from None


def utc_timestamp(value: Any) -> str:
    """ISO 8601 in UTC with microseconds, so text order is time order. Naive means UTC."""
    moment = value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            moment = None
    if not isinstance(moment, datetime):
        raise ResultsError(f"created_at must be an ISO 8601 date and time; got {shown(value)}.")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _json_object(name: str, value: Any) -> dict:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ResultsError(f"{name} must be a JSON object; got {shown(value)}.") from None
    if not isinstance(value, dict):
        raise ResultsError(f"{name} must be a JSON object; got {shown(value)}.")
    return value


def _check_versions(value: Any):
    for key, version in _json_object("versions", value).items():
        if not isinstance(version, str):
            raise ResultsError(f"versions[{key!r}] must be text; got {shown(version)}.")


def _flag_value(value: Any) -> bool | None:
    """True or False for true/false or 1/0, as a bool, a number or text; else None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return {"1": True, "true": True, "0": False, "false": False}.get(value.strip().lower())
    if isinstance(value, numbers.Real) and value in (0, 1):
        return bool(value)
    return None


def _flag(name: str, value: Any) -> bool:
    flag = _flag_value(value)
    if flag is None:
        raise ResultsError(f"{name} must be true or false (or 1 or 0); got {shown(value)}.")
    return flag


def _whole(name: str, value: Any) -> int:
    number = value
    if isinstance(value, str) and re.fullmatch(r"\s*\d{1,19}\s*", value):
        number = int(value)
    elif isinstance(value, numbers.Real) and float(value).is_integer():
        number = int(value)  # also numpy integers, and 3.0 from a JSON writer
    if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= _LARGEST_WHOLE:
        raise ResultsError(f"{name} must be a whole number, 0 or more; got {shown(value)}.")
    return number


def _time(name: str, value: Any, *, may_be_missing: bool) -> float | None:
    """A non-negative finite float, or None (stored NULL) where a failed run has no value."""
    number = value
    if isinstance(value, str):
        try:
            number = float(value) if value.strip() else None
        except ValueError:
            raise ResultsError(f"{name} must be a number; got {shown(value)}.") from None
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)  # also numpy floats
    if number is None or (isinstance(number, float) and math.isnan(number)):
        if may_be_missing:
            return None
        raise ResultsError(f"{name} must be a number when status is ok; got {shown(value)}.")
    if not isinstance(number, float):
        raise ResultsError(f"{name} must be a number; got {shown(value)}.")
    if not math.isfinite(number) or number < 0:
        raise ResultsError(f"{name} must be a finite number, 0 or more; got {shown(value)}.")
    return number

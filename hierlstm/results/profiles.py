"""The `profiles` table: one summary row per profiler run beside `results` in the same file: the
context, the config's columns (its device as `device_spec`), the per-step times (`profiled_step_s`,
`harness_median_s`, `op_s`, `outside_s`), the top layer and op type, the layers, top op types and
kernels as JSON, `logdir` and the versions. The capture stays in its folder."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hierlstm.records import COLUMN_KINDS, CONFIG_COLUMNS, VERSION_COLUMNS

if TYPE_CHECKING:
    from hierlstm.profiling import ProfileResult

TOP_OP_TYPES = 10  # op types kept in a row's op_types_json, most time first
_MEASURED = {
    "steps": "int",
    "warmup": "int",
    "harness_repeats": "int",
    "profiled_step_s": "float",
    "harness_median_s": "float",
    "op_s": "float",
    "outside_s": "float",
    "top_layer": "text",
    "top_layer_share": "float",
    "top_op_type": "text",
    "top_op_share": "float",
    "layers_json": "text",
    "op_types_json": "text",
    "kernels_json": "text",
    "device": "text",
    "kernel": "text",
    "logdir": "text",
}
PROFILE_KINDS = {
    **dict.fromkeys(("id", "created_at", "host"), "text"),
    **{column: COLUMN_KINDS[column] for column in CONFIG_COLUMNS.values()},
    **_MEASURED,
    **dict.fromkeys(VERSION_COLUMNS.values(), "text"),
}
PROFILE_COLUMNS = tuple(PROFILE_KINDS)

_SQL_TYPES = {"float": "REAL NOT NULL", "int": "INTEGER NOT NULL", "bool": "INTEGER NOT NULL"}


def table_sql(table: str, kinds: Mapping[str, str]) -> tuple[str, str, str, str]:
    """A table beside `results` whose columns are `kinds` ({column: "text" | "float" | "int" |
    "bool"}, "id" first): its CREATE, its index by time, its INSERT and its SELECT."""
    columns = ",\n    ".join(
        "id TEXT PRIMARY KEY"
        if column == "id"
        else f"{column} {_SQL_TYPES.get(kind, 'TEXT NOT NULL')}"
        for column, kind in kinds.items()
    )
    names = ", ".join(kinds)
    return (
        f"CREATE TABLE IF NOT EXISTS {table} (\n    {columns}\n)",
        f"CREATE INDEX IF NOT EXISTS {table}_by_time ON {table} (created_at)",
        f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' for _ in kinds)})",
        f"SELECT {names} FROM {table}",
    )


CREATE_PROFILES, CREATE_PROFILES_INDEX, INSERT_PROFILE, SELECT_PROFILES = table_sql(
    "profiles", PROFILE_KINDS
)
FRAME_DTYPES = {
    column: {"float": "float64", "int": "int64", "bool": "bool", "text": "object"}[kind]
    for column, kind in PROFILE_KINDS.items()
}


def _records(frame, columns) -> list[dict[str, Any]]:
    return [{column: row[column] for column in columns} for row in frame.to_dict(orient="records")]


def profile_row(result: ProfileResult) -> dict[str, Any]:
    """The row of `result` without its context (id, created_at, host)."""
    settings = result.config.to_dict()
    top_layer, top_layer_share = result.top("layers", "layer")
    top_op_type, top_op_share = result.top("op_types", "type")
    layer_columns = ("layer", "type", "time_s", "share", "ops")
    op_columns = ("type", "time_s", "share", "ops")
    kernel_columns = ("kernel", "op_type", "layer", "time_s", "launches")
    row = {column: settings[name] for name, column in CONFIG_COLUMNS.items()}
    row.update(
        steps=result.steps,
        warmup=result.warmup,
        harness_repeats=result.harness_repeats,
        profiled_step_s=result.profiled_step_s,
        harness_median_s=result.harness_median_s,
        op_s=result.op_s,
        outside_s=result.outside_s,
        top_layer=top_layer,
        top_layer_share=top_layer_share,
        top_op_type=top_op_type,
        top_op_share=top_op_share,
        layers_json=json.dumps(_records(result.layers, layer_columns)),
        op_types_json=json.dumps(_records(result.op_types.head(TOP_OP_TYPES), op_columns)),
        kernels_json=json.dumps(_records(result.kernels.head(TOP_OP_TYPES), kernel_columns)),
        device=result.device,
        kernel=result.kernel,
        logdir=result.logdir,
    )
    row.update({column: result.versions.get(key, "") for key, column in VERSION_COLUMNS.items()})
    return row


def sql_value(kind: str, value: Any) -> Any:
    """A row value as SQLite stores it: numbers as Python numbers, booleans as 0 or 1."""
    if kind == "bool":
        return int(bool(value))
    if kind == "int":
        return int(value)
    if kind == "float":
        return float(value)
    return str(value)

"""The results table on disk: its columns, SQL and version (PRAGMA user_version), and the migration
of an older file, each in the caller's one transaction. Column types come from
`records.COLUMN_KINDS`, so a new BenchResult field needs no edit here; only floats may be NULL. Each
`row_from_vN` gives an older row today's columns: v1's JSON `config` spread out, v2's training
columns as a forward pass's, v4's backend columns as TensorFlow's with no samples. Schema 4 added
the `profiles` table."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hierlstm.config import RunConfig
from hierlstm.records import COLUMN_KINDS, CONFIG_COLUMNS, PHASE_COLUMNS, ROW_COLUMNS
from hierlstm.refusals import Refusal, Refused
from hierlstm.results.audits import CREATE_AUDITS, CREATE_AUDITS_INDEX
from hierlstm.results.profiles import CREATE_PROFILES, CREATE_PROFILES_INDEX


class ResultsError(ValueError):
    """A results file or an import this hierlstm cannot take: not a results database, a newer
    schema, a malformed or oversized export, a bad row. One sentence that names the file, the
    row or the field; nothing is written."""


SCHEMA_VERSION = 7  # PRAGMA user_version; bump with a migration when the columns change
CONTEXT_COLUMNS = ("id", "created_at", "host")
COLUMNS = (*CONTEXT_COLUMNS, *ROW_COLUMNS)
KINDS = {**dict.fromkeys(CONTEXT_COLUMNS, "text"), **COLUMN_KINDS}  # column -> kind

_SQL_TYPES = {
    "float": "REAL",
    "int": "INTEGER NOT NULL",
    "bool": "INTEGER NOT NULL",  # 0 or 1
    "text": "TEXT NOT NULL",
}
_COLUMN_SQL = ",\n    ".join(
    "id TEXT PRIMARY KEY" if column == "id" else f"{column} {_SQL_TYPES[kind]}"
    for column, kind in KINDS.items()
)
_CREATE_TABLE = f"CREATE TABLE IF NOT EXISTS results (\n    {_COLUMN_SQL}\n)"
_CREATE_INDEX = "CREATE INDEX IF NOT EXISTS results_by_time ON results (created_at)"

_PLACEHOLDERS = ", ".join("?" for _ in COLUMNS)
SELECT = f"SELECT {', '.join(COLUMNS)} FROM results"
INSERT = f"INSERT INTO results ({', '.join(COLUMNS)}) VALUES ({_PLACEHOLDERS})"
INSERT_NEW = f"INSERT OR IGNORE INTO results ({', '.join(COLUMNS)}) VALUES ({_PLACEHOLDERS})"

# Schema 1's columns, as that version wrote them; frozen, unlike COLUMNS.
V1_COLUMNS = (
    *("id", "created_at", "host", "device"),
    *("tensorflow_version", "keras_version", "python_version", "numpy_version"),
    *("variant", "config"),
    *("first_call_s", "median_s", "p10_s", "p90_s", "iqr_s", "mean_s", "std_s", "min_s"),
    *("repeats", "warmup", "noisy", "samples_per_s", "steps_per_s", "flops", "gflops_per_s"),
    *("peak_memory_bytes", "peak_memory_kind", "kernel", "kernel_reason", "trace_count"),
    *("versions", "status", "error"),
)
_CONFIG_DEFAULTS = {field.name: field.default for field in dataclasses.fields(RunConfig)}
# Schema 3's new columns and what a row of schema 2 (a forward pass) holds in each: the config's
# defaults (task inference, optimizer sgd), NULL for the phase times, 0 activations kept.
ADDED_IN_V3 = {
    "task": _CONFIG_DEFAULTS["task"],
    "optimizer": _CONFIG_DEFAULTS["optimizer"],
    **dict.fromkeys(PHASE_COLUMNS),
    "kept_activation_bytes": 0,
}
# Schema 5's new columns and what a row of an older schema holds in each: it ran on TensorFlow.
ADDED_IN_V5 = {
    "backend": "tensorflow",
    "jax_version": "",
    "torch_version": "",
    "samples_json": "[]",
}
# Of them, those the profiles table has too (its config and version columns).
PROFILES_ADDED_IN_V5 = {"backend": "tensorflow", "jax_version": "", "torch_version": ""}
# Schema 7's new columns, in the results, profiles and audits tables alike: the inference
# runtimes' versions, "" in every older row (no runtime ran it).
ADDED_IN_V7 = {"onnxruntime_version": "", "openvino_version": ""}
# The tables that hold the version columns, and the schema that created each.
VERSIONED_TABLES = {"results": 1, "profiles": 4, "audits": 6}
# Schema 3's and 4's results columns (the same), as those versions wrote them; frozen.
V4_COLUMNS = (
    *("id", "created_at", "host"),
    *("variant", "batch_size", "time_steps", "height", "filters", "kernel_size", "pool_height"),
    *("inner_units", "outer_units", "precision", "xla", "lstm_kernel", "device_spec"),
    *("strategy", "devices", "task", "optimizer"),
    *("first_call_s", "median_s", "p10_s", "p90_s", "iqr_s", "mean_s", "std_s", "min_s"),
    *("repeats", "warmup", "noisy", "samples_per_s", "steps_per_s", "flops", "gflops_per_s"),
    *("peak_memory_bytes", "peak_memory_kind", "kernel", "kernel_reason", "trace_count"),
    *("device", "forward_median_s", "forward_p10_s", "forward_p90_s"),
    *("forward_backward_median_s", "forward_backward_p10_s", "forward_backward_p90_s"),
    *("update_median_s", "update_p10_s", "update_p90_s", "phase_sum_s"),
    *("kept_activation_bytes", "status", "error"),
    *("python_version", "tensorflow_version", "keras_version", "numpy_version"),
)
# Schema 5's and 6's results columns, as those versions wrote them: today's without schema 7's.
V6_COLUMNS = tuple(column for column in COLUMNS if column not in ADDED_IN_V7)
# Schema 2's columns, as that version wrote them: schema 4's without the training ones.
V2_COLUMNS = tuple(column for column in V4_COLUMNS if column not in ADDED_IN_V3)


def user_version(connection: sqlite3.Connection) -> int:
    return connection.execute("PRAGMA user_version").fetchone()[0]


def refuse_newer(path: Path, version: int):
    """Raises `Refused` (kind "newer") for a file of a newer schema than SCHEMA_VERSION: it is
    never written to, so the hierlstm that wrote it can still read it."""
    if version > SCHEMA_VERSION:
        raise Refused(Refusal("results", str(path), "newer", str(version)))


def upgrade(connection: sqlite3.Connection, path: Path):
    """Brings the file to SCHEMA_VERSION inside the caller's transaction: creates the table in
    a new file, migrates an older one. Raises ValueError if a stored row cannot be migrated
    (the caller's rollback then leaves the file as it was)."""
    version = user_version(connection)  # another process may have just created or migrated it
    if version == SCHEMA_VERSION:
        return
    refuse_newer(path, version)
    if version == 0:
        _create(connection)
    elif version in (1, 2, 3, 4):
        _migrate(connection, path, version)
    elif version in (5, 6):  # schema 6 added the audits table (created below), 7 two columns
        _add_runtime_versions(connection, version)
    else:
        raise ResultsError(f"{path} has results schema version {version}, which no hierlstm wrote.")
    if version == 4:  # its profiles table gains the backend columns, with a TensorFlow run's values
        for column, value in {**PROFILES_ADDED_IN_V5, **ADDED_IN_V7}.items():
            connection.execute(
                f"ALTER TABLE profiles ADD COLUMN {column} TEXT NOT NULL DEFAULT '{value}'"
            )
    _create_profiles(connection)  # schema 4: the profiles table, whatever the file had
    connection.execute(CREATE_AUDITS)  # schema 6: the Your model page's timed runs
    connection.execute(CREATE_AUDITS_INDEX)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def row_from_v1(row: Mapping[str, Any], settings: Mapping[str, Any]) -> dict[str, Any]:
    """A schema-1 row, its config already parsed into `settings`, with today's columns: the
    settings spread into theirs (a missing one takes its default), `config` and `versions`
    dropped (the version columns hold the same). Values are kept as given, unchecked."""
    spread = {
        column: settings.get(name, _CONFIG_DEFAULTS[name])
        for name, column in CONFIG_COLUMNS.items()
    }
    kept = {column: row[column] for column in V1_COLUMNS if column not in ("config", "versions")}
    return row_from_v2({**kept, **spread})


def row_from_v2(row: Mapping[str, Any]) -> dict[str, Any]:
    """A schema-2 row (a mapping with at least `V2_COLUMNS`) with today's columns: the training
    columns that it lacks take their forward-pass values (`ADDED_IN_V3`); those it has are kept.
    Values are kept as given, unchecked."""
    return row_from_v4({**ADDED_IN_V3, **row})


def row_from_v4(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row of schema 3 or 4 (a mapping with at least `V4_COLUMNS`) with today's columns: the
    backend columns that it lacks say TensorFlow ran it (`ADDED_IN_V5`); those it has are kept.
    Values are kept as given, unchecked."""
    return row_from_v6({**ADDED_IN_V5, **row})


def row_from_v6(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row of schema 5 or 6 with today's columns: no runtime ran it (`ADDED_IN_V7`)."""
    return {**ADDED_IN_V7, **row}


def _add_runtime_versions(connection: sqlite3.Connection, version: int):
    """Schema 7's version columns added to every versioned table a file of `version` has."""
    for table, created in VERSIONED_TABLES.items():
        if created <= version:
            for column, value in ADDED_IN_V7.items():
                connection.execute(
                    f"ALTER TABLE {table} ADD COLUMN {column} TEXT NOT NULL DEFAULT '{value}'"
                )


def _create(connection: sqlite3.Connection):
    connection.execute(_CREATE_TABLE)
    connection.execute(_CREATE_INDEX)


def _create_profiles(connection: sqlite3.Connection):
    connection.execute(CREATE_PROFILES)
    connection.execute(CREATE_PROFILES_INDEX)


def _migrate(connection: sqlite3.Connection, path: Path, version: int):
    # The old table steps aside (its index first, so the new one is created, not kept), every
    # row is copied in its old order (rowid breaks created_at ties), then the old table goes.
    old_columns = {1: V1_COLUMNS, 2: V2_COLUMNS}.get(version, V4_COLUMNS)
    migrate_row = {1: None, 2: row_from_v2}.get(version, row_from_v4)
    connection.execute("DROP INDEX IF EXISTS results_by_time")
    connection.execute("ALTER TABLE results RENAME TO results_old")
    _create(connection)
    old_rows = connection.execute(
        f"SELECT {', '.join(old_columns)} FROM results_old ORDER BY rowid"
    )
    for values in old_rows.fetchall():
        old = dict(zip(old_columns, values, strict=True))
        row = row_from_v1(old, _v1_settings(path, old)) if version == 1 else migrate_row(old)
        connection.execute(INSERT, [row[column] for column in COLUMNS])
    connection.execute("DROP TABLE results_old")


def _v1_settings(path: Path, old: Mapping[str, Any]) -> dict[str, Any]:
    try:
        settings = json.loads(old["config"])
    except (TypeError, json.JSONDecodeError):
        settings = None
    if not isinstance(settings, dict):
        raise ResultsError(
            f"cannot migrate {path} from results schema 1: the config of row {old['id']} is "
            f"not a JSON object ({str(old['config'])[:60]!r})."
        )
    return settings

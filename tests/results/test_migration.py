"""A results file written before the result row (schema 1, tests/fixtures/results-v1.sqlite3)
opens, reads and exports with the same values, and the exports made from it with the old code
import to the same rows. The fixture is copied first: opening a file migrates it."""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
import sqlite3
from pathlib import Path

import pytest
from factories import is_missing, same

from hierlstm.config import RunConfig
from hierlstm.records import COLUMN_KINDS, CONFIG_COLUMNS, VERSION_COLUMNS, BenchResult
from hierlstm.results import schema
from hierlstm.results.store import ResultStore

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
V1_FILE = FIXTURES / "results-v1.sqlite3"
V1_ROWS = json.loads((FIXTURES / "results-v1.json").read_text())["rows"]
V1_CSV = (FIXTURES / "results-v1.csv").read_text()
MEASURED = [name for name in COLUMN_KINDS if name not in CONFIG_COLUMNS.values()]


def copied_fixture(directory: Path) -> Path:
    """The schema-1 file (and any WAL side files) copied into `directory`."""
    for suffix in ("", "-wal", "-shm"):
        source = V1_FILE.with_name(V1_FILE.name + suffix)
        if source.exists():
            shutil.copy2(source, directory / source.name)
    return directory / V1_FILE.name


# What schema 3 added, as a forward pass holds it: written out here, not read from the code.
PHASES = ("forward", "forward_backward", "update")
V3_DEFAULTS = {
    "task": "inference",
    "optimizer": "sgd",
    **{f"{phase}_{stat}_s": None for phase in PHASES for stat in ("median", "p10", "p90")},
    "phase_sum_s": None,
    "kept_activation_bytes": 0,
}
V5_DEFAULTS = {
    "backend": "tensorflow",
    "jax_version": "",
    "torch_version": "",
    "samples_json": "[]",
}


def flattened(v1_row: dict) -> dict:
    """A version-1 export row as today's row: the config spread into its columns, the
    `versions` object into the version columns (which v1 also had; "" for the JAX and torch
    versions it did not know), the columns schema 3 added with a forward pass's values and
    those schema 5 added with a TensorFlow run's that kept no samples, nothing else changed."""
    row = {key: value for key, value in v1_row.items() if key not in ("config", "versions")}
    row.update({CONFIG_COLUMNS[name]: value for name, value in v1_row["config"].items()})
    row.update({column: v1_row["versions"].get(key, "") for key, column in VERSION_COLUMNS.items()})
    defaults = {**V3_DEFAULTS, **V5_DEFAULTS}
    row.update({column: value for column, value in defaults.items() if column not in row})
    return row


def v1_result(v1_row: dict) -> BenchResult:
    """The BenchResult a version-1 export row describes, built without the new row code (the
    fields version 1 did not have keep the record's defaults: a forward pass's)."""
    fields = {name: v1_row[name] for name in MEASURED if name in v1_row}
    fields = {name: value for name, value in fields.items() if name not in VERSION_COLUMNS.values()}
    fields = {name: math.nan if value is None else value for name, value in fields.items()}
    return BenchResult(config=RunConfig(**v1_row["config"]), versions=v1_row["versions"], **fields)


def typed_cell(kind: str, text: str):
    if kind == "float":
        return None if text == "" else float(text)
    if kind in ("int", "bool"):
        return int(text)  # a bool is 1 or 0 in both versions' CSV
    return text


@pytest.fixture
def migrated(tmp_path) -> ResultStore:
    return ResultStore(copied_fixture(tmp_path))


def test_the_fixture_is_a_schema_1_file():
    with sqlite3.connect(f"file:{V1_FILE}?mode=ro", uri=True) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 1
        columns = [row[1] for row in connection.execute("PRAGMA table_info(results)")]
    assert tuple(columns) == schema.V1_COLUMNS and len(V1_ROWS) == 8


def test_opening_migrates_to_today_s_columns_and_version(migrated):
    with sqlite3.connect(migrated.path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
        columns = [row[1] for row in connection.execute("PRAGMA table_info(results)")]
        tables = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        indexes = connection.execute("SELECT tbl_name FROM sqlite_master WHERE type = 'index'")
        assert [name for (name,) in tables] == ["results", "profiles"]  # schema 4's, empty
        assert ("results",) in indexes.fetchall()  # the time index came along
    assert tuple(columns) == schema.COLUMNS
    assert migrated.count() == 8
    assert ResultStore(migrated.path).count() == 8  # a second opening changes nothing


def test_every_migrated_row_holds_the_values_of_the_old_export(migrated):
    frame = migrated.rows()
    assert list(frame["id"]) == [row["id"] for row in V1_ROWS]  # same rows, same order
    for (_, stored), v1_row in zip(frame.iterrows(), V1_ROWS, strict=True):
        expected = flattened(v1_row)
        assert set(expected) == set(schema.COLUMNS)
        for column, value in expected.items():
            assert same(stored[column], value), (v1_row["id"], column, stored[column], value)
    assert list(frame["status"]).count("failed") == 1
    assert frame.dtypes["median_s"] == "float64" and frame.dtypes["xla"] == "bool"


def test_get_gives_the_result_the_old_export_describes(migrated):
    for v1_row in V1_ROWS:
        stored = migrated.get(v1_row["id"])
        expected = v1_result(v1_row)
        assert (stored.id, stored.created_at, stored.host) == (
            v1_row["id"],
            v1_row["created_at"],
            v1_row["host"],
        )
        assert stored.result.config == expected.config
        assert stored.result.versions == expected.versions
        assert stored.result.phases == expected.phases == {}  # a forward pass: no phases
        stored_row, expected_row = stored.result.to_row(), expected.to_row()
        for name in MEASURED:
            if name not in VERSION_COLUMNS.values():
                assert same(stored_row[name], expected_row[name]), name


def test_the_migrated_json_export_has_the_old_values_in_today_s_format(migrated):
    document = json.loads(migrated.export_json())
    assert (document["format"], document["version"]) == ("hierlstm-results", 4)
    assert document["rows"] == [flattened(row) for row in V1_ROWS]  # null for a missing time
    assert list(document["rows"][0]) == list(schema.COLUMNS)
    flags = [column for column, kind in COLUMN_KINDS.items() if kind == "bool"]
    assert all(type(row[flag]) is bool for row in document["rows"] for flag in flags)


def test_the_migrated_csv_export_has_the_old_values_in_today_s_format(migrated):
    new_rows = list(csv.DictReader(io.StringIO(migrated.export_csv())))
    old_rows = list(csv.DictReader(io.StringIO(V1_CSV)))
    assert len(new_rows) == len(old_rows) == 8
    kinds = {**dict.fromkeys(schema.CONTEXT_COLUMNS, "text"), **COLUMN_KINDS}
    # The columns schemas 3 and 5 added, as CSV cells of a forward pass on TensorFlow (an empty
    # cell is a NULL).
    defaults = {**V3_DEFAULTS, **V5_DEFAULTS}
    added = {column: "" if value is None else str(value) for column, value in defaults.items()}
    for new, old in zip(new_rows, old_rows, strict=True):
        assert list(new) == list(schema.COLUMNS)
        old = {**added, **old}
        settings = {**defaults, **json.loads(old["config"])}
        for column, kind in kinds.items():
            if column in CONFIG_COLUMNS.values():
                name = next(name for name, mapped in CONFIG_COLUMNS.items() if mapped == column)
                expected = settings[name]
            else:
                expected = typed_cell(kind, old[column])
            assert typed_cell(kind, new[column]) == expected, (old["id"], column)


@pytest.mark.parametrize("name", ["results-v1.json", "results-v1.csv"])
def test_the_old_exports_import_to_the_migrated_rows(migrated, tmp_path, name):
    fresh = ResultStore(tmp_path / "fresh.sqlite3")
    assert fresh.import_file(FIXTURES / name).added == 8
    assert fresh.rows().equals(migrated.rows())
    assert fresh.import_file(FIXTURES / name).skipped == 8


def test_an_old_export_is_still_checked_as_before(tmp_path):
    rows = json.loads(json.dumps(V1_ROWS[:3]))
    rows[1]["config"]["batch_size"] = 0
    rows[2]["config"]["colour"] = "red"
    rows[0]["variant"] = "nested"
    document = {"format": "hierlstm-results", "version": 1, "rows": rows}
    store = ResultStore(tmp_path / "results.sqlite3")
    with pytest.raises(ValueError) as raised:
        store.import_file(json.dumps(document).encode(), format="json")
    assert str(raised.value) == (
        "import rejected: row 1: variant 'nested' differs from the config's 'folded'. "
        "row 2: batch_size must be between 1 and 65536; got 0. "
        "row 3: config has unknown setting 'colour'; known settings are "
        f"{', '.join(CONFIG_COLUMNS)}. (3 of 3 rows bad)"
    )
    assert store.count() == 0


def test_a_row_that_cannot_migrate_leaves_the_file_as_it_was(tmp_path):
    path = copied_fixture(tmp_path)
    with sqlite3.connect(path) as connection:
        connection.execute("UPDATE results SET config = '{broken' WHERE variant = 'nested'")
    with pytest.raises(ValueError, match="cannot migrate .* from results schema 1: the config of"):
        ResultStore(path)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 1
        columns = [row[1] for row in connection.execute("PRAGMA table_info(results)")]
        assert tuple(columns) == schema.V1_COLUMNS
        assert connection.execute("SELECT count(*) FROM results").fetchone()[0] == 8


def test_missing_values_are_only_the_failed_run_s_times(migrated):
    failed = [row for row in V1_ROWS if row["status"] == "failed"][0]
    stored = migrated.rows().set_index("id").loc[failed["id"]]
    missing = {column for column in COLUMN_KINDS if is_missing(stored[column])}
    assert missing == {column for column, kind in COLUMN_KINDS.items() if kind == "float"}

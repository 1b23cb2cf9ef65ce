"""Results files of every older schema open as today's with every value kept, each old row a
forward pass on TensorFlow: schema 1 (tests/fixtures/results-v1.sqlite3, copied first: opening
migrates it), 2 and 4 (made here with their own SQL) and 3 (today's file, cut back); exports of
the older versions import to the same rows; a migration that fails leaves the file as it was."""

from __future__ import annotations

import csv
import io
import json
import math
import shutil
import sqlite3
from pathlib import Path

import pytest
from factories import is_missing, make_profile_result, make_result, same

from hierlstm.config import RunConfig
from hierlstm.records import (
    COLUMN_KINDS,
    CONFIG_COLUMNS,
    STEP_COLUMNS,
    VERSION_COLUMNS,
    BenchResult,
    Stats,
)
from hierlstm.results import schema
from hierlstm.results.profiles import PROFILE_COLUMNS
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


def schema_of(path: Path, table: str = "results") -> tuple[int, tuple[str, ...], list[str]]:
    """(user_version, `table`'s columns, the file's tables), read without opening (migrating)."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        version = connection.execute("PRAGMA user_version").fetchone()[0]
        columns = tuple(row[1] for row in connection.execute(f"PRAGMA table_info({table})"))
        found = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        return version, columns, sorted(name for (name,) in found)


def count_of(path: Path) -> int:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        return connection.execute("SELECT count(*) FROM results").fetchone()[0]


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
    step = Stats(**{stat: fields.pop(column) for stat, column in STEP_COLUMNS.items()})
    config = RunConfig(**v1_row["config"])
    return BenchResult(config=config, versions=v1_row["versions"], step=step, **fields)


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
    assert schema_of(V1_FILE) == (1, schema.V1_COLUMNS, ["results"]) and len(V1_ROWS) == 8


def test_opening_migrates_to_today_s_columns_and_version(migrated):
    today = (schema.SCHEMA_VERSION, schema.COLUMNS, ["audits", "profiles", "results"])
    assert schema_of(migrated.path) == today
    with sqlite3.connect(migrated.path) as connection:
        indexes = connection.execute("SELECT tbl_name FROM sqlite_master WHERE type = 'index'")
        assert ("results",) in indexes.fetchall()  # the time index came along
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
    assert (document["format"], document["version"]) == ("hierlstm-results", 5)
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
    defaults = {**V3_DEFAULTS, **V5_DEFAULTS, **schema.ADDED_IN_V7}
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


def test_missing_values_are_only_the_failed_run_s_times(migrated):
    failed = [row for row in V1_ROWS if row["status"] == "failed"][0]
    stored = migrated.rows().set_index("id").loc[failed["id"]]
    missing = {column for column in COLUMN_KINDS if is_missing(stored[column])}
    assert missing == {column for column, kind in COLUMN_KINDS.items() if kind == "float"}


# ---- schemas 2 and 4, written with their own SQL ---------------------------------------------

INDEX = "CREATE INDEX IF NOT EXISTS results_by_time ON results (created_at)"
PROFILES_INDEX = "CREATE INDEX IF NOT EXISTS profiles_by_time ON profiles (created_at)"
# Schema 2's table, as hierlstm wrote it before the training columns (frozen here on purpose).
V2_TABLE = """CREATE TABLE IF NOT EXISTS results (
    id TEXT PRIMARY KEY, created_at TEXT NOT NULL, host TEXT NOT NULL, variant TEXT NOT NULL,
    batch_size INTEGER NOT NULL, time_steps INTEGER NOT NULL, height INTEGER NOT NULL,
    filters INTEGER NOT NULL, kernel_size INTEGER NOT NULL, pool_height INTEGER NOT NULL,
    inner_units INTEGER NOT NULL, outer_units INTEGER NOT NULL, precision TEXT NOT NULL,
    xla INTEGER NOT NULL, lstm_kernel TEXT NOT NULL, device_spec TEXT NOT NULL,
    strategy TEXT NOT NULL, devices TEXT NOT NULL, first_call_s REAL, median_s REAL,
    p10_s REAL, p90_s REAL, iqr_s REAL, mean_s REAL, std_s REAL, min_s REAL,
    repeats INTEGER NOT NULL, warmup INTEGER NOT NULL, noisy INTEGER NOT NULL,
    samples_per_s REAL, steps_per_s REAL, flops INTEGER NOT NULL, gflops_per_s REAL,
    peak_memory_bytes INTEGER NOT NULL, peak_memory_kind TEXT NOT NULL, kernel TEXT NOT NULL,
    kernel_reason TEXT NOT NULL, trace_count INTEGER NOT NULL, device TEXT NOT NULL,
    status TEXT NOT NULL, error TEXT NOT NULL, python_version TEXT NOT NULL,
    tensorflow_version TEXT NOT NULL, keras_version TEXT NOT NULL, numpy_version TEXT NOT NULL
)"""
VERSIONS = {
    "python_version": "3.11.7",
    "tensorflow_version": "2.21.0",
    "keras_version": "3.15.1",
    "numpy_version": "2.4.6",
}
V2_ROW = {
    "id": "0b6f5a4e-3d5c-4f0e-9f5e-1c2d3e4f5a6b",
    "created_at": "2026-11-29T17:27:00.000000+00:00",
    "host": "laptop",
    **{"variant": "fused", "batch_size": 8, "time_steps": 50, "height": 36, "filters": 16},
    **{"kernel_size": 3, "pool_height": 3, "inner_units": 48, "outer_units": 60},
    **{"precision": "float32", "xla": 1, "lstm_kernel": "auto", "device_spec": "auto"},
    **{"strategy": "none", "devices": "", "first_call_s": 2.16, "median_s": 0.00365},
    **{"p10_s": 0.0034, "p90_s": 0.0041, "iqr_s": 0.00037, "mean_s": 0.0037, "std_s": 0.0002},
    **{"min_s": 0.0033, "repeats": 10, "warmup": 3, "noisy": 0, "samples_per_s": 2191.8},
    **{"steps_per_s": 109589.0, "flops": 143_000_000, "gflops_per_s": 39.14},
    **{"peak_memory_bytes": 0, "peak_memory_kind": "cpu_rss_growth", "kernel": "generic"},
    **{"kernel_reason": "no GPU visible to TensorFlow: cuDNN needs a GPU", "trace_count": 1},
    **{"device": "/CPU:0 (x86_64, 2 cores)", "status": "ok", "error": "", **VERSIONS},
}
V2_FAILED_ROW = {
    **V2_ROW,
    "id": "5e0c9a1b-7d2e-4c3f-8a9b-0c1d2e3f4a5b",
    "created_at": "2026-11-29T17:28:00.000000+00:00",
    "variant": "vectorized_map",
    **dict.fromkeys(("first_call_s", "median_s", "p10_s", "p90_s", "iqr_s", "mean_s")),
    **dict.fromkeys(("std_s", "min_s", "samples_per_s", "steps_per_s", "gflops_per_s")),
    **{"repeats": 0, "warmup": 0, "kernel": "", "kernel_reason": "", "trace_count": 0},
    **{"status": "failed", "error": "not supported here: no kernel for the If op"},
}
V2_ROWS = [V2_ROW, V2_FAILED_ROW]
# Schema 4's results table, as hierlstm wrote it (frozen here on purpose).
V4_TABLE = """CREATE TABLE IF NOT EXISTS results (
    id TEXT PRIMARY KEY, created_at TEXT NOT NULL, host TEXT NOT NULL, variant TEXT NOT NULL,
    batch_size INTEGER NOT NULL, time_steps INTEGER NOT NULL, height INTEGER NOT NULL,
    filters INTEGER NOT NULL, kernel_size INTEGER NOT NULL, pool_height INTEGER NOT NULL,
    inner_units INTEGER NOT NULL, outer_units INTEGER NOT NULL, precision TEXT NOT NULL,
    xla INTEGER NOT NULL, lstm_kernel TEXT NOT NULL, device_spec TEXT NOT NULL,
    strategy TEXT NOT NULL, devices TEXT NOT NULL, task TEXT NOT NULL, optimizer TEXT NOT NULL,
    first_call_s REAL, median_s REAL, p10_s REAL, p90_s REAL, iqr_s REAL, mean_s REAL,
    std_s REAL, min_s REAL, repeats INTEGER NOT NULL, warmup INTEGER NOT NULL,
    noisy INTEGER NOT NULL, samples_per_s REAL, steps_per_s REAL, flops INTEGER NOT NULL,
    gflops_per_s REAL, peak_memory_bytes INTEGER NOT NULL, peak_memory_kind TEXT NOT NULL,
    kernel TEXT NOT NULL, kernel_reason TEXT NOT NULL, trace_count INTEGER NOT NULL,
    device TEXT NOT NULL, forward_median_s REAL, forward_p10_s REAL, forward_p90_s REAL,
    forward_backward_median_s REAL, forward_backward_p10_s REAL, forward_backward_p90_s REAL,
    update_median_s REAL, update_p10_s REAL, update_p90_s REAL, phase_sum_s REAL,
    kept_activation_bytes INTEGER NOT NULL, status TEXT NOT NULL, error TEXT NOT NULL,
    python_version TEXT NOT NULL, tensorflow_version TEXT NOT NULL, keras_version TEXT NOT NULL,
    numpy_version TEXT NOT NULL
)"""
# Schema 4's profiles table, as hierlstm wrote it (frozen here on purpose).
V4_PROFILES = """CREATE TABLE IF NOT EXISTS profiles (
    id TEXT PRIMARY KEY, created_at TEXT NOT NULL, host TEXT NOT NULL, variant TEXT NOT NULL,
    batch_size INTEGER NOT NULL, time_steps INTEGER NOT NULL, height INTEGER NOT NULL,
    filters INTEGER NOT NULL, kernel_size INTEGER NOT NULL, pool_height INTEGER NOT NULL,
    inner_units INTEGER NOT NULL, outer_units INTEGER NOT NULL, precision TEXT NOT NULL,
    xla INTEGER NOT NULL, lstm_kernel TEXT NOT NULL, device_spec TEXT NOT NULL,
    strategy TEXT NOT NULL, devices TEXT NOT NULL, task TEXT NOT NULL, optimizer TEXT NOT NULL,
    steps INTEGER NOT NULL, warmup INTEGER NOT NULL, harness_repeats INTEGER NOT NULL,
    profiled_step_s REAL NOT NULL, harness_median_s REAL NOT NULL, op_s REAL NOT NULL,
    outside_s REAL NOT NULL, top_layer TEXT NOT NULL, top_layer_share REAL NOT NULL,
    top_op_type TEXT NOT NULL, top_op_share REAL NOT NULL, layers_json TEXT NOT NULL,
    op_types_json TEXT NOT NULL, kernels_json TEXT NOT NULL, device TEXT NOT NULL,
    kernel TEXT NOT NULL, logdir TEXT NOT NULL, python_version TEXT NOT NULL,
    tensorflow_version TEXT NOT NULL, keras_version TEXT NOT NULL, numpy_version TEXT NOT NULL
)"""
V4_ROW = {
    "id": "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
    "created_at": "2026-11-30T10:00:00.000000+00:00",
    "host": "laptop",
    **{"variant": "folded", "batch_size": 8, "time_steps": 50, "height": 36, "filters": 16},
    **{"kernel_size": 3, "pool_height": 3, "inner_units": 48, "outer_units": 60},
    **{"precision": "float32", "xla": 0, "lstm_kernel": "auto", "device_spec": "auto"},
    **{"strategy": "none", "devices": "", "task": "inference", "optimizer": "sgd"},
    **{"first_call_s": 1.9, "median_s": 0.0052, "p10_s": 0.0049, "p90_s": 0.0057},
    **{"iqr_s": 0.0004, "mean_s": 0.0053, "std_s": 0.0003, "min_s": 0.0048, "repeats": 10},
    **{"warmup": 3, "noisy": 0, "samples_per_s": 1538.5, "steps_per_s": 76923.1},
    **{"flops": 143_000_000, "gflops_per_s": 27.5, "peak_memory_bytes": 0},
    **{"peak_memory_kind": "cpu_rss_growth", "kernel": "generic"},
    **{"kernel_reason": "no GPU visible to TensorFlow: cuDNN needs a GPU", "trace_count": 1},
    **{"device": "/CPU:0 (x86_64, 2 cores)"},
    **dict.fromkeys(
        (
            *("forward_median_s", "forward_p10_s", "forward_p90_s", "forward_backward_median_s"),
            *("forward_backward_p10_s", "forward_backward_p90_s", "update_median_s"),
            *("update_p10_s", "update_p90_s", "phase_sum_s"),
        )
    ),
    **{"kept_activation_bytes": 0, "status": "ok", "error": ""},
    **{"python_version": "3.11.7", "tensorflow_version": "2.21.0", "keras_version": "3.15.1"},
    "numpy_version": "2.4.6",
}

# schema version: (its tables, its rows in the order written, the export version of its columns)
OLD = {
    2: ((V2_TABLE, INDEX), V2_ROWS, 2),
    4: ((V4_TABLE, INDEX, V4_PROFILES, PROFILES_INDEX), [V4_ROW], 3),
}


def old_file(directory, version: int):
    """A results file of schema `version` holding its rows, written with that schema's SQL."""
    path = directory / f"results-v{version}.sqlite3"
    tables, rows, _ = OLD[version]
    with sqlite3.connect(path) as connection:
        for statement in tables:
            connection.execute(statement)
        for row in rows:
            columns, marks = ", ".join(row), ", ".join("?" for _ in row)
            connection.execute(
                f"INSERT INTO results ({columns}) VALUES ({marks})", list(row.values())
            )
        connection.execute(f"PRAGMA user_version = {version}")
    return path


def test_the_frozen_schema_4_columns_are_the_frozen_table_s():
    assert tuple(V4_ROW) == schema.V4_COLUMNS
    added = {**schema.ADDED_IN_V5, **schema.ADDED_IN_V7}
    assert set(schema.COLUMNS) - set(schema.V4_COLUMNS) == set(added)


@pytest.mark.parametrize("version", OLD)
def test_an_old_file_opens_as_today_s_schema_with_every_value_kept(tmp_path, version):
    store = ResultStore(old_file(tmp_path, version))
    assert schema_of(store.path) == (7, schema.COLUMNS, ["audits", "profiles", "results"])
    assert set(V3_DEFAULTS) <= set(schema.COLUMNS) and schema.SCHEMA_VERSION == 7
    _, rows, _ = OLD[version]
    frame = store.rows()
    assert list(frame["id"]) == [row["id"] for row in reversed(rows)]  # newest first
    for (_, stored), old in zip(frame.iterrows(), reversed(rows), strict=True):
        for column, value in old.items():
            expected = bool(value) if column in ("xla", "noisy") else value
            assert same(stored[column], expected), (old["id"], column)
        added = {**V5_DEFAULTS, **schema.ADDED_IN_V7, **(V3_DEFAULTS if version == 2 else {})}
        assert all(same(stored[column], value) for column, value in added.items()), added
    result = store.get(rows[0]["id"]).result
    assert result.config.task == "inference" and result.config.backend == "tensorflow"
    assert result.step.median == rows[0]["median_s"]
    assert ResultStore(store.path).count() == len(rows)  # opening again changes nothing


def test_a_schema_4_file_s_profiles_gain_the_backend_columns_and_take_new_profiles(tmp_path):
    path = old_file(tmp_path, 4)
    with sqlite3.connect(path) as connection:
        profile = {**V4_ROW, "steps": 3, "harness_repeats": 5, "profiled_step_s": 0.006}
        profile.update(harness_median_s=0.0052, op_s=0.005, outside_s=0.0001, top_layer="conv")
        profile.update(top_layer_share=0.5, top_op_type="MatMul", top_op_share=0.4)
        profile.update(layers_json="[]", op_types_json="[]", kernels_json="[]", logdir="/x")
        columns = [row[1] for row in connection.execute("PRAGMA table_info(profiles)")]
        kept = {column: profile[column] for column in columns}
        marks = ", ".join("?" for _ in kept)
        connection.execute(
            f"INSERT INTO profiles ({', '.join(kept)}) VALUES ({marks})", list(kept.values())
        )
    store = ResultStore(path)
    (old,) = store.profiles().to_dict(orient="records")
    assert (old["backend"], old["jax_version"], old["torch_version"]) == ("tensorflow", "", "")
    assert (old["onnxruntime_version"], old["openvino_version"]) == ("", "")
    assert old["harness_median_s"] == 0.0052 and old["variant"] == "folded"
    store.add_profile(make_profile_result())
    assert len(ResultStore(path).profiles()) == 2


@pytest.mark.parametrize("format", ["json", "csv"])
@pytest.mark.parametrize("version", OLD)
def test_an_export_of_the_same_columns_imports_to_the_migrated_rows(tmp_path, version, format):
    _, rows, export_version = OLD[version]
    if format == "json":
        rows = [{**row, "xla": bool(row["xla"]), "noisy": bool(row["noisy"])} for row in rows]
        document = {"format": "hierlstm-results", "version": export_version, "rows": rows}
        data = json.dumps(document).encode()
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: "" if v is None else v for k, v in row.items()} for row in rows)
        data = buffer.getvalue().encode()
    fresh = ResultStore(tmp_path / "fresh.sqlite3")
    assert fresh.import_file(data, format=format).added == len(rows)
    assert fresh.rows().equals(ResultStore(old_file(tmp_path, version)).rows())


@pytest.mark.parametrize(("version", "column"), [(2, "median_s"), (3, "task")])
def test_an_old_export_that_lacks_a_column_of_its_own_is_refused(tmp_path, version, column):
    row = V2_ROW if version == 2 else V4_ROW  # version 3 exports schema 4's columns
    rows = [{key: value for key, value in row.items() if key != column}]
    data = json.dumps({"format": "hierlstm-results", "version": version, "rows": rows}).encode()
    with pytest.raises(ValueError, match=f"row 1: missing {column}"):
        ResultStore(tmp_path / "fresh.sqlite3").import_file(data, format="json")


@pytest.mark.parametrize("format", ["json", "csv"])
def test_a_jax_run_round_trips_through_the_store_and_the_exports(tmp_path, format):
    result = make_result(
        config_changes={"backend": "jax"},
        step_changes={"samples": (0.0051, 0.0049, 0.0056)},
        versions={"python": "3.11.7", "keras": "3.15.1", "numpy": "2.4.6", "jax": "0.10.2"},
    )
    store = ResultStore(tmp_path / "first.sqlite3")
    result_id = store.add(result)
    stored = store.get(result_id).result
    assert stored == result and stored.config.backend == "jax"
    assert "tensorflow" not in stored.versions and stored.versions["jax"] == "0.10.2"
    assert stored.step.samples == (0.0051, 0.0049, 0.0056)
    exported = getattr(store, f"export_{format}")()
    if format == "json":
        assert json.loads(exported)["version"] == 5
    other = ResultStore(tmp_path / "second.sqlite3")
    assert other.import_file(exported.encode(), format=format).added == 1
    assert other.get(result_id).result == result


SAMPLES = ["[0.1, -0.2]", "[0.1, NaN]", '["fast"]', "[true]", "{}", "0.1", "[0.1,"]
NOT_TIMES = "samples_json must be a JSON list of times in seconds"


@pytest.mark.parametrize(
    ("changes", "message"),
    [({"backend": "mxnet"}, "backend must be one of tensorflow, jax, torch")]
    + [({"samples_json": samples}, NOT_TIMES) for samples in SAMPLES],
)
def test_a_row_of_an_unknown_backend_or_samples_that_are_not_times_is_refused(
    tmp_path, changes, message
):
    row = {**V4_ROW, **schema.ADDED_IN_V5, **changes}
    data = json.dumps({"format": "hierlstm-results", "version": 4, "rows": [row]}).encode()
    with pytest.raises(ValueError, match=message):
        ResultStore(tmp_path / "fresh.sqlite3").import_file(data, format="json")


# ---- schema 3: today's file less schema 5's columns and the profiles table -------------------


def v3_file(directory):
    """A file as schema 3 left it: today's results table less schema 5's backend columns, one
    row, and no profiles table (nor schema 6's audits)."""
    path = directory / "results-v3.sqlite3"
    store = ResultStore(path)
    store.add(make_result())
    with sqlite3.connect(path) as connection:
        connection.execute("DROP INDEX profiles_by_time")
        connection.execute("DROP TABLE profiles")
        connection.execute("DROP TABLE audits")
        for column in {**schema.ADDED_IN_V5, **schema.ADDED_IN_V7}:
            connection.execute(f"ALTER TABLE results DROP COLUMN {column}")
        connection.execute("PRAGMA user_version = 3")
    assert schema_of(path) == (3, schema.V4_COLUMNS, ["results"])
    return path


def stored_values(path, columns):
    with sqlite3.connect(path) as connection:
        return connection.execute(f"SELECT {', '.join(columns)} FROM results").fetchall()


def test_a_schema_3_file_gains_the_empty_profiles_table(tmp_path):
    path = v3_file(tmp_path)
    rows = stored_values(path, schema.V4_COLUMNS)  # read without opening (migrating) it
    store = ResultStore(path)
    tables = ["audits", "profiles", "results"]
    assert schema_of(path, "profiles") == (schema.SCHEMA_VERSION, PROFILE_COLUMNS, tables)
    with sqlite3.connect(path) as connection:
        indexes = connection.execute("SELECT name FROM sqlite_master WHERE type = 'index'")
        assert "profiles_by_time" in {name for (name,) in indexes}
    assert stored_values(path, schema.V4_COLUMNS) == rows and store.profiles().empty
    assert stored_values(path, schema.ADDED_IN_V5) == [tuple(schema.ADDED_IN_V5.values())]
    store.add_profile(make_profile_result())
    assert len(ResultStore(path).profiles()) == 1  # opening again changes nothing


# ---- a migration that fails, at schema 1 (a row), 3 (a table) and 4 (a copy) ----------------

OLD_FILES = {1: copied_fixture, 3: v3_file, 4: lambda directory: old_file(directory, 4)}


@pytest.mark.parametrize("version", OLD_FILES)
def test_a_migration_that_fails_leaves_the_file_as_it_was(tmp_path, monkeypatch, version):
    path = OLD_FILES[version](tmp_path)
    before = schema_of(path), count_of(path)
    if version == 1:  # a row whose config cannot be read
        with sqlite3.connect(path) as connection:
            connection.execute("UPDATE results SET config = '{broken' WHERE variant = 'nested'")
        error, match = ValueError, "cannot migrate .* from results schema 1: the config of"
    else:  # the disk fails halfway (schema 3's new table already made)

        def fail(*args, **kwargs):
            if version == 3:
                args[0].execute("CREATE TABLE profiles (id TEXT)")
            raise sqlite3.OperationalError("disk I/O error")

        monkeypatch.setattr(schema, "_create_profiles" if version == 3 else "row_from_v4", fail)
        error, match = sqlite3.OperationalError, "disk I/O error"
    with pytest.raises(error, match=match):
        ResultStore(path)
    assert (schema_of(path), count_of(path)) == before and before[0][0] == version


def test_a_schema_5_file_gains_the_audits_table_and_keeps_its_rows(tmp_path):
    """Schema 6 adds only the Your model page's table: a schema-5 file (today's, without it)
    opens with every row kept, and stores an audit."""
    from factories import make_result

    from hierlstm.results.audits import audit_row

    path = tmp_path / "results-v5.sqlite3"
    ResultStore(path).add(make_result())
    with sqlite3.connect(path) as connection:
        connection.execute("DROP TABLE audits")
        for table in ("results", "profiles"):  # schema 7's columns, which schema 5 lacked
            for column in schema.ADDED_IN_V7:
                connection.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        connection.execute("PRAGMA user_version = 5")
    store = ResultStore(path)
    assert schema_of(path) == (7, schema.COLUMNS, ["audits", "profiles", "results"])
    assert store.count() == 1
    row = audit_row(
        model_name="mine",
        file_sha256="0123456789abcdef",
        input_shapes=[(2, 3, 4)],
        changes=[{"path": "rnn", "before": "RNN(LSTMCell)", "after": "LSTM"}],
        check={"matches": True, "output_diff": 0.0, "gradient_diff": 1e-8},
        medians={
            "original/forward": 2e-3,
            "rewritten/forward": 1e-3,
            "original/step": 4e-3,
            "rewritten/step": 2e-3,
        },  # fmt: skip
        rounds=5,
        versions={"keras": "3.15.1"},
    )
    store.add_audit(row)
    (stored,) = store.audits().to_dict(orient="records")
    assert (stored["model_name"], stored["file_sha256"], stored["rounds"]) == (
        "mine",
        row["file_sha256"],
        5,
    )
    assert stored["rewritten_step_s"] == 2e-3 and stored["keras_version"] == "3.15.1"


def test_a_schema_6_file_gains_the_runtime_versions_in_its_three_tables(tmp_path):
    """Schema 6 as it was: today's tables without schema 7's two columns, a row in each."""
    path = tmp_path / "results-v6.sqlite3"
    store = ResultStore(path)
    store.add(make_result())
    store.add_profile(make_profile_result())
    with sqlite3.connect(path) as connection:
        for table in schema.VERSIONED_TABLES:
            for column in schema.ADDED_IN_V7:
                connection.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        connection.execute("PRAGMA user_version = 6")
    assert schema_of(path)[0] == 6 and "openvino_version" not in schema_of(path)[1]
    reopened = ResultStore(path)
    assert schema_of(path) == (7, schema.COLUMNS, ["audits", "profiles", "results"])
    for table in schema.VERSIONED_TABLES:
        assert set(schema.ADDED_IN_V7) <= set(schema_of(path, table)[1]), table
    (row,) = reopened.rows().to_dict(orient="records")
    (profile,) = reopened.profiles().to_dict(orient="records")
    for found in (row, profile):
        assert (found["onnxruntime_version"], found["openvino_version"]) == ("", "")
    reopened.add(make_result())
    assert reopened.count() == 2

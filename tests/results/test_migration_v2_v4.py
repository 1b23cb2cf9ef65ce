"""A results file of schema 2 (before training steps were measured) or 4 (before the Keras
backend was a setting), made here with that schema's own SQL, opens as today's schema with every
value kept, each old row a run on TensorFlow (and a schema-2 row a forward pass: task inference,
optimizer sgd, no phase times); exports of the same versions (2 and 3) import to the same rows; a
JAX run's row round-trips through the store and today's exports."""

from __future__ import annotations

import csv
import io
import json
import math
import sqlite3

import pytest
from factories import make_profile_result, make_result, same

from hierlstm.results import schema
from hierlstm.results.store import ResultStore

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
V4_INDEX = "CREATE INDEX IF NOT EXISTS results_by_time ON results (created_at)"
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

PHASES = [
    f"{phase}_{stat}_s"
    for phase in ("forward", "forward_backward", "update")
    for stat in ("median", "p10", "p90")
]
TRAINING_COLUMNS = ("task", "optimizer", *PHASES, "phase_sum_s", "kept_activation_bytes")
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
    assert set(schema.COLUMNS) - set(schema.V4_COLUMNS) == set(schema.ADDED_IN_V5)


@pytest.mark.parametrize("version", OLD)
def test_an_old_file_opens_as_today_s_schema_with_every_value_kept(tmp_path, version):
    store = ResultStore(old_file(tmp_path, version))
    with sqlite3.connect(store.path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 5 == schema.SCHEMA_VERSION
        columns = [row[1] for row in connection.execute("PRAGMA table_info(results)")]
        found = connection.execute("SELECT type, name FROM sqlite_master").fetchall()
    assert tuple(columns) == schema.COLUMNS and set(TRAINING_COLUMNS) <= set(columns)
    assert sorted(name for kind, name in found if kind == "table") == ["profiles", "results"]
    assert ("index", "results_by_time") in found
    _, rows, _ = OLD[version]
    frame = store.rows()
    assert list(frame["id"]) == [row["id"] for row in reversed(rows)]  # newest first
    for (_, stored), old in zip(frame.iterrows(), reversed(rows), strict=True):
        for column, value in old.items():
            expected = bool(value) if column in ("xla", "noisy") else value
            assert same(stored[column], expected), (old["id"], column)
        assert (stored["backend"], stored["jax_version"], stored["torch_version"]) == (
            "tensorflow",
            "",
            "",
        )
        if version == 2:  # a forward pass
            assert (stored["task"], stored["optimizer"], stored["kept_activation_bytes"]) == (
                "inference",
                "sgd",
                0,
            )
            assert all(math.isnan(stored[column]) for column in (*PHASES, "phase_sum_s"))
    result = store.get(rows[0]["id"]).result
    assert result.config.task == "inference" and result.config.backend == "tensorflow"
    assert result.median_s == rows[0]["median_s"]
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
    assert old["harness_median_s"] == 0.0052 and old["variant"] == "folded"
    store.add_profile(make_profile_result())
    assert len(ResultStore(path).profiles()) == 2


def test_a_failed_migration_from_4_leaves_the_file_at_4(tmp_path, monkeypatch):
    path = old_file(tmp_path, 4)

    def insert_then_fail(*args, **kwargs):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(schema, "row_from_v4", insert_then_fail)
    with pytest.raises(sqlite3.OperationalError):
        ResultStore(path)
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 4
        columns = [row[1] for row in connection.execute("PRAGMA table_info(results)")]
        assert tuple(columns) == schema.V4_COLUMNS
        assert connection.execute("SELECT count(*) FROM results").fetchone()[0] == 1


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
        samples_json="[0.0051, 0.0049, 0.0056]",
        versions={"python": "3.11.7", "keras": "3.15.1", "numpy": "2.4.6", "jax": "0.10.2"},
    )
    store = ResultStore(tmp_path / "first.sqlite3")
    result_id = store.add(result)
    stored = store.get(result_id).result
    assert stored == result and stored.config.backend == "jax"
    assert "tensorflow" not in stored.versions and stored.versions["jax"] == "0.10.2"
    assert stored.samples == (0.0051, 0.0049, 0.0056)
    exported = getattr(store, f"export_{format}")()
    if format == "json":
        assert json.loads(exported)["version"] == 4
    other = ResultStore(tmp_path / "second.sqlite3")
    assert other.import_file(exported.encode(), format=format).added == 1
    assert other.get(result_id).result == result


def test_an_unknown_backend_is_refused_by_the_store(tmp_path):
    row = {**V4_ROW, **schema.ADDED_IN_V5, "backend": "mxnet"}
    data = json.dumps({"format": "hierlstm-results", "version": 4, "rows": [row]}).encode()
    with pytest.raises(ValueError, match="backend must be one of tensorflow, jax, torch"):
        ResultStore(tmp_path / "fresh.sqlite3").import_file(data, format="json")


@pytest.mark.parametrize(
    "samples", ["[0.1, -0.2]", "[0.1, NaN]", '["fast"]', "[true]", "{}", "0.1", "[0.1,"]
)
def test_samples_that_are_not_a_list_of_times_are_refused(tmp_path, samples):
    row = {**V4_ROW, **schema.ADDED_IN_V5, "samples_json": samples}
    data = json.dumps({"format": "hierlstm-results", "version": 4, "rows": [row]}).encode()
    with pytest.raises(ValueError, match="samples_json must be a JSON list of times in seconds"):
        ResultStore(tmp_path / "fresh.sqlite3").import_file(data, format="json")

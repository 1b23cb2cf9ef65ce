"""A results file of schema 2 (before training steps were measured), made here with that
schema's own SQL, opens as today's schema (3's results, 4's empty profiles table) with every
value kept and each row a forward pass (task inference, optimizer sgd, no phase times) run on
TensorFlow;
version-2 exports import to the same rows; a training step's row round-trips through the store
and today's exports."""

from __future__ import annotations

import csv
import io
import json
import math
import sqlite3

import pytest
from factories import make_training_result, same

from hierlstm.records import Stats
from hierlstm.results import schema
from hierlstm.results.store import ResultStore

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
V2_INDEX = "CREATE INDEX IF NOT EXISTS results_by_time ON results (created_at)"
VERSIONS = {
    "python_version": "3.11.7",
    "tensorflow_version": "2.21.0",
    "keras_version": "3.15.1",
    "numpy_version": "2.4.6",
}
OK_ROW = {
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
FAILED_ROW = {
    **OK_ROW,
    "id": "5e0c9a1b-7d2e-4c3f-8a9b-0c1d2e3f4a5b",
    "created_at": "2026-11-29T17:28:00.000000+00:00",
    "variant": "vectorized_map",
    **dict.fromkeys(("first_call_s", "median_s", "p10_s", "p90_s", "iqr_s", "mean_s")),
    **dict.fromkeys(("std_s", "min_s", "samples_per_s", "steps_per_s", "gflops_per_s")),
    **{"repeats": 0, "warmup": 0, "kernel": "", "kernel_reason": "", "trace_count": 0},
    **{"status": "failed", "error": "not supported here: no kernel for the If op"},
}
V2_ROWS = [OK_ROW, FAILED_ROW]
PHASES = [
    f"{phase}_{stat}_s"
    for phase in ("forward", "forward_backward", "update")
    for stat in ("median", "p10", "p90")
]
TRAINING_COLUMNS = ("task", "optimizer", *PHASES, "phase_sum_s", "kept_activation_bytes")


def v2_file(directory):
    path = directory / "results-v2.sqlite3"
    with sqlite3.connect(path) as connection:
        connection.execute(V2_TABLE)
        connection.execute(V2_INDEX)
        for row in V2_ROWS:
            columns = ", ".join(row)
            marks = ", ".join("?" for _ in row)
            connection.execute(
                f"INSERT INTO results ({columns}) VALUES ({marks})", list(row.values())
            )
        connection.execute("PRAGMA user_version = 2")
    return path


def test_a_schema_2_file_opens_as_today_s_schema_with_every_value_kept(tmp_path):
    store = ResultStore(v2_file(tmp_path))
    with sqlite3.connect(store.path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == 5 == schema.SCHEMA_VERSION
        columns = [row[1] for row in connection.execute("PRAGMA table_info(results)")]
        found = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = [name for (name,) in found]
    assert tuple(columns) == schema.COLUMNS and tables == ["results", "profiles"]
    assert set(TRAINING_COLUMNS) <= set(columns)
    frame = store.rows()
    assert list(frame["id"]) == [FAILED_ROW["id"], OK_ROW["id"]]  # newest first
    for (_, stored), old in zip(frame.iterrows(), reversed(V2_ROWS), strict=True):
        for column, value in old.items():
            expected = bool(value) if column in ("xla", "noisy") else value
            assert same(stored[column], expected), (old["id"], column)
        assert (stored["task"], stored["optimizer"], stored["kept_activation_bytes"]) == (
            "inference",
            "sgd",
            0,
        )
        assert all(math.isnan(stored[column]) for column in (*PHASES, "phase_sum_s"))
        assert (stored["backend"], stored["jax_version"], stored["torch_version"]) == (
            "tensorflow",
            "",
            "",
        )
    result = store.get(OK_ROW["id"]).result
    assert result.config.task == "inference" and result.median_s == OK_ROW["median_s"]
    assert ResultStore(store.path).count() == 2  # opening again changes nothing


@pytest.mark.parametrize("format", ["json", "csv"])
def test_a_version_2_export_imports_as_forward_passes(tmp_path, format):
    if format == "json":
        rows = [{**row, "xla": bool(row["xla"]), "noisy": bool(row["noisy"])} for row in V2_ROWS]
        data = json.dumps({"format": "hierlstm-results", "version": 2, "rows": rows}).encode()
    else:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(OK_ROW), lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: "" if v is None else v for k, v in row.items()} for row in V2_ROWS)
        data = buffer.getvalue().encode()
    fresh = ResultStore(tmp_path / "fresh.sqlite3")
    assert fresh.import_file(data, format=format).added == 2
    assert fresh.rows().equals(ResultStore(v2_file(tmp_path)).rows())


def test_a_version_2_export_that_lacks_a_column_of_its_own_is_refused(tmp_path):
    rows = [{key: value for key, value in OK_ROW.items() if key != "median_s"}]
    data = json.dumps({"format": "hierlstm-results", "version": 2, "rows": rows}).encode()
    with pytest.raises(ValueError, match="row 1: missing median_s"):
        ResultStore(tmp_path / "fresh.sqlite3").import_file(data, format="json")


@pytest.mark.parametrize("format", ["json", "csv"])
def test_a_training_step_round_trips_through_the_store_and_the_exports(tmp_path, format):
    result = make_training_result(config_changes={"optimizer": "adam"})
    store = ResultStore(tmp_path / "first.sqlite3")
    result_id = store.add(result)
    assert store.get(result_id).result == result
    exported = getattr(store, f"export_{format}")()
    if format == "json":
        assert json.loads(exported)["version"] == 4
    other = ResultStore(tmp_path / "second.sqlite3")
    assert other.import_file(exported.encode(), format=format).added == 1
    assert other.get(result_id).result == result


def test_a_training_step_without_its_phase_times_is_refused(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite3")
    with pytest.raises(ValueError, match="forward_median_s must be a number when status is ok"):
        phases = make_training_result().phases
        store.add(make_training_result(phases={**phases, "forward": Stats(median=math.nan)}))
    assert store.count() == 0

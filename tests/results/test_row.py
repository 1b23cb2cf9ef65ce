"""The one result row: its columns and their kinds, read from the records' resolved types; the
same values in the session table, the sweep table, the store and an export round trip."""

from __future__ import annotations

import dataclasses
import math
import sqlite3
from typing import Optional

import numpy as np
import pytest
from factories import (
    VERSIONS,
    make_compare,
    make_failed_result,
    make_result,
    make_training_result,
    same,
)

from hierlstm.config import RunConfig, Timing
from hierlstm.records import (
    COLUMN_KINDS,
    CONFIG_COLUMNS,
    ROW_COLUMNS,
    VERSION_COLUMNS,
    BenchResult,
    Stats,
    field_kinds,
)
from hierlstm.results import exchange, schema
from hierlstm.results.store import ResultStore
from hierlstm.timing import summary, sweeps

RESULTS = {"ok": make_result(), "failed": make_failed_result(), "training": make_training_result()}
MEASURED = [
    field.name
    for field in dataclasses.fields(BenchResult)
    if field.name not in ("config", "versions")
]
# The measured columns as results schema 5 wrote them (before a result's step became one Stats):
# every stored file and export has them, in this order.
SCHEMA_5_MEASURED = (
    *("first_call_s", "median_s", "p10_s", "p90_s", "iqr_s", "mean_s", "std_s", "min_s"),
    *("repeats", "warmup", "noisy", "samples_per_s", "steps_per_s", "flops", "gflops_per_s"),
    *("peak_memory_bytes", "peak_memory_kind", "kernel", "kernel_reason", "trace_count"),
    "device",
    *("forward_median_s", "forward_p10_s", "forward_p90_s"),
    *("forward_backward_median_s", "forward_backward_p10_s", "forward_backward_p90_s"),
    *("update_median_s", "update_p10_s", "update_p90_s", "phase_sum_s"),
    *("kept_activation_bytes", "samples_json", "status", "error"),
)


def test_a_row_is_the_config_then_the_measurement_then_the_versions():
    config_columns = [CONFIG_COLUMNS[field.name] for field in dataclasses.fields(RunConfig)]
    assert ROW_COLUMNS == (*config_columns, *SCHEMA_5_MEASURED, *VERSION_COLUMNS.values())
    assert ROW_COLUMNS[:3] == ("variant", "batch_size", "time_steps")
    versions = ("python", "tensorflow", "keras", "numpy", "jax", "torch", "onnxruntime", "openvino")
    assert ROW_COLUMNS[-8:] == tuple(f"{name}_version" for name in versions)
    row = make_result().to_row()
    assert tuple(row) == ROW_COLUMNS and tuple(COLUMN_KINDS) == ROW_COLUMNS
    # The config's device is what was asked for; `device` is where the run ran.
    assert (row["device_spec"], row["device"]) == ("auto", "/CPU:0")
    assert (row["batch_size"], row["xla"], row["median_s"]) == (2, False, 0.0125)
    assert (row["tensorflow_version"], row["numpy_version"]) == ("2.18.0", "2.0.2")


def test_column_kinds():
    assert {column for column, kind in COLUMN_KINDS.items() if kind == "bool"} == {"xla", "noisy"}
    assert COLUMN_KINDS["batch_size"] == COLUMN_KINDS["flops"] == "int"
    assert COLUMN_KINDS["median_s"] == COLUMN_KINDS["gflops_per_s"] == "float"
    assert COLUMN_KINDS["device_spec"] == COLUMN_KINDS["numpy_version"] == "text"


@dataclasses.dataclass(frozen=True)
class LaterRecord:
    """A record as a later BenchResult might grow: optional fields, string annotations (this
    module uses `from __future__ import annotations`, as the records do)."""

    share_s: float | None
    overlap: Optional[float]  # noqa: UP045 (the older spelling must work too)
    retries: int
    pinned: bool
    note: str


def test_kinds_come_from_resolved_types_so_an_optional_float_is_a_float():
    assert field_kinds(LaterRecord) == {
        "share_s": "float",
        "overlap": "float",
        "retries": "int",
        "pinned": "bool",
        "note": "text",
    }
    assert field_kinds(LaterRecord, ["note"]) == {"note": "text"}


def test_a_field_a_row_cannot_hold_is_refused_by_name():
    @dataclasses.dataclass
    class Nested:
        shape: tuple[int, ...]

    with pytest.raises(TypeError, match=r"Nested\.shape is typed tuple\[int, \.\.\.\]"):
        field_kinds(Nested)
    with pytest.raises(TypeError, match=r"BenchResult\.config is typed"):
        field_kinds(BenchResult)


@pytest.mark.parametrize("status", RESULTS)
def test_from_row_gives_back_the_result(status):
    result = RESULTS[status]
    back = BenchResult.from_row(result.to_row())
    assert back.config == result.config and back.versions == result.versions
    assert all(
        same(getattr(back, name), getattr(result, name)) for name in MEASURED if name != "step"
    )
    for field in dataclasses.fields(Stats):
        assert same(getattr(back.step, field.name), getattr(result.step, field.name)), field.name


# A training run's row and a failed one's as the code before `BenchResult.step` wrote them
# (results schema 5, commit 72ff1bf), from the samples and arguments in `_made_the_new_way`.
_CONFIG_ROW = {
    "variant": "folded",
    "batch_size": 2,
    "time_steps": 4,
    "height": 36,
    "filters": 16,
    "kernel_size": 3,
    "pool_height": 3,
    "inner_units": 48,
    "outer_units": 60,
    "precision": "float32",
    "xla": False,
    "lstm_kernel": "auto",
    "device_spec": "auto",
    "strategy": "none",
    "devices": "",
    "task": "training",
    "optimizer": "sgd",
    "backend": "tensorflow",
}
_SCHEMA_5_ROWS = {
    "ok": {
        **_CONFIG_ROW,
        "first_call_s": 1.75,
        "median_s": 0.0125,
        "p10_s": 0.012020000000000001,
        "p90_s": 0.013640000000000001,
        "iqr_s": 0.0008999999999999998,
        "mean_s": 0.012740000000000001,
        "std_s": 0.0008324662155306962,
        "min_s": 0.0119,
        "repeats": 5,
        "warmup": 2,
        "noisy": False,
        "samples_per_s": 160.0,
        "steps_per_s": 640.0,
        "flops": 8580096,
        "gflops_per_s": 0.68640768,
        "peak_memory_bytes": 52428800,
        "peak_memory_kind": "cpu_rss_growth",
        "kernel": "generic",
        "kernel_reason": "no GPU",
        "trace_count": 1,
        "device": "/CPU:0",
        "forward_median_s": 0.004,
        "forward_p10_s": 0.00394,
        "forward_p90_s": 0.00416,
        "forward_backward_median_s": 0.0105,
        "forward_backward_p10_s": 0.01022,
        "forward_backward_p90_s": 0.01112,
        "update_median_s": 0.0011,
        "update_p10_s": 0.0010400000000000001,
        "update_p90_s": 0.0012599999999999998,
        "phase_sum_s": 0.011600000000000001,
        "kept_activation_bytes": 177792,
        "samples_json": "[0.0125, 0.0119, 0.0131, 0.0122, 0.014]",
        "status": "ok",
        "error": "",
        "python_version": "3.11.9",
        "tensorflow_version": "2.18.0",
        "keras_version": "3.8.0",
        "numpy_version": "2.0.2",
        "jax_version": "",
        "torch_version": "",
    },
    "failed": {
        **_CONFIG_ROW,
        **dict.fromkeys(SCHEMA_5_MEASURED[:8], math.nan),  # first_call_s and the step
        "repeats": 0,
        "warmup": 0,
        "noisy": False,
        "samples_per_s": math.nan,
        "steps_per_s": math.nan,
        "flops": 8580096,
        "gflops_per_s": math.nan,
        "peak_memory_bytes": 0,
        "peak_memory_kind": "",
        "kernel": "",
        "kernel_reason": "",
        "trace_count": 0,
        "device": "/CPU:0",
        **dict.fromkeys(SCHEMA_5_MEASURED[21:31], math.nan),  # the phases
        "kept_activation_bytes": 177792,
        "samples_json": "[]",
        "status": "failed",
        "error": "ResourceExhaustedError: OOM",
        "python_version": "3.11.9",
        **dict.fromkeys(("tensorflow", "keras", "numpy", "jax", "torch"), ""),
    },
}
_SCHEMA_5_ROWS["failed"] |= {
    f"{name}_version": _SCHEMA_5_ROWS["failed"].pop(name)
    for name in ("tensorflow", "keras", "numpy", "jax", "torch")
}


def _made_the_new_way(status: str) -> BenchResult:
    config = RunConfig(variant="folded", batch_size=2, time_steps=4, task="training")
    if status == "failed":
        failed = "ResourceExhaustedError: OOM"
        return summary.failed_record(config, failed, device="/CPU:0", versions={"python": "3.11.9"})
    phases = {
        "forward": [0.004, 0.0041, 0.0039, 0.0042, 0.004],
        "forward_backward": [0.0105, 0.0101, 0.0112, 0.011, 0.0104],
        "update": [0.0011, 0.001, 0.0013, 0.0012, 0.0011],
    }
    return made(config, [0.0125, 0.0119, 0.0131, 0.0122, 0.0140], phases)


def made(config: RunConfig, steps, phases) -> BenchResult:
    """`summary.make_result` of `steps` and `phases` as a small CPU run records them."""
    where = {"device": "/CPU:0", "versions": VERSIONS, "kernel": "generic", "trace_count": 1}
    memory = {"peak_bytes": 52428800, "peak_kind": "cpu_rss_growth", "kernel_reason": "no GPU"}
    return summary.make_result(
        config, steps, warmup=2, first_call_s=1.75, phases=phases, **where, **memory
    )


@pytest.mark.parametrize("status", _SCHEMA_5_ROWS)
def test_a_result_with_one_stats_for_its_step_gives_schema_5_s_row_and_exports(status):
    """The step is one Stats in the record and seven columns (and its samples' JSON) at the
    edge: the row, the CSV and the JSON export are the ones schema 5 wrote, value for value, with
    schema 7's runtime versions after them, empty."""
    row = _made_the_new_way(status).to_row()
    expected = {**_SCHEMA_5_ROWS[status], **schema.ADDED_IN_V7}
    assert list(row) == list(expected) == list(ROW_COLUMNS)
    for column, value in expected.items():
        assert type(row[column]) is type(value) and same(row[column], value), column
    context = {"id": "a" * 32, "created_at": "2026-01-01T00:00:00", "host": "here"}
    stored, stored_expected = (  # as the store gives them back: NaN is NULL
        context | {column: None if same(value, math.nan) else value for column, value in r.items()}
        for r in (row, expected)
    )
    assert exchange.csv_text([stored]) == exchange.csv_text([stored_expected])
    assert exchange.json_text([stored]) == exchange.json_text([stored_expected])
    back = BenchResult.from_row(row)
    assert back.to_row().keys() == row.keys()
    assert all(same(back.to_row()[column], value) for column, value in row.items())


def test_from_row_takes_numpy_scalars_and_sqlite_values():
    row = make_result().to_row()
    row.update(batch_size=np.int64(2), xla=0, noisy=np.bool_(False), median_s=np.float64(0.0125))
    row.update(p10_s=None)  # SQL NULL
    back = BenchResult.from_row(row)
    assert back.config == make_result().config and type(back.config.batch_size) is int
    assert back.config.xla is False and back.noisy is False and type(back.step.median) is float
    assert math.isnan(back.step.p10)


def test_the_session_table_is_result_rows_then_speedups():
    mirrored = make_result(config_changes={"strategy": "mirrored", "devices": "cpu:0,cpu:1"})
    results = [make_result(), mirrored, make_failed_result()]
    details = [{}, {"replicas": 2, "replica_devices": ("/CPU:0", "/CPU:1")}, {}]
    speedups = [1.0, (1.9, 1.8, 2.0), math.nan]
    compared = make_compare(results, speedups, details)
    frame = compared.to_frame()
    assert list(frame.columns[: len(ROW_COLUMNS)]) == list(ROW_COLUMNS)
    for (_, row), result in zip(frame.iterrows(), results, strict=True):
        assert all(same(row[column], value) for column, value in result.to_row().items())
    assert list(frame["is_baseline"]) == [True, False, False]
    assert frame["speedup_vs_baseline"][1] == 1.9 and frame["replicas"][1] == 2
    assert (frame["speedup_p10"][1], frame["speedup_p90"][1]) == (1.8, 2.0)
    assert frame["replica_devices"][1] == "/CPU:0,/CPU:1"


def test_sweep_rows_are_the_point_then_the_result_row(monkeypatch):
    def measured(config, timing, **options):
        return make_result(config=config)

    monkeypatch.setattr(sweeps, "benchmark", measured)
    base = RunConfig(variant="folded", batch_size=2, time_steps=4)
    frame = sweeps.sweep(base, "time_steps", [3, 0], Timing(warmup=0, repeats=1))
    assert list(frame.columns[:5]) == ["variant", "axis", "value", "status", "error"]
    assert set(frame.columns) == {"axis", "value", *ROW_COLUMNS}
    point, rejected = frame.iloc[0], frame.iloc[1]
    expected = make_result(config=base.replace(time_steps=3)).to_row()
    assert all(same(point[column], value) for column, value in expected.items())
    assert (point["axis"], point["value"]) == ("time_steps", 3)
    assert (rejected["variant"], rejected["status"]) == ("folded", "failed")
    assert "time_steps must be between" in rejected["error"]
    for column, kind in COLUMN_KINDS.items():
        if column not in ("variant", "status", "error"):
            assert (rejected[column] == "") if kind == "text" else math.isnan(rejected[column])


@pytest.mark.parametrize("format", ["json", "csv"])
@pytest.mark.parametrize("status", RESULTS)
def test_one_result_is_one_row_in_the_table_the_store_and_an_export(tmp_path, status, format):
    result = RESULTS[status]
    session = make_compare([result], [1.0]).to_frame().iloc[0]
    store = ResultStore(tmp_path / "first.sqlite3")
    result_id = store.add(result)
    stored = store.rows().iloc[0]
    other = ResultStore(tmp_path / "second.sqlite3")
    exported = getattr(store, f"export_{format}")().encode()
    assert other.import_file(exported, format=format).added == 1
    imported = other.rows().iloc[0]
    for column, value in result.to_row().items():
        seen = {"session": session[column], "store": stored[column], "import": imported[column]}
        assert all(same(found, value) for found in seen.values()), (column, value, seen)
    assert imported["id"] == stored["id"] == result_id  # from_row's result: the test above


def test_the_store_columns_are_the_context_then_the_row(tmp_path):
    """So a new BenchResult or RunConfig field reaches the table, with its SQL type, unedited."""
    assert schema.COLUMNS == ("id", "created_at", "host", *ROW_COLUMNS)
    store = ResultStore(tmp_path / "results.sqlite3")
    with sqlite3.connect(store.path) as connection:
        table = connection.execute("PRAGMA table_info(results)").fetchall()
    assert tuple(column[1] for column in table) == schema.COLUMNS
    sql_types = {"float": "REAL", "int": "INTEGER", "bool": "INTEGER", "text": "TEXT"}
    for _, name, sql_type, not_null, _, primary_key in table:
        kind = COLUMN_KINDS.get(name, "text")
        assert sql_type == sql_types[kind], name
        assert bool(not_null or primary_key) == (kind != "float"), name  # only times are NULL
    assert list(store.rows().columns) == list(schema.COLUMNS)


def test_the_phase_frame_stacks_a_training_step_s_phases():
    from hierlstm.records import PHASE_FRAME_COLUMNS, phase_frame

    trained = make_training_result()
    frame = phase_frame([trained, make_result(), make_failed_result()])  # inference: no rows
    assert tuple(frame.columns) == PHASE_FRAME_COLUMNS
    assert list(frame["phase"]) == ["forward", "backward", "update"]
    assert frame["median_s"].sum() == pytest.approx(trained.phase_sum_s)
    assert frame["median_s"][1] == pytest.approx(trained.backward_s)
    assert math.isnan(frame["p10_s"][1]) and frame["p10_s"][0] == trained.phases["forward"].p10
    assert (frame["step_median_s"] == trained.step.median).all()
    assert phase_frame([]).empty and list(phase_frame([]).columns) == list(PHASE_FRAME_COLUMNS)


def test_each_phase_keeps_its_samples_and_numpy_s_median_and_percentiles():
    rng = np.random.default_rng(0)
    steps, phases = rng.random(7), {"forward": rng.random(7), "update": rng.random(7)}
    result = made(RunConfig(variant="folded", task="training"), steps, phases)
    for name, samples in phases.items():
        stats = result.phases[name]
        assert stats.samples == tuple(samples)
        assert stats.median == np.median(samples)
        p10, p25, p75, p90 = np.percentile(samples, [10, 25, 75, 90])
        assert (stats.p10, stats.p25, stats.p75, stats.p90) == (p10, p25, p75, p90)
        assert stats.iqr == p75 - p25
    assert result.step.median == np.median(steps) and result.step.samples == tuple(steps)
    p10, p25, p75, p90 = np.percentile(steps, [10, 25, 75, 90])
    assert (result.step.p10, result.step.p90, result.step.iqr) == (p10, p90, p75 - p25)


def test_a_row_keeps_each_phase_s_median_p10_and_p90():
    stats = Stats.of([0.3, 0.1, 0.2, 0.4])
    kept = (stats.median, stats.p10, stats.p90)
    row = make_result(phases={"forward": stats, "forward_backward": stats}).to_row()
    assert (row["forward_median_s"], row["forward_p10_s"], row["forward_p90_s"]) == kept
    assert math.isnan(row["update_median_s"]) and math.isnan(row["phase_sum_s"])
    back = BenchResult.from_row(row).phases
    assert set(back) == {"forward", "forward_backward"}  # a phase without a median is none
    assert (back["forward"].median, back["forward"].p10, back["forward"].p90) == kept
    assert back["forward"].samples == () and math.isnan(back["forward"].iqr)  # not stored

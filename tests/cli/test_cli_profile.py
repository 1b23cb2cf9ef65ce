"""`python -m hierlstm profile`: its JSON document and stored summary row, its Chrome trace of
the last step, its tables with the memory measured beside the estimate, and its log folder."""

import json
from pathlib import Path

import pytest
from factories import run_cli as run

from hierlstm.config import RunConfig
from hierlstm.model.cost import MEMORY_PARTS, memory_parts
from hierlstm.profiling import OUTSIDE
from hierlstm.results.profiles import PROFILE_COLUMNS
from hierlstm.results.store import ResultStore

SMALL = ("--batch-size", "2", "--time-steps", "4", "--steps", "2", "--warmup", "1")
SMALL += ("--repeats", "3")


def test_profile_json_schema_stored_row_and_chrome_trace(capsys, tmp_path):
    db, logdir = tmp_path / "results.sqlite3", tmp_path / "log"
    trace = tmp_path / "new" / "step.json"
    argv = ["profile", "--variant", "folded", "--task", "training", "--optimizer", "adam", *SMALL]
    argv += ["--json", "--db", str(db), "--logdir", str(logdir), "--trace-json", str(trace)]
    status, out, err = run(capsys, *argv)
    assert status == 0
    document = json.loads(out)  # unchanged by --trace-json
    assert set(document) == {"environment", "profile", "stored_id", "open_with"}
    assert {"created_at", "host", "tensorflow", "cpu_cores"} <= set(document["environment"])
    profile = document["profile"]
    assert set(profile) == {
        *("variant", "config", "steps", "warmup", "profiled_step_s", "harness_median_s"),
        *("harness_repeats", "step_s", "op_s", "outside_s", "layers", "op_types", "lines"),
        "kernels",
        *("logdir", "trace", "device", "kernel", "versions"),
        *("peak_memory_bytes", "peak_memory_kind", "memory_parts", "attribution"),
    }
    assert profile["config"]["batch_size"] == 2 and profile["steps"] == 2
    assert len(profile["step_s"]) == 2 and profile["harness_repeats"] == 3
    layers = profile["layers"]
    assert [layer["layer"] for layer in layers][-1] == OUTSIDE
    assert set(layers[0]) == {"layer", "type", "host_s", "device_s", "time_s", "ops", "share"}
    assert set(profile["op_types"][0]) == {"type", "time_s", "ops", "share"}
    assert set(profile["lines"][0]) == {"line", "op_s", "busy_s"}
    assert profile["kernels"] == []  # nothing ran on a device: this machine has no GPU
    assert sum(layer["time_s"] for layer in layers) == pytest.approx(profile["op_s"])
    assert profile["logdir"] == str(logdir) and Path(profile["trace"]).is_file()
    assert document["open_with"] == [
        f"tensorboard --logdir {logdir}",
        f"xprof server --logdir {logdir}",
    ]
    stored = ResultStore(db).profiles()
    assert list(stored["id"]) == [document["stored_id"]]
    assert list(stored.columns) == list(PROFILE_COLUMNS)
    assert stored.iloc[0]["profiled_step_s"] == pytest.approx(profile["profiled_step_s"])
    assert ResultStore(db).count() == 0
    config = RunConfig(
        variant="folded", batch_size=2, time_steps=4, task="training", optimizer="adam"
    )
    parts = memory_parts(config)
    assert profile["memory_parts"] == {**parts.as_dict(), "total": parts.total}
    assert profile["peak_memory_kind"] == "cpu_rss_growth" and profile["peak_memory_bytes"] >= 0
    # the last profiled step as Chrome trace events, in a folder made for it
    chrome = json.loads(trace.read_text())
    events = [event for event in chrome["traceEvents"] if event["ph"] == "X"]
    assert f"wrote step 1 ({len(events)} ops) as a Chrome trace to {trace}" in err
    assert chrome["displayTimeUnit"] == "ms" and len(events) > 10
    step_us = chrome["otherData"]["steps"]["folded"]["step_us"]
    assert step_us == pytest.approx(profile["step_s"][-1] * 1e6)  # the last marker
    assert all(0 <= e["ts"] and e["ts"] + e["dur"] <= step_us * (1 + 1e-9) for e in events)
    assert {event["cat"] for event in events} <= {layer["layer"] for layer in layers}
    threads = {e["tid"] for e in chrome["traceEvents"] if e["name"] == "thread_name"}
    assert {event["tid"] for event in events} <= threads


def test_profile_prints_its_tables_the_memory_and_how_to_open_the_log(capsys, tmp_path):
    argv = ["profile", "--variant", "nested", "--task", "training", *SMALL, "--no-store"]
    status, out, _ = run(capsys, *argv, "--logdir", str(tmp_path))
    assert status == 0
    assert "one training step (sgd)" in out and "step time: profiler" in out
    assert "nested_rnn" in out and OUTSIDE in out and "op type" in out and "busy ms/step" in out
    assert f"log: {tmp_path}" in out and f"tensorboard --logdir {tmp_path}" in out
    assert "memory measured: " in out and "no part and no peak can be measured" in out
    parts = memory_parts(RunConfig(variant="nested", batch_size=2, time_steps=4, task="training"))
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split()}
    for name, size in {**parts.as_dict(), "total": parts.total}.items():
        assert rows[name][2] == f"{size:,}", name
    assert list(MEMORY_PARTS) == [name for name in rows if name in MEMORY_PARTS]


def test_a_forward_pass_keeps_its_log_under_the_data_folder_and_says_where_memory_is(
    capsys, tmp_path, monkeypatch
):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    status, out, _ = run(capsys, "profile", "--variant", "fused", *SMALL, "--no-store")
    assert status == 0
    assert "memory by part: a training step's (add --task training)" in out
    (logdir,) = [Path(line[5:]) for line in out.splitlines() if line.startswith("log: ")]
    assert logdir.parent == tmp_path / "hierlstm" / "profiles" and logdir.is_dir()


def test_a_profile_over_the_server_limits_exits_2(capsys, monkeypatch):
    monkeypatch.setenv("HIERLSTM_MAX_TIME_STEPS", "3")
    status, out, err = run(capsys, "profile", "--variant", "folded", *SMALL, "--no-store")
    assert status == 2 and out == ""
    assert (
        err == "error: time_steps 4 is over this server's limit of 3 (HIERLSTM_MAX_TIME_STEPS).\n"
    )

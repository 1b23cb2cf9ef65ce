"""`profile --trace-json FILE`: the last profiled step as Chrome trace-event JSON beside the
tables, and the memory section (measured beside the estimate by part) in text and JSON."""

import json

import pytest

from hierlstm.cli.main import main
from hierlstm.config import RunConfig
from hierlstm.model.cost import MEMORY_PARTS, memory_parts

SMALL = ("--batch-size", "2", "--time-steps", "4", "--steps", "2", "--warmup", "1")
SMALL += ("--repeats", "3", "--no-store")


def test_a_training_profile_writes_its_last_step_as_a_chrome_trace(capsys, tmp_path):
    trace = tmp_path / "new" / "step.json"  # its folder is made
    argv = ["profile", "--variant", "folded", "--task", "training", "--optimizer", "adam"]
    status = main(
        [*argv, *SMALL, "--json", "--logdir", str(tmp_path / "log")] + ["--trace-json", str(trace)]
    )
    out, err = capsys.readouterr()
    assert status == 0
    profile = json.loads(out)["profile"]  # the JSON document on stdout is unchanged by it
    document = json.loads(trace.read_text())
    events = [event for event in document["traceEvents"] if event["ph"] == "X"]
    assert f"wrote step 1 ({len(events)} ops) as a Chrome trace to {trace}" in err
    assert document["displayTimeUnit"] == "ms" and len(events) > 10
    step_us = document["otherData"]["steps"]["folded"]["step_us"]
    assert step_us == pytest.approx(profile["step_s"][-1] * 1e6)  # the last marker
    assert all(0 <= e["ts"] and e["ts"] + e["dur"] <= step_us * (1 + 1e-9) for e in events)
    layers = {layer["layer"] for layer in profile["layers"]}
    assert {event["cat"] for event in events} <= layers
    threads = {e["tid"] for e in document["traceEvents"] if e["name"] == "thread_name"}
    assert {event["tid"] for event in events} <= threads
    config = RunConfig(
        variant="folded", batch_size=2, time_steps=4, task="training", optimizer="adam"
    )
    parts = memory_parts(config)
    assert profile["memory_parts"] == {**parts.as_dict(), "total": parts.total}
    assert profile["peak_memory_kind"] == "cpu_rss_growth" and profile["peak_memory_bytes"] >= 0


def test_the_tables_end_with_the_memory_measured_and_estimated(capsys, tmp_path):
    argv = ["profile", "--variant", "nested", "--task", "training", *SMALL]
    status = main([*argv, "--logdir", str(tmp_path)])
    out, _ = capsys.readouterr()
    assert status == 0
    assert "memory measured: " in out and "no part and no peak can be measured" in out
    parts = memory_parts(RunConfig(variant="nested", batch_size=2, time_steps=4, task="training"))
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split()}
    for name, size in {**parts.as_dict(), "total": parts.total}.items():
        assert rows[name][2] == f"{size:,}", name
    assert list(MEMORY_PARTS) == [name for name in rows if name in MEMORY_PARTS]


def test_a_forward_pass_says_where_memory_by_part_is(capsys, tmp_path):
    status = main(["profile", "--variant", "fused", *SMALL, "--logdir", str(tmp_path)])
    out, _ = capsys.readouterr()
    assert status == 0
    assert "memory by part: a training step's (add --task training)" in out

"""`python -m hierlstm profile`: its JSON document, its tables, its stored summary row, the log
directory it keeps, and a bad argument answered with one line and exit 2 before TensorFlow is
imported."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from factories import run_cli as run

from hierlstm.profiling import OUTSIDE
from hierlstm.results.profiles import PROFILE_COLUMNS
from hierlstm.results.store import ResultStore

ROOT = Path(__file__).resolve().parents[2]
SMALL = ("--batch-size", "2", "--time-steps", "4", "--steps", "2", "--warmup", "1")
SMALL += ("--repeats", "3")


def test_profile_json_schema_and_stored_row(capsys, tmp_path):
    db, logdir = tmp_path / "results.sqlite3", tmp_path / "log"
    argv = ["profile", "--variant", "folded", *SMALL, "--json", "--db", str(db)]
    status, out, _ = run(capsys, *argv, "--logdir", str(logdir))
    assert status == 0
    document = json.loads(out)
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
    assert list(stored["id"]) == [document["stored_id"]] and list(stored.columns) == list(
        PROFILE_COLUMNS
    )
    assert stored.iloc[0]["profiled_step_s"] == pytest.approx(profile["profiled_step_s"])
    assert ResultStore(db).count() == 0


def test_profile_prints_its_tables_and_how_to_open_the_log(capsys, tmp_path):
    argv = ["profile", "--variant", "nested", "--task", "training", *SMALL, "--no-store"]
    status, out, _ = run(capsys, *argv, "--logdir", str(tmp_path))
    assert status == 0
    assert "one training step (sgd)" in out and "step time: profiler" in out
    assert "nested_rnn" in out and OUTSIDE in out and "op type" in out and "busy ms/step" in out
    assert f"log: {tmp_path}" in out and f"tensorboard --logdir {tmp_path}" in out


def test_profile_keeps_its_log_under_the_data_folder_by_default(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    status, out, _ = run(capsys, "profile", "--variant", "fused", *SMALL, "--no-store", "--json")
    assert status == 0
    logdir = Path(json.loads(out)["profile"]["logdir"])
    assert logdir.parent == tmp_path / "hierlstm" / "profiles" and logdir.is_dir()


BAD = [
    (["profile"], "the following arguments are required: --variant"),
    (["profile", "--variant", "lstm"], "variant must be one of nested"),
    (["profile", "--variant", "folded", "--steps", "0"], "--steps must be a whole number from 1"),
    (["profile", "--variant", "folded", "--steps", "101"], "from 1 to 100; got '101'."),
    (["profile", "--variant", "folded", "--steps", "two"], "--steps must be a whole number"),
    (["profile", "--variant", "folded", "--batch-size", "0"], "batch_size must be between 1"),
    (["profile", "--variant", "folded", "--optimizer", "adam"], "add --task training"),
    (["profile", "--variant", "folded", "--task", "fit"], "task must be one of inference"),
    (["profile", "--variant", "folded", "--repeats", "0"], "--repeats must be a whole number"),
    (["profile", "--variant", "folded", "--logdir", "README.md"], "--logdir must be a folder"),
    (["profile", "--variant", "folded", "--strategy", "mirrored"], "unrecognized arguments"),
    (["profile", "--variant", "folded", "--trace-json", "hierlstm"], "--trace-json must name a"),
    (["profile", "--variant", "folded", "--trace-json", " "], "got ' '."),
    (["profile", "--variant", "folded", "--trace-json", "README.md/t.json"], "(not folder)."),
]


def test_bad_profile_arguments_answer_before_tensorflow_is_imported():
    """Every case in one fresh process, from the repository root (README.md is a file)."""
    script = (
        "import contextlib, io, json, sys\n"
        "from hierlstm.cli import main\n"
        "report = []\n"
        f"for argv in {[argv for argv, _ in BAD]!r}:\n"
        "    err = io.StringIO()\n"
        "    with contextlib.redirect_stderr(err):\n"
        "        status = main(argv)\n"
        "    report.append([status, err.getvalue(), 'tensorflow' in sys.modules])\n"
        "print(json.dumps(report))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    for (argv, message), (status, stderr, loaded) in zip(
        BAD, json.loads(completed.stdout), strict=True
    ):
        assert status == 2, argv
        assert stderr.startswith("error: ") and stderr.count("\n") == 1, stderr
        assert message in stderr, (argv, stderr)
        assert not loaded, argv


def test_a_profile_over_the_server_limits_exits_2(capsys, monkeypatch):
    monkeypatch.setenv("HIERLSTM_MAX_TIME_STEPS", "3")
    status, out, err = run(capsys, "profile", "--variant", "folded", *SMALL, "--no-store")
    assert status == 2 and out == ""
    assert (
        err == "error: time_steps 4 is over this server's limit of 3 (HIERLSTM_MAX_TIME_STEPS).\n"
    )

import json
import subprocess
import sys
from pathlib import Path

import pytest
from factories import run_cli as run

from hierlstm.registry import VARIANTS

ROOT = Path(__file__).resolve().parents[2]


def test_variants_lists_the_registry(capsys):
    status, out, _ = run(capsys, "variants", "--json")
    assert status == 0
    assert [v["name"] for v in json.loads(out)["variants"]] == list(VARIANTS)
    status, out, _ = run(capsys, "variants")
    assert status == 0 and all(name in out for name in VARIANTS)


def test_trace_shows_the_fold(capsys):
    status, out, _ = run(capsys, "trace --variant folded --batch-size 4 --time-steps 10")
    assert status == 0
    assert "(40, 12, 16)" in out and "batch*time" in out
    assert (  # the note's English, word for word
        "fold: Folds batch and time into one axis: 4 x 10 = 40 independent sub-sequences of 12 "
        "rows." in out.splitlines()
    )


def test_trace_json_schema(capsys):
    argv = "trace --variant nested --batch-size 2 --time-steps 3 --inner-units 20 --json"
    status, out, _ = run(capsys, argv)
    assert status == 0
    report = json.loads(out)
    assert set(report) >= {"config", "layers", "total_params", "total_flops"}
    assert report["config"]["inner_units"] == 20
    for layer in report["layers"]:
        fields = "path layer symbolic_shape concrete_shape axes params flops output_bytes note"
        assert set(layer) >= {*fields.split(), "note_key", "note_values"}
        assert layer["note_key"].startswith("note.") and layer["note"]
    assert report["layers"][0]["symbolic_shape"] == [None, 36, None, 1]
    nested = {layer["path"]: layer for layer in report["layers"]}["nested_rnn"]
    assert nested["note_key"] == "note.nested_rnn"
    assert nested["note_values"] == {"time": 3, "rows": 12, "chain": 39}
    assert nested["note"] == (
        "RNN over 3 time steps whose cell runs a whole 12-step inner LSTM per step: a chain of "
        "3 x 12 + 3 = 39 sequential steps."
    )
    assert isinstance(report["total_params"], int) and isinstance(report["total_flops"], int)


def test_check_passes_for_every_variant(capsys):
    status, out, _ = run(capsys, "check --batch-size 2 --time-steps 3 --json")
    assert status == 0
    results = json.loads(out)["results"]
    assert [r["variant"] for r in results] == list(VARIANTS)
    for result in results:
        assert result["ok"] and result["max_abs_diff"] <= result["tolerance"] == 1e-5


BAD_ARGUMENTS = [
    ("trace --batch-size 2", "the following arguments are required: --variant"),
    ("bench --batch-size 2", "the following arguments are required: --variant"),
    ("bench --variant folded --repeats 0", "--repeats must be a whole number"),
    ("bench --variant folded --lstm-kernel fast", "lstm_kernel must be one of"),
    ("sweep --variant folded --axis height --values 1", "--axis must be"),
    (
        "bench --variant folded --task training --optimizer rmsprop",
        "optimizer must be one of sgd, adam; got 'rmsprop'.",
    ),
    ("check --task learning", "task must be one of inference, training"),
    ("results", "choose an action"),
    ("results export --format xml", "--format must be csv or json"),
    ("check --seed -1", "--seed must be a whole number"),
    ("check --colour", "unrecognized arguments: --colour"),
    ("launch", "invalid choice: 'launch'"),
    ("", "choose a command"),
]


@pytest.mark.parametrize("argv, message", BAD_ARGUMENTS)
def test_bad_arguments_exit_2_with_one_error_line(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.setenv("HIERLSTM_DB", str(tmp_path / "untouched.sqlite3"))
    status, out, err = run(capsys, *argv.split())
    assert status == 2 and out == ""
    assert err.startswith("error: ") and message in err
    assert err.count("\n") == 1


def test_bad_argument_in_a_fresh_process_prints_one_line_and_no_traceback():
    completed = subprocess.run(
        [sys.executable, "-m", "hierlstm", "trace", "--variant", "folded", "--batch-size", "-4"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 2
    assert completed.stderr == "error: batch_size must be between 1 and 65536; got -4.\n"
    assert "Traceback" not in completed.stdout + completed.stderr


def test_bench_json_schema_and_stored_rows(capsys, tmp_path):
    db = tmp_path / "results.sqlite3"
    argv = "bench --variant nested --variant folded --batch-size 2 --time-steps 3 --repeats 3"
    status, out, _ = run(capsys, argv, "--warmup 1 --json --db", db)
    assert status == 0
    report = json.loads(out)
    assert {"python", "tensorflow", "keras", "host", "stored_in"} <= set(report["environment"])
    assert [row["variant"] for row in report["results"]] == ["nested", "folded"]
    for row in report["results"]:
        fields = (
            "config first_call_s median_s p10_s p90_s iqr_s mean_s std_s min_s repeats noisy "
            "samples_per_s steps_per_s flops gflops_per_s peak_memory_bytes kernel trace_count "
            "device versions speedup_vs_baseline id"
        )
        assert set(fields.split()) <= set(row)
        assert row["repeats"] == 3 and row["config"]["batch_size"] == 2
    assert report["results"][0]["speedup_vs_baseline"] == 1.0
    status, out, _ = run(capsys, "results list --json --db", db)
    stored = json.loads(out)
    assert sorted(row["id"] for row in stored) == sorted(r["id"] for r in report["results"])


def test_sweep_records_a_rejected_point_and_goes_on(capsys, tmp_path):
    csv_path = tmp_path / "sweep.csv"
    argv = "sweep --variant folded --axis batch_size --values 1,0,2 --time-steps 2 --repeats 2"
    status, _, err = run(capsys, argv, "--warmup 0 --no-store --csv", csv_path)
    assert status == 1  # one point failed
    lines = csv_path.read_text().splitlines()
    assert len(lines) == 4 and "batch_size must be between 1 and 65536" in lines[2]
    assert "wrote 3 points" in err


def test_results_export_and_import_round_trip(capsys, tmp_path):
    source, target = tmp_path / "a.sqlite3", tmp_path / "b.sqlite3"
    bench = "bench --variant folded --batch-size 1 --time-steps 2 --repeats 2 --warmup 0"
    run(capsys, bench, "--db", source)
    exported = tmp_path / "runs.json"
    status, _, _ = run(capsys, "results export --format json --output", exported, "--db", source)
    assert status == 0
    status, out, _ = run(capsys, "results import", exported, "--db", target)
    assert status == 0 and out.strip() == "imported 1 results, skipped 0 already stored"
    status, out, _ = run(capsys, "results import", exported, "--db", target)
    assert out.strip() == "imported 0 results, skipped 1 already stored"


BAD_WITHOUT_TENSORFLOW = [
    ["bench", "--variant", "folded", "--batch-size", "0"],
    ["bench", "--variant", "nope"],
    ["bench", "--variant", "folded", "--repeats", "0"],
    ["sweep", "--variant", "folded", "--axis", "height", "--values", "1,2"],
    ["sweep", "--variant", "folded", "--axis", "time_steps", "--values", "1,x"],
    ["check", "--seed", "-1"],
    ["trace", "--variant", "folded", "--precision", "fp8"],
    ["worker", "--variant", "folded", "--cluster", "bad", "--task-index", "0"],
    ["bench", "--variant", "folded", "--no-such-flag"],
    ["bench", "--variant", "folded", "--task", "train"],
    ["bench", "--variant", "folded", "--task", "training", "--optimizer", "rmsprop"],
    ["bench", "--variant", "folded", "--optimizer", "adam"],
    ["sweep", "--variant", "folded", "--axis", "time_steps", "--values", "1", "--task", "fit"],
    ["check", "--task", "learning"],
    ["bench", "--variant", "folded", "--task", "training", "--strategy", "mirrored"],
    ["doctor", "--bad-flag"],
]


def test_a_bad_argument_answers_before_tensorflow_is_imported():
    """Every case in one fresh process: exit 2, one `error:` line, and TensorFlow never loaded."""
    script = (
        "import contextlib, io, json, sys\n"
        "from hierlstm.cli import main\n"
        "report = []\n"
        f"for argv in {BAD_WITHOUT_TENSORFLOW!r}:\n"
        "    err = io.StringIO()\n"
        "    with contextlib.redirect_stderr(err):\n"
        "        try:\n"
        "            status = main(argv)\n"
        "        except SystemExit as exit:\n"
        "            status = exit.code\n"
        "    report.append([status, err.getvalue(), 'tensorflow' in sys.modules])\n"
        "print(json.dumps(report))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    report = json.loads(completed.stdout)
    for argv, (status, stderr, tensorflow_loaded) in zip(
        BAD_WITHOUT_TENSORFLOW, report, strict=True
    ):
        assert status == 2, argv
        assert len(stderr.strip().splitlines()) == 1 and stderr.startswith("error: "), stderr
        assert not tensorflow_loaded, argv

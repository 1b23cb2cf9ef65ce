import json
import os
import shlex

from factories import python
from factories import run_cli as run

from hierlstm.registry import VARIANTS


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
    assert "fold: Folds batch and time into one axis: 4 x 10 = 40 independent" in out  # its note


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
    assert report["layers"][0]["symbolic_shape"] == [None, 36, None, 1]  # notes: test_trace.py
    assert isinstance(report["total_params"], int) and isinstance(report["total_flops"], int)


def test_check_passes_for_every_variant(capsys):
    status, out, _ = run(capsys, "check --batch-size 2 --time-steps 3 --json")
    assert status == 0
    results = json.loads(out)["results"]
    assert [r["variant"] for r in results] == list(VARIANTS)
    for result in results:
        assert result["ok"] and result["max_abs_diff"] <= result["tolerance"] == 1e-5


def test_check_xla_names_the_variant_xla_cannot_compile_in_its_table(capsys):
    """vectorized_map's pfor loops do not compile under XLA: a FAIL row with bench's line, every
    other variant still checked, exit 1 (docs/cli.md), and no traceback."""
    status, out, err = run(capsys, "check --xla --batch-size 1 --time-steps 2")
    assert status == 1 and "Traceback" not in err
    rows = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert list(rows) == list(VARIANTS)
    failed = rows["vectorized_map"]
    assert "FAIL: not supported here" in failed
    assert "vectorized_map's pfor loops cannot be compiled; run without XLA" in failed
    assert all(row.endswith("ok") for name, row in rows.items() if name != "vectorized_map")


# Every refusal of an argument: (command line, part of its one error line). Each answers with
# exit 2 before TensorFlow is imported.
BAD_ARGUMENTS = [
    ("trace --batch-size 2", "the following arguments are required: --variant"),
    ("bench --batch-size 2", "the following arguments are required: --variant"),
    ("bench --variant folded --batch-size 0", "batch_size must be between 1 and 65536; got 0."),
    ("bench --variant nope", "variant must be one of nested"),
    ("bench --variant folded --repeats 0", "--repeats must be a whole number"),
    ("bench --variant folded --lstm-kernel fast", "lstm_kernel must be one of"),
    ("bench --variant folded --no-such-flag", "unrecognized arguments: --no-such-flag"),
    ("bench --variant folded --task train", "task must be one of inference, training"),
    (
        "bench --variant folded --task training --optimizer rmsprop",
        "optimizer must be one of sgd, adam; got 'rmsprop'.",
    ),
    ("bench --variant folded --optimizer adam", "add --task training."),
    ("bench --variant folded --task training --strategy mirrored", "strategy must be none"),
    (
        "bench --backend jax --variant fused --no-store",
        "error: variant fused runs on tensorflow only, not on --backend jax (it calls "
        "TensorFlow itself); choose another variant or backend.",
    ),
    ("sweep --variant folded --axis height --values 1", "--axis must be"),
    ("sweep --variant folded --axis time_steps --values 1,x", "--values must be comma-separated"),
    ("sweep --variant folded --axis time_steps --values 1 --task fit", "task must be one of"),
    ("check --task learning", "task must be one of inference, training"),
    ("inside --steps 0", "steps must be between 1 and 2000; got 0."),
    ("inside --batch 100", "batch_size must be at most train_sequences (64); got 100."),
    ("inside --height 2", "height must be at least pool_height (3)"),
    ("inside --every two", "--every must be a whole number"),
    ("whatif --clamp outer.q=0", "--clamp takes LSTM.GATE=VALUE, LSTM inner or outer and GATE"),
    ("whatif --clamp outer.f=1.5", "outer.f must be a number from 0 to 1; got '1.5'."),
    ("whatif --set inner.o=0", "--set takes LSTM.STATE=VALUE"),
    ("whatif --set outer.h=x", "outer.h must be a number from -1 to 1; got 'x'."),
    ("whatif --silence channel=16", "--silence channel must be a whole number from 0 to 15"),
    ("whatif --silence height=40:", "each end must lie between -36 and 36, the input's height."),
    ("whatif --switch thunder", "--switch takes a sound, one of rising, falling, tones"),
    ("whatif --sound thunder", "--sound must be one of rising, falling, tones, noise, silence"),
    ("whatif --clamp outer.f=0 --at t=25:", "each end must lie between -24 and 24"),
    ("whatif --clamp outer.f=0 --at t=5:5", "--at t=5:5 covers no time step."),
    ("whatif --clamp outer.f=0 --at t=5", "--at takes t=A:B or s=A:B, a Python slice"),
    ("whatif --clamp outer.f=0 --at s=2:", "--clamp outer.f=0 has no inner step"),
    ("whatif --at t=1:", "--at places interventions; give one with --clamp"),
    (
        "whatif --clamp outer.f=0 --steps 5",
        "--steps sets the training of --trained; add --trained.",
    ),
    ("check --seed -1", "--seed must be a whole number"),
    ("check --colour", "unrecognized arguments: --colour"),
    (
        "check --backend theano",
        "--backend must be one of tensorflow, jax, torch, onnxruntime, openvino; got 'theano'.",
    ),
    ("trace --variant folded --precision fp8", "precision must be one of"),
    ("worker --variant folded --cluster bad --task-index 0", "--cluster must be comma-separated"),
    (
        "worker --variant folded --cluster 127.0.0.1:1,10.0.0.2:2 --task-index 0",
        "worker address 10.0.0.2:2 is off this machine, and TensorFlow's workers have no auth",
    ),
    ("doctor --bad-flag", "unrecognized arguments: --bad-flag"),
    ("results", "choose an action"),
    ("results export --format xml", "--format must be csv or json"),
    ("launch", "invalid choice: 'launch'"),
    ("", "choose a command"),
    ("profile", "the following arguments are required: --variant"),
    ("profile --variant lstm", "variant must be one of nested"),
    ("profile --variant folded --steps 0", "--steps must be a whole number from 1"),
    ("profile --variant folded --steps 101", "from 1 to 100; got '101'."),
    ("profile --variant folded --steps two", "--steps must be a whole number"),
    ("profile --variant folded --batch-size 0", "batch_size must be between 1"),
    ("profile --variant folded --optimizer adam", "add --task training"),
    ("profile --variant folded --task fit", "task must be one of inference"),
    ("profile --variant folded --repeats 0", "--repeats must be a whole number"),
    ("profile --variant folded --logdir README.md", "--logdir must be a folder"),
    ("profile --variant folded --strategy mirrored", "unrecognized arguments"),
    ("profile --variant folded --trace-json hierlstm", "--trace-json must name a"),
    ("profile --variant folded --trace-json ' '", "got ' '."),
    ("profile --variant folded --trace-json README.md/t.json", "(not folder)."),
    ("yours", "the following arguments are required: MODEL"),
    ("yours README.md --size time", "--size takes NAME=N (e.g. time=50); got 'time'."),
    ("yours README.md --size time=0", "--size time must be a whole number from 1 to 100000"),
    ("yours README.md --backend theano", "--backend is one of tensorflow, jax, torch"),
    ("yours no-such-model.keras", "no-such-model.keras: no such file."),
]
ANSWERS = """
import contextlib, io, json, sys
from hierlstm.cli import main
report = []
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as exit:
            status = exit.code
    report.append([status, out.getvalue(), err.getvalue(), "tensorflow" in sys.modules])
print(json.dumps(report))
"""


def test_a_bad_argument_is_one_line_and_exit_2_before_tensorflow_is_imported(tmp_path):
    """Every case in one fresh process, from the repository root (README.md is a file)."""
    argvs = json.dumps([shlex.split(argv) for argv, _ in BAD_ARGUMENTS])
    environment = {**os.environ, "HIERLSTM_DB": str(tmp_path / "results.sqlite3")}
    completed = python("-c", ANSWERS, argvs, env=environment)
    assert completed.returncode == 0, completed.stderr[-2000:]
    report = json.loads(completed.stdout)
    for (argv, message), (status, out, err, loaded) in zip(BAD_ARGUMENTS, report, strict=True):
        assert (status, out) == (2, ""), argv
        assert err.startswith("error: ") and err.count("\n") == 1 and message in err, (argv, err)
        assert not loaded, argv
    assert not (tmp_path / "results.sqlite3").exists()  # no refused command made the store


def test_bad_argument_in_a_fresh_process_prints_one_line_and_no_traceback():
    completed = python("-m", "hierlstm", "trace", "--variant", "folded", "--batch-size", "-4")
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


def test_a_feature_s_old_command_name_runs_its_command():
    """`audit` and `learn` were the names of `yours` and `inside` (scripts may still use them)."""
    from hierlstm.cli.parser import build_parser

    parser = build_parser()
    assert parser.parse_args(["audit", "m.keras", "--json"]).command == "yours"
    assert parser.parse_args(["learn", "--steps", "3"]).command == "inside"
    assert parser.parse_args(["yours", "m.keras"]).command == "yours"

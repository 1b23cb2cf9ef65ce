import json
import subprocess
import sys

import pytest

from hierlstm.cli import main
from hierlstm.variants import VARIANTS


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_variants_lists_the_registry(capsys):
    status, out, _ = run(capsys, "variants", "--json")
    assert status == 0
    assert [v["name"] for v in json.loads(out)["variants"]] == list(VARIANTS)
    status, out, _ = run(capsys, "variants")
    assert status == 0 and all(name in out for name in VARIANTS)


def test_trace_shows_the_fold(capsys):
    status, out, _ = run(
        capsys, "trace", "--variant", "folded", "--batch-size", "4", "--time-steps", "10"
    )
    assert status == 0
    assert "(40, 12, 16)" in out and "batch*time" in out


def test_trace_json_schema(capsys):
    status, out, _ = run(
        capsys,
        "trace",
        "--variant",
        "nested",
        "--batch-size",
        "2",
        "--time-steps",
        "3",
        "--inner-units",
        "20",
        "--json",
    )
    assert status == 0
    report = json.loads(out)
    assert set(report) >= {"config", "layers", "total_params", "total_flops"}
    assert report["config"]["inner_units"] == 20
    for layer in report["layers"]:
        assert set(layer) >= {
            "path",
            "layer",
            "symbolic_shape",
            "concrete_shape",
            "axes",
            "params",
            "flops",
            "output_bytes",
            "note",
        }
    assert report["layers"][0]["symbolic_shape"] == [None, 36, None, 1]
    assert isinstance(report["total_params"], int) and isinstance(report["total_flops"], int)


def test_check_passes_for_every_variant(capsys):
    status, out, _ = run(capsys, "check", "--batch-size", "2", "--time-steps", "3", "--json")
    assert status == 0
    results = json.loads(out)["results"]
    assert [r["variant"] for r in results] == list(VARIANTS)
    for result in results:
        assert result["ok"] and result["max_abs_diff"] <= result["tolerance"] == 1e-5


BAD_ARGUMENTS = [
    (["trace", "--variant", "fastest", "--batch-size", "2"], "variant must be one of"),
    (["trace", "--variant", "folded", "--batch-size", "0"], "batch_size must be between"),
    (["trace", "--variant", "folded", "--time-steps", "ten"], "time_steps must be a whole"),
    (["trace", "--variant", "folded", "--height", "2"], "height must be at least pool_height"),
    (["trace", "--variant", "folded", "--precision", "int8"], "precision must be one of"),
    (["trace", "--batch-size", "2"], "the following arguments are required: --variant"),
    (["check", "--seed", "-1"], "--seed must be a whole number"),
    (["check", "--colour"], "unrecognized arguments: --colour"),
    (["launch"], "invalid choice: 'launch'"),
    ([], "choose a command"),
]


@pytest.mark.parametrize("argv, message", BAD_ARGUMENTS)
def test_bad_arguments_exit_2_with_one_error_line(capsys, argv, message):
    status, out, err = run(capsys, *argv)
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

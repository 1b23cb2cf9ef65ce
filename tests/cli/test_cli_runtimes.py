"""The inference runtimes on the command line: `export` writes an ONNX file that ONNX Runtime
computes like `build_model` from the same seed, `bench` gives an ok row per runtime (each in its
worker), and every bad input is one `error:` line with exit 2: a variant that does not convert, an
unwritable output, a missing runtime, a training step, a runtime that fails making its session."""

import json
from pathlib import Path

import numpy as np
import pytest
from factories import python
from factories import run_cli as run

from hierlstm import backends
from hierlstm.config import RunConfig
from hierlstm.registry import RUNTIMES

TINY = "--batch-size 2 --time-steps 3"


def one_line(status: int, out: str, err: str) -> str:
    assert status == 2 and out == "" and err.startswith("error: ") and err.count("\n") == 1
    return err


def test_export_writes_a_file_that_onnx_runtime_computes_like_build_model(capsys, tmp_path):
    onnxruntime = pytest.importorskip("onnxruntime")
    from hierlstm.model.builders import build_model
    from hierlstm.model.check import random_input
    from hierlstm.model.params import init_params

    out = tmp_path / "folded.onnx"
    status, printed, _ = run(capsys, "export --variant folded --seed 3 --json", TINY, out)
    assert status == 0
    document = json.loads(printed)
    assert document["path"] == str(out) and document["max_abs_diff"] <= 1e-5
    assert document["lstm_ops"] == 2 and document["loops"] == 0  # both LSTMs fused
    config = RunConfig(variant="folded", batch_size=2, time_steps=3)
    inputs = random_input(config, seed=11)  # not the input it was checked on
    session = onnxruntime.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    (outputs,) = session.run(None, {session.get_inputs()[0].name: inputs})
    expected = np.asarray(build_model(config, init_params(config, 3))(inputs))
    assert outputs.shape == (2, 3, config.outer_units)
    np.testing.assert_allclose(outputs, expected, atol=1e-5)


@pytest.mark.parametrize(
    ("words", "said"),
    [
        ("--variant fused", "variant fused does not convert to ONNX"),
        ("--variant vectorized_map", "tf2onnx cannot freeze its tf.vectorized_map graph"),
        ("--variant folded --format tflite", "--format must be onnx"),
        ("--variant folded --seed -1", "--seed must be a whole number"),
    ],
)
def test_export_refuses_in_one_line(capsys, tmp_path, words, said):
    out = tmp_path / "model.onnx"
    assert said in one_line(*run(capsys, "export", words, TINY, out))
    assert not out.exists()


def test_export_checks_its_settings_before_tensorflow_or_keras_is_imported(tmp_path):
    program = (
        "import sys; sys.modules['tensorflow'] = None\n"
        "from hierlstm.cli.main import main\n"
        f"status = main(['export', '--variant', 'fused', {str(tmp_path / 'a.onnx')!r}])\n"
        "assert status == 2 and 'keras' not in sys.modules, status\n"
    )
    completed = python("-c", program, timeout=120)
    assert completed.returncode == 0, completed.stderr[-1000:]
    assert completed.stderr.startswith("error: variant fused does not convert to ONNX")


def test_export_refuses_an_output_it_cannot_write(capsys, tmp_path):
    pytest.importorskip("tf2onnx")  # the folder is checked once the converter is there
    (tmp_path / "a_file").write_text("")
    for out, said in (
        (tmp_path / "nowhere" / "a.onnx", "no folder"),
        (tmp_path / "a_file" / "a.onnx", "no folder"),
        (tmp_path, "it is a folder"),
        # refused when written even as root, whom the folder check lets through
        (
            Path("/proc/hierlstm-test.onnx"),
            "cannot write the ONNX file to /proc/hierlstm-test.onnx",
        ),
    ):
        assert said in one_line(*run(capsys, "export --variant folded", TINY, out))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a_file"]


def test_bench_gives_an_ok_row_per_runtime_and_stores_each_version(capsys, tmp_path):
    for name in RUNTIMES:
        pytest.importorskip(name)
    from hierlstm.results.store import ResultStore

    database = tmp_path / "results.sqlite3"
    runtimes = " ".join(f"--backend {name}" for name in RUNTIMES)
    status, printed, _ = run(
        capsys,
        "bench",
        runtimes,
        "--variant folded --repeats 2 --warmup 1 --json --db",
        database,
        TINY,
    )
    assert status == 0
    rows = json.loads(printed)["results"]
    assert [(row["config"]["backend"], row["variant"]) for row in rows] == [
        (name, "folded") for name in RUNTIMES
    ]
    assert all(row["status"] == "ok" and row["first_call_s"] > 0 for row in rows)
    assert all(row["kernel_reason"].startswith("the runtime runs") for row in rows)
    stored = ResultStore(database).rows()
    for name in RUNTIMES:
        versions = stored.loc[stored["backend"] == name, f"{name}_version"]
        assert len(versions) == 1 and all(versions)


@pytest.mark.parametrize(
    ("words", "said"),
    [
        ("--task training", "runs the exported model's forward pass only"),
        ("--xla", "xla is TensorFlow's and JAX's compiler"),
        ("--precision mixed_float16", "runs the exported float32 file"),
        ("--variant fused", "variant fused does not convert to ONNX"),
    ],
)
@pytest.mark.parametrize("name", RUNTIMES)
def test_a_runtime_refuses_what_it_cannot_run_before_anything_starts(capsys, name, words, said):
    pytest.importorskip(name)  # without it, the refusal is test_a_missing_runtime_says_how_...'s
    line = one_line(*run(capsys, "bench --variant folded --backend", name, words, TINY))
    assert said in line


@pytest.mark.parametrize("name", RUNTIMES)
def test_a_missing_runtime_says_how_to_install_it(capsys, monkeypatch, name):
    import importlib.util

    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda module: None if module == name else found(module)
    )
    assert backends.missing(name).endswith(
        "run make run RUNTIMES=1, or pip install -r requirements-runtimes.txt."
    )
    line = one_line(*run(capsys, "bench --variant folded --backend", name, TINY))
    assert f"the {name} backend needs the {name} " in line and "RUNTIMES=1" in line


def test_a_session_that_fails_is_a_failed_row_in_one_line(monkeypatch):
    """In the worker's own request handler (here, not in a process): the runtime refusing the
    file at session creation answers a failed row, one line, and the worker serves on."""
    onnxruntime = pytest.importorskip("onnxruntime")
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail

    from hierlstm.backends.worker import Worker

    worker = Worker("onnxruntime")

    def refuse(model, threads):
        raise Fail("[ONNXRuntimeError] : 1 : FAIL : Load model failed\nsecond line")

    monkeypatch.setattr(worker.runner, "session", refuse)
    config = RunConfig(variant="folded", batch_size=1, time_steps=2, backend="onnxruntime")
    answer = worker.answer({"id": 1, "op": "prepare", "config": config.to_dict()})
    assert answer["ok"] is False and "bug" not in answer
    assert answer["error"].startswith("onnxruntime could not run this model (Fail)")
    assert "\n" not in answer["error"] and answer["row"]["status"] == "failed"
    monkeypatch.undo()
    assert onnxruntime.get_device() == "CPU"
    answer = worker.answer({"id": 2, "op": "prepare", "config": config.to_dict()})
    assert answer["ok"] is True and answer["first_call_s"] > 0

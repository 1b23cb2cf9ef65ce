"""`python -m hierlstm doctor` without a GPU (the probe runs on the CPU) and with the fake
nvidia-smi of an H100 that TensorFlow cannot use (the fix named, exit 1). TensorFlow's GPU list
is the one seam replaced: empty, as on this machine."""

import json
import os
from pathlib import Path

import pytest
from factories import python
from factories import run_cli as run

from hierlstm.cli.doctor import format_report
from hierlstm.hardware import and_cuda_packages, devices, missing_packages

ROOT = Path(__file__).resolve().parents[2]
FAKE_SMI = ROOT / "tests" / "fixtures" / "fake-nvidia-smi"
TOP_KEYS = {
    *("tensorflow", "and_cuda", "driver", "tensorflow_gpus", "memory", "problems", "probes"),
    *("status", "exit_status"),
}


@pytest.fixture
def no_gpu(monkeypatch, tmp_path):
    """No nvidia-smi on PATH, an empty /proc/driver/nvidia, no GPU listed by TensorFlow."""
    monkeypatch.setattr(devices, "list_gpus", lambda: ())
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))  # doctor runs nothing but nvidia-smi
    monkeypatch.setenv("HIERLSTM_NVIDIA_PROC", str(tmp_path / "proc"))
    monkeypatch.setenv("HIERLSTM_LOCK_DIR", str(tmp_path / "locks"))


@pytest.fixture
def fake_h100(no_gpu, monkeypatch):
    monkeypatch.setenv("PATH", f"{FAKE_SMI}{os.pathsep}{os.environ['PATH']}")


def test_doctor_without_a_gpu_probes_the_cpu_and_exits_0(capsys, no_gpu):
    status, out, err = run(capsys, "doctor", "--json")
    assert status == 0, err
    report = json.loads(out)
    assert set(report) == TOP_KEYS
    assert report["status"] == "ok" and report["exit_status"] == 0
    assert report["problems"] == [] and report["tensorflow_gpus"] == []
    assert report["driver"]["gpus"] == [] and report["driver"]["source"] == ""
    assert report["memory"] == {"mode": "none", "limit_mb": None}
    tensorflow = report["tensorflow"]
    assert set(tensorflow) == {
        *("version", "keras", "python", "cuda_build", "cuda_version", "cudnn_version"),
        "cuda_targets",
    }
    assert report["and_cuda"]["missing"] == list(missing_packages(and_cuda_packages()))
    (probe,) = report["probes"]
    assert probe["device"] == "cpu" and probe["label"].startswith("CPU (")
    assert probe["size"] == {"batch_size": 8, "time_steps": 50}
    assert probe["forward"]["status"] == "ok" and probe["forward"]["median_ms"] > 0
    assert probe["forward"]["time_vs_float32"] is None  # it is float32
    assert probe["kernel"] == "generic" and probe["kernel_reason"]
    assert probe["xla"]["status"] in ("ok", "failed")  # whether XLA compiles is the finding
    assert [p["precision"] for p in probe["precisions"]] == ["mixed_float16", "mixed_bfloat16"]
    for run_ in probe["precisions"]:
        assert run_["status"] == "ok" and run_["time_vs_float32"] > 0
    assert "float16 on a CPU is emulated" in probe["precisions"][0]["note"]
    training = probe["training"]  # a training step of folded, in the same rounds
    # How much longer than the forward pass it takes is a measurement (no test asserts one).
    assert training["status"] == "ok" and training["median_ms"] > 0
    assert training["time_vs_float32"] > 0 and training["kernel"] == "generic"
    assert training["kernel_reason"]
    assert "probing cpu..." in err
    out = format_report(report)  # what `doctor` prints without --json
    assert "NVIDIA driver: no NVIDIA GPU found (no nvidia-smi on PATH" in out
    assert "TensorFlow sees: no GPU" in out and "Problems: none" in out
    assert "Probe on CPU (" in out and "LSTM kernel: generic" in out
    assert "  training step (float32, SGD): " in out
    assert "No NVIDIA GPU was found: the probe ran on the CPU only." in out
    assert out.rstrip().endswith("Result: every device works (exit status 0).")


def test_doctor_with_an_h100_that_tensorflow_cannot_use_names_the_fix(capsys, fake_h100):
    status, out, _ = run(capsys, "doctor", "--json", "--no-probe")
    assert status == 1
    report = json.loads(out)
    assert set(report) == TOP_KEYS and report["probes"] is None
    assert report["status"] == "unusable" and report["exit_status"] == 1
    (gpu,) = report["driver"]["gpus"]
    assert gpu == {
        "index": 0,
        "name": "NVIDIA H100 80GB HBM3",
        "memory_total_mb": 81559,
        "memory_free_mb": 81004,
        "compute_capability": "9.0",
    }
    assert report["driver"]["driver_version"] == "550.54.15"
    first = report["problems"][0]
    assert first["severity"] == "unusable" and first["gpus"] == ["NVIDIA H100 80GB HBM3"]
    assert first["message"].startswith(
        "An NVIDIA H100 80GB HBM3 is present but TensorFlow cannot use it: "
    )
    missing = missing_packages(and_cuda_packages())
    if missing:  # this machine's case: the plain tensorflow wheel
        assert first["kind"] == "missing_packages"
        assert all(name in first["message"] for name in missing)
        assert "make run GPU=1" in first["fix"] and "tensorflow[and-cuda]==" in first["fix"]
    else:  # the wheels are there: another cause is named, with its fix
        assert first["kind"] in {"no_libcuda", "unloadable", "old_driver", "hidden", "unknown"}
        assert first["fix"]
    # An H100 has no binary kernels in the 2.21 wheel (sm_89 is the newest): a warning.
    assert "ptx_jit" in [problem["kind"] for problem in report["problems"]]
    status, out, _ = run(capsys, "doctor", "--no-probe")
    assert status == 1
    assert "NVIDIA driver 550.54.15 (nvidia-smi" in out and "NVIDIA H100 80GB HBM3" in out
    assert "[unusable] An NVIDIA H100 80GB HBM3 is present but TensorFlow cannot use it:" in out
    assert "\n    fix: " in out
    assert out.rstrip().endswith(
        "Result: a GPU is present but TensorFlow cannot use it (exit status 1)."
    )


def test_a_bad_gpu_memory_limit_exits_2_with_one_line():
    environment = {**os.environ, "HIERLSTM_GPU_MEMORY_MB": "lots"}
    bad_limit = python("-m", "hierlstm", "doctor", "--no-probe", env=environment)
    assert bad_limit.returncode == 2
    assert bad_limit.stderr.strip() == (
        "error: HIERLSTM_GPU_MEMORY_MB must be a whole number of at least 1; got 'lots'."
    )

"""Device resolution, the device report and precision advice, on this machine and on
simulated GPUs (the GPU list is the one seam that is replaced)."""

import platform

import keras
import numpy as np
import pytest
import tensorflow as tf

from hierlstm.hardware import GpuInfo, devices

GPU_COUNT = len(tf.config.list_physical_devices("GPU"))

A100 = GpuInfo(index=0, name="NVIDIA A100", compute_capability=(8, 0))
T4 = GpuInfo(index=1, name="Tesla T4", compute_capability=(7, 5))
P100 = GpuInfo(index=2, name="Tesla P100", compute_capability=(6, 0))


@pytest.fixture
def three_gpus(monkeypatch):
    monkeypatch.setattr(devices, "list_gpus", lambda: (A100, T4, P100))


def test_resolve_auto_and_cpu():
    assert devices.resolve_device("auto") == ("/GPU:0" if GPU_COUNT else "/CPU:0")
    assert devices.resolve_device("cpu") == "/CPU:0"


def test_resolve_missing_gpu_says_what_exists():
    with pytest.raises(ValueError, match="not available") as raised:
        devices.resolve_device(f"gpu:{GPU_COUNT}")
    if GPU_COUNT == 0:
        assert str(raised.value) == (
            "device gpu:0 is not available: TensorFlow sees no GPU on this machine; "
            "use auto or cpu."
        )


def test_resolve_rejects_malformed_specs():
    for spec in ("GPU", "gpu", "gpu:-1", "tpu:0", ""):
        with pytest.raises(ValueError, match="auto, cpu or gpu:N"):
            devices.resolve_device(spec)


def test_resolve_on_simulated_gpus(three_gpus):
    assert devices.resolve_device("auto") == "/GPU:0"
    assert devices.resolve_device("gpu:2") == "/GPU:2"
    with pytest.raises(ValueError) as raised:
        devices.resolve_device("gpu:3")
    assert "sees 3 GPUs (gpu:0, gpu:1, gpu:2)" in str(raised.value)


def test_device_report_matches_the_installed_versions():
    report = devices.device_report()
    assert report.tensorflow == tf.__version__
    assert report.keras == keras.__version__
    assert report.numpy == np.__version__
    assert report.python == platform.python_version()
    assert report.cpu_cores >= 1
    assert len(report.gpus) == GPU_COUNT
    assert report.cuda_build == tf.test.is_built_with_cuda()
    assert report.cudnn_available == (report.cuda_build and GPU_COUNT > 0)
    assert report.cudnn_reason
    assert devices.versions() == {
        "python": report.python,
        "tensorflow": report.tensorflow,
        "keras": report.keras,
        "numpy": report.numpy,
    }


def test_the_report_lists_the_builds_cuda_targets():
    build = tf.sysconfig.get_build_info()
    report = devices.device_report()
    assert report.cuda_targets == tuple(build.get("cuda_compute_capabilities") or ())
    if report.cuda_build:  # the Linux wheel: what hierlstm.hardware.gpu records as a fallback
        assert all(target.startswith(("sm_", "compute_")) for target in report.cuda_targets)


def test_cudnn_reason_without_gpu_or_cuda(monkeypatch):
    monkeypatch.setattr(devices, "list_gpus", lambda: ())
    report = devices.device_report()
    assert not report.cudnn_available
    if report.cuda_build:
        assert report.cudnn_reason.startswith("no GPU visible to TensorFlow")
    monkeypatch.setattr(tf.test, "is_built_with_cuda", lambda: False)
    assert devices.device_report().cudnn_reason.startswith("TensorFlow built without CUDA")


def test_device_labels():
    report = devices.device_report()
    cpu = f"CPU ({report.machine}, {report.cpu_cores} cores)"
    assert devices.device_label("cpu") == cpu
    assert devices.device_label("/CPU:0") == cpu
    assert devices.device_string("cpu") == f"/CPU:0 ({report.machine}, {report.cpu_cores} cores)"


def test_device_labels_on_simulated_gpus(three_gpus):
    assert devices.device_label("auto") == "GPU:0 NVIDIA A100"
    assert devices.device_label("gpu:1") == "GPU:1 Tesla T4"
    assert devices.device_string("/GPU:2") == "/GPU:2 (Tesla P100)"


def test_precision_on_cpu():
    assert devices.precision_supported("float32", "cpu") == (True, "")
    assert devices.precision_supported("mixed_bfloat16", "cpu")[0]  # mixed_float16: test_bad_input
    ok, message = devices.precision_supported("float64", "cpu")
    assert not ok and "precision must be one of" in message


def test_precision_on_a_missing_device():
    ok, message = devices.precision_supported("float32", f"gpu:{GPU_COUNT}")
    assert not ok and "not available" in message


def test_precision_on_simulated_gpus(three_gpus):
    assert devices.precision_supported("mixed_float16", "gpu:0") == (True, "")
    assert devices.precision_supported("mixed_bfloat16", "gpu:0") == (True, "")
    assert devices.precision_supported("mixed_float16", "gpu:1") == (True, "")
    ok, message = devices.precision_supported("mixed_bfloat16", "gpu:1")
    assert ok and "8.0" in message and "7.5" in message
    ok, message = devices.precision_supported("mixed_float16", "/GPU:2")
    assert ok and "7.0" in message and "Tesla P100" in message

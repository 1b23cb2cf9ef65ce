"""The banner and sidebar name an NVIDIA GPU TensorFlow cannot use (the fake nvidia-smi of an
H100 on PATH) and the fix, in both languages; a bad device setting is one line. TensorFlow's GPU
list is the one seam replaced: empty, as on this machine. The device caches are cleared around
each test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from apptests import FIRST_PAGE, opened
from factories import PAGES
from streamlit.testing.v1 import AppTest

from hierlstm.app import devices as app_devices
from hierlstm.hardware import and_cuda_packages, devices, missing_packages

ROOT = Path(__file__).resolve().parents[2]
FAKE_SMI = ROOT / "tests" / "fixtures" / "fake-nvidia-smi"
H100 = "NVIDIA H100 80GB HBM3"


def _clear_caches():
    app_devices.cached_device_report.clear()
    app_devices.gpu_problems.clear()


@pytest.fixture
def machine(monkeypatch, tmp_path):
    """No GPU for TensorFlow, no NVIDIA proc folder, the results in a temporary file; the test
    decides what nvidia-smi is on PATH."""
    monkeypatch.setattr(devices, "list_gpus", lambda: ())
    monkeypatch.setenv("HIERLSTM_NVIDIA_PROC", str(tmp_path / "proc"))
    monkeypatch.setenv("HIERLSTM_DB", str(tmp_path / "results.sqlite3"))
    _clear_caches()
    yield monkeypatch
    _clear_caches()


def _rendered(query: dict | None = None) -> AppTest:
    at = opened(query=query)
    assert not at.exception, [e.value for e in at.exception]
    return at


def _banner(at: AppTest) -> str:
    return at.get_by_key("banner").markdown[0].value


def test_an_h100_tensorflow_cannot_use_is_named_with_the_fix(machine):
    machine.setenv("PATH", f"{FAKE_SMI}{os.pathsep}{os.environ['PATH']}")
    at = _rendered()
    assert f"**cuDNN** not available: TensorFlow cannot use an {H100} (see below)" in _banner(at)
    assert "sees no GPU" not in _banner(at)
    warnings = [warning.value for warning in at.warning]
    unusable = [w for w in warnings if w.startswith(f"An {H100} is present but TensorFlow")]
    assert unusable and all(" Fix: " in warning for warning in unusable)
    if missing_packages(and_cuda_packages()):  # the plain wheel, as on this machine
        assert "and-cuda extra are not installed" in unusable[0]
        assert "make run GPU=1" in unusable[0]
    infos = [info.value for info in at.info]
    assert any("has no compiled TensorFlow kernels" in info for info in infos)  # PTX only
    captions = [caption.value for caption in at.sidebar.caption]
    # The sidebar names the GPU in one line; the banner holds the reasons and the fixes, the
    # first shown, the others in one expander.
    assert (
        captions.count(
            f"⚠️ An {H100} is present but TensorFlow cannot use it (the banner above the page says "
            "why and how to fix it)."
        )
        == 1
    )
    (more,) = [e for e in at.expander if e.label.endswith("more from doctor")]
    assert more.label == f"{len(warnings) + len(infos) - 1} more from doctor"


def test_the_same_diagnosis_in_chinese(machine):
    machine.setenv("PATH", f"{FAKE_SMI}{os.pathsep}{os.environ['PATH']}")
    at = _rendered({"lang": "zh"})
    assert f"不可用：TensorFlow 无法使用一块 {H100}（见下文）" in _banner(at)
    assert any(
        warning.value.startswith(f"本机有一块 {H100}，但 TensorFlow 无法使用：")
        and "解决办法：" in warning.value
        for warning in at.warning
    )


def test_without_an_nvidia_gpu_the_banner_says_tensorflow_sees_none(machine, tmp_path):
    machine.setenv("PATH", str(tmp_path))  # no nvidia-smi at all
    at = _rendered()
    banner = _banner(at)
    assert "cannot use" not in banner
    if devices.device_report().cuda_build:
        assert "**cuDNN** not available: TensorFlow sees no GPU" in banner
    assert not [w for w in at.warning if "TensorFlow cannot use" in w.value]
    assert not [c for c in at.sidebar.caption if "cannot use" in c.value]


@pytest.mark.parametrize(
    ("variable", "line"),
    [
        (
            "HIERLSTM_GPU_MEMORY_MB",
            "GPU memory was not set up, so TensorFlow may take nearly all of it at first use and "
            "starve other sessions and the CLI: HIERLSTM_GPU_MEMORY_MB must be a whole number of "
            "at least 1; got 'lots'.",
        ),
        (
            "HIERLSTM_LOGICAL_CPUS",
            "The logical CPU devices were not set up, so this server has one CPU device: "
            "HIERLSTM_LOGICAL_CPUS must be a whole number from 1 to 64; got 'lots'.",
        ),
    ],
)
def test_a_bad_device_setting_is_one_line_and_the_app_serves(machine, tmp_path, variable, line):
    machine.setenv("PATH", str(tmp_path))
    machine.setenv(variable, "lots")
    app_devices.start_devices.clear()
    try:
        at = _rendered()
        assert [error.value for error in at.error] == [line]
        assert at.title[0].value == PAGES[FIRST_PAGE] and at.get_by_key("banner") is not None
    finally:
        app_devices.start_devices.clear()

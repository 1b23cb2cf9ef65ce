import os
import re
from pathlib import Path

import pytest

from hierlstm.admission import LimitError, check_limits, current_limits, memory_estimate_bytes
from hierlstm.config import RunConfig
from hierlstm.i18n import t


def test_defaults_and_environment_overrides(monkeypatch):
    for name in ("MAX_BATCH", "MAX_TIME_STEPS", "MEMORY_BUDGET_MB", "TRACE_BUDGET_STEPS"):
        monkeypatch.delenv(f"HIERLSTM_{name}", raising=False)
    monkeypatch.delenv("HIERLSTM_CONFIRM_SECONDS", raising=False)
    limits = current_limits()
    assert (limits.max_batch, limits.max_time_steps, limits.trace_budget_steps) == (1024, 2000, 200)
    import tensorflow as tf

    on_gpu = bool(tf.config.list_physical_devices("GPU"))
    assert limits.memory_budget_bytes > 0
    source = t(limits.memory_budget_source, "en")
    assert ("RAM" in source) != on_gpu or "no free GPU" in source
    monkeypatch.setenv("HIERLSTM_MAX_BATCH", "16")
    monkeypatch.setenv("HIERLSTM_MEMORY_BUDGET_MB", "1")
    limits = current_limits()
    assert limits.max_batch == 16 and limits.memory_budget_bytes == 1024 * 1024


def test_a_bad_environment_value_is_named(monkeypatch):
    monkeypatch.setenv("HIERLSTM_MAX_BATCH", "lots")
    with pytest.raises(LimitError, match="HIERLSTM_MAX_BATCH must be a whole number"):
        current_limits()


def test_defaults_fit_and_the_estimate_grows_with_size(monkeypatch):
    monkeypatch.setenv("HIERLSTM_MEMORY_BUDGET_MB", "64")
    check_limits(RunConfig())  # the seed's default config runs
    small, large = RunConfig(batch_size=2), RunConfig(batch_size=4)
    assert memory_estimate_bytes(large) > memory_estimate_bytes(small)


FAKE_SMI = Path(__file__).resolve().parents[1] / "fixtures" / "fake-nvidia-smi"


@pytest.fixture
def one_gpu(monkeypatch):
    """TensorFlow lists one GPU (the seam), nvidia-smi is the H100 fixture; no budget override."""
    import tensorflow as tf

    from hierlstm.admission import limits

    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: ["GPU:0"])
    monkeypatch.setenv("PATH", f"{FAKE_SMI}{os.pathsep}{os.environ['PATH']}")
    for name in ("HIERLSTM_MEMORY_BUDGET_MB", "HIERLSTM_GPU_MEMORY_MB", "CUDA_VISIBLE_DEVICES"):
        monkeypatch.delenv(name, raising=False)
    limits._free_memory.clear()
    yield
    limits._free_memory.clear()


def test_the_gpu_budget_is_half_of_the_free_memory_or_of_the_process_limit(one_gpu, monkeypatch):
    limits = current_limits()
    assert limits.memory_budget_bytes == 81004 * 1024 * 1024 // 2
    assert t(limits.memory_budget_source, "en") == "50% of the GPU's free memory (nvidia-smi)"
    monkeypatch.setenv("HIERLSTM_GPU_MEMORY_MB", "2048")
    limits = current_limits()
    assert limits.memory_budget_bytes == 1024 * 1024 * 1024
    assert t(limits.memory_budget_source, "en") == "50% of HIERLSTM_GPU_MEMORY_MB"
    monkeypatch.setenv("HIERLSTM_GPU_MEMORY_MB", "half")
    with pytest.raises(LimitError, match="HIERLSTM_GPU_MEMORY_MB must be a whole number"):
        current_limits()


def test_a_gpu_whose_free_memory_nobody_reports_falls_back_to_ram(one_gpu, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    monkeypatch.setenv("HIERLSTM_NVIDIA_PROC", str(tmp_path))
    limits = current_limits()
    assert t(limits.memory_budget_source, "en") == (
        "25% of available RAM (no free GPU memory reported)"
    )


@pytest.mark.parametrize(
    "config",
    [
        RunConfig(variant="folded", batch_size=8),  # over HIERLSTM_MAX_BATCH
        RunConfig(variant="folded", time_steps=16),  # over HIERLSTM_MAX_TIME_STEPS
        RunConfig(variant="time_distributed", batch_size=1, time_steps=8, task="training"),
        RunConfig(variant="folded", batch_size=4, time_steps=8, filters=64, height=512),
        RunConfig(variant="folded", batch_size=4, time_steps=8, task="training"),
    ],
    ids=["batch", "time", "trace", "memory", "memory-training"],
)
def test_a_limit_is_said_in_either_language_with_the_same_numbers(config, monkeypatch):
    """The app says why a run is not run in the session's language (the command line in
    English, str()): the same numbers and names, no English words left in the Chinese."""
    limits = {"MAX_BATCH": "4", "MAX_TIME_STEPS": "8", "TRACE_BUDGET_STEPS": "10"}
    for name, value in {**limits, "MEMORY_BUDGET_MB": "1"}.items():
        monkeypatch.setenv(f"HIERLSTM_{name}", value)
    if config.batch_size == 1:  # the trace budget alone
        monkeypatch.setenv("HIERLSTM_MEMORY_BUDGET_MB", "100000")
    with pytest.raises(LimitError) as raised:
        check_limits(config)
    english, chinese = raised.value.sentence("en"), raised.value.sentence("zh")
    assert english == str(raised.value) and chinese != english
    assert sorted(re.findall(r"\d[\d,.]*\d|\d", english)) == sorted(
        re.findall(r"\d[\d,.]*\d|\d", chinese)
    )
    words = set(re.findall(r"[A-Za-z][A-Za-z_]+", chinese))
    names = {"batch_size", "time_steps", "folded", "time_distributed", "LSTM", "MB", "RAM"}
    assert {word for word in words if not word.startswith("HIERLSTM_")} <= names, chinese

"""The GPU rules that are pure functions (driver age, compute capability, 16-bit precisions,
CUDA_VISIBLE_DEVICES, the memory budget), nvidia-smi's output parsed, the memory setup against
a recording stand-in for `tf.config`, and the diagnosis over hand-made facts. No GPU needed."""

import dataclasses
import sys
from pathlib import Path

import pytest

from hierlstm.config import SettingError
from hierlstm.hardware import DriverReport, GpuFacts, NvidiaGpu, diagnose, gpu, nvidia

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "fake-nvidia-smi"
TARGETS = gpu.TF_2_21_CUDA_TARGETS
MB = 1024 * 1024


@pytest.mark.parametrize(
    "driver, cuda, minimum",
    [
        ("550.54.15", "12.5.1", ""),
        ("525.60.13", "12.5.1", ""),  # the minimum itself is enough
        ("525.60.12", "12.5.1", "525.60.13"),
        ("470.182.03", "12.5.1", "525.60.13"),
        ("470.182.03", "11.8", ""),  # 11.x needs 450.80.02
        ("440.33", "11.2", "450.80.02"),
        ("575.51.03", "13.0", "580"),
        ("", "12.5.1", ""),  # unknown driver: no claim
        ("550.54.15", "", ""),  # no CUDA build: no claim
    ],
)
def test_driver_too_old_names_the_minimum(driver, cuda, minimum):
    assert gpu.driver_too_old(driver, cuda) == minimum


@pytest.mark.parametrize(
    "capability, support",
    [
        ((6, 0), "binary"),  # P100
        ((6, 1), "binary"),  # a cubin for 6.0 runs on 6.1
        ((7, 5), "binary"),  # T4 runs sm_70
        ((8, 6), "binary"),  # A10, RTX 3090: sm_80
        ((8, 9), "binary"),  # L4
        ((9, 0), "ptx"),  # H100: only compute_90 PTX
        ((10, 0), "ptx"),  # B200: PTX is forward compatible
        ((12, 0), "ptx"),
        ((5, 2), "none"),  # Maxwell: below sm_60
        ((3, 7), "none"),  # K80
        (None, "unknown"),
    ],
)
def test_capability_support_of_the_2_21_wheel(capability, support):
    assert gpu.capability_support(capability, TARGETS) == support
    assert gpu.oldest_capability(TARGETS) == "6.0"


@pytest.mark.parametrize(
    "precision, capability, fast",
    [
        ("float32", (6, 0), True),
        ("mixed_float16", (6, 0), False),  # P100: no Tensor Cores
        ("mixed_float16", (7, 0), True),  # V100
        ("mixed_bfloat16", (7, 5), False),  # T4: no bfloat16 arithmetic
        ("mixed_bfloat16", (8, 0), True),  # A100
        ("mixed_bfloat16", (9, 0), True),
        ("mixed_float16", None, None),
    ],
)
def test_precision_is_fast_by_compute_capability(precision, capability, fast):
    assert gpu.precision_is_fast(precision, capability) is fast


def test_physical_gpu_follows_cuda_visible_devices():
    assert gpu.physical_gpu(0, {}) == "0"
    assert gpu.physical_gpu(1, {}) == "1"
    assert gpu.physical_gpu(0, {"CUDA_VISIBLE_DEVICES": "2,3"}) == "2"
    assert gpu.physical_gpu(1, {"CUDA_VISIBLE_DEVICES": "2, 3"}) == "3"
    uuid = "GPU-00000000-0000-4000-8000-000000000000"
    assert gpu.physical_gpu(0, {"CUDA_VISIBLE_DEVICES": uuid}) == uuid


def test_visible_driver_gpus():
    gpus = tuple(NvidiaGpu(index, f"GPU {index}") for index in range(4))

    def visible(spec):
        return [g.index for g in gpu.visible_driver_gpus(gpus, {"CUDA_VISIBLE_DEVICES": spec})]

    assert gpu.visible_driver_gpus(gpus, {}) == gpus and visible("GPU-abc") == [0, 1, 2, 3]
    assert visible("2,0") == [2, 0]
    assert visible("1,7,2") == [1]  # CUDA stops at the first entry that is not a device
    assert visible("") == visible("-1") == visible("-1,0") == []


def test_gpu_budget_is_half_of_what_is_really_free():
    assert gpu.gpu_budget([81004], None) == (81004 * MB // 2, "limit.source.gpu_free")
    assert gpu.gpu_budget([20000, 3000], None)[0] == 1500 * MB  # the fullest GPU decides
    assert gpu.gpu_budget([81004], 8192) == (4096 * MB, "limit.source.gpu_env")
    assert gpu.gpu_budget([1000], 8192)[0] == 500 * MB  # a limit never raises the budget
    with pytest.raises(ValueError, match="at least one GPU"):
        gpu.gpu_budget([], None)


def test_memory_limit_from_the_environment():
    assert gpu.memory_limit_mb({}) is None
    assert gpu.memory_limit_mb({"HIERLSTM_GPU_MEMORY_MB": " 4096 "}) == 4096
    for bad in ("0", "lots", "-5", "1.5"):
        with pytest.raises(SettingError, match="HIERLSTM_GPU_MEMORY_MB must be a whole number"):
            gpu.memory_limit_mb({"HIERLSTM_GPU_MEMORY_MB": bad})


class FakeConfig:
    """What `configure_memory` calls on `tf.config`, recorded; `started` makes every setter
    raise RuntimeError as TensorFlow does once its runtime has started."""

    def __init__(self, gpus, started=False, growth=False):
        self.gpus, self.started, self.calls = list(gpus), started, []
        self._growth = growth
        config = self

        class Experimental:
            def set_memory_growth(self, device, enable):
                config._set(("growth", device, enable))

            def get_memory_growth(self, device):
                return config._growth

        self.experimental = Experimental()

    def _set(self, call):
        if self.started:
            raise RuntimeError("Physical devices cannot be modified after being initialized")
        self.calls.append(call)

    def list_physical_devices(self, kind):
        return self.gpus if kind == "GPU" else []

    def LogicalDeviceConfiguration(self, memory_limit=None):  # noqa: N802 (tf.config's name)
        return ("logical", memory_limit)

    def set_logical_device_configuration(self, device, logical):
        self._set(("limit", device, logical))


def test_memory_growth_on_every_gpu_by_default():
    config = FakeConfig(["gpu0", "gpu1"])
    setting = gpu.configure_memory({}, config)
    assert setting == gpu.MemorySetting("growth", None, 2)
    assert config.calls == [("growth", "gpu0", True), ("growth", "gpu1", True)]


def test_a_per_process_limit_instead_of_growth():
    config = FakeConfig(["gpu0"])
    setting = gpu.configure_memory({"HIERLSTM_GPU_MEMORY_MB": "2048"}, config)
    assert setting == gpu.MemorySetting("limit", 2048, 1)
    assert config.calls == [("limit", "gpu0", [("logical", 2048)])]


def test_memory_setup_without_a_gpu_or_after_the_runtime_started():
    assert gpu.configure_memory({}, FakeConfig([])) == gpu.MemorySetting("none")
    already = FakeConfig(["gpu0"], started=True, growth=True)
    assert gpu.configure_memory({}, already).mode == "growth"
    late = gpu.configure_memory({}, FakeConfig(["gpu0"], started=True, growth=False))
    assert late == gpu.MemorySetting("started", None, 1)  # too late for the default: left alone
    with pytest.raises(RuntimeError, match="before TensorFlow's runtime starts"):
        gpu.configure_memory({"HIERLSTM_GPU_MEMORY_MB": "2048"}, FakeConfig(["gpu0"], started=True))


def test_memory_setup_on_this_machine_lists_what_tensorflow_sees():
    import tensorflow as tf

    setting = gpu.configure_memory({})
    assert setting.gpus == len(tf.config.list_physical_devices("GPU"))
    assert setting.mode == ("growth" if setting.gpus else "none")


# --- nvidia-smi ------------------------------------------------------------------------------


def test_parse_the_documented_query_and_list_formats():
    driver, gpus = nvidia.parse_query(
        "0, NVIDIA H100 80GB HBM3, 550.54.15, 81559, 81004, 9.0\n"
        "1, Tesla T4, 550.54.15, 15360, [N/A], 7.5\n"
    )
    assert driver == "550.54.15"
    assert gpus == (
        NvidiaGpu(0, "NVIDIA H100 80GB HBM3", 81559, 81004, (9, 0)),
        NvidiaGpu(1, "Tesla T4", 15360, None, (7, 5)),
    )
    listed = nvidia.parse_list("GPU 0: NVIDIA A100-SXM4-40GB (UUID: 1)\nGPU 1: Tesla T4 (UUID: 2)")
    assert [(g.index, g.name) for g in listed] == [(0, "NVIDIA A100-SXM4-40GB"), (1, "Tesla T4")]
    assert nvidia.parse_query('Field "compute_cap" is not a valid field to query.\n') == ("", ())


def test_parse_the_kernel_modules_proc_folder(tmp_path):
    (tmp_path / "version").write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 19:39:53 UTC 2024\n"
        "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n"
    )
    bus = tmp_path / "gpus" / "0000:18:00.0"
    bus.mkdir(parents=True)
    (bus / "information").write_text("Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 16\n")
    assert nvidia.parse_proc(tmp_path) == ("550.54.15", (NvidiaGpu(0, "NVIDIA H100 80GB HBM3"),))
    assert nvidia.parse_proc(tmp_path / "missing") == ("", ())


def test_query_driver_with_the_fake_nvidia_smi(monkeypatch, tmp_path):
    environ = {"PATH": str(FIXTURE), nvidia.PROC_ENV: str(tmp_path / "none")}
    report = nvidia.query_driver(environ)
    assert report.source == "nvidia-smi" and report.driver_version == "550.54.15"
    assert report.gpus == (NvidiaGpu(0, "NVIDIA H100 80GB HBM3", 81559, 81004, (9, 0)),)
    # A driver older than compute_cap: asked again without it.
    monkeypatch.setenv("FAKE_NVIDIA_SMI_OLD", "1")  # nvidia-smi runs in this environment
    old = nvidia.query_driver(environ)
    assert old.gpus[0].compute_capability is None and old.gpus[0].memory_total_mb == 81559
    monkeypatch.setenv("FAKE_NVIDIA_SMI_BROKEN", "1")
    broken = nvidia.query_driver(environ)
    assert not broken.present and broken.error.startswith("NVIDIA-SMI has failed")
    nothing = nvidia.query_driver({"PATH": str(tmp_path), nvidia.PROC_ENV: str(tmp_path)})
    assert nothing == DriverReport()


# --- the diagnosis ---------------------------------------------------------------------------

H100 = NvidiaGpu(0, "NVIDIA H100 80GB HBM3", 81559, 81004, (9, 0))
A100 = NvidiaGpu(0, "NVIDIA A100-SXM4-40GB", 40960, 40000, (8, 0))
K80 = NvidiaGpu(1, "Tesla K80", 11441, 11000, (3, 7))


def facts(*gpus, driver="550.54.15", visible=0, **changes) -> GpuFacts:
    values = dict(
        driver=DriverReport(tuple(gpus), driver, "nvidia-smi", "/usr/bin/nvidia-smi"),
        tensorflow="2.21.0",
        cuda_build=True,
        cuda_version="12.5.1",
        cudnn_version="9",
        cuda_targets=TARGETS,
        visible_gpus=visible,
    )
    return GpuFacts(**{**values, **changes})


def kinds(problems):
    return [(problem.kind, problem.severity) for problem in problems]


def test_a_cpu_machine_has_nothing_to_fix():
    assert diagnose(dataclasses.replace(facts(), driver=DriverReport())) == ()


def test_missing_and_cuda_wheels_are_named_with_the_fix():
    problems = diagnose(facts(A100, missing_packages=("nvidia-cudnn-cu12", "nvidia-cublas-cu12")))
    assert kinds(problems) == [("missing_packages", "unusable")]
    (problem,) = problems
    assert problem.sentence() == (
        "An NVIDIA A100-SXM4-40GB is present but TensorFlow cannot use it: the CUDA libraries of "
        "TensorFlow's and-cuda extra are not installed (nvidia-cudnn-cu12, nvidia-cublas-cu12)."
    )
    assert "make run GPU=1" in problem.fix() and "'tensorflow[and-cuda]==2.21.*'" in problem.fix()
    assert problem.sentence("zh").startswith("本机有一块 NVIDIA A100-SXM4-40GB，但 TensorFlow")
    assert problem.to_dict()["message"] == problem.sentence()


def test_the_fix_names_the_venv_s_python_as_the_user_types_it(monkeypatch, tmp_path):
    """From the project's folder, the venv's interpreter as `.venv/bin/python`; from
    elsewhere, its whole path."""
    python = tmp_path / ".venv" / "bin" / "python"
    monkeypatch.setattr(sys, "executable", str(python))
    fix = lambda: diagnose(facts(A100, missing_packages=("nvidia-cudnn-cu12",)))[0].fix()  # noqa: E731
    monkeypatch.chdir(tmp_path)
    assert "or .venv/bin/python -m pip install" in fix()
    monkeypatch.chdir(tmp_path / "..")
    assert f"or {tmp_path.name}/.venv/bin/python -m pip" in fix()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert f"or {python} -m pip install" in fix()


def test_libraries_that_cannot_be_loaded_are_named():
    problems = diagnose(facts(A100, unloadable=("libcudnn.so.9", "libcufft.so.11")))
    assert kinds(problems) == [("unloadable", "unusable")]
    assert "it cannot load libcudnn.so.9, libcufft.so.11." in problems[0].sentence()
    problems = diagnose(facts(A100, unloadable=("libcuda.so.1",)))
    assert kinds(problems) == [("no_libcuda", "unusable")]
    assert "docker run --gpus all" in problems[0].fix()


def test_an_old_driver_is_named_with_the_minimum():
    (problem,) = diagnose(facts(A100, driver="470.182.03"))
    assert problem.kind == "old_driver"
    assert "driver 470.182.03 is older than 525.60.13, the oldest that runs CUDA 12.x" in (
        problem.sentence()
    )
    assert problem.fix().startswith("upgrade the NVIDIA driver to 525.60.13 or newer")


def test_no_cuda_build_and_hidden_gpus():
    (problem,) = diagnose(facts(A100, cuda_build=False, cuda_version=""))
    assert problem.kind == "no_cuda_build" and "built without CUDA" in problem.sentence()
    (problem,) = diagnose(facts(A100, cuda_visible_devices="-1"))
    assert problem.kind == "hidden" and "CUDA_VISIBLE_DEVICES='-1' hides" in problem.sentence()
    assert problem.fix().startswith("unset CUDA_VISIBLE_DEVICES")
    # Every mismatch is named, not only the first.
    both = diagnose(facts(A100, cuda_visible_devices="", missing_packages=("nvidia-cudnn-cu12",)))
    assert kinds(both) == [("hidden", "unusable"), ("missing_packages", "unusable")]
    assert diagnose(facts(A100, visible=1, cuda_visible_devices="0")) == ()


def test_an_unexplained_missing_gpu_says_so():
    (problem,) = diagnose(facts(A100))
    assert problem.kind == "unknown" and "TF_CPP_MIN_LOG_LEVEL=0" in problem.fix()


def test_capability_below_the_build_and_ptx_only_gpus():
    problems = diagnose(facts(A100, K80, visible=1))
    assert kinds(problems) == [("capability", "unusable")]
    assert problems[0].gpus == ("Tesla K80",)
    k80 = "A Tesla K80 is present but TensorFlow cannot use it: its compute capability 3.7 is "
    assert problems[0].sentence().startswith(k80 + "older than 6.0")
    assert kinds(diagnose(facts(K80))) == [("capability", "unusable")]  # it explains itself
    problems = diagnose(facts(H100, visible=1))
    assert kinds(problems) == [("ptx_jit", "warning"), ("ptx_old_driver", "warning")]
    assert "carries them for sm_60, sm_70, sm_80, sm_89" in problems[0].sentence()
    assert "older than 555.42.02" in problems[1].sentence()
    assert kinds(diagnose(facts(H100, driver="560.35.03", visible=1))) == [("ptx_jit", "warning")]
    assert diagnose(facts(A100, visible=1)) == ()


def test_several_gpus_are_one_subject():
    second = NvidiaGpu(1, A100.name, 40960, 40000, (8, 0))
    (problem,) = diagnose(facts(A100, second, K80, missing_packages=("nvidia-cudnn-cu12",)))[:1]
    assert problem.subject() == "3 NVIDIA GPUs (2 × NVIDIA A100-SXM4-40GB, Tesla K80)"
    assert problem.sentence().startswith(
        "3 NVIDIA GPUs (2 × NVIDIA A100-SXM4-40GB, Tesla K80) are present but TensorFlow "
        "cannot use them: the CUDA libraries"
    )
    assert problem.sentence("zh").startswith("本机有3 块 NVIDIA GPU（2 × NVIDIA A100")


def test_a_failing_nvidia_smi_is_a_warning():
    report = DriverReport(nvidia_smi="/usr/bin/nvidia-smi", error="NVIDIA-SMI has failed")
    (problem,) = diagnose(dataclasses.replace(facts(), driver=report))
    assert kinds([problem]) == [("smi_failed", "warning")]
    assert "nvidia-smi is installed but fails (NVIDIA-SMI has failed)" in problem.sentence()

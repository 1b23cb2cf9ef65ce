"""Which devices TensorFlow sees, what they are called, and what they are good at. Specs are "auto",
"cpu" or "gpu:N"; `resolve_device` turns one into "/CPU:0" or "/GPU:N" or says why not. GPUs are
listed without initialising the runtime, so asking never fixes GPU memory settings."""

from __future__ import annotations

import dataclasses
import platform
import re

import keras
import numpy as np
import tensorflow as tf

from hierlstm.config import PRECISIONS, SettingError
from hierlstm.hardware.cpu import cpu_cores, cpu_description, machine
from hierlstm.hardware.gpu import FAST_PRECISION_CAPABILITY, precision_is_fast

_SPEC_PATTERN = re.compile(r"^(auto|cpu|gpu:(\d+))$")
_RESOLVED_PATTERN = re.compile(r"^/(CPU|GPU):(\d+)$")
_CPU_BFLOAT16_FLAGS = ("avx512_bf16", "amx_bf16")


@dataclasses.dataclass(frozen=True)
class GpuInfo:
    index: int  # N in "gpu:N" and "/GPU:N"
    name: str  # e.g. "NVIDIA A100-SXM4-40GB"; "" when TensorFlow gives no details
    compute_capability: tuple[int, int] | None


@dataclasses.dataclass(frozen=True)
class DeviceReport:
    """The software versions and the devices of this process, for banners and stored results."""

    python: str
    tensorflow: str
    keras: str
    numpy: str
    machine: str  # e.g. "x86_64"
    cpu_cores: int  # cores this process may run on
    gpus: tuple[GpuInfo, ...]
    cuda_build: bool  # tf.test.is_built_with_cuda()
    cuda_version: str  # from tf.sysconfig.get_build_info(); "" when built without CUDA
    cudnn_version: str
    cudnn_available: bool  # whether Keras LSTM layers can take the cuDNN path here
    cudnn_reason: str  # one sentence saying why (or why not)
    # The compute capabilities the build has kernels for ("sm_80", PTX as "compute_90"), from
    # tf.sysconfig.get_build_info(); () when it does not say.
    cuda_targets: tuple[str, ...] = ()

    def gpu(self, index: int) -> GpuInfo | None:
        return next((gpu for gpu in self.gpus if gpu.index == index), None)

    def device_label(self, spec: str) -> str:
        """A human label for a device spec or device string: "CPU (x86_64, 2 cores)",
        "GPU:0 NVIDIA A100"."""
        kind, index = _parse_device(spec, self.gpus)
        if kind == "CPU":
            return f"CPU ({cpu_description(self.machine, self.cpu_cores)})"
        gpu = self.gpu(index)
        return f"GPU:{index} {gpu.name}".rstrip() if gpu else f"GPU:{index}"

    def device_string(self, spec: str) -> str:
        """The resolved TensorFlow device with its details, as results store it:
        "/CPU:0 (x86_64, 2 cores)", "/GPU:0 (NVIDIA A100)"."""
        kind, index = _parse_device(spec, self.gpus)
        if kind == "CPU":
            return f"/CPU:0 ({cpu_description(self.machine, self.cpu_cores)})"
        gpu = self.gpu(index)
        return f"/GPU:{index} ({gpu.name})" if gpu and gpu.name else f"/GPU:{index}"


def versions() -> dict[str, str]:
    """python, tensorflow, keras and numpy versions (stored with every result)."""
    return {
        "python": platform.python_version(),
        "tensorflow": tf.__version__,
        "keras": keras.__version__,
        "numpy": np.__version__,
    }


def list_gpus() -> tuple[GpuInfo, ...]:
    """The GPUs TensorFlow sees, with the name and compute capability it reports for each."""
    gpus = []
    for index, device in enumerate(tf.config.list_physical_devices("GPU")):
        try:
            details = tf.config.experimental.get_device_details(device)
        except (ValueError, tf.errors.OpError):
            details = {}
        capability = details.get("compute_capability")
        gpus.append(
            GpuInfo(
                index=index,
                name=str(details.get("device_name", "")),
                compute_capability=tuple(capability) if capability else None,
            )
        )
    return tuple(gpus)


def _cudnn_status(cuda_build: bool, gpus: tuple[GpuInfo, ...], cudnn_version: str):
    if not cuda_build:
        return False, "TensorFlow built without CUDA, so Keras LSTM layers run the generic kernel"
    if not gpus:
        return False, "no GPU visible to TensorFlow, so Keras LSTM layers run the generic kernel"
    version = f"cuDNN {cudnn_version}" if cudnn_version else "cuDNN"
    return True, (
        f"{version} with {_count_gpus(len(gpus))}: Keras LSTM layers take the fused kernel "
        "when use_cudnn is auto, activations are tanh/sigmoid, there is no recurrent dropout "
        "and the layer is not unrolled"
    )


def device_report() -> DeviceReport:
    """Queries TensorFlow now; cheap enough to call per page render."""
    build = tf.sysconfig.get_build_info()
    cuda_build = tf.test.is_built_with_cuda()
    gpus = list_gpus()
    cudnn_version = str(build.get("cudnn_version", "") or "")
    cudnn_available, cudnn_reason = _cudnn_status(cuda_build, gpus, cudnn_version)
    return DeviceReport(
        **versions(),
        machine=machine(),
        cpu_cores=cpu_cores(),
        gpus=gpus,
        cuda_build=cuda_build,
        cuda_version=str(build.get("cuda_version", "") or ""),
        cudnn_version=cudnn_version,
        cudnn_available=cudnn_available,
        cudnn_reason=cudnn_reason,
        cuda_targets=tuple(str(target) for target in build.get("cuda_compute_capabilities") or ()),
    )


def _count_gpus(count: int) -> str:
    return f"{count} GPU" if count == 1 else f"{count} GPUs"


def _parse_device(device: str, gpus) -> tuple[str, int]:
    """("CPU", 0) or ("GPU", N) from a spec ("auto", "cpu", "gpu:N") or a device string
    ("/CPU:0", "/GPU:N"); raises ValueError for a GPU that does not exist."""
    resolved = _RESOLVED_PATTERN.match(device) if isinstance(device, str) else None
    if resolved is None:
        resolved = _RESOLVED_PATTERN.match(_resolve(device, len(gpus)))
    kind, index = resolved.group(1), int(resolved.group(2))
    if kind == "GPU" and index >= len(gpus):
        raise SettingError(_not_available(f"gpu:{index}", len(gpus)))
    return kind, index


def _not_available(spec: str, gpu_count: int) -> str:
    if gpu_count == 0:
        seen = "TensorFlow sees no GPU on this machine; use auto or cpu."
    else:
        names = ", ".join(f"gpu:{index}" for index in range(gpu_count))
        seen = f"TensorFlow sees {_count_gpus(gpu_count)} ({names}); use auto, cpu or {names}."
    return f"device {spec} is not available: {seen}"


def _resolve(spec: str, gpu_count: int) -> str:
    match = _SPEC_PATTERN.match(spec) if isinstance(spec, str) else None
    if match is None:
        raise SettingError(f"device must be auto, cpu or gpu:N (N a GPU index); got {spec!r}.")
    if spec == "auto":
        return "/GPU:0" if gpu_count else "/CPU:0"
    if spec == "cpu":
        return "/CPU:0"
    index = int(match.group(2))
    if index >= gpu_count:
        raise SettingError(_not_available(spec, gpu_count))
    return f"/GPU:{index}"


def resolve_device(spec: str) -> str:
    """ "auto" -> "/GPU:0" when TensorFlow sees a GPU, else "/CPU:0"; "cpu" -> "/CPU:0";
    "gpu:N" -> "/GPU:N", or ValueError in one sentence when there is no such GPU."""
    return _resolve(spec, len(list_gpus()))


def device_label(spec: str) -> str:
    """ "CPU (x86_64, 2 cores)" or "GPU:0 NVIDIA A100" for a spec or device string."""
    return device_report().device_label(spec)


def device_string(spec: str) -> str:
    """ "/CPU:0 (x86_64, 2 cores)" or "/GPU:0 (NVIDIA A100)": what `BenchResult.device` holds."""
    return device_report().device_string(spec)


def cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def precision_supported(precision: str, device: str) -> tuple[bool, str]:
    """(ok, message) for `precision` on `device`: not ok only when the run cannot happen; a
    precision likely slower than float32 is ok with a warning."""
    if precision not in PRECISIONS:
        return False, f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r}."
    report = device_report()
    try:
        kind, index = _parse_device(device, report.gpus)
    except SettingError as error:
        return False, str(error)
    if precision == "float32":
        return True, ""
    if kind == "CPU":
        if precision == "mixed_float16":
            return True, (
                "float16 on a CPU is emulated and usually slower than float32; it is useful "
                "here only to check results, not speed."
            )
        if cpu_flags().isdisjoint(_CPU_BFLOAT16_FLAGS):
            return True, (
                "this CPU has no native bfloat16 instructions (AVX512_BF16 or AMX), so "
                "bfloat16 is emulated and may be slower than float32."
            )
        return True, ""
    gpu = report.gpu(index)
    needed = FAST_PRECISION_CAPABILITY[precision]
    capability = gpu.compute_capability if gpu else None
    fast = precision_is_fast(precision, capability)
    if fast is None:
        return True, (
            f"TensorFlow reports no compute capability for GPU:{index}, so whether "
            f"{precision} is faster than float32 there is unknown."
        )
    if not fast:
        kind_name = "float16" if precision == "mixed_float16" else "bfloat16"
        return True, (
            f"{precision} runs on GPU:{index} ({gpu.name}, compute capability "
            f"{capability[0]}.{capability[1]}) but {kind_name} needs compute capability "
            f"{needed[0]}.{needed[1]} or higher to be faster than float32."
        )
    return True, ""

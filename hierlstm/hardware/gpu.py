"""The GPU rules hierlstm relies on, each beside its documented source (drivers per CUDA release,
the compute capabilities TensorFlow's wheel has kernels for, where 16-bit precision pays off), and
`configure_memory`: growth or a per-process limit set before TensorFlow's runtime starts, so app
sessions and the CLI can share a GPU. TensorFlow is imported only inside it."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from hierlstm import settings
from hierlstm.hardware.nvidia import NvidiaGpu

# --- documented facts --------------------------------------------------------------------------

# The oldest Linux driver that runs each CUDA major release (minor version compatibility):
# NVIDIA's CUDA Toolkit Release Notes, table "CUDA Toolkit and Minimum Required Driver Version
# for CUDA Minor Version Compatibility"; docs.nvidia.com/deploy/cuda-compatibility/ table 1 gives
# the same ranges (11.x >= 450, 12.x >= 525, 13.x >= 580; for 13.x it names no patch level).
MIN_DRIVER_FOR_CUDA = {11: "450.80.02", 12: "525.60.13", 13: "580"}
# The Linux driver of each CUDA 12 toolkit's GA release (release notes, table "CUDA Toolkit and
# Corresponding Driver Versions"). Only PTX JIT compilation needs it: an older driver cannot
# compile the toolkit's PTX (cudaErrorUnsupportedPtxVersion). Written from memory of that table,
# not read on this machine: a warning is built on it, never a refusal.
TOOLKIT_DRIVER = {
    (12, 0): "525.60.13",
    (12, 1): "530.30.02",
    (12, 2): "535.54.03",
    (12, 3): "545.23.06",
    (12, 4): "550.54.14",
    (12, 5): "555.42.02",
    (12, 6): "560.28.03",
}
# tf.sysconfig.get_build_info()["cuda_compute_capabilities"] of the tensorflow 2.21.0 wheel for
# Linux x86_64, read on the development machine: binary kernels (sm_) for 6.0, 7.0, 8.0 and 8.9,
# PTX (compute_) for 9.0. Used only when the running build does not list its own.
TF_2_21_CUDA_TARGETS = ("sm_60", "sm_70", "sm_80", "sm_89", "compute_90")
# From which compute capability each reduced precision is faster than float32: float16 Tensor
# Cores came with Volta (7.0; TensorFlow's mixed-precision device check warns below it),
# bfloat16 arithmetic with Ampere (8.0; Keras's mixed precision guide).
FAST_PRECISION_CAPABILITY = {"mixed_float16": (7, 0), "mixed_bfloat16": (8, 0)}
MEMORY_ENV = "HIERLSTM_GPU_MEMORY_MB"
BUDGET_FRACTION = 0.5
_MB = 1024 * 1024


# --- pure rules ------------------------------------------------------------------------------


def version_tuple(text: str) -> tuple[int, ...]:
    """ "550.54.15" -> (550, 54, 15); "" or junk -> ()."""
    return tuple(int(part) for part in re.findall(r"\d+", text or ""))


def cuda_major_minor(cuda_version: str) -> tuple[int, int] | None:
    parts = version_tuple(cuda_version)
    return (parts[0], parts[1] if len(parts) > 1 else 0) if parts else None


def driver_too_old(driver: str, cuda_version: str) -> str:
    """The minimum driver for `cuda_version`'s major if `driver` is older, else "" (also when
    either is unknown)."""
    cuda = cuda_major_minor(cuda_version)
    minimum = MIN_DRIVER_FOR_CUDA.get(cuda[0], "") if cuda else ""
    if not minimum or not version_tuple(driver):
        return ""
    return minimum if version_tuple(driver) < version_tuple(minimum) else ""


def capability_support(capability: tuple[int, int] | None, targets: Sequence[str]) -> str:
    """How a build compiled for `targets` runs on a GPU of `capability`: "binary" (cubin X.y runs on
    X.z, z >= y), "ptx" (JIT for >= X.Y; CUDA C++ Programming Guide, "Binary Compatibility"),
    "none", or "unknown"."""
    if capability is None or not targets:
        return "unknown"
    parsed = [(kind, int(number[:-1]), int(number[-1])) for kind, number in _targets(targets)]
    major, minor = capability
    if any(kind == "sm" and m == major and n <= minor for kind, m, n in parsed):
        return "binary"
    if any(kind == "compute" and (m, n) <= (major, minor) for kind, m, n in parsed):
        return "ptx"
    return "none"


_TARGET = re.compile(r"^(sm|compute)_(\d{2,3})$")


def _targets(targets: Sequence[str]) -> list[tuple[str, str]]:
    """("sm", "89"), ("compute", "90"), ... from a build's target names."""
    return [match.groups() for match in map(_TARGET.match, targets) if match]


def oldest_capability(targets: Sequence[str]) -> str:
    numbers = sorted((int(n[:-1]), int(n[-1])) for _, n in _targets(targets))
    return f"{numbers[0][0]}.{numbers[0][1]}" if numbers else "?"


def precision_is_fast(precision: str, capability: tuple[int, int] | None) -> bool | None:
    """Whether `precision` is faster than float32 on a GPU of `capability` (None: unknown)."""
    if precision not in FAST_PRECISION_CAPABILITY:
        return True
    if capability is None:
        return None
    return tuple(capability) >= FAST_PRECISION_CAPABILITY[precision]


def _visible_entries(environ: Mapping[str, str]) -> list[str] | None:
    text = environ.get("CUDA_VISIBLE_DEVICES")
    return None if text is None else [part.strip() for part in text.split(",") if part.strip()]


def physical_gpu(index: int, environ: Mapping[str, str]) -> str:
    """TensorFlow's GPU:`index` as every process on this machine names it: its CUDA_VISIBLE_DEVICES
    entry (index or UUID) when set, else the index."""
    entries = _visible_entries(environ)
    return entries[index] if entries is not None and index < len(entries) else str(index)


def visible_driver_gpus(gpus: Sequence[NvidiaGpu], environ: Mapping[str, str]):
    """The driver's GPUs CUDA_VISIBLE_DEVICES leaves to this process: all when unset or a UUID, none
    for "" or "-1"; CUDA ignores the first entry that is not a device and all after it."""
    entries = _visible_entries(environ)
    if entries is None:
        return tuple(gpus)
    by_index, chosen = {gpu.index: gpu for gpu in gpus}, []
    for entry in entries:
        if entry.startswith(("GPU-", "MIG-")):
            return tuple(gpus)
        if not entry.isdigit() or int(entry) not in by_index:
            break
        chosen.append(by_index[int(entry)])
    return tuple(chosen)


def memory_limit_mb(environ: Mapping[str, str] | None = None) -> int | None:
    """HIERLSTM_GPU_MEMORY_MB as a number of MiB, None when unset; SettingError when bad."""
    return settings.read(MEMORY_ENV, environ)


def gpu_budget(free_mb: Sequence[int], limit_mb: int | None) -> tuple[int, str]:
    """(bytes, catalogue key) a run's activations may take on a GPU: half the least free memory of
    its GPUs (other processes' use counts), or half the per-process limit when smaller."""
    if not free_mb:
        raise ValueError("gpu_budget needs the free memory of at least one GPU; got none.")
    usable, how = min(free_mb), "limit.source.gpu_free"
    if limit_mb is not None and limit_mb < usable:
        usable, how = limit_mb, "limit.source.gpu_env"  # 50% of MEMORY_ENV
    return int(usable * _MB * BUDGET_FRACTION), how


# --- GPU memory ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class MemorySetting:
    mode: str  # "growth", "limit", "none" (no GPU), "started" (too late: left as it was)
    limit_mb: int | None = None
    gpus: int = 0


def configure_memory(environ: Mapping[str, str] | None = None, config=None) -> MemorySetting:
    """Memory growth on every GPU, or HIERLSTM_GPU_MEMORY_MB MiB per GPU, before the runtime starts
    (`config` is `tf.config` or a test's fake). SettingError for a bad value; RuntimeError for a
    limit asked after the runtime started; growth asked too late is mode "started"."""
    limit = memory_limit_mb(environ)
    if config is None:
        import tensorflow as tf

        config = tf.config
    gpus = config.list_physical_devices("GPU")
    if not gpus:
        return MemorySetting("none")
    setting = MemorySetting("growth" if limit is None else "limit", limit, len(gpus))
    try:
        for gpu in gpus:
            if limit is None:
                config.experimental.set_memory_growth(gpu, True)
            else:
                device = config.LogicalDeviceConfiguration(memory_limit=limit)
                config.set_logical_device_configuration(gpu, [device])
    except RuntimeError:
        if limit is None:  # growth was only the default: the runtime keeps what it has
            growth = all(config.experimental.get_memory_growth(gpu) for gpu in gpus)
            return setting if growth else MemorySetting("started", None, len(gpus))
        raise RuntimeError(
            "GPU memory growth or a limit can only be set before TensorFlow's runtime starts, "
            f"and it has started; set {MEMORY_ENV} in the environment of the app or the CLI."
        ) from None
    return setting

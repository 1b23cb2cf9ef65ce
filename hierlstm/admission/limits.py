"""Every bound on the work one run may ask for, each settable by an environment variable, and the
check that refuses a config before anything is allocated.

- HIERLSTM_MAX_BATCH: 1024 - HIERLSTM_MAX_TIME_STEPS: 2000 - HIERLSTM_MEMORY_BUDGET_MB: 25 % of
available RAM on a CPU; on a GPU 50 % of the least free memory nvidia-smi reports, or of
HIERLSTM_GPU_MEMORY_MB when smaller - HIERLSTM_TRACE_BUDGET_STEPS: 200 (time_distributed unrolls one
inner LSTM call per step) - HIERLSTM_CONFIRM_SECONDS: 30 (longer estimated runs ask first)

The memory estimate is the cost model's activation bytes times 3, for the LSTM loops' buffers."""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable

from hierlstm import settings
from hierlstm.config import RunConfig, SettingError
from hierlstm.hardware import gpu, query_driver
from hierlstm.i18n import MessageError, t
from hierlstm.model import cost
from hierlstm.registry import VARIANTS

WORKSPACE_FACTOR = 3
# Tracing time_distributed, per unrolled inner LSTM call (its first call: benchmarks/RESULTS.md).
TRACE_SECONDS_PER_CALL = 0.2
_MB = 1024 * 1024
# A training step's memory: the activations kept for the backward pass times this factor (their
# gradients, held while it walks back), plus `cost.training_state_bytes`.
TRAINING_WORKSPACE_FACTOR = 2
# A training run of time_distributed traces its T inner calls, their T gradients and the forward
# phase's T calls again: measured at 3-3.6x a forward call's TRACE_SECONDS_PER_CALL per call.
TRAINING_TRACE_FACTOR = 3


class LimitError(MessageError, SettingError):
    """A valid config that asks for more than this server allows: catalogue message `key` with
    `values` (`sentence` in either language; a `source` value is itself a message key, the
    memory budget's); str() is the English, as the command line says it."""

    def sentence(self, lang: str = "en") -> str:
        values = dict(self.values)
        if "source" in values:
            values["source"] = t(values["source"], lang)
        return t(self.key, lang, **values)


@dataclasses.dataclass(frozen=True)
class Limits:
    max_batch: int
    max_time_steps: int
    memory_budget_bytes: int
    memory_budget_source: str  # how the budget was set: a catalogue key ("limit.source.ram")
    trace_budget_steps: int
    confirm_seconds: float


def _available_ram_bytes() -> int:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


_FREE_MEMORY_TTL_S = 5.0  # nvidia-smi takes up to a second; limits are read on every render
_free_memory: dict[str, tuple[float, tuple[int, ...]]] = {}
_free_memory_lock = threading.Lock()


def _driver_free_mb() -> tuple[int, ...]:
    """Free MiB of each GPU this process may use (CUDA_VISIBLE_DEVICES), as nvidia-smi reports
    it now (asked at most every few seconds); () when it reports none."""
    with _free_memory_lock:
        asked, free = _free_memory.get("free", (-_FREE_MEMORY_TTL_S, ()))
        if time.monotonic() - asked >= _FREE_MEMORY_TTL_S:
            gpus = gpu.visible_driver_gpus(query_driver().gpus, os.environ)
            free = tuple(g.memory_free_mb for g in gpus if g.memory_free_mb is not None)
            _free_memory["free"] = (time.monotonic(), free)
        return free


def tensorflow_sees_a_gpu() -> bool:
    """Whether TensorFlow lists a GPU. TensorFlow is imported here, not at import time: a
    config costs no TensorFlow."""
    import tensorflow as tf

    return bool(tf.config.list_physical_devices("GPU"))


def driver_sees_a_gpu() -> bool:
    """Whether nvidia-smi reports a GPU this process may use (CUDA_VISIBLE_DEVICES): the
    question for a process that runs JAX or PyTorch and never imports TensorFlow."""
    return bool(gpu.visible_driver_gpus(query_driver().gpus, os.environ))


def _gpu_budget(sees_a_gpu: Callable[[], bool]) -> tuple[int, str] | None:
    """The GPU budget when `sees_a_gpu()` (`gpu.gpu_budget`; the RAM's when neither
    nvidia-smi nor HIERLSTM_GPU_MEMORY_MB says how much memory there is); None without a GPU."""
    if not sees_a_gpu():
        return None
    limit = limit_setting(gpu.MEMORY_ENV)
    free = _driver_free_mb() or ((limit,) if limit else ())
    if not free:
        return _available_ram_bytes() // 4, "limit.source.ram_no_gpu"
    return gpu.gpu_budget(free, limit)


def limit_setting(name: str) -> int | None:
    """A limit's HIERLSTM_* value (`hierlstm.settings`, its default when unset); a bad one is a
    LimitError of the settings' sentence, so a page says it as it says a limit."""
    return settings.read(name, error=LimitError)


def max_sizes() -> dict[str, int]:
    """The largest batch and number of time steps a run may ask for, by RunConfig field. Read
    from the environment alone: the app's frame bounds its number inputs with them while the
    server's warm-up is still importing TensorFlow (the memory budget needs TensorFlow)."""
    return {
        "batch_size": limit_setting("HIERLSTM_MAX_BATCH"),
        "time_steps": limit_setting("HIERLSTM_MAX_TIME_STEPS"),
    }


def current_limits(sees_a_gpu: Callable[[], bool] = tensorflow_sees_a_gpu) -> Limits:
    """The limits in force now (environment read on every call, so a test can change them).
    `sees_a_gpu` says whether the GPU budget applies: TensorFlow's view by default, the
    driver's (`driver_sees_a_gpu`) in a process without TensorFlow."""
    sizes = max_sizes()
    budget_mb = limit_setting("HIERLSTM_MEMORY_BUDGET_MB")
    if budget_mb:
        budget = budget_mb * _MB
        source = "limit.source.env"
    else:
        on_gpu = _gpu_budget(sees_a_gpu)
        if on_gpu:
            budget, source = on_gpu
        else:
            budget, source = _available_ram_bytes() // 4, "limit.source.ram"
    return Limits(
        max_batch=sizes["batch_size"],
        max_time_steps=sizes["time_steps"],
        memory_budget_bytes=budget,
        memory_budget_source=source,
        trace_budget_steps=limit_setting("HIERLSTM_TRACE_BUDGET_STEPS"),
        confirm_seconds=float(limit_setting("HIERLSTM_CONFIRM_SECONDS")),
    )


def memory_estimate_bytes(config: RunConfig) -> int:
    """The estimated memory of one forward pass, or of one training step."""
    if config.task == "training":
        kept = cost.kept_activation_bytes(config) * TRAINING_WORKSPACE_FACTOR
        return kept + cost.training_state_bytes(config)
    return cost.activation_bytes(config) * WORKSPACE_FACTOR


def check_trace_budget(config: RunConfig, limits: Limits | None = None) -> None:
    """Raises LimitError if tracing `config` alone would take too long: a static-time variant
    (time_distributed) traces one inner LSTM call per time step, a training step each call
    `TRAINING_TRACE_FACTOR` times."""
    limits = limits or current_limits()
    if not VARIANTS[config.variant].static_time:
        return
    training = config.task == "training"
    weight = TRAINING_TRACE_FACTOR if training else 1  # a training step traces each call 3x
    if config.time_steps * weight > limits.trace_budget_steps:
        raise LimitError(
            f"limit.trace.{config.task}",
            variant=config.variant,
            time=config.time_steps,
            seconds=config.time_steps * weight * TRACE_SECONDS_PER_CALL,
            budget=limits.trace_budget_steps,
            weight=weight,
        )


def check_limits(config: RunConfig, limits: Limits | None = None) -> None:
    """Raises LimitError, one sentence with the estimate and the limit, if `config` is over."""
    limits = limits or current_limits()
    if config.batch_size > limits.max_batch:
        raise LimitError("limit.batch", batch=config.batch_size, limit=limits.max_batch)
    if config.time_steps > limits.max_time_steps:
        raise LimitError("limit.time_steps", time=config.time_steps, limit=limits.max_time_steps)
    check_trace_budget(config, limits)
    estimate = memory_estimate_bytes(config)
    if estimate > limits.memory_budget_bytes:
        raise LimitError(
            f"limit.memory.{config.task}",
            needed=estimate / _MB,
            budget=limits.memory_budget_bytes / _MB,
            source=limits.memory_budget_source,
        )

"""A run on a backend that runs the model's calls itself (JAX, PyTorch): `keras_run` builds the
model on the backend's device, asks its runner (`hierlstm.backends.runners`) for the timed
functions (`Compiled`: the step and training phases as no-argument functions, the first call's
seconds, a trace counter, what the kernel readers read), and returns the one `BackendRun` every
backend's `prepare` returns."""

from __future__ import annotations

import dataclasses
import platform
import time
from collections.abc import Callable

import keras

from hierlstm.backends import kernels, runner
from hierlstm.config import RunConfig, SettingError
from hierlstm.model.builders import build_model
from hierlstm.model.loss import loss_target
from hierlstm.model.params import init_params
from hierlstm.model.portable import to_backend
from hierlstm.timing.basics import Progress, make_inputs, no_progress


@dataclasses.dataclass
class Compiled:
    """A model's timed functions on one backend (see the module doc)."""

    step: Callable[[], object]
    phases: dict[str, Callable[[], object]]  # training: forward, forward_backward, update
    sync: Callable[[object], None]  # waits until the device has finished an output
    first_call_s: float
    traces: list[int]  # [how many times the step's Python function was traced]
    program: str = ""  # JAX: the step's lowered StableHLO text
    profiled: Callable[[], object] | None = None  # PyTorch: the call the profiler watches

    def timed(self, function: Callable[[], object]) -> float:
        """Seconds for one call of `function`, ending when the device has finished."""
        start = time.perf_counter()
        self.sync(function())
        return time.perf_counter() - start


@dataclasses.dataclass
class BackendRun:
    """A prepared run on any backend: what `result` stores, and `sample`."""

    config: RunConfig
    description: str  # where it runs, as BenchResult.device holds it: "/CPU:0 (x86_64, 2 cores)"
    first_call_s: float
    kernel: str  # "cudnn" or "generic"
    kernel_reason: str  # why generic ran ("" for cudnn)
    versions: dict[str, str]
    sampler: Callable[[], dict[str, float]]
    traces: Callable[[], int]
    backend: str = "tensorflow"
    # what the kernel reader read (`hierlstm.backends.kernels`): JAX the step's lowered
    # StableHLO, PyTorch the op names the profiler saw in one call; "" on TensorFlow
    evidence: str = ""
    model: bytes = b""  # a runtime's exported file, which its profiler runs again

    @property
    def trace_count(self) -> int:
        """How many times the timed function was traced (0 for PyTorch's eager calls)."""
        return int(self.traces())

    def sample(self) -> dict[str, float]:
        """One timed round: {"step": seconds}, and a training run's phases beside it."""
        return self.sampler()


def placement(config: RunConfig, backend: str) -> tuple[str, str]:
    """(Keras device name for `keras.device`, BenchResult's description) of `config.device` on
    JAX or PyTorch: "auto" is the first GPU the backend sees, else the CPU. Raises SettingError
    for a GPU the backend does not see."""
    gpus = runner(backend).gpu_names()
    spec = config.device
    if spec == "auto":
        spec = "gpu:0" if gpus else "cpu"
    if spec == "cpu":
        from hierlstm.hardware.cpu import cpu_description

        return "cpu", f"/CPU:0 ({cpu_description()})"
    index = int(spec.split(":")[1])
    if index >= len(gpus):
        raise SettingError(
            f"device {config.device} is not on this machine: the {backend} backend sees "
            f"{len(gpus)} GPU(s)."
        )
    return f"gpu:{index}", f"/GPU:{index} ({gpus[index]})"


def _versions(backend: str) -> dict[str, str]:
    import numpy as np

    module = __import__(backend)
    found = {"python": platform.python_version(), "keras": keras.__version__}
    return {**found, "numpy": np.__version__, backend: module.__version__}


def keras_run(config: RunConfig, *, seed: int, progress: Progress = no_progress) -> BackendRun:
    """Builds `config`'s model from `init_params(config, seed)` on this process's backend, makes
    its input (and target), compiles it the runner's way and runs the timed first call."""
    backend = keras.backend.backend()
    framework = runner(backend)
    name, description = placement(config, backend)
    progress(0.0, f"building {config.variant} on {backend} {description}")
    with keras.device(name):
        model = build_model(config, init_params(config, seed))
        inputs = to_backend(make_inputs(config, seed))
        target = to_backend(loss_target(config, seed))
        progress(0.3, "compiling and running the first call")
        functions = framework.compiled(model, config, inputs, target)
        evidence, ran = framework.kernel_ran(functions, config.task == "training")
    kernel, reason = kernels.lstm_kernel(config, backend, ran)
    progress(1.0, f"first call {functions.first_call_s:.3g} s ({kernel} LSTM kernel)")

    def sampler() -> dict[str, float]:
        with keras.device(name):
            times = {phase: functions.timed(call) for phase, call in functions.phases.items()}
            return {**times, "step": functions.timed(functions.step)}

    return BackendRun(
        config,
        description,
        functions.first_call_s,
        kernel,
        reason,
        _versions(backend),
        sampler,
        lambda: functions.traces[0],
        backend,
        evidence,
    )

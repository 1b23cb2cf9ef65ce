"""One config prepared, timed and checked inside this process's Keras backend, for the worker
processes (`hierlstm.backends.worker`). `prepare` is the harness's on TensorFlow and
`backends.compile`'s elsewhere; a config for another backend is refused in one sentence.

    run = prepare(config, seed=0)     built, placed, compiled and first-called
    run.sample()                      {"step": seconds} (+ a training run's phases)
    check(config)                     both oracles for every variant, as JSON-able data
"""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Callable

import keras

from hierlstm.config import RunConfig, SettingError
from hierlstm.model.builders import backend_refusal, build_model
from hierlstm.model.check import check_variants
from hierlstm.model.gradcheck import check_gradients
from hierlstm.model.loss import loss_target
from hierlstm.model.params import init_params
from hierlstm.model.portable import to_backend
from hierlstm.timing.basics import Progress, make_inputs, no_progress


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

    @property
    def trace_count(self) -> int:
        """How many times the timed function was traced (0 for PyTorch's eager calls)."""
        return int(self.traces())

    def sample(self) -> dict[str, float]:
        """One timed round: {"step": seconds}, and a training run's phases beside it."""
        return self.sampler()


def _refusal(config: RunConfig, backend: str) -> str:
    """One sentence when this backend cannot run `config`, else ""."""
    if config.backend != backend:
        return f"backend {config.backend} was asked for; this process's Keras backend is {backend}."
    if message := backend_refusal(config.variant, backend):
        return message
    if backend != "tensorflow" and config.strategy != "none":
        return f"strategy {config.strategy} is TensorFlow's; the {backend} backend runs none."
    if backend == "torch" and config.xla:
        return (
            "xla applies to TensorFlow and JAX; the torch backend runs eager (torch.compile "
            "is not offered: its first call takes over a minute on a CPU, and Keras skips "
            "cuDNN under it)."
        )
    return ""


def placement(config: RunConfig, backend: str) -> tuple[str, str]:
    """(Keras device name for `keras.device`, BenchResult's description) of `config.device` on
    JAX or PyTorch: "auto" is the first GPU the backend sees, else the CPU. Raises SettingError
    for a GPU the backend does not see."""
    gpus = _gpu_names(backend)
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


def _gpu_names(backend: str) -> list[str]:
    if backend == "jax":
        import jax

        return [device.device_kind for device in jax.devices() if device.platform == "gpu"]
    import torch

    return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]


def _versions(backend: str) -> dict[str, str]:
    import numpy as np

    module = __import__(backend)
    found = {"python": platform.python_version(), "keras": keras.__version__}
    return {**found, "numpy": np.__version__, backend: module.__version__}


def prepare(config: RunConfig, *, seed: int, progress: Progress = no_progress) -> BackendRun:
    """Builds `config`'s model from `init_params(config, seed)` on this process's backend, makes
    its input (and target), compiles and runs the timed first call. Raises SettingError, in one
    sentence, for what this backend cannot run."""
    backend = keras.backend.backend()
    if message := _refusal(config, backend):
        raise SettingError(message)
    if backend == "tensorflow":
        return _tensorflow_run(config, seed, progress)
    from hierlstm.backends import compile as compiling
    from hierlstm.backends import kernels

    name, description = placement(config, backend)
    progress(0.0, f"building {config.variant} on {backend} {description}")
    with keras.device(name):
        model = build_model(config, init_params(config, seed))
        inputs = to_backend(make_inputs(config, seed))
        target = to_backend(loss_target(config, seed))
        progress(0.3, "compiling and running the first call")
        functions = compiling.compiled(model, config, inputs, target)
        training = config.task == "training"
        if backend == "jax":
            evidence = functions.program
            ran = kernels.ran_cudnn_jax(evidence, training)
        else:
            names = kernels.torch_op_names(functions.profiled)
            evidence = "\n".join(sorted(names))
            ran = kernels.ran_cudnn_torch(names, training)
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


def _tensorflow_run(config: RunConfig, seed: int, progress: Progress) -> BackendRun:
    """The harness's prepared run, with the same surface as the other backends'."""
    from hierlstm.timing.harness import prepare as prepare_tensorflow

    prepared = prepare_tensorflow(config, seed=seed, progress=progress)
    return BackendRun(
        config,
        prepared.description,
        prepared.first_call_s,
        prepared.kernel,
        prepared.kernel_reason,
        prepared.versions,
        prepared.sample,
        prepared.forward.experimental_get_tracing_count,
    )


def check(config: RunConfig, seed: int = 0) -> dict:
    """The forward and gradient oracles of every variant this backend builds at `config`'s sizes and
    precision: {"backend", "config", "forward", "gradients", "ok"}, JSON-able."""
    backend = keras.backend.backend()
    if message := _refusal(config, backend):
        raise SettingError(message)
    forward = [outcome.to_dict() for outcome in check_variants(config, seed)]
    gradients = [outcome.to_dict() for outcome in check_gradients(config, seed)]
    return {
        "backend": backend,
        "config": config.to_dict(),
        "forward": forward,
        "gradients": gradients,
        "ok": all(entry["ok"] for entry in forward + gradients),
    }

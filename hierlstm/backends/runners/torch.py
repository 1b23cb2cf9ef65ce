"""PyTorch's runner (`hierlstm.backends.runners`): eager calls (no_grad for inference; `backward()`
and the Keras optimizer for training), synced with `torch.cuda.synchronize()` on a GPU; cuDNN's
LSTM read from the profiler's op names; `torch.profiler`'s trace, per op only. `torch.compile` is
not offered: its first call takes over a minute on a CPU, and Keras skips cuDNN under it. torch
is imported only inside the functions."""

from __future__ import annotations

import importlib

from hierlstm.backends import kernels
from hierlstm.backends.protocol import keras_failure_line
from hierlstm.config import RunConfig, SettingError
from hierlstm.timing.rss import CpuRssGrowth

TORCH_ATTRIBUTION = (
    "per op only (torch.profiler's key_averages, self CPU time): Keras layers on PyTorch emit "
    "no named ranges, so no op can be given to a layer; the layers table is empty"
)


def start() -> None:
    """Keras imported on PyTorch, without the JAX its checkpoint callback would load."""
    from hierlstm._native import import_keras_without_jax

    import_keras_without_jax()


def run_failures() -> tuple[type[BaseException], ...]:
    import torch

    return (torch.OutOfMemoryError, MemoryError, SettingError)


def failure_line(error: BaseException) -> str:
    return keras_failure_line("torch", error)


class TorchCudaPeak:
    """PyTorch's CUDA allocator peak since the last reset (exact, kept by the allocator); a
    probe as `hierlstm.timing.rss` describes one."""

    kind = "gpu_allocator_peak"

    def reset(self):
        import torch

        torch.cuda.reset_peak_memory_stats()

    def peak_bytes(self) -> int:
        import torch

        return int(torch.cuda.max_memory_allocated())

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        pass


def memory_probe(device: str):
    """PyTorch's CUDA allocator on a GPU ("/GPU:0 (NVIDIA ...)"), else the RSS growth."""
    return TorchCudaPeak() if device.upper().startswith("/GPU") else CpuRssGrowth()


profile_probe = memory_probe


def gpu_names() -> list[str]:
    import torch

    return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]


def compiled(model, config: RunConfig, inputs, target):
    """The timed functions of `model` at `inputs` (B, H, T, 1) and `target` (B, T, outer)."""
    training = config.task == "training"
    return (_training if training else _inference)(model, config, inputs, target)


def kernel_ran(functions, training: bool) -> tuple[str, bool]:
    """(the op names the profiler saw in one call, whether they show cuDNN's LSTM)."""
    names = kernels.torch_op_names(functions.profiled)
    return "\n".join(sorted(names)), kernels.ran_cudnn_torch(names, training)


def prepare(config: RunConfig, *, seed: int, progress):
    from hierlstm.backends.compile import keras_run

    return keras_run(config, seed=seed, progress=progress)


def backend_facts() -> dict[str, bool]:
    """What the cuDNN rule asks of this machine: a CUDA build, and Keras's own GPU check
    (`_is_cuda_cudnn_available`, the one that decides whether the LSTM emits cuDNN)."""
    import torch

    rnn = importlib.import_module("keras.src.backend.torch.rnn")  # the module, not the function
    return {
        "cuda_build": torch.version.cuda is not None,
        "gpu_visible": bool(rnn._is_cuda_cudnn_available()),
    }


def _sync(inputs):
    import torch

    if inputs.device.type == "cuda":
        return lambda output: torch.cuda.synchronize(inputs.device)
    return lambda output: None  # CPU ops return when their work is done


def _inference(model, config, inputs, target):
    import torch

    from hierlstm.backends.compile import Compiled

    def forward():
        with torch.no_grad():
            return model(inputs, training=False)

    result = Compiled(forward, {}, _sync(inputs), 0.0, [0], profiled=forward)
    result.first_call_s = result.timed(forward)  # eager: Keras's first call, nothing traced
    return result


def _training(model, config, inputs, target):
    import keras
    import torch

    from hierlstm.backends.compile import Compiled
    from hierlstm.model.optimizers import make_optimizer
    from hierlstm.model.params import PARAM_SLOTS, param_variables
    from hierlstm.model.portable import loss_of

    optimizer = make_optimizer(config)
    variables = [param_variables(model)[name] for name in PARAM_SLOTS]
    optimizer.build(variables)
    scaled = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)

    def forward():
        with torch.no_grad():
            return loss_of(model(inputs, training=True), target)

    def forward_backward():
        for variable in variables:
            variable.value.grad = None
        loss = loss_of(model(inputs, training=True), target)
        (optimizer.scale_loss(loss) if scaled else loss).backward()
        return loss

    def apply(grads):
        with torch.no_grad():
            optimizer.apply(grads, variables)

    def step():
        loss = forward_backward()
        apply([variable.value.grad for variable in variables])
        return loss

    result = Compiled(step, {}, _sync(inputs), 0.0, [0], profiled=step)
    result.first_call_s = result.timed(step)
    forward_backward()
    grads = [variable.value.grad.detach().clone() for variable in variables]
    result.phases = {
        "forward": forward,
        "forward_backward": forward_backward,
        "update": lambda: apply(grads),
    }
    for phase in result.phases.values():
        result.timed(phase)  # untimed first calls, as TensorFlow's phases get
    return result


def _capture(run, logdir, steps: int, layers: list[str], read: bool) -> dict:
    import torch
    from torch.profiler import ProfilerActivity, record_function

    with torch.profiler.profile(activities=[ProfilerActivity.CPU]) as profiler:
        for _ in range(steps):
            with record_function("step"):
                run.sample()
    trace = logdir / "torch_trace.json"
    profiler.export_chrome_trace(str(trace))
    averages = [event for event in profiler.key_averages() if event.key != "step"]
    step = next(event for event in profiler.key_averages() if event.key == "step")
    total = sum(event.self_cpu_time_total for event in averages) or 1.0
    op_types = sorted(
        (
            {
                "type": event.key,
                "time_s": event.self_cpu_time_total * 1e-6 / steps,
                "ops": event.count / steps,
                "share": event.self_cpu_time_total / total,
            }
            for event in averages
            if event.self_cpu_time_total > 0
        ),
        key=lambda row: -row["time_s"],
    )
    return {
        "trace": str(trace),
        "attribution": TORCH_ATTRIBUTION,
        "step_s": [step.cpu_time_total * 1e-6 / step.count] * step.count,
        "layers": [],
        "op_types": op_types,
        "lines": [],
    }


def profile(worker, config: RunConfig, request: dict) -> dict:
    from hierlstm.backends.profiles import keras_profile

    return keras_profile(worker, config, request, _capture)


def read_capture(document: dict):
    """(the document, the last step in time or None)."""
    import json
    from pathlib import Path

    from hierlstm.profiling import timeline

    trace = json.loads(Path(document["trace"]).read_text(encoding="utf-8"))
    try:
        return document, timeline.torch_step_timeline(trace)
    except ValueError:
        return document, None

"""JAX's runner (`hierlstm.backends.runners`): `jax.jit` of the stateless call, compiled ahead of
time in the first call, synced with `block_until_ready`, a training step carrying its variables and
optimizer state between calls; cuDNN's LSTM read from the lowered StableHLO; `jax.profiler`'s
XSpace, read per op and per layer. JAX is imported only inside the functions."""

from __future__ import annotations

import importlib
import importlib.util
import time

from hierlstm.backends import kernels
from hierlstm.backends.protocol import keras_failure_line
from hierlstm.config import RunConfig, SettingError
from hierlstm.timing.rss import CpuRssGrowth

JAX_ATTRIBUTION = (
    "per op and per layer: JAX's profiler writes an XSpace whose XLA ops carry the name scopes "
    "Keras opens per layer in their HLO metadata, read by hierlstm.profiling.xspace"
)
JAX_UNREAD = (
    "the XSpace capture is written but not summarised: reading it needs TensorFlow's "
    "protobufs (hierlstm.profiling.xspace), absent here; open it in XProf"
)
# jaxlib's CUDA plugins: without one, JAX has no GPU backend and no cuDNN (the jax[cpu] wheel).
JAX_CUDA_PLUGINS = ("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_plugins.xla_cuda12")


def start() -> None:
    """Nothing to import quietly before the first request."""


def run_failures() -> tuple[type[BaseException], ...]:
    import jax

    return (jax.errors.JaxRuntimeError, MemoryError, SettingError)


def failure_line(error: BaseException) -> str:
    return keras_failure_line("jax", error)


def memory_probe(device: str):
    return CpuRssGrowth()  # JAX keeps no resettable peak; its host memory is the process's


def profile_probe(device: str):
    """A profile's memory probe: the RSS growth on a CPU; none on a GPU, whose memory is not
    the process's RSS."""
    return CpuRssGrowth() if device.startswith("/CPU") else None


def gpu_names() -> list[str]:
    import jax

    return [device.device_kind for device in jax.devices() if device.platform == "gpu"]


def compiled(model, config: RunConfig, inputs, target):
    """The timed functions of `model` at `inputs` (B, H, T, 1) and `target` (B, T, outer)."""
    training = config.task == "training"
    return (_training if training else _inference)(model, config, inputs, target)


def kernel_ran(functions, training: bool) -> tuple[str, bool]:
    """(the step's lowered StableHLO, whether it holds cuDNN's LSTM)."""
    return functions.program, kernels.ran_cudnn_jax(functions.program, training)


def prepare(config: RunConfig, *, seed: int, progress):
    from hierlstm.backends.compile import keras_run

    return keras_run(config, seed=seed, progress=progress)


def backend_facts() -> dict[str, bool]:
    """What the cuDNN rule asks of this machine: a CUDA build (a jaxlib CUDA plugin), and Keras's
    own GPU check (`_is_gpu_available`, the one that decides whether the LSTM emits cuDNN)."""
    rnn = importlib.import_module("keras.src.backend.jax.rnn")  # the module, not the function
    cuda_build = any(_found(plugin) for plugin in JAX_CUDA_PLUGINS)
    return {"cuda_build": cuda_build, "gpu_visible": bool(rnn._is_gpu_available())}


def _found(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a dotted name whose parent package is absent
        return False


def _counted(function, traces: list[int]):
    def counted(*arguments):
        traces[0] += 1  # runs when jax traces the function, never when it is called compiled
        return function(*arguments)

    return counted


def _sync(output) -> None:
    import jax

    jax.block_until_ready(output)


def _aot(jitted, *arguments):
    """`jitted` lowered and compiled for `arguments`, its first call run: (compiled, lowered)."""
    lowered = jitted.lower(*arguments)
    function = lowered.compile()
    _sync(function(*arguments))
    return function, lowered


def _inference(model, config, inputs, target):
    import jax

    from hierlstm.backends.compile import Compiled
    from hierlstm.model.portable import backend_state, stateless_forward

    traces = [0]
    state = backend_state(model)
    start = time.perf_counter()
    forward, lowered = _aot(jax.jit(_counted(stateless_forward(model), traces)), *state, inputs)
    first_call_s = time.perf_counter() - start
    return Compiled(
        step=lambda: forward(*state, inputs),
        phases={},
        sync=_sync,
        first_call_s=first_call_s,
        traces=traces,
        program=lowered.as_text(),
    )


def _training(model, config, inputs, target):
    import jax

    from hierlstm.backends.compile import Compiled
    from hierlstm.model.optimizers import make_optimizer
    from hierlstm.model.portable import backend_state, stateless_loss

    optimizer = make_optimizer(config)
    optimizer.build(model.trainable_variables)
    loss_fn = stateless_loss(model, optimizer)
    value_and_grad = jax.value_and_grad(loss_fn, has_aux=True)

    def forward(trainable, non_trainable, optimizer_variables, inputs, target):
        return loss_fn(trainable, non_trainable, optimizer_variables, inputs, target)[1]

    def forward_backward(trainable, non_trainable, optimizer_variables, inputs, target):
        (_, loss), grads = value_and_grad(
            trainable, non_trainable, optimizer_variables, inputs, target
        )
        return loss, grads

    def update(trainable, optimizer_variables, grads):
        return optimizer.stateless_apply(optimizer_variables, grads, trainable)

    def step(trainable, non_trainable, optimizer_variables, inputs, target):
        loss, grads = forward_backward(
            trainable, non_trainable, optimizer_variables, inputs, target
        )
        trainable, optimizer_variables = update(trainable, optimizer_variables, grads)
        return loss, trainable, optimizer_variables

    traces = [0]
    trainable, non_trainable = backend_state(model)
    carried = [trainable, [variable.value for variable in optimizer.variables]]
    data = (inputs, target)
    start = time.perf_counter()
    step_fn, lowered = _aot(
        jax.jit(_counted(step, traces)), carried[0], non_trainable, carried[1], *data
    )
    first_call_s = time.perf_counter() - start
    arguments = (trainable, non_trainable, carried[1], *data)
    forward_fn, _ = _aot(jax.jit(forward), *arguments)
    forward_backward_fn, _ = _aot(jax.jit(forward_backward), *arguments)
    _, grads = forward_backward_fn(*arguments)  # computed once; `update` applies them
    update_fn, _ = _aot(jax.jit(update), trainable, carried[1], grads)

    def run_step():
        loss, carried[0], carried[1] = step_fn(carried[0], non_trainable, carried[1], *data)
        return loss, carried

    return Compiled(
        step=run_step,
        phases={
            "forward": lambda: forward_fn(carried[0], non_trainable, carried[1], *data),
            "forward_backward": lambda: forward_backward_fn(
                carried[0], non_trainable, carried[1], *data
            ),
            "update": lambda: update_fn(carried[0], carried[1], grads),
        },
        sync=_sync,
        first_call_s=first_call_s,
        traces=traces,
        program=lowered.as_text(),
    )


def _xspace_fields(space, layers: list[str]) -> dict:
    """What a JAX capture's XSpace says, in the document's fields (a GPU's kernels among them:
    the device planes' events, as for TensorFlow)."""
    from hierlstm.profiling.xspace import summarise

    summary = summarise(space, layers)
    return {
        "attribution": JAX_ATTRIBUTION,
        "step_s": list(summary.step_s),
        "layers": summary.layers.to_dict(orient="records"),
        "op_types": summary.op_types.to_dict(orient="records"),
        "lines": summary.lines.to_dict(orient="records"),
        "kernels": summary.kernels.to_dict(orient="records"),
    }


def _capture(run, logdir, steps: int, layers: list[str], read: bool) -> dict:
    """`steps` marked steps under `jax.profiler`: the XSpace, summarised when `read` and this
    process can read it."""
    import jax

    with jax.profiler.trace(str(logdir)):
        for index in range(steps):
            with jax.profiler.StepTraceAnnotation("step", step_num=index):
                run.sample()
    from hierlstm.backends.profiles import can_read_xspace
    from hierlstm.profiling.xspace import find_xplane

    xplane = find_xplane(logdir)
    if not read or not can_read_xspace():
        return {"trace": str(xplane), "attribution": JAX_UNREAD, "layers": [], "op_types": []}
    from hierlstm.profiling.xspace import read_xspace

    return {"trace": str(xplane), **_xspace_fields(read_xspace(xplane), layers)}


def profile(worker, config: RunConfig, request: dict) -> dict:
    from hierlstm.backends.profiles import keras_profile

    return keras_profile(worker, config, request, _capture)


def read_capture(document: dict):
    """(the document, the last step in time or None), an unread capture summarised here."""
    import numpy as np

    from hierlstm.profiling import timeline
    from hierlstm.profiling.xspace import read_xspace

    space = read_xspace(document["trace"])
    if document["attribution"] == JAX_UNREAD:
        document = {**document, **_xspace_fields(space, document["layer_names"])}
        document["profiled_step_s"] = float(np.median(document["step_s"]))
    try:
        return document, timeline.step_timeline(space, document["layer_names"])
    except ValueError:  # no step marker: nothing was profiled in time
        return document, None

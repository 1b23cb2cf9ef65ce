"""Each backend's timed functions for one built model, and its device sync: `compiled(model, config,
inputs, target)` returns the step and training phases as no-argument functions, the first call's
seconds, a trace counter and what the kernel readers read.

JAX: `jax.jit` of the stateless call, compiled ahead of time in the first call, synced with
`block_until_ready`; a training step carries its variables and optimizer state between calls.
PyTorch: eager (no_grad for inference; `backward()` and the Keras optimizer for training), synced
with `torch.cuda.synchronize()` on a GPU. `torch.compile` is not offered: its first call takes over
a minute on a CPU, and Keras skips cuDNN under it."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import keras

from hierlstm.config import RunConfig
from hierlstm.model.optimizers import make_optimizer
from hierlstm.model.params import PARAM_SLOTS, param_variables
from hierlstm.model.portable import backend_state, loss_of, stateless_forward, stateless_loss


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


def compiled(model, config: RunConfig, inputs, target) -> Compiled:
    """The timed functions of `model` (built for `config`) at the backend arrays `inputs`
    (B, H, T, 1) and `target` (B, T, outer), the first call timed."""
    backend = keras.backend.backend()
    training = config.task == "training"
    if backend == "jax":
        return (_jax_training if training else _jax_inference)(model, config, inputs, target)
    if backend == "torch":
        return (_torch_training if training else _torch_inference)(model, config, inputs, target)
    raise ValueError(f"backend must be jax or torch here; got {backend!r}.")


def _counted(function, traces: list[int]):
    def counted(*arguments):
        traces[0] += 1  # runs when jax traces the function, never when it is called compiled
        return function(*arguments)

    return counted


def _jax_sync(output) -> None:
    import jax

    jax.block_until_ready(output)


def _aot(jitted, *arguments):
    """`jitted` lowered and compiled for `arguments`, its first call run: (compiled, lowered)."""
    lowered = jitted.lower(*arguments)
    function = lowered.compile()
    _jax_sync(function(*arguments))
    return function, lowered


def _jax_inference(model, config, inputs, target) -> Compiled:
    import jax

    traces = [0]
    state = backend_state(model)
    start = time.perf_counter()
    forward, lowered = _aot(jax.jit(_counted(stateless_forward(model), traces)), *state, inputs)
    first_call_s = time.perf_counter() - start
    return Compiled(
        step=lambda: forward(*state, inputs),
        phases={},
        sync=_jax_sync,
        first_call_s=first_call_s,
        traces=traces,
        program=lowered.as_text(),
    )


def _jax_training(model, config, inputs, target) -> Compiled:
    import jax

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
        sync=_jax_sync,
        first_call_s=first_call_s,
        traces=traces,
        program=lowered.as_text(),
    )


def _torch_sync(inputs):
    import torch

    if inputs.device.type == "cuda":
        return lambda output: torch.cuda.synchronize(inputs.device)
    return lambda output: None  # CPU ops return when their work is done


def _torch_inference(model, config, inputs, target) -> Compiled:
    import torch

    def forward():
        with torch.no_grad():
            return model(inputs, training=False)

    result = Compiled(forward, {}, _torch_sync(inputs), 0.0, [0], profiled=forward)
    result.first_call_s = result.timed(forward)  # eager: Keras's first call, nothing traced
    return result


def _torch_training(model, config, inputs, target) -> Compiled:
    import torch

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

    result = Compiled(step, {}, _torch_sync(inputs), 0.0, [0], profiled=step)
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

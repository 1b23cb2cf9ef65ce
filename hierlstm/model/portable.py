"""A built model as functions on this process's Keras backend: the forward pass compiled the
backend's way (`tf.function`, `jax.jit`, PyTorch eager under no_grad) and the loss's gradients,
scaled and unscaled under mixed_float16 as the training step does.

    forward_function(model, config)(x)       (B, H, T, 1) -> (B, T, outer)
    gradients(model, config, x, target)      loss, {parameter name: gradient}, input gradient
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import keras
import numpy as np
from keras import ops

from hierlstm.config import RunConfig
from hierlstm.model.loss import mean_squared_error
from hierlstm.model.optimizers import make_optimizer
from hierlstm.model.params import PARAM_SLOTS, param_variables


def loss_of(outputs, target):
    """The training loss (`hierlstm.model.loss`) of a (B, T, outer) output, in float32, with
    `keras.ops` (any backend, inside a jit or a tape)."""
    return mean_squared_error(ops.cast(outputs, "float32"), target, ops.mean)


def parameter_positions(model) -> list[int]:
    """Where each parameter (`PARAM_SLOTS` order) sits in `model.trainable_variables`, the order
    a stateless call takes them in. Raises ValueError for a trainable variable outside the
    parameter set."""
    by_name = param_variables(model)
    position = {id(variable): index for index, variable in enumerate(model.trainable_variables)}
    if len(position) != len(PARAM_SLOTS):
        raise ValueError(
            f"{model.name} has {len(position)} trainable variables; the parameter set has "
            f"{len(PARAM_SLOTS)}."
        )
    return [position[id(by_name[name])] for name in PARAM_SLOTS]


def backend_state(model) -> tuple[list, list]:
    """(trainable, non-trainable) variable values of `model`, the arrays a stateless call takes."""
    trainable = [variable.value for variable in model.trainable_variables]
    return trainable, [variable.value for variable in model.non_trainable_variables]


def stateless_forward(model, training: bool = False):
    """(trainable, non_trainable, inputs) -> outputs (B, T, outer): `model`'s stateless call,
    a pure function for `jax.jit`."""

    def forward(trainable, non_trainable, inputs):
        return model.stateless_call(trainable, non_trainable, inputs, training=training)[0]

    return forward


def stateless_loss(model, optimizer=None):
    """(trainable, non_trainable, optimizer_variables, inputs, target) -> (scaled loss, loss) for
    `jax.value_and_grad(..., has_aux=True)`, scaled as Keras's JAX trainer scales it."""
    forward = stateless_forward(model, training=True)
    scaled = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)

    def loss_fn(trainable, non_trainable, optimizer_variables, inputs, target):
        loss = loss_of(forward(trainable, non_trainable, inputs), target)
        if not scaled:
            return loss, loss
        mapping = list(zip(optimizer.variables, optimizer_variables, strict=True))
        with keras.StatelessScope(state_mapping=mapping):
            return optimizer.scale_loss(loss), loss

    return loss_fn


def forward_function(model, config: RunConfig):
    """`model`'s inference call compiled the backend's way: x (B, H, T, 1) float32 -> (B, T,
    outer) in the backend's array type. Inputs must be the backend's arrays (`to_backend`)."""
    return ORACLES[keras.backend.backend()].forward(model, config)


def _tensorflow_forward(model, config: RunConfig):
    import tensorflow as tf

    return tf.function(lambda inputs: model(inputs, training=False), jit_compile=config.xla)


def _jax_forward(model, config: RunConfig):
    import jax

    jitted = jax.jit(stateless_forward(model))
    trainable, non_trainable = backend_state(model)
    return lambda inputs: jitted(trainable, non_trainable, inputs)


def _torch_forward(model, config: RunConfig):
    import torch

    def eager_forward(inputs):
        with torch.no_grad():
            return model(inputs, training=False)

    return eager_forward


def to_backend(array):
    """A numpy array as the backend's array on its default device (Keras's device scope)."""
    return ops.convert_to_tensor(np.asarray(array))


def loss_scale(optimizer) -> float:
    """The factor the loss is multiplied by before the gradient (1 without loss scaling)."""
    if isinstance(optimizer, keras.optimizers.LossScaleOptimizer):
        return float(ops.convert_to_numpy(optimizer.dynamic_scale))
    return 1.0


def gradients(model, config: RunConfig, inputs, target):
    """The true (unscaled) gradients of the loss of `model` (built for `config`, training=True)
    at numpy `inputs` (B, H, T, 1) and `target` (B, T, outer): (loss, {parameter name: float64
    gradient}, float64 input gradient (B, H, T, 1))."""
    return ORACLES[keras.backend.backend()].gradients(model, config, inputs, target)


def op_errors() -> tuple[type[Exception], ...]:
    """The errors of an op a device or XLA cannot run on this process's backend: TensorFlow's
    OpError; none elsewhere."""
    return ORACLES[keras.backend.backend()].op_errors()


def _tensorflow_gradients(model, config: RunConfig, inputs, target):
    from hierlstm.model.training import TrainingStep

    loss, grads, input_grad = TrainingStep(model, config).gradients(inputs, target)
    found = {name: np.asarray(grad, np.float64) for name, grad in grads.items()}
    return float(loss), found, np.asarray(input_grad, np.float64)


def _unscaled(scaled_gradients):
    """`scaled_gradients(model, inputs, target, scale)` -> (loss, grads, input_grad) as the
    oracle's `gradients`: the loss scale of `config`'s optimizer divided out, float64."""

    def unscaled(model, config: RunConfig, inputs, target):
        scale = loss_scale(make_optimizer(config))
        loss, grads, input_grad = scaled_gradients(model, inputs, target, scale)
        found = {
            name: ops.convert_to_numpy(grad).astype(np.float64) / scale
            for name, grad in zip(PARAM_SLOTS, grads, strict=True)
        }
        return float(loss), found, ops.convert_to_numpy(input_grad).astype(np.float64) / scale

    return unscaled


def _jax_gradients(model, inputs, target, scale: float):
    import jax

    positions = parameter_positions(model)
    trainable, non_trainable = backend_state(model)
    forward = stateless_forward(model, training=True)

    def scaled_loss(trainable, inputs):
        loss = loss_of(forward(trainable, non_trainable, inputs), target)
        return loss * scale, loss

    grad_fn = jax.jit(jax.value_and_grad(scaled_loss, argnums=(0, 1), has_aux=True))
    (_, loss), (grads, input_grad) = grad_fn(trainable, to_backend(inputs))
    return loss, [grads[index] for index in positions], input_grad


def _torch_gradients(model, inputs, target, scale: float):
    import torch

    variables = [param_variables(model)[name] for name in PARAM_SLOTS]
    for variable in model.trainable_variables:
        variable.value.grad = None
    inputs = to_backend(inputs).detach().requires_grad_(True)
    loss = loss_of(model(inputs, training=True), to_backend(target))
    (loss * scale).backward()
    grads = [variable.value.grad for variable in variables]
    with torch.no_grad():
        return loss.detach(), grads, inputs.grad


def _tensorflow_op_errors() -> tuple[type[Exception], ...]:
    import tensorflow as tf

    return (tf.errors.OpError,)


@dataclasses.dataclass(frozen=True)
class Oracle:
    """A framework's way of running the oracles' model: the compiled forward, the gradients, and
    the op errors that are the run's (not a bug)."""

    forward: Callable  # (model, config) -> (inputs -> outputs)
    gradients: Callable  # (model, config, inputs, target) -> (loss, grads, input gradient)
    op_errors: Callable[[], tuple[type[Exception], ...]] = tuple


# By Keras backend (`hierlstm.registry.BACKENDS`): the model layer's one per-framework table; the
# backends' runner modules (`hierlstm.backends.runners`) hold the rest.
ORACLES = {
    "tensorflow": Oracle(_tensorflow_forward, _tensorflow_gradients, _tensorflow_op_errors),
    "jax": Oracle(_jax_forward, _unscaled(_jax_gradients)),
    "torch": Oracle(_torch_forward, _unscaled(_torch_gradients)),
}

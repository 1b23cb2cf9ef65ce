"""One training step of a built model: the optimizer, and the step and its phases as compiled
functions (XLA when asked), each traced once. The loss is `hierlstm.model.loss`'s, in float32.

    forward(inputs, target) -> loss                       training=True, no gradient
    forward_backward(inputs, target) -> (loss, grads)     the tape and every gradient
    update(grads)                                          the optimizer applies grads
    step(inputs, target) -> loss                           forward_backward, then update

`step` calls the other two, so the phases time exactly what the step runs. The step trains the model
it is given: build one for it."""

from __future__ import annotations

import keras
import tensorflow as tf

from hierlstm.config import RunConfig
from hierlstm.model.loss import mean_squared_error
from hierlstm.model.optimizers import LEARNING_RATES, make_optimizer  # noqa: F401 (re-exported)
from hierlstm.model.params import PARAM_SLOTS, param_variables
from hierlstm.registry import VARIANTS


class TrainingStep:
    """The training step of `model` (built for `config`) and its phases. inputs (batch, height,
    time, 1) float32, target (batch, time, outer_units) float32; `names` are the parameter names in
    the order of `variables` and of every gradient list."""

    def __init__(self, model, config: RunConfig):
        self.model = model
        self.config = config
        by_name = param_variables(model)
        self.names = tuple(PARAM_SLOTS)
        self.variables = [by_name[name] for name in self.names]
        trainable = {variable.path for variable in model.trainable_variables}
        if trainable != {variable.path for variable in self.variables}:
            raise ValueError(
                f"{model.name} has trainable variables outside the parameter set: "
                f"{sorted(trainable - {variable.path for variable in self.variables})}"
            )
        self.optimizer = make_optimizer(config)
        self.optimizer.build(self.variables)  # its slots exist before anything is traced
        self.loss_scaled = isinstance(self.optimizer, keras.optimizers.LossScaleOptimizer)
        time_steps = config.time_steps if VARIANTS[config.variant].static_time else None
        data = [
            tf.TensorSpec((None, config.height, time_steps, 1), tf.float32),  # inputs
            tf.TensorSpec((None, time_steps, config.outer_units), tf.float32),  # target
        ]
        grads = [[tf.TensorSpec(v.shape, v.dtype) for v in self.variables]]
        compile_options = {"jit_compile": config.xla}
        self.forward = tf.function(self._forward, input_signature=data, **compile_options)
        self.forward_backward = tf.function(
            self._forward_backward, input_signature=data, **compile_options
        )
        self.update = tf.function(self._update, input_signature=grads, **compile_options)
        self.step = tf.function(self._step, input_signature=data, **compile_options)

    def loss(self, inputs, target):
        """The loss of one forward pass with training=True, in float32."""
        outputs = tf.cast(self.model(inputs, training=True), tf.float32)  # (B, T, outer)
        return mean_squared_error(outputs, target, tf.reduce_mean)

    def _forward(self, inputs, target):
        return self.loss(inputs, target)

    def _forward_backward(self, inputs, target):
        """(loss, gradients as `update` takes them: loss-scaled under LossScaleOptimizer)."""
        with tf.GradientTape() as tape:
            loss = self.loss(inputs, target)
            scaled = self.optimizer.scale_loss(loss) if self.loss_scaled else loss
        return loss, tape.gradient(scaled, self.variables)

    def _update(self, grads):
        self.optimizer.apply(grads, self.variables)
        return tf.constant(0)  # a value to return, so every phase is called the same way

    def _step(self, inputs, target):
        loss, grads = self.forward_backward(inputs, target)
        self.update(grads)
        return loss

    def gradients(self, inputs, target):
        """The true (unscaled) gradients: (loss, {name: gradient}, input gradient (batch, height,
        time, 1)), for the gradient check."""
        inputs = tf.convert_to_tensor(inputs, tf.float32)
        target = tf.convert_to_tensor(target, tf.float32)
        compiled = tf.function(self._gradients_with_input, jit_compile=self.config.xla)
        # traced explicitly, so that many checks in a row do not set off TensorFlow's
        # "excessive retracing" warning (a new function per model is intended)
        loss, grads, input_grad = compiled.get_concrete_function(inputs, target)(inputs, target)
        scale = self.optimizer.dynamic_scale if self.loss_scaled else 1.0
        unscaled = {name: grad / scale for name, grad in zip(self.names, grads, strict=True)}
        return loss, unscaled, input_grad / scale

    def _gradients_with_input(self, inputs, target):
        with tf.GradientTape() as tape:
            tape.watch(inputs)
            loss = self.loss(inputs, target)
            scaled = self.optimizer.scale_loss(loss) if self.loss_scaled else loss
        grads = tape.gradient(scaled, [*self.variables, inputs])
        return loss, grads[:-1], grads[-1]

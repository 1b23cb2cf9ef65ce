"""Timing a training step and its phases (`hierlstm.model.training.TrainingStep`). A training run
builds its own model, so a cached or shared model is never trained. Each round calls forward,
forward_backward, update (on gradients computed once before timing) and step, each its own
`timed_call`. The first call is the step's, tracing its gradient graph; the round's memory peak is
the step's."""

from __future__ import annotations

import dataclasses
import time

import tensorflow as tf

from hierlstm.config import RunConfig
from hierlstm.hardware import resolve_device
from hierlstm.model.builders import build_model
from hierlstm.model.loss import loss_target
from hierlstm.model.params import init_params, read_params
from hierlstm.timing.calls import PreparedRun, Progress, lstm_kernel, make_inputs, timed_call


@dataclasses.dataclass
class TrainingRun(PreparedRun):
    """A training run: `forward` is the whole step, (inputs, target) -> loss; `phases` maps each
    of `PHASES` to its compiled function and arguments."""

    target: tf.Tensor | None = None
    phases: dict = dataclasses.field(default_factory=dict)

    def call(self) -> float:
        with tf.device(self.device):
            return timed_call(self.forward, self.inputs, self.target)

    def sample(self) -> dict[str, float]:
        with tf.device(self.device):
            times = {
                name: timed_call(function, *arguments)
                for name, (function, arguments) in self.phases.items()
            }
        return {**times, "step": self.call()}


def prepare_training(config: RunConfig, *, seed: int, model=None, progress: Progress):
    """Builds the run's own model (from `model`'s parameters if given), its optimizer, input
    and target, and runs the timed first step; then the phases' untimed first calls."""
    from hierlstm.model.training import TrainingStep

    device = resolve_device(config.device)
    progress(0.0, f"building {config.variant} and its {config.optimizer} optimizer on {device}")
    with tf.device(device):
        params = init_params(config, seed) if model is None else read_params(model)
        training = TrainingStep(build_model(config, params), config)
        inputs = tf.identity(tf.convert_to_tensor(make_inputs(config, seed)))
        target = tf.identity(tf.convert_to_tensor(loss_target(config, seed)))
        progress(0.2, "tracing the step and its gradient graph, compiling, first step")
        # Traced through get_concrete_function inside the first call's interval, as
        # `hierlstm.timing.harness.prepare` does for a forward pass.
        start = time.perf_counter()
        concrete = training.step.get_concrete_function()
        first_call_s = time.perf_counter() - start + timed_call(training.step, inputs, target)
        progress(0.6, "tracing and first-calling the phases (forward, forward+backward, update)")
        _, grads = training.forward_backward(inputs, target)
        grads = [tf.identity(grad) for grad in grads]  # computed once; `update` applies them
        phases = {
            "forward": (training.forward, (inputs, target)),
            "forward_backward": (training.forward_backward, (inputs, target)),
            "update": (training.update, (grads,)),
        }
        for function, arguments in phases.values():
            function.get_concrete_function()
            timed_call(function, *arguments)
    kernel, reason = lstm_kernel(config, concrete)
    progress(1.0, f"first step {first_call_s:.3g} s ({kernel} LSTM kernel)")
    return TrainingRun(
        config,
        device,
        training.step,
        inputs,
        first_call_s,
        kernel,
        reason,
        target=target,
        phases=phases,
    )

"""A training step's memory by part (`hierlstm.model.cost.memory_parts`): the parts add up to
the total, and parameters, gradients and optimizer match the bytes of the real Keras variables
and gradient tensors exactly: every variant, both optimizers and every precision."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import tensorflow as tf

from hierlstm.config import OPTIMIZERS, PRECISIONS, RunConfig
from hierlstm.model import cost
from hierlstm.model.builders import build_model
from hierlstm.model.loss import loss_target
from hierlstm.model.training import TrainingStep
from hierlstm.registry import VARIANTS
from hierlstm.timing.calls import make_inputs

OTHER_GEOMETRY = dict(height=40, pool_height=4, filters=8, kernel_size=5, inner_units=20)


def nbytes(variables) -> int:
    return sum(int(np.prod(v.shape)) * np.dtype(v.dtype).itemsize for v in variables)


def training(variant: str, optimizer: str, precision: str, **sizes) -> RunConfig:
    sizes = {"batch_size": 2, "time_steps": 3, **sizes}
    return RunConfig(
        variant=variant, task="training", optimizer=optimizer, precision=precision, **sizes
    )


# Every variant under mixed_float16 (a policy and a loss scale: the most a precision adds), and
# folded in the other precisions; Adam's moments (and the loss scale's) on all but nested, which
# takes SGD: an optimizer's variables follow the model's trainable ones.
CASES = [(v, "sgd" if v == "nested" else "adam", "mixed_float16") for v in VARIANTS]
CASES += [("folded", "adam", p) for p in PRECISIONS if p != "mixed_float16"]


@pytest.mark.parametrize("variant, optimizer, precision", CASES)
def test_parameters_gradients_and_optimizer_are_the_bytes_of_the_real_ones(
    variant, optimizer, precision
):
    config = training(variant, optimizer, precision)
    model = build_model(config)
    step = TrainingStep(model, config)  # builds the optimizer's variables
    parts = cost.memory_parts(config)
    assert parts.parameters == nbytes(model.trainable_variables)
    assert {v.dtype for v in model.trainable_variables} == {"float32"}
    assert parts.optimizer == nbytes(step.optimizer.variables)
    inputs = tf.constant(make_inputs(config, 0))
    _, grads = step.forward_backward(inputs, tf.constant(loss_target(config, 0)))
    assert sum(grad.numpy().nbytes for grad in grads) == parts.gradients
    assert {grad.dtype for grad in grads} == {tf.float32}  # mixed policies: float32 variables
    # What the parts leave out of the model's variables: the LSTMs' seed-generator states.
    left_out = [v for v in model.variables if not v.trainable]
    assert all("seed_generator" in v.path for v in left_out), [v.path for v in left_out]
    assert nbytes(left_out) == 16 * len(left_out)


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("optimizer", OPTIMIZERS)
@pytest.mark.parametrize("geometry", [{}, OTHER_GEOMETRY], ids=["question", "other"])
def test_the_parts_add_up_to_the_total(geometry, optimizer, precision):
    parts = cost.memory_parts(training("folded", optimizer, precision, **geometry))
    values = parts.as_dict()
    assert tuple(values) == cost.MEMORY_PARTS == tuple(f.name for f in dataclasses.fields(parts))
    assert parts.total == sum(values.values())
    assert all(value > 0 for name, value in values.items() if name != "optimizer")


def test_each_part_by_hand_at_the_questions_geometry():
    """batch 2, time 3: 155,200 bytes of parameters (38,800 float32), from the layers' shapes."""
    config = training("folded", "adam", "mixed_float16")
    weights = (3 * 3 * 16 + 16) + 4 * 48 * (16 + 48 + 1) + 4 * 60 * (48 + 60 + 1)
    parts = cost.memory_parts(config)
    assert weights == 38_800 and parts.parameters == parts.gradients == 4 * weights
    assert parts.optimizer == 2 * 4 * weights + 12 + 24  # two moments, Adam's and the scale's
    # the max-pool's two gradients, (2, 12, 3, 16) and (2, 36, 3, 16), in float16
    assert parts.transient == 2 * (2 * 12 * 3 * 16 + 2 * 36 * 3 * 16)
    assert parts.kept_activations == cost.kept_activation_bytes(config)
    float32 = cost.memory_parts(config.replace(precision="float32", optimizer="sgd"))
    assert float32.optimizer == 12 and float32.transient == 2 * parts.transient


def test_the_transient_follows_the_largest_layer():
    """With a tiny conv and wide LSTMs, the inner LSTM's gradients are the largest."""
    config = RunConfig(batch_size=2, time_steps=3, filters=1, inner_units=200, outer_units=10)
    pooled, summaries = 2 * 12 * 3 * 1, 2 * 3 * 200
    assert cost.transient_bytes(config) == 4 * (summaries + pooled)

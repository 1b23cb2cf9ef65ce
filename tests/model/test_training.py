"""The training step: the loss as documented, every variant's gradients against the float64
oracle and against folded's (batch < time at another geometry, time 1, batch 1, batch > time in
both mixed precisions, fused under XLA), the optimizer, and a step that trains its own model."""

from __future__ import annotations

import functools

import keras
import numpy as np
import pytest
import tensorflow as tf

from hierlstm.config import RunConfig
from hierlstm.model import gradcheck
from hierlstm.model.builders import build_model
from hierlstm.model.check import GRADIENT_TOLERANCES, random_input
from hierlstm.model.loss import loss_target, mean_squared_error
from hierlstm.model.params import PARAM_SLOTS, init_params, read_params
from hierlstm.model.reference import reference_forward, reference_loss
from hierlstm.model.training import TrainingStep, make_optimizer
from hierlstm.registry import VARIANTS

REFERENCE = "folded"  # every variant's gradients are also compared with folded's
OTHER_GEOMETRY = dict(height=40, pool_height=4, filters=8, kernel_size=5, inner_units=20)
# Each case covers more than one thing, so that batch and time swapped anywhere shows in two.
CASES = {
    # batch < time, and every size of the layers other than the default's
    "batch<time": RunConfig(batch_size=2, time_steps=5, outer_units=30, **OTHER_GEOMETRY),
    "time1": RunConfig(batch_size=4, time_steps=1),
    "batch1": RunConfig(batch_size=1, time_steps=6),
    # batch > time at the default geometry, in each 16-bit precision
    "mixed_float16": RunConfig(batch_size=5, time_steps=2, precision="mixed_float16"),
    "mixed_bfloat16": RunConfig(batch_size=5, time_steps=2, precision="mixed_bfloat16"),
}


@functools.cache
def problem_and_reference(case: str):
    """The oracle's directions for a case and folded's gradients, computed once per case."""
    problem = gradcheck.gradient_problem(CASES[case], seed=3)
    reference = variant_gradients(problem, REFERENCE)
    return problem, reference


def variant_gradients(problem, variant: str, **changes):
    config = problem.config.replace(variant=variant, **changes)
    return gradcheck.variant_gradients(config, problem.params, problem.inputs, problem.target)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("variant", VARIANTS)
def test_gradients_match_the_oracle_and_folded(variant, case):
    problem, reference = problem_and_reference(case)
    gradients = variant_gradients(problem, variant)
    assert set(gradients) == {*PARAM_SLOTS, gradcheck.INPUT}
    for name, value in problem.params.items():
        assert gradients[name].shape == value.shape
    assert gradients[gradcheck.INPUT].shape == problem.inputs.shape
    result = gradcheck.judge(variant, gradients, problem, reference, REFERENCE)
    tolerance, difference_tolerance = GRADIENT_TOLERANCES[problem.config.precision]
    assert result.worst_error <= tolerance, result
    assert result.max_difference <= difference_tolerance, result
    assert result.ok and result.directions == 3 * (len(PARAM_SLOTS) + 1)


@pytest.mark.parametrize("precision", ["mixed_float16", "mixed_bfloat16"])
def test_mixed_precision_gradients_are_really_16_bit(precision):
    problem, reference = problem_and_reference(precision)
    result = gradcheck.judge(REFERENCE, reference, problem, reference, REFERENCE)
    assert result.worst_error > GRADIENT_TOLERANCES["float32"][0]  # it ran in 16 bits


@functools.cache
def three_by_four():
    """A batch of 3 (2 chains split it 1 and 2) and folded's gradients, without XLA."""
    problem = gradcheck.gradient_problem(RunConfig(batch_size=3, time_steps=4), seed=1)
    return problem, variant_gradients(problem, REFERENCE)


@pytest.mark.parametrize("chains", [1, 2])
def test_fused_under_xla_trains_and_gives_the_same_gradients(chains, monkeypatch):
    from hierlstm.model import fused

    monkeypatch.setattr(fused, "chain_count", lambda: chains)
    problem, reference = three_by_four()
    gradients = variant_gradients(problem, "fused", xla=True)
    result = gradcheck.judge("fused", gradients, problem, reference, REFERENCE)
    assert result.ok, result
    assert result.max_difference <= GRADIENT_TOLERANCES["float32"][1]


def test_a_variant_xla_cannot_compile_is_a_failed_check_naming_the_error():
    results = gradcheck.check_gradients(
        RunConfig(batch_size=2, time_steps=2, xla=True), variants=["folded", "vectorized_map"]
    )
    assert results[0].ok
    assert not results[1].ok
    assert results[1].error.startswith("UnimplementedError: no kernel for the If op at ")
    assert "\n" not in results[1].error and results[1].reference_variant == "folded"


def test_a_gradient_that_is_wrong_fails_the_check():
    problem, reference = problem_and_reference("batch<time")
    wrong = {**reference, "inner_bias": reference["inner_bias"] * 1.01}
    result = gradcheck.judge("folded", wrong, problem, reference, REFERENCE)
    assert not result.ok and result.worst_tensor == "inner_bias"
    assert result.worst_error > GRADIENT_TOLERANCES["float32"][0]


def test_the_oracle_is_a_central_difference_of_the_reference_loss():
    problem, _ = problem_and_reference("batch<time")
    name, direction, derivative = problem.directions[0]
    base = {key: np.asarray(value, np.float64) for key, value in problem.params.items()}
    step = 1e-5

    def loss(offset):
        moved = {**base, name: base[name] + offset * direction}
        pool_height = problem.config.pool_height
        return reference_loss(moved, problem.inputs, problem.target, pool_height=pool_height)

    assert derivative == pytest.approx((loss(step) - loss(-step)) / (2 * step), rel=1e-12)
    assert np.linalg.norm(direction) == pytest.approx(1.0)


def test_the_loss_is_the_mean_squared_error_to_a_fixed_normal_target():
    config = RunConfig(batch_size=2, time_steps=3)
    target = loss_target(config, seed=4)
    assert target.shape == (2, 3, 60) and target.dtype == np.float32
    np.testing.assert_array_equal(target, loss_target(config, seed=4))
    assert not np.array_equal(target, loss_target(config, seed=5))
    outputs = np.arange(2 * 3 * 60, dtype=np.float64).reshape(2, 3, 60) / 100
    assert mean_squared_error(outputs, target) == pytest.approx(np.mean((outputs - target) ** 2))
    params, x = init_params(config), random_input(config)
    expected = np.mean((reference_forward(params, x) - target) ** 2)
    assert reference_loss(params, x, target) == pytest.approx(expected, rel=1e-12)
    step = TrainingStep(build_model(config, params), config)
    loss = float(step.forward(tf.constant(x), tf.constant(target)))
    assert loss == pytest.approx(expected, rel=1e-5)


def test_the_optimizers_and_loss_scaling():
    sgd = make_optimizer(RunConfig(task="training"))
    adam = make_optimizer(RunConfig(task="training", optimizer="adam"))
    scaled = make_optimizer(RunConfig(task="training", precision="mixed_float16"))
    assert isinstance(sgd, keras.optimizers.SGD) and float(sgd.learning_rate) == pytest.approx(0.01)
    assert isinstance(adam, keras.optimizers.Adam) and float(adam.learning_rate) == pytest.approx(
        1e-3
    )
    assert isinstance(scaled, keras.optimizers.LossScaleOptimizer)
    assert isinstance(scaled.inner_optimizer, keras.optimizers.SGD)
    bfloat = make_optimizer(RunConfig(task="training", precision="mixed_bfloat16"))
    assert not isinstance(bfloat, keras.optimizers.LossScaleOptimizer)  # 8 exponent bits


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_a_step_trains_its_own_model_and_leaves_another_built_from_the_same_params(optimizer):
    config = RunConfig(batch_size=2, time_steps=3, task="training", optimizer=optimizer)
    params = init_params(config)
    cached = build_model(config, params)  # as a cache holds one, built from the same params
    step = TrainingStep(build_model(config, params), config)
    inputs, target = tf.constant(random_input(config)), tf.constant(loss_target(config))
    losses = [float(step.step(inputs, target)) for _ in range(3)]
    trained = read_params(step.model)
    assert all(not np.array_equal(trained[name], params[name]) for name in params)
    assert losses[2] < losses[0]  # it learns
    untouched = read_params(cached)
    assert all(np.array_equal(untouched[name], params[name]) for name in params)
    assert step.step.experimental_get_tracing_count() == 1


def test_the_phases_are_the_steps_parts():
    config = RunConfig(batch_size=2, time_steps=3, task="training")
    step = TrainingStep(build_model(config, init_params(config)), config)
    inputs, target = tf.constant(random_input(config)), tf.constant(loss_target(config))
    loss, grads = step.forward_backward(inputs, target)
    assert float(loss) == pytest.approx(float(step.forward(inputs, target)))
    assert [tuple(grad.shape) for grad in grads] == [tuple(v.shape) for v in step.variables]
    before = read_params(step.model)
    step.update(grads)
    after = read_params(step.model)
    for name, grad in zip(step.names, grads, strict=True):  # SGD: w - 0.01 g
        np.testing.assert_allclose(after[name], before[name] - 0.01 * grad.numpy(), atol=1e-7)
    step.step(inputs, target)
    # The step called the phases' compiled functions: nothing was traced twice.
    for function in (step.forward_backward, step.update, step.step):
        assert function.experimental_get_tracing_count() == 1

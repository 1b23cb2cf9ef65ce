"""The long-run estimate: the cost model times measured costs (the arithmetic is checked on a
given StepCost; the calibration is checked for what it returns, not for how fast it was)."""

import math

import pytest

from hierlstm.admission.estimate import (
    CALIBRATION_TIME,
    StepCost,
    calibrate,
    calibration_key,
    first_call_seconds,
    pass_seconds,
    run_seconds,
    seconds_left,
)
from hierlstm.config import RunConfig, Timing
from hierlstm.model import cost

STEP_COST = StepCost("nested", seconds_per_step=1e-4, seconds_per_gflop=0.05, first_call_s=0.5)


def test_a_pass_is_the_chain_plus_the_arithmetic():
    config = RunConfig(batch_size=8, time_steps=30)
    expected = cost.dependent_steps(config) * 1e-4 + cost.model_flops(config) / 1e9 * 0.05
    assert pass_seconds(config, STEP_COST) == pytest.approx(expected)


def test_a_run_is_first_call_warmup_and_repeats():
    config = RunConfig(batch_size=8, time_steps=30)
    one = pass_seconds(config, STEP_COST)
    assert run_seconds(config, STEP_COST, Timing(warmup=2, repeats=10)) == pytest.approx(
        0.5 + one + 12 * one
    )


def test_only_a_static_time_variant_traces_longer_for_longer_inputs():
    for variant, grows in (("folded", False), ("time_distributed", True)):
        short, long = (RunConfig(variant=variant, time_steps=t) for t in (CALIBRATION_TIME, 80))
        step_cost = StepCost(variant, 0.0, 0.0, first_call_s=1.0)
        assert first_call_seconds(short, step_cost) == pytest.approx(1.0)
        assert first_call_seconds(long, step_cost) == pytest.approx(10.0 if grows else 1.0)


def test_calibration_ignores_batch_time_and_distribution():
    keys = {
        calibration_key(RunConfig(batch_size=b, time_steps=t, strategy=s))
        for b, t, s in ((4, 10, "none"), (64, 500, "mirrored"), (1, 1, "none"))
    }
    assert len(keys) == 1
    assert calibration_key(RunConfig(xla=True)) != calibration_key(RunConfig())


@pytest.mark.parametrize("variant", ["folded", "time_distributed"])
def test_calibration_measures_finite_nonnegative_costs(variant):
    step_cost = calibrate(RunConfig(variant=variant))
    assert step_cost.variant == variant
    for value in (step_cost.seconds_per_step, step_cost.seconds_per_gflop):
        assert math.isfinite(value) and value >= 0
    assert step_cost.first_call_s > 0
    assert step_cost.seconds_per_step > 0 or step_cost.seconds_per_gflop > 0


def test_a_setting_that_cannot_run_is_not_calibrated():
    with pytest.raises(RuntimeError, match="could not measure vectorized_map"):
        calibrate(RunConfig(variant="vectorized_map", xla=True))  # pfor has no XLA kernel


def test_time_left_follows_the_estimate_then_the_run_s_own_pace():
    assert seconds_left(0.0, 0.0) is None  # nothing known yet
    assert seconds_left(0.05, 2.0, estimate=8.0) == pytest.approx(6.0)
    assert seconds_left(0.05, 9.0, estimate=8.0) == 0.0  # over the estimate: never negative
    assert seconds_left(0.25, 3.0, estimate=100.0) == pytest.approx(9.0)  # pace: 3 s per 25%
    assert seconds_left(1.0, 7.0, estimate=8.0) == 0.0
    assert seconds_left(1.5, 7.0) == 0.0  # a fraction over 1 is done

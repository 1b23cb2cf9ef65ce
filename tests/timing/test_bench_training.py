"""Timing a training step: the record's phase fields, every variant training with one trace per
compiled function, a given (cached) model never trained, failures as one line, the cuDNN rule
for a step, the limits and the estimate. Tiny configs; correctness only, never durations."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tensorflow as tf

from hierlstm.admission import check_limits, limits, memory_estimate_bytes
from hierlstm.admission.estimate import StepCost, calibrate, run_seconds
from hierlstm.config import RunConfig, Timing
from hierlstm.i18n import t
from hierlstm.model import cost, cudnn
from hierlstm.model.builders import build_model
from hierlstm.model.params import init_params, read_params
from hierlstm.records import PHASE_COLUMNS, PHASES
from hierlstm.registry import VARIANTS
from hierlstm.timing import calls, harness, training

TINY = RunConfig(variant="folded", batch_size=2, time_steps=4, task="training")
TIMING = Timing(warmup=1, repeats=3)


def assert_phases_are_consistent(result, repeats):
    assert set(result.phases) == set(PHASES)
    for phase, stats in result.phases.items():
        assert len(stats.samples) == repeats, phase  # one per timed round
        assert 0 < stats.p10 <= stats.median <= stats.p90, phase
    medians = {phase: stats.median for phase, stats in result.phases.items()}
    assert result.phase_sum_s == medians["forward_backward"] + medians["update"]
    assert result.backward_s == medians["forward_backward"] - medians["forward"]


@pytest.fixture(scope="module")
def trained():
    calls = []
    result = harness.benchmark(TINY, TIMING, on_progress=lambda f, m: calls.append((f, m)))
    return result, calls


def test_a_training_result_has_the_step_and_its_phases(trained):
    result, _ = trained
    assert result.status == "ok", result.error
    assert result.config.task == "training" and result.repeats == 3 and result.warmup == 1
    assert (
        0 < result.step.min <= result.step.median
        and result.step.p10 <= result.step.median <= result.step.p90
    )
    assert_phases_are_consistent(result, repeats=3)
    assert result.flops == cost.training_flops(TINY) == 3 * cost.model_flops(TINY)
    assert result.gflops_per_s == pytest.approx(result.flops / result.step.median / 1e9)
    assert result.kept_activation_bytes == cost.kept_activation_bytes(TINY) > 0
    assert result.peak_memory_kind in ("cpu_rss_growth", "gpu_allocator_peak")
    assert result.trace_count == 1 and result.first_call_s > 0
    row = result.to_row()
    assert (row["task"], row["optimizer"]) == ("training", "sgd")
    assert all(row[column] > 0 for column in PHASE_COLUMNS)
    document = result.to_dict()
    assert document["backward_s"] == result.backward_s
    assert {*PHASE_COLUMNS, "kept_activation_bytes", "backward_s"} <= set(document)


def test_the_first_call_says_it_traces_the_gradient_graph(trained):
    _, calls = trained
    messages = [message for _, message in calls]
    assert any("gradient graph" in message for message in messages)
    assert any(message.startswith("first step ") for message in messages)
    fractions = [fraction for fraction, _ in calls]
    assert all(later > earlier for earlier, later in zip(fractions, fractions[1:], strict=False))
    assert fractions[-1] == 1.0


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_trains_with_one_trace_per_function(variant, monkeypatch):
    traced = []
    real = training.prepare_training

    def spy(*args, **kwargs):
        run = real(*args, **kwargs)
        traced.append(run)
        return run

    monkeypatch.setattr(harness, "prepare_training", spy)
    result = harness.benchmark(TINY.replace(variant=variant), Timing(warmup=0, repeats=2))
    assert result.status == "ok", result.error
    assert result.trace_count == 1
    assert_phases_are_consistent(result, repeats=2)
    (run,) = traced
    for function, _ in run.phases.values():
        assert function.experimental_get_tracing_count() == 1
    assert result.kernel in ("cudnn", "generic")
    if result.kernel == "generic":
        assert result.kernel_reason


def test_a_given_model_is_read_never_trained():
    cached = build_model(TINY, init_params(TINY, seed=5))
    before = read_params(cached)
    result = harness.benchmark(TINY, TIMING, model=cached)
    assert result.status == "ok", result.error
    after = read_params(cached)
    assert all(np.array_equal(before[name], after[name]) for name in before)


def test_compare_times_training_runs_in_the_same_rounds():
    configs = [TINY, TINY.replace(variant="fused", optimizer="adam")]
    outcome = harness.compare(configs, TIMING)
    assert [result.status for result in outcome.results] == ["ok", "ok"]
    for result in outcome.results:
        assert result.repeats == 3
        assert_phases_are_consistent(result, repeats=3)
    assert outcome.results[1].config.optimizer == "adam"
    assert outcome.entries[0].speedup.median == 1.0


def test_a_training_step_xla_cannot_compile_is_one_stored_line():
    config = TINY.replace(variant="vectorized_map", xla=True)
    result = harness.benchmark(config, Timing(warmup=0, repeats=1))
    assert result.status == "failed" and "\n" not in result.error
    assert result.error.startswith("not supported here: no kernel for the If op at ")
    assert result.kept_activation_bytes == cost.kept_activation_bytes(config)
    assert result.phases == {}
    assert all(math.isnan(result.to_row()[column]) for column in PHASE_COLUMNS)


def test_the_cudnn_rule_for_a_training_step_needs_its_backward_kernel():
    assert cudnn.ran_cudnn_training({"CudnnRNNV3", "CudnnRNNBackpropV3", "MatMul"})
    assert not cudnn.ran_cudnn_training({"CudnnRNNV3", "MatMul"})  # forward only
    assert not cudnn.ran_cudnn_training({"CudnnRNNBackpropV3"})
    assert not cudnn.ran_cudnn_training({"MatMul", "TensorListGetItem"})


def test_a_training_step_pinned_to_the_cpu_names_why_cudnn_did_not_run():
    config = TINY.replace(device="cpu")
    run = training.prepare_training(config, seed=0, progress=harness.no_progress)
    kernel, reason = calls.lstm_kernel(config, run.forward.get_concrete_function())
    why = "no_gpu" if not tf.config.list_logical_devices("GPU") else "requested"
    if not tf.test.is_built_with_cuda():
        why = "no_cuda"
    assert (kernel, reason) == ("generic", t(f"kernel.why.{why}", "en"))
    op_types = cudnn.graph_op_types(run.forward.get_concrete_function())
    assert "MatMul" in op_types and not any(op.startswith("CudnnRNN") for op in op_types)


def test_the_training_memory_estimate_counts_activations_gradients_and_slots():
    inference = TINY.replace(task="inference")
    sgd, adam = TINY, TINY.replace(optimizer="adam")
    assert memory_estimate_bytes(sgd) > memory_estimate_bytes(inference)
    assert memory_estimate_bytes(adam) - memory_estimate_bytes(sgd) == 8 * cost.total_params(sgd)
    assert memory_estimate_bytes(sgd) == (
        limits.TRAINING_WORKSPACE_FACTOR * cost.kept_activation_bytes(sgd)
        + 4 * cost.total_params(sgd)
    )
    half = TINY.replace(precision="mixed_float16")
    assert cost.kept_activation_bytes(half) < cost.kept_activation_bytes(sgd)
    assert cost.kept_activation_bytes(TINY.replace(batch_size=4)) > cost.kept_activation_bytes(sgd)


def test_a_forward_pass_fits_where_its_training_step_is_refused(monkeypatch):
    """The refusals, one line each, are test_bad_input's training cases (the same settings)."""
    monkeypatch.setenv("HIERLSTM_MEMORY_BUDGET_MB", "64")
    check_limits(RunConfig(batch_size=32, time_steps=100))
    check_limits(RunConfig(variant="time_distributed", time_steps=100))  # within 200 calls


def test_the_estimate_of_a_training_run_counts_its_phases():
    config = RunConfig(batch_size=8, time_steps=30, task="training")
    plain = StepCost("folded", 1e-4, 0.05, first_call_s=0.5)
    with_phases = StepCost("folded", 1e-4, 0.05, first_call_s=0.5, round_factor=2.0)
    timing = Timing(warmup=2, repeats=10)
    difference = run_seconds(config, with_phases, timing) - run_seconds(config, plain, timing)
    one = run_seconds(config, plain, timing) - run_seconds(config, plain, timing.replace(repeats=9))
    assert difference == pytest.approx(12 * one)  # each of the 12 rounds costs one more step


def test_calibrating_a_training_step_measures_its_round():
    step_cost = calibrate(TINY)
    assert step_cost.round_factor > 1.0  # a round is the step and its phases
    assert math.isfinite(step_cost.seconds_per_step) and step_cost.first_call_s > 0

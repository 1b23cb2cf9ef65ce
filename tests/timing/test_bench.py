"""The timing harness: records that are complete and consistent, the first call kept apart,
progress, kernels, failures recorded instead of raised, paired comparisons, sweeps and the
per-layer split. Tiny configs; correctness only, never durations."""

import math

import numpy as np
import pytest
import tensorflow as tf

from hierlstm.config import RunConfig, Timing
from hierlstm.model import cost, cudnn
from hierlstm.model.builders import build_model
from hierlstm.records import PHASE_COLUMNS
from hierlstm.registry import VARIANTS
from hierlstm.timing import breakdown, calls, failures, harness, sweeps

TINY = RunConfig(variant="folded", batch_size=2, time_steps=4)
GPU_COUNT = len(tf.config.list_physical_devices("GPU"))
WARMUP, REPEATS = 2, 5


class CountingModel:
    """Wraps a model and counts its executions (not its traces) with a py_function tick."""

    def __init__(self, model):
        self.model = model
        self.executions = 0

    def _tick(self):
        self.executions += 1
        return np.int32(self.executions)

    def __call__(self, inputs, training=False):
        tick = tf.py_function(self._tick, [], tf.int32)
        with tf.control_dependencies([tick]):
            return tf.identity(self.model(inputs, training=training))


@pytest.fixture(scope="module")
def counted_run():
    """One benchmark of TINY through a counting model, with every progress call recorded."""
    calls = []
    model = CountingModel(build_model(TINY))
    result = harness.benchmark(
        TINY,
        Timing(warmup=WARMUP, repeats=REPEATS),
        model=model,
        on_progress=lambda fraction, message: calls.append((fraction, message)),
    )
    return result, model, calls


def test_result_fields_are_consistent(counted_run):
    result, _, _ = counted_run
    assert result.status == "ok" and result.error == ""
    assert result.config == TINY
    assert result.repeats == REPEATS and result.warmup == WARMUP
    assert 0 < result.step.min <= result.step.median
    assert result.step.p10 <= result.step.median <= result.step.p90
    assert result.step.iqr >= 0 and result.step.std >= 0 and result.step.mean > 0
    assert result.noisy == (result.step.iqr / result.step.median > 0.10)
    assert result.flops == cost.model_flops(TINY)
    assert result.samples_per_s == pytest.approx(2 / result.step.median)
    assert result.steps_per_s == pytest.approx(2 * 4 / result.step.median)
    assert result.gflops_per_s == pytest.approx(result.flops / result.step.median / 1e9)
    assert result.peak_memory_bytes >= 0
    expected_kind = "gpu_allocator_peak" if GPU_COUNT else "cpu_rss_growth"
    assert result.peak_memory_kind == expected_kind
    assert result.device.startswith("/GPU:0" if GPU_COUNT else "/CPU:0")
    assert set(result.versions) == {"python", "tensorflow", "keras", "numpy"}
    assert result.to_dict()["variant"] == "folded"
    # a forward pass: no phases, nothing kept for a backward pass
    assert result.phases == {} and math.isnan(result.backward_s)
    assert result.kept_activation_bytes == 0
    assert all(math.isnan(result.to_row()[column]) for column in PHASE_COLUMNS)


def test_first_call_is_kept_apart(counted_run):
    result, model, _ = counted_run
    assert result.trace_count == 1
    assert result.first_call_s > 0
    # One first call, then warm-up, then exactly `repeats` timed samples.
    assert model.executions == 1 + WARMUP + REPEATS


def test_progress_increases_to_one(counted_run):
    _, _, calls = counted_run
    fractions = [fraction for fraction, _ in calls]
    assert all(later > earlier for earlier, later in zip(fractions, fractions[1:], strict=False))
    assert fractions[0] >= 0 and fractions[-1] == 1.0
    assert sum(message.startswith("round ") for _, message in calls) == REPEATS
    assert all(isinstance(message, str) and message for _, message in calls)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_benchmarks_with_one_trace(variant):
    config = TINY.replace(variant=variant)
    result = harness.benchmark(config, Timing(warmup=1, repeats=2))
    assert result.status == "ok", result.error
    assert result.trace_count == 1
    assert result.kernel in ("cudnn", "generic")
    if result.kernel == "generic":
        assert result.kernel_reason
    if not VARIANTS[variant].has_lstm_layer:
        assert result.kernel == "generic" and "never takes the cuDNN path" in result.kernel_reason


def test_kernel_is_generic_on_cpu():
    config = TINY.replace(device="cpu")
    forward = harness.make_forward(build_model(config), config)
    kernel, reason = calls.lstm_kernel(config, forward.get_concrete_function())
    if not tf.config.list_logical_devices("GPU"):  # Keras picks cuDNN whenever a GPU is visible
        assert (kernel, reason) == ("generic", "no GPU visible to TensorFlow: cuDNN needs a GPU")
    generic = config.replace(lstm_kernel="generic")
    forward = harness.make_forward(build_model(generic), generic)
    kernel, reason = calls.lstm_kernel(generic, forward.get_concrete_function())
    assert kernel == "generic" and "use_cudnn=False" in reason


def test_graph_op_types_reach_into_while_bodies():
    forward = harness.make_forward(build_model(TINY.replace(lstm_kernel="generic")), TINY)
    concrete = forward.get_concrete_function()
    top_level = {node.op for node in concrete.graph.as_graph_def().node}
    op_types = cudnn.graph_op_types(concrete)
    assert {"Conv2D", "MaxPool"} <= op_types
    # Reading one step of the sequence happens only inside the LSTM's while-loop body.
    assert "TensorListGetItem" in op_types and "TensorListGetItem" not in top_level


def test_forward_takes_any_time_length():
    forward = harness.make_forward(build_model(TINY), TINY)
    for time_steps in (3, 7):
        outputs = forward(tf.zeros((2, TINY.height, time_steps, 1)))
        assert tuple(outputs.shape) == (2, time_steps, TINY.outer_units)
    assert forward.experimental_get_tracing_count() == 1


def test_a_failed_result_has_its_one_line_and_no_times():
    error = tf.errors.ResourceExhaustedError(None, None, "OOM when allocating\nstack trace")
    result = failures.failed_result(TINY, error)
    assert result.status == "failed" and result.error == failures.error_line(error)  # the table
    assert math.isnan(result.step.median) and math.isnan(result.first_call_s)
    assert result.repeats == 0 and result.flops == cost.model_flops(TINY)


def test_benchmark_returns_failure_instead_of_raising(monkeypatch):
    def out_of_memory(config, params=None):
        raise tf.errors.ResourceExhaustedError(None, None, "OOM")

    monkeypatch.setattr(harness, "build_model", out_of_memory)
    calls = []
    result = harness.benchmark(TINY, on_progress=lambda fraction, message: calls.append(fraction))
    assert result.status == "failed" and result.error.startswith("out of memory")
    assert calls[-1] == 1.0


def test_missing_gpu_is_a_failed_run():
    result = harness.benchmark(TINY.replace(device=f"gpu:{GPU_COUNT}"), Timing(repeats=1))
    assert result.status == "failed" and "not available" in result.error


def test_sweep_records_a_failing_point_and_goes_on(monkeypatch):
    real_build = harness.build_model

    def failing_at_five(config, params=None):
        if config.time_steps == 5:
            raise tf.errors.ResourceExhaustedError(None, None, "OOM")
        return real_build(config, params)

    monkeypatch.setattr(harness, "build_model", failing_at_five)
    points, fractions = [], []
    frame = sweeps.sweep(
        TINY,
        "time_steps",
        [3, 5, 0, 6],
        Timing(warmup=1, repeats=2),
        on_point=points.append,
        on_progress=lambda fraction, message: fractions.append(fraction),
    )
    assert list(frame["value"]) == [3, 5, 0, 6]
    assert list(frame["status"]) == ["ok", "failed", "failed", "ok"]
    assert frame["error"][1] == "out of memory (try a smaller batch_size or time_steps): OOM"
    assert "time_steps must be between" in frame["error"][2]
    assert frame["median_s"][0] > 0 and math.isnan(frame["median_s"][1])
    assert list(frame.columns[:5]) == ["variant", "axis", "value", "status", "error"]
    assert {"median_s", "p90_s", "steps_per_s", "flops", "trace_count"} <= set(frame.columns)
    # Every point with a config reaches on_point; the rejected value has none to record.
    assert [point.config.time_steps for point in points] == [3, 5, 6]
    assert fractions[-1] == 1.0
    assert all(later > earlier for earlier, later in zip(fractions, fractions[1:], strict=False))


def test_sweep_rejects_an_unknown_axis():
    with pytest.raises(ValueError, match="axis must be one of time_steps, batch_size"):
        sweeps.sweep(TINY, "height", [36])


def test_compare_pairs_rounds_against_the_baseline():
    configs = [
        TINY.replace(variant="shared_cell"),
        TINY,
        TINY.replace(device=f"gpu:{GPU_COUNT}"),  # fails; the others go on
    ]
    fractions = []
    compared = harness.compare(
        configs,
        Timing(warmup=1, repeats=3),
        baseline=1,
        on_progress=lambda fraction, message: fractions.append(fraction),
    )
    assert [result.config for result in compared.results] == configs
    assert [result.status for result in compared.results] == ["ok", "ok", "failed"]
    first, base, failed = (entry.speedup for entry in compared.entries)
    assert base.median == base.p10 == base.p90 == 1.0
    assert first.p10 <= first.median <= first.p90
    assert math.isnan(failed.median)
    assert compared.results[0].repeats == 3 and compared.results[0].trace_count == 1
    frame = compared.to_frame()
    assert list(frame["variant"]) == ["shared_cell", "folded", "folded"]
    assert list(frame["is_baseline"]) == [False, True, False]
    assert frame["speedup_vs_baseline"][1] == 1.0
    assert fractions[-1] == 1.0
    assert all(later > earlier for earlier, later in zip(fractions, fractions[1:], strict=False))


def test_layer_breakdown_times_every_top_level_layer():
    frame = breakdown.layer_breakdown(TINY, Timing(warmup=1, repeats=3))
    # unfold takes two inputs: [summaries, permuted]
    layers = ["conv", "pool", "permute", "fold", "inner_lstm", "unfold", "outer_lstm"]
    assert list(frame["layer"]) == layers
    assert list(frame.columns) == ["layer", "type", "median_s", "p10_s", "p90_s", "share"]
    assert frame["type"][0] == "Conv2D" and frame["type"][6] == "LSTM"
    assert (frame["p10_s"] <= frame["median_s"]).all()
    assert (frame["median_s"] <= frame["p90_s"]).all()
    assert frame["share"].sum() == pytest.approx(1.0)
    assert frame.attrs["sum_median_s"] == pytest.approx(frame["median_s"].sum())
    assert frame.attrs["model_median_s"] > 0 and frame.attrs["call_overhead_s"] > 0


def test_layer_breakdown_of_the_static_time_variant():
    frame = breakdown.layer_breakdown(
        TINY.replace(variant="time_distributed"), Timing(warmup=1, repeats=2)
    )
    assert list(frame["layer"]) == ["conv", "pool", "permute", "summarise", "outer_lstm"]
    assert frame["type"][3] == "TimeDistributed"


def test_an_op_xla_cannot_compile_gives_a_failed_result_naming_it():
    config = RunConfig(variant="vectorized_map", batch_size=2, time_steps=3, xla=True)
    result = harness.benchmark(config, Timing(warmup=0, repeats=1))
    assert result.status == "failed"
    assert result.error.startswith("not supported here: no kernel for the If op at ")
    assert "run without XLA" in result.error and "\n" not in result.error


def test_layer_breakdown_of_a_single_layer_model():
    frame = breakdown.layer_breakdown(
        RunConfig(variant="fused", batch_size=2, time_steps=3), Timing(repeats=2)
    )
    assert list(frame["layer"]) == ["fused_lstm"]
    assert frame["median_s"].gt(0).all()


@pytest.mark.parametrize(
    "error, start",
    [
        (
            tf.errors.ResourceExhaustedError(None, None, "OOM when allocating tensor\nmore"),
            "out of memory (try a smaller batch_size or time_steps): OOM when allocating tensor",
        ),
        (
            tf.errors.NotFoundError(
                None,
                None,
                "Could not find device for node: {{node MatMul}} = MatMul[T=DT_BFLOAT16]\nAll "
                "kernels registered for op MatMul: ...",
            ),
            "this device cannot run an op at this precision (use float32): Could not find",
        ),
        (
            tf.errors.InvalidArgumentError(None, None, "No OpKernel was registered for half"),
            "this device cannot run an op at this precision (use float32)",
        ),
        (
            tf.errors.InternalError(None, None, "CudnnRNN failed\nstack"),
            "cuDNN's LSTM kernel failed on this GPU (use lstm_kernel generic)",
        ),
        (ValueError("batch_size 5 does not split evenly"), "invalid setting: batch_size 5"),
        (RuntimeError("boom"), "unexpected RuntimeError: boom"),
    ],
)
def test_a_failure_is_one_line_with_a_hint(error, start):
    line = failures.error_line(error)
    assert line.startswith(start) and "\n" not in line and len(line) <= 300

"""A timed run's samples made into its `BenchResult` record, the same way on every Keras backend,
and a failed run's record (`failed_record`). No TensorFlow."""

from __future__ import annotations

import math

from hierlstm.config import RunConfig
from hierlstm.model import cost
from hierlstm.records import BenchResult, Stats

NOISY_IQR_RATIO = 0.10  # iqr / median above this flags a run as noisy


def make_result(
    config: RunConfig,
    samples,
    *,
    warmup: int,
    first_call_s: float,
    peak_bytes: int,
    peak_kind: str,
    kernel: str,
    kernel_reason: str,
    trace_count: int,
    device: str,
    versions: dict[str, str],
    phases=None,
) -> BenchResult:
    """The record of a run: `samples` are the step's (the forward pass's, for inference) times
    in seconds, `phases` a training run's {phase: samples}; the rest is stored as given."""
    step = Stats.of(samples)
    median = step.median
    training = config.task == "training"
    flops = cost.training_flops(config) if training else cost.model_flops(config)
    return BenchResult(
        config=config,
        first_call_s=first_call_s,
        step=step,
        repeats=len(step.samples),
        warmup=warmup,
        noisy=step.iqr / median > NOISY_IQR_RATIO,
        samples_per_s=config.batch_size / median,
        steps_per_s=config.batch_size * config.time_steps / median,
        flops=flops,
        gflops_per_s=flops / median / 1e9,
        peak_memory_bytes=int(peak_bytes),
        peak_memory_kind=peak_kind,
        kernel=kernel,
        kernel_reason=kernel_reason,
        trace_count=int(trace_count),
        device=device,
        versions=dict(versions),
        kept_activation_bytes=cost.kept_activation_bytes(config) if training else 0,
        phases={name: Stats.of(values) for name, values in (phases or {}).items()},
    )


def run_result(run, samples, warmup: int, peak_bytes: int, peak_kind: str, phases=None):
    """`make_result` of a prepared run, TensorFlow's (`PreparedRun`) or another backend's
    (`hierlstm.backends.local.BackendRun`): both carry config, first_call_s, kernel,
    kernel_reason, trace_count, description and versions."""
    return make_result(
        run.config,
        samples,
        warmup=warmup,
        first_call_s=run.first_call_s,
        peak_bytes=peak_bytes,
        peak_kind=peak_kind,
        kernel=run.kernel,
        kernel_reason=run.kernel_reason,
        trace_count=run.trace_count,
        device=run.description,
        versions=run.versions,
        phases=phases,
    )


def failed_record(config: RunConfig, error: str, *, device: str, versions: dict) -> BenchResult:
    """The record of a run that failed, on any backend: status "failed", the one-line `error`,
    NaN times, the analytic FLOPs and (for a training step) the activations it would keep."""
    training = config.task == "training"
    return BenchResult(
        config=config,
        **dict.fromkeys(_TIMES, math.nan),
        step=Stats(),
        repeats=0,
        warmup=0,
        noisy=False,
        flops=cost.training_flops(config) if training else cost.model_flops(config),
        peak_memory_bytes=0,
        peak_memory_kind="",
        kernel="",
        kernel_reason="",
        trace_count=0,
        device=device,
        versions=versions,
        kept_activation_bytes=cost.kept_activation_bytes(config) if training else 0,
        status="failed",
        error=error,
    )


_TIMES = ("first_call_s", "samples_per_s", "steps_per_s", "gflops_per_s")  # NaN if failed

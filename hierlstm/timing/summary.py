"""A timed run's samples made into its `BenchResult` record, the same way on every Keras backend
(TensorFlow's harness, and `hierlstm.backends.local` on JAX and PyTorch): median, spread, the
noisy flag, throughput, the analytic FLOPs and the training phases; and a failed run's record
(`failed_record`). Imports no TensorFlow."""

from __future__ import annotations

import json
import math

import numpy as np

from hierlstm.config import RunConfig
from hierlstm.model import cost
from hierlstm.records import BenchResult

NOISY_IQR_RATIO = 0.10  # iqr / median above this flags a run as noisy
PHASES = ("forward", "forward_backward", "update")  # BenchResult's <phase>_median_s, ...


def phase_fields(phase_samples: dict[str, list[float]]) -> dict[str, float]:
    """BenchResult's phase fields from each phase's samples: <phase>_median_s, _p10_s, _p90_s
    and phase_sum_s (forward_backward + update medians); {} for an inference run."""
    if not phase_samples:
        return {}
    fields = {}
    for name in PHASES:
        samples = np.asarray(phase_samples[name], dtype=np.float64)
        p10, median, p90 = (float(value) for value in np.percentile(samples, [10, 50, 90]))
        fields.update({f"{name}_median_s": median, f"{name}_p10_s": p10, f"{name}_p90_s": p90})
    fields["phase_sum_s"] = fields["forward_backward_median_s"] + fields["update_median_s"]
    return fields


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
    samples = np.asarray(samples, dtype=np.float64)
    median = float(np.median(samples))
    p10, p25, p75, p90 = (float(value) for value in np.percentile(samples, [10, 25, 75, 90]))
    training = config.task == "training"
    flops = cost.training_flops(config) if training else cost.model_flops(config)
    return BenchResult(
        config=config,
        first_call_s=first_call_s,
        median_s=median,
        p10_s=p10,
        p90_s=p90,
        iqr_s=p75 - p25,
        mean_s=float(np.mean(samples)),
        std_s=float(np.std(samples, ddof=1)) if len(samples) > 1 else 0.0,
        min_s=float(np.min(samples)),
        repeats=len(samples),
        warmup=warmup,
        noisy=(p75 - p25) / median > NOISY_IQR_RATIO,
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
        samples_json=json.dumps(samples.tolist()),  # stored, so two runs compare by samples
        **phase_fields(phases or {}),
    )


def failed_record(config: RunConfig, error: str, *, device: str, versions: dict) -> BenchResult:
    """The record of a run that failed, on any backend: status "failed", the one-line `error`,
    NaN times, the analytic FLOPs and (for a training step) the activations it would keep."""
    nan = math.nan
    training = config.task == "training"
    return BenchResult(
        config=config,
        first_call_s=nan,
        median_s=nan,
        p10_s=nan,
        p90_s=nan,
        iqr_s=nan,
        mean_s=nan,
        std_s=nan,
        min_s=nan,
        repeats=0,
        warmup=0,
        noisy=False,
        samples_per_s=nan,
        steps_per_s=nan,
        flops=cost.training_flops(config) if training else cost.model_flops(config),
        gflops_per_s=nan,
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


def paired_speedups(times: np.ndarray, baseline: int, failures) -> tuple[list, list, list]:
    """Median, p10 and p90 over rounds of baseline / config time, paired within each round
    (the speed-up of a compare, on every backend); NaN where either failed."""
    medians, lows, highs = [], [], []
    for index in range(times.shape[1]):
        if index in failures or baseline in failures:
            median = low = high = math.nan
        else:
            ratios = times[:, baseline] / times[:, index]
            median = float(np.median(ratios))
            low, high = (float(value) for value in np.percentile(ratios, [10, 90]))
        medians.append(median)
        lows.append(low)
        highs.append(high)
    return medians, lows, highs

"""How long a run will take, before it runs: the cost model times this machine's measured cost.

A forward pass costs about `a * chain + b * flops`: `chain` the longest run of dependent LSTM steps
(`VARIANTS[name].chain`), which no hardware overlaps, `flops` the cost model's. `calibrate` measures
`a` and `b` from two small timed runs that share a chain and differ 64x in batch; `run_seconds`
predicts the first call plus every warm-up and timed call. A training step fits the same model; its
rounds also time the phases (`round_factor`), whose first calls add `PHASE_TRACE_FACTOR` - 1 of the
step's. An estimate, shown as one."""

from __future__ import annotations

import dataclasses

from hierlstm.config import RunConfig, Timing
from hierlstm.model import cost
from hierlstm.registry import VARIANTS

CALIBRATION_TIME = 8  # time steps of both calibration runs
CALIBRATION_BATCHES = (1, 64)  # one dominated by the chain, one with 64x the FLOPs
CALIBRATION_TIMING = Timing(warmup=1, repeats=5)
# A training run's set-up as a multiple of the step's first call: the phases' traces add only the
# forward pass's (measured with time_distributed, where tracing dominates).
PHASE_TRACE_FACTOR = 1.6


class CalibrationFailed(RuntimeError):
    """A variant and setting whose cost could not be measured here: its calibration run failed
    (an op this device cannot run, XLA that cannot compile it, out of memory). There is then
    no estimate, which a caller must say rather than count as 0 s."""

    def __init__(self, variant: str, error: str):
        super().__init__(f"could not measure {variant} on this machine: {error}")
        self.variant = variant
        self.error = error


@dataclasses.dataclass(frozen=True)
class StepCost:
    """This machine's measured cost of one variant at one setting."""

    variant: str
    seconds_per_step: float  # one dependent LSTM step of the chain
    seconds_per_gflop: float  # arithmetic beyond the chain
    first_call_s: float  # tracing, compiling and the first execution at CALIBRATION_TIME
    round_factor: float = 1.0  # a timed round / one call: (step + phases) / step for training


def calibration_key(config: RunConfig) -> RunConfig:
    """The settings a calibration depends on: batch, time and distribution normalised away (a
    mirrored run is estimated from one replica's device, a slight overestimate)."""
    return config.replace(
        batch_size=CALIBRATION_BATCHES[0],
        time_steps=CALIBRATION_TIME,
        strategy="none",
        devices="",
    )


def calibrate(config: RunConfig, progress=None) -> StepCost:
    """Times `config`'s variant at (1, 8) and (64, 8) on one model; one to a few seconds.
    (`progress` is a run's: this one says nothing until it is done.)"""
    import tensorflow as tf

    from hierlstm.hardware import resolve_device
    from hierlstm.model.builders import build_model
    from hierlstm.model.params import init_params
    from hierlstm.timing import benchmark

    small_config = calibration_key(config)
    large_config = small_config.replace(batch_size=CALIBRATION_BATCHES[1])
    with tf.device(resolve_device(small_config.device)):  # the weights where the run will be
        model = build_model(small_config, init_params(small_config))
    small, large = (
        benchmark(run, CALIBRATION_TIMING, model=model) for run in (small_config, large_config)
    )
    for result in (small, large):
        if result.status != "ok":
            raise CalibrationFailed(config.variant, result.error)
    extra_flops = cost.model_flops(large_config) - cost.model_flops(small_config)
    per_flop = max(0.0, (large.step.median - small.step.median) / extra_flops)
    chain = cost.dependent_steps(small_config)
    per_step = max(0.0, small.step.median - per_flop * cost.model_flops(small_config)) / chain
    round_factor = 1.0
    if config.task == "training":
        round_factor = (
            large.step.median + large.phase_sum_s + large.phase("forward").median
        ) / large.step.median
    return StepCost(config.variant, per_step, per_flop * 1e9, small.first_call_s, round_factor)


def pass_seconds(config: RunConfig, step_cost: StepCost) -> float:
    """One forward pass of `config`, estimated."""
    flops = cost.model_flops(config)
    return cost.dependent_steps(config) * step_cost.seconds_per_step + (
        flops / 1e9 * step_cost.seconds_per_gflop
    )


def first_call_seconds(config: RunConfig, step_cost: StepCost) -> float:
    """Tracing grows with time only for a static-time variant (one traced call per step); a
    training run's set-up also traces and first-calls its phases."""
    first = step_cost.first_call_s
    if VARIANTS[config.variant].static_time:
        first *= max(1.0, config.time_steps / CALIBRATION_TIME)
    if config.task == "training":
        first *= PHASE_TRACE_FACTOR
    return first + pass_seconds(config, step_cost)


def run_seconds(config: RunConfig, step_cost: StepCost, timing: Timing) -> float:
    """A `hierlstm.timing.harness.benchmark` of `config`: first call, warm-up and timed rounds
    (a training round is the step and its phases: `round_factor` steps)."""
    rounds = timing.calls * pass_seconds(config, step_cost) * step_cost.round_factor
    return first_call_seconds(config, step_cost) + rounds


def seconds_left(fraction: float, elapsed: float, estimate: float = 0.0) -> float | None:
    """What is left of a run `fraction` done after `elapsed` seconds: from its own pace once a tenth
    is done, before that the estimate less the time spent; None when neither is known."""
    if fraction >= 0.1:
        return elapsed * (1.0 - min(fraction, 1.0)) / fraction
    if estimate > 0:
        return max(0.0, estimate - elapsed)
    return None

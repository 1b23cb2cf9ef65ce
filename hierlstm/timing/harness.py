"""The timing harness: one config timed honestly, or several compared in interleaved rounds. The
model and input are made once on the config's device; the first call (tracing, compilation, first
execution) is timed apart; warm-up calls are untimed; each sample is one call ended by the device
sync (`timed_call`). Training and tf.distribute runs are timed likewise."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Sequence

import tensorflow as tf

from hierlstm.config import DEFAULT_TIMING, RunConfig, Timing
from hierlstm.distributed import cluster, distribute
from hierlstm.hardware import resolve_device
from hierlstm.model.builders import build_model
from hierlstm.model.params import init_params
from hierlstm.records import BenchResult, CompareResult
from hierlstm.registry import VARIANTS
from hierlstm.timing.calls import (  # re-exported: the harness's vocabulary
    PreparedRun,
    Progress,
    lstm_kernel,
    make_inputs,
    no_progress,
    timed_call,
)
from hierlstm.timing.failures import RUN_FAILURES, failed_result
from hierlstm.timing.memory import memory_probe
from hierlstm.timing.rounds import Sample, Track, comparison, interleave, tracks_for
from hierlstm.timing.rss import peak_over_calls
from hierlstm.timing.summary import run_result
from hierlstm.timing.training import prepare_training

# --- the forward function and what ran inside it --------------------------------------------


def make_forward(model, config: RunConfig):
    """`model` as one `tf.function`: (batch, height, time, 1) float32 -> (batch, time, outer). Batch
    and time (unless the variant is `static_time`) are symbolic, so one trace serves every size."""
    time_steps = config.time_steps if VARIANTS[config.variant].static_time else None
    signature = [tf.TensorSpec((None, config.height, time_steps, 1), tf.float32)]

    def forward(inputs):  # (B, H, T, 1) -> (B, T, outer_units)
        return model(inputs, training=False)

    return tf.function(forward, jit_compile=config.xla, input_signature=signature)


@dataclasses.dataclass
class DistributedRun(PreparedRun):
    """A run under a strategy: `forward` is `ReplicatedForward.step`, `inputs` per replica."""

    sync: Callable[[], None] = tf.test.experimental.sync_devices

    def call(self) -> float:
        # The step ends in a cross-replica reduce, so it returns once every replica (on every
        # worker) has finished; the sync then waits for this worker's devices, as in
        # `timed_call`.
        start = time.perf_counter()
        self.forward(self.inputs)
        self.sync()
        return time.perf_counter() - start


def prepare(config: RunConfig, *, seed: int, model=None, progress: Progress) -> PreparedRun:
    """Builds (unless `model` is given), makes the input and runs the timed first call. A
    training run builds its own model, from `model`'s parameters when one is given
    (`hierlstm.timing.training`), so `model` is never trained."""
    if config.task == "training":
        return prepare_training(config, seed=seed, model=model, progress=progress)
    if config.strategy != "none":
        return prepare_distributed(config, seed=seed, model=model, progress=progress)
    device = resolve_device(config.device)
    progress(0.0, f"building {config.variant} on {device}")
    with tf.device(device):
        model = build_model(config, init_params(config, seed)) if model is None else model
        forward = make_forward(model, config)
        inputs = tf.identity(tf.convert_to_tensor(make_inputs(config, seed)))
        progress(0.3, "tracing, compiling and running the first call")
        # Tracing through get_concrete_function inside the first call's interval times the
        # same work as tracing on the call, but TensorFlow does not count it towards its
        # "excessive retracing" warning, which many short runs (a sweep) would set off.
        start = time.perf_counter()
        forward.get_concrete_function()
        first_call_s = time.perf_counter() - start + timed_call(forward, inputs)
    kernel, reason = lstm_kernel(config, forward.get_concrete_function())
    progress(1.0, f"first call {first_call_s:.3g} s ({kernel} LSTM kernel)")
    return PreparedRun(config, device, forward, inputs, first_call_s, kernel, reason)


def prepare_distributed(config: RunConfig, *, seed: int, model=None, progress: Progress):
    """`prepare` under `config.strategy`; `model`, if given, must be built in its scope."""
    plan = distribute.plan(config)  # ValueError: odd batch, missing device, no cluster
    progress(0.0, f"building {config.variant}: {plan.label}")
    with plan.strategy.scope():
        model = build_model(config, init_params(config, seed)) if model is None else model
    replicated = distribute.ReplicatedForward(plan.strategy, model, xla=config.xla)
    # The same global input as a single-device run, split: replica i gets rows i*b..(i+1)*b.
    inputs = distribute.distribute_inputs(
        plan.strategy, make_inputs(config, seed), plan.per_replica_batch
    )
    sync = distribute.synchroniser(plan.devices)
    progress(0.3, f"tracing and running the first call on {plan.replicas} replicas")
    start = time.perf_counter()
    concrete = replicated.step.get_concrete_function(inputs)
    replicated.step(inputs)
    sync()
    first_call_s = time.perf_counter() - start
    # Untimed, once; traced via get_concrete_function so that many short runs do not set
    # off TensorFlow's "excessive retracing" warning (see `prepare`).
    checksum = distribute.output_checksum(replicated.gather.get_concrete_function(inputs)(inputs))
    kernel, reason = lstm_kernel(config, concrete)
    progress(1.0, f"first call {first_call_s:.3g} s ({kernel} LSTM kernel)")
    details = {
        "strategy": config.strategy,
        "replicas": plan.replicas,
        "per_replica_batch": plan.per_replica_batch,
        "workers": plan.workers,
        "output_checksum": checksum,
        "replica_devices": plan.devices,
    }
    return DistributedRun(
        config,
        cluster.short_name(plan.devices[0]),  # the memory probe's device
        replicated.step,
        inputs,
        first_call_s,
        kernel,
        reason,
        label=plan.label,
        details=details,
        sync=sync,
    )


def _record(track: Track, warmup: int) -> BenchResult:
    return run_result(
        track.run, track.steps, warmup, track.peak_bytes, track.peak_kind, track.phases()
    )


def _sample(run: PreparedRun) -> Sample:
    """One timed round of `run`, with its device's memory peak during it."""
    with memory_probe(run.device) as probe:
        (times,), peak = peak_over_calls(run.sample, 1, probe)
    return Sample(times, peak, probe.kind)


def _interleave(tracks: list[Track], timing: Timing, progress: Progress, model=None) -> None:
    """`hierlstm.timing.rounds.interleave` in this process: a run's failure is its record."""
    interleave(
        tracks,
        functools.partial(prepare, seed=timing.seed, model=model),
        _sample,
        warmup=timing.warmup,
        repeats=timing.repeats,
        failures=RUN_FAILURES,
        fail=lambda track, error: track.drop(failed_result(track.config, error)),
        progress=progress,
    )


# --- public entry points ------------------------------------------------------------------


def benchmark(
    config: RunConfig,
    timing: Timing = DEFAULT_TIMING,
    *,
    on_progress: Progress | None = None,
    model=None,
) -> BenchResult:
    """Times one config, input (batch_size, height, time_steps, 1) float32. A run that fails (out of
    memory, an op error, an invalid setting) returns a "failed" record instead of raising."""
    progress = on_progress or no_progress
    track = Track(config)
    _interleave([track], timing, progress, model)
    if track.failure is not None:
        progress(1.0, f"failed: {track.failure.error}")
        return track.failure
    result = _record(track, timing.warmup)
    progress(1.0, f"done: median {result.step.median * 1e3:.3g} ms")
    return result


def compare(
    configs: Sequence[RunConfig],
    timing: Timing = DEFAULT_TIMING,
    *,
    baseline: int = 0,
    on_progress: Progress | None = None,
) -> CompareResult:
    """Times `configs` in `timing.repeats` interleaved rounds (A B C, A B C, ...). A config that
    fails gets a "failed" record and NaN speed-ups; the others go on."""
    progress = on_progress or no_progress
    tracks = tracks_for(configs, baseline)
    _interleave(tracks, timing, progress)
    results = [track.failure or _record(track, timing.warmup) for track in tracks]
    progress(1.0, "done")
    return comparison(tracks, results, baseline)

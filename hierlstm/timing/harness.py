"""The timing harness: one config timed honestly, or several compared in interleaved rounds.

Every measurement here is taken the same way:
- the model is built and its input made once, on the config's device;
- the first call (tracing, XLA compilation when asked, first execution) is timed on its own
  and never mixed into the steady-state samples;
- warm-up calls run untimed;
- each timed sample is `forward(inputs)` followed by `tf.test.experimental.sync_devices()`,
  both inside one `time.perf_counter` interval (see `timed_call` for why that method).
A training run (`RunConfig.task` "training", see `hierlstm.timing.training`) times the whole
step the same way, and its phases (forward, forward + backward, update) each as its own compiled
function in the same rounds; its first call traces the gradient graph too.
Under a tf.distribute strategy (`RunConfig.strategy`, see `hierlstm.distributed.distribute`) the
same holds: the model is built in the strategy's scope, the global input is made once and
split over the replicas, and each sample is one `strategy.run` of the forward pass inside a
`tf.function`, ending in a cross-replica reduce, then the device sync.
Progress flows through an `on_progress(fraction, message)` callback; nothing here prints or
imports Streamlit. Results are `BenchResult` records (`hierlstm.records`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections import defaultdict
from collections.abc import Callable, Sequence

import numpy as np
import tensorflow as tf

from hierlstm.config import DEFAULT_TIMING, RunConfig, Timing
from hierlstm.distributed import cluster, distribute
from hierlstm.hardware import device_string, resolve_device, versions
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
    scaled_progress,
    timed_call,
)
from hierlstm.timing.failures import RUN_FAILURES, failed_result
from hierlstm.timing.memory import memory_probe
from hierlstm.timing.summary import NOISY_IQR_RATIO, make_result, paired_speedups  # noqa: F401 (re-exported)
from hierlstm.timing.training import prepare_training

# --- the forward function and what ran inside it --------------------------------------------


def make_forward(model, config: RunConfig):
    """`model` as one `tf.function`: (batch, height, time, 1) float32 -> (batch, time, outer).

    Batch is always symbolic and so is time, unless the variant is built for one length
    (`static_time`), so one trace serves every batch size and every time length.
    """
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


def _result(
    run: PreparedRun, samples, warmup: int, peak_bytes: int, peak_kind: str, phases=None
) -> BenchResult:
    """The record of a run (`hierlstm.timing.summary.make_result`): `samples` are the step's
    (the forward pass's, for inference) times, `phases` a training run's {phase: samples}."""
    return make_result(
        run.config,
        samples,
        warmup=warmup,
        first_call_s=run.first_call_s,
        peak_bytes=peak_bytes,
        peak_kind=peak_kind,
        kernel=run.kernel,
        kernel_reason=run.kernel_reason,
        trace_count=run.forward.experimental_get_tracing_count(),
        device=run.label or device_string(run.device),
        versions=versions(),
        phases=phases,
    )


# --- public entry points ------------------------------------------------------------------


def benchmark(
    config: RunConfig,
    timing: Timing = DEFAULT_TIMING,
    *,
    on_progress: Progress | None = None,
    model=None,
) -> BenchResult:
    """Times one config: first call apart, `timing.warmup` untimed calls, `timing.repeats`
    timed calls.

    Input (batch_size, height, time_steps, 1) float32. A run that fails (out of memory, an op
    error, an invalid setting) returns a "failed" record instead of raising.
    """
    progress = on_progress or no_progress
    warmup, repeats = timing.warmup, timing.repeats
    try:
        run = prepare(
            config, seed=timing.seed, model=model, progress=scaled_progress(progress, 0.0, 0.15)
        )
        for index in range(warmup):
            run.sample()
            progress(0.15 + 0.1 * (index + 1) / warmup, f"warm-up {index + 1}/{warmup}")
        samples, phases, peak = [], defaultdict(list), 0
        with memory_probe(run.device) as probe:
            for index in range(repeats):
                probe.reset()
                sample = run.sample()
                peak = max(peak, probe.peak_bytes())
                samples.append(sample.pop("step"))
                for name, seconds in sample.items():
                    phases[name].append(seconds)
                progress(
                    0.25 + 0.7 * (index + 1) / repeats,
                    f"repeat {index + 1}/{repeats}: {samples[-1] * 1e3:.3g} ms",
                )
    except RUN_FAILURES as error:
        result = failed_result(config, error)
        progress(1.0, f"failed: {result.error}")
        return result
    result = _result(run, samples, warmup, peak, probe.kind, phases)
    progress(1.0, f"done: median {result.median_s * 1e3:.3g} ms")
    return result


def compare(
    configs: Sequence[RunConfig],
    timing: Timing = DEFAULT_TIMING,
    *,
    baseline: int = 0,
    on_progress: Progress | None = None,
) -> CompareResult:
    """Times `configs` in `timing.repeats` interleaved rounds (A B C, A B C, ...).

    Each config is built and first-called, then all are warmed up, then every round times each
    config once. A config that fails gets a "failed" record and NaN speed-ups; the others go on.
    """
    warmup, repeats = timing.warmup, timing.repeats
    configs = list(configs)
    if not configs:
        raise ValueError("compare needs at least one config; got none.")
    if not 0 <= baseline < len(configs):
        raise ValueError(f"baseline must be an index from 0 to {len(configs) - 1}; got {baseline}.")
    progress = on_progress or no_progress
    count = len(configs)
    runs: list[PreparedRun | None] = [None] * count
    failures: dict[int, BenchResult] = {}
    for index, config in enumerate(configs):
        start, end = 0.3 * (index + 0.01) / count, 0.3 * (index + 1) / count
        span = scaled_progress(progress, start, end, f"{config.variant} ({index}): ")
        try:
            runs[index] = prepare(config, seed=timing.seed, progress=span)
        except RUN_FAILURES as error:
            failures[index] = failed_result(config, error)
            span(1.0, f"failed: {failures[index].error}")

    def fail(index, error):
        failures[index] = failed_result(configs[index], error)
        runs[index] = None

    for round_index in range(warmup):
        for index, run in enumerate(runs):
            if run is not None:
                try:
                    run.sample()
                except RUN_FAILURES as error:
                    fail(index, error)
        progress(0.3 + 0.1 * (round_index + 1) / warmup, f"warm-up round {round_index + 1}")

    times = np.full((repeats, count), math.nan)
    phases = [defaultdict(list) for _ in range(count)]
    peaks, kinds = [0] * count, [""] * count
    with contextlib.ExitStack() as stack:
        devices = {run.device for run in runs if run is not None}
        probes = {device: stack.enter_context(memory_probe(device)) for device in devices}
        for round_index in range(repeats):
            for index, run in enumerate(runs):
                if run is None:
                    continue
                probe = probes[run.device]
                try:
                    probe.reset()
                    sample = run.sample()
                    peaks[index] = max(peaks[index], probe.peak_bytes())
                    times[round_index, index] = sample.pop("step")
                    for name, seconds in sample.items():
                        phases[index][name].append(seconds)
                    kinds[index] = probe.kind
                except RUN_FAILURES as error:
                    fail(index, error)
            progress(
                0.4 + 0.59 * (round_index + 1) / repeats,
                f"round {round_index + 1}/{repeats}",
            )

    results = [
        failures[index]
        if index in failures
        else _result(
            runs[index], times[:, index], warmup, peaks[index], kinds[index], phases[index]
        )
        for index in range(count)
    ]
    speedups, p10s, p90s = paired_speedups(times, baseline, failures)
    progress(1.0, "done")
    details = [{} if run is None else dict(run.details) for run in runs]
    return CompareResult(results, speedups, p10s, p90s, baseline, details)

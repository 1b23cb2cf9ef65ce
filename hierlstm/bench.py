"""The timing harness: one config timed honestly, several compared, sweeps, a per-layer split.

Every measurement here is taken the same way:
- the model is built and its input made once, on the config's device;
- the first call (tracing, XLA compilation when asked, first execution) is timed on its own
  and never mixed into the steady-state samples;
- warm-up calls run untimed;
- each timed sample is `forward(inputs)` followed by `tf.test.experimental.sync_devices()`,
  both inside one `time.perf_counter` interval (see `_timed_call` for why that method).
Under a tf.distribute strategy (`RunConfig.strategy`, see `hierlstm.distribute`) the same
holds: the model is built in the strategy's scope, the global input is made once and split
over the replicas, and each sample is one `strategy.run` of the forward pass inside a
`tf.function`, ending in a cross-replica reduce, then the device sync. `scaling` adds the
scaling efficiency against one replica timed in the same rounds; `replica_sweep` varies the
number of replicas.
Progress flows through an `on_progress(fraction, message)` callback; nothing here prints or
imports Streamlit. Results are `BenchResult` records and pandas DataFrames.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence

import keras
import numpy as np
import pandas as pd
import tensorflow as tf

from hierlstm import cost, distribute
from hierlstm.config import RunConfig
from hierlstm.devices import device_string, resolve_device, versions
from hierlstm.params import init_params
from hierlstm.records import BenchResult
from hierlstm.variants import VARIANTS, build_model

Progress = Callable[[float, str], None]

SWEEP_AXES = ("time_steps", "batch_size")
NOISY_IQR_RATIO = 0.10  # iqr / median above this flags a run as noisy
_FAILURES = (tf.errors.OpError, ValueError, MemoryError)  # a run failing, not a bug in here
_MAX_ERROR_CHARS = 300
# BenchResult's numeric fields, read from the record so a new field reaches the sweep table.
_NUMERIC_FIELDS = tuple(
    field.name
    for field in dataclasses.fields(BenchResult)
    if field.type in ("float", "int", "bool")
)


def _no_progress(fraction: float, message: str) -> None:
    pass


def _scaled(progress: Progress, start: float, end: float, prefix: str = "") -> Progress:
    """A callback mapping 0..1 onto start..end of `progress`."""
    return lambda fraction, message: progress(
        start + (end - start) * fraction, f"{prefix}{message}"
    )


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


def graph_op_types(concrete_function) -> set[str]:
    """Every op type in a traced function, including nested functions and while-loop bodies
    (they live in the graph's function library, not in its top-level nodes)."""
    graph_def = concrete_function.graph.as_graph_def()
    op_types = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        op_types.update(node.op for node in function.node_def)
    return op_types


def lstm_kernel(config: RunConfig, concrete_function) -> tuple[str, str]:
    """("cudnn", "") when the traced graph holds a CudnnRNN op, else ("generic", why)."""
    if any(op.startswith("CudnnRNN") for op in graph_op_types(concrete_function)):
        return "cudnn", ""
    variant = VARIANTS[config.variant]
    if not variant.can_use_cudnn:
        return "generic", (
            f"the {variant.name} variant runs its LSTMs as RNN(LSTMCell) or a custom cell, "
            "which never takes the cuDNN path"
        )
    if config.lstm_kernel == "generic":
        return "generic", "use_cudnn=False was requested (lstm_kernel generic)"
    if not tf.config.list_logical_devices("GPU"):
        if not tf.test.is_built_with_cuda():
            return "generic", "TensorFlow was built without CUDA: cuDNN needs a CUDA build"
        return "generic", "no GPU visible to TensorFlow: cuDNN needs a GPU"
    return "generic", "Keras emitted no cuDNN op for these LSTMs, so the generic kernel ran"


# --- timing and memory -------------------------------------------------------------------


def _timed_call(forward, inputs) -> float:
    """Seconds for one forward pass, ending when the device has finished.

    On a GPU, the call returns once kernels are queued on the CUDA stream, not when they end.
    `sync_devices()` (outside the tf.function, as TensorFlow requires) runs a SyncDevice op on
    every device and drains the eager queue, so the interval covers the work itself. Fetching
    the output with `.numpy()` would also wait, but adds a device-to-host copy of the whole
    output to every sample; sync_devices adds only a fixed few microseconds. On a CPU the call
    is already synchronous and the sync is nearly free; it is kept so every device is timed by
    the same method.
    """
    start = time.perf_counter()
    forward(inputs)
    tf.test.experimental.sync_devices()
    return time.perf_counter() - start


def _resident_bytes() -> int:
    """This process's resident set size now."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        # No procfs (macOS): the lifetime high-water mark instead, so growth shows only when
        # a pass exceeds every earlier peak of the process.
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


class _CpuRssGrowth:
    """Peak growth of the process RSS during a window, sampled every `interval` seconds.

    A daemon thread reads /proc/self/statm (a few microseconds; TensorFlow ops release the GIL,
    so the sampler barely perturbs the timing). Limits: spikes shorter than the interval can
    be missed; allocations of other threads in the process (another app session) count too;
    memory the allocator kept from earlier passes and reuses does not show as growth. It
    measures what one pass adds to the process, not the model's whole working set.
    """

    kind = "cpu_rss_growth"

    def __init__(self, interval: float = 0.005):
        self.interval = interval
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._baseline = self._peak = _resident_bytes()
        self._thread = threading.Thread(target=self._sample, daemon=True, name="rss-sampler")

    def _sample(self):
        while not self._stop.wait(self.interval):
            self._observe(_resident_bytes())

    def _observe(self, resident: int):
        with self._lock:
            self._peak = max(self._peak, resident)

    def reset(self):
        with self._lock:
            self._baseline = self._peak = _resident_bytes()

    def peak_bytes(self) -> int:
        self._observe(_resident_bytes())
        with self._lock:
            return max(0, self._peak - self._baseline)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join()


class _GpuAllocatorPeak:
    """TensorFlow's GPU allocator peak (bytes in use, weights and inputs included) since the
    last reset; exact, and kept by the allocator itself, so nothing is sampled."""

    kind = "gpu_allocator_peak"

    def __init__(self, device: str):
        self.device = device.lstrip("/")  # "/GPU:0" -> "GPU:0", as the memory APIs take it

    def reset(self):
        tf.config.experimental.reset_memory_stats(self.device)

    def peak_bytes(self) -> int:
        return int(tf.config.experimental.get_memory_info(self.device)["peak"])

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        pass


def _memory_probe(device: str):
    return _GpuAllocatorPeak(device) if "GPU" in device else _CpuRssGrowth()


# --- one prepared run ----------------------------------------------------------------------


def make_inputs(config: RunConfig, seed: int = 0) -> np.ndarray:
    """Standard-normal input, (batch, height, time, 1) float32, from a numpy seed."""
    rng = np.random.default_rng(seed)
    shape = (config.batch_size, config.height, config.time_steps, 1)
    return rng.standard_normal(shape, dtype=np.float32)


@dataclasses.dataclass
class _Run:
    """A built model, its traced forward function and its input, all on one device."""

    config: RunConfig
    device: str  # "/CPU:0", "/GPU:N"
    forward: object
    inputs: tf.Tensor
    first_call_s: float
    kernel: str
    kernel_reason: str
    label: str = ""  # BenchResult.device when not the device's own description
    details: dict = dataclasses.field(default_factory=dict)  # replicas, checksum, ...

    def call(self) -> float:
        with tf.device(self.device):
            return _timed_call(self.forward, self.inputs)


@dataclasses.dataclass
class _DistributedRun(_Run):
    """A run under a strategy: `forward` is `ReplicatedForward.step`, `inputs` per replica."""

    sync: Callable[[], None] = tf.test.experimental.sync_devices

    def call(self) -> float:
        # The step ends in a cross-replica reduce, so it returns once every replica (on every
        # worker) has finished; the sync then waits for this worker's devices, as in
        # `_timed_call`.
        start = time.perf_counter()
        self.forward(self.inputs)
        self.sync()
        return time.perf_counter() - start


def _prepare(config: RunConfig, *, seed: int, model=None, progress: Progress) -> _Run:
    """Builds (unless `model` is given), makes the input and runs the timed first call."""
    if config.strategy != "none":
        return _prepare_distributed(config, seed=seed, model=model, progress=progress)
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
        first_call_s = time.perf_counter() - start + _timed_call(forward, inputs)
    kernel, reason = lstm_kernel(config, forward.get_concrete_function())
    progress(1.0, f"first call {first_call_s:.3g} s ({kernel} LSTM kernel)")
    return _Run(config, device, forward, inputs, first_call_s, kernel, reason)


def _prepare_distributed(config: RunConfig, *, seed: int, model=None, progress: Progress):
    """`_prepare` under `config.strategy`; `model`, if given, must be built in its scope."""
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
    # off TensorFlow's "excessive retracing" warning (see `_prepare`).
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
    return _DistributedRun(
        config,
        distribute.short_name(plan.devices[0]),  # the memory probe's device
        replicated.step,
        inputs,
        first_call_s,
        kernel,
        reason,
        label=plan.label,
        details=details,
        sync=sync,
    )


def _result(run: _Run, samples, warmup: int, peak_bytes: int, peak_kind: str) -> BenchResult:
    samples = np.asarray(samples, dtype=np.float64)
    config = run.config
    median = float(np.median(samples))
    p10, p25, p75, p90 = (float(value) for value in np.percentile(samples, [10, 25, 75, 90]))
    flops = cost.model_flops(config)
    return BenchResult(
        config=config,
        first_call_s=run.first_call_s,
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
        kernel=run.kernel,
        kernel_reason=run.kernel_reason,
        trace_count=int(run.forward.experimental_get_tracing_count()),
        device=run.label or device_string(run.device),
        versions=versions(),
    )


def _message(error: BaseException) -> str:
    return error.message if isinstance(error, tf.errors.OpError) else str(error)


def first_line(error: BaseException) -> str:
    """The first non-blank line of an error's message (TensorFlow's own message for an op
    error), or its type's name; at most 300 characters."""
    lines = [line.strip() for line in _message(error).splitlines() if line.strip()]
    return (lines[0] if lines else type(error).__name__)[:_MAX_ERROR_CHARS]


def error_line(error: BaseException | str) -> str:
    """One friendly line: what went wrong in words, with a hint where there is one, then the
    first line of the message."""
    if isinstance(error, str):
        return error.splitlines()[0][:_MAX_ERROR_CHARS] if error else "unknown error"
    message, first = _message(error), first_line(error)
    if isinstance(error, tf.errors.ResourceExhaustedError | MemoryError):
        prefix = "out of memory (try a smaller batch_size or time_steps)"
    elif isinstance(error, tf.errors.NotFoundError | tf.errors.InvalidArgumentError) and (
        re.search(r"DT_HALF|DT_BFLOAT16|\bhalf\b|bfloat16", message)
    ):
        # "No registered kernel" / "Could not find device for node" at a 16-bit type.
        prefix = "this device cannot run an op at this precision (use float32)"
    elif isinstance(error, tf.errors.OpError) and "CudnnRNN" in message:
        prefix = "XLA cannot compile the cuDNN LSTM kernel (use lstm_kernel generic with xla)"
    elif isinstance(error, tf.errors.UnimplementedError):
        # The raw message is a graph node dump; name the op and where it sits instead.
        node = re.search(r"\{\{node ([^}]+)\}\} = (\w+)", message)
        where = f"the {node.group(2)} op at {node.group(1)}" if node else "an op of this model"
        return (
            f"not supported here: no kernel for {where} (under XLA, vectorized_map's pfor "
            "loops cannot be compiled; run without XLA)"
        )[:_MAX_ERROR_CHARS]
    elif isinstance(error, tf.errors.OpError):
        prefix = f"TensorFlow could not run this model ({type(error).__name__})"
    elif isinstance(error, ValueError):
        prefix = "invalid setting"
    else:
        prefix = f"unexpected {type(error).__name__}"
    return f"{prefix}: {first}"[:_MAX_ERROR_CHARS]


def failed_result(config: RunConfig, error: BaseException | str) -> BenchResult:
    """The record of a run that failed: status "failed", a one-line `error`, NaN times."""
    nan = math.nan
    try:
        device = device_string(config.device)
    except ValueError:
        device = config.device
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
        flops=cost.model_flops(config),
        gflops_per_s=nan,
        peak_memory_bytes=0,
        peak_memory_kind="",
        kernel="",
        kernel_reason="",
        trace_count=0,
        device=device,
        versions=versions(),
        status="failed",
        error=error_line(error),
    )


def _check_counts(warmup: int, repeats: int) -> None:
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise ValueError(f"warmup must be a whole number of 0 or more; got {warmup!r}.")
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a whole number of 1 or more; got {repeats!r}.")


# --- public entry points ------------------------------------------------------------------


def benchmark(
    config: RunConfig,
    *,
    warmup: int = 3,
    repeats: int = 20,
    seed: int = 0,
    on_progress: Progress | None = None,
    model=None,
) -> BenchResult:
    """Times one config: first call apart, `warmup` untimed calls, `repeats` timed calls.

    Input (batch_size, height, time_steps, 1) float32. A run that fails (out of memory, an op
    error, an invalid setting) returns a "failed" record instead of raising.
    """
    _check_counts(warmup, repeats)
    progress = on_progress or _no_progress
    try:
        run = _prepare(config, seed=seed, model=model, progress=_scaled(progress, 0.0, 0.15))
        for index in range(warmup):
            run.call()
            progress(0.15 + 0.1 * (index + 1) / warmup, f"warm-up {index + 1}/{warmup}")
        samples, peak = [], 0
        with _memory_probe(run.device) as probe:
            for index in range(repeats):
                probe.reset()
                samples.append(run.call())
                peak = max(peak, probe.peak_bytes())
                progress(
                    0.25 + 0.7 * (index + 1) / repeats,
                    f"repeat {index + 1}/{repeats}: {samples[-1] * 1e3:.3g} ms",
                )
    except _FAILURES as error:
        result = failed_result(config, error)
        progress(1.0, f"failed: {result.error}")
        return result
    result = _result(run, samples, warmup, peak, probe.kind)
    progress(1.0, f"done: median {result.median_s * 1e3:.3g} ms")
    return result


@dataclasses.dataclass
class CompareResult:
    """Several configs timed in interleaved rounds, with paired speed-ups against a baseline.

    `speedups[i]` is the median over rounds of baseline_time / config_i_time, each ratio taken
    within one round, so drift (thermal, other load) cancels; p10/p90 are of the same ratios.
    """

    results: list[BenchResult]
    speedups: list[float]
    speedup_p10: list[float]
    speedup_p90: list[float]
    baseline: int = 0
    # Per config, what a run under a strategy adds (strategy, replicas, per_replica_batch,
    # workers, output_checksum, replica_devices); {} for a single-device or failed run.
    details: list[dict] = dataclasses.field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for index, result in enumerate(self.results):
            row = _flat_row(result)
            if index < len(self.details) and self.details[index]:
                row.update(self.details[index])
                row["replica_devices"] = ",".join(row["replica_devices"])
            row["speedup_vs_baseline"] = self.speedups[index]
            row["speedup_p10"] = self.speedup_p10[index]
            row["speedup_p90"] = self.speedup_p90[index]
            row["is_baseline"] = index == self.baseline
            rows.append(row)
        return pd.DataFrame(rows)


def _flat_row(result: BenchResult) -> dict:
    """A result as one table row: its fields, then the config settings it does not repeat."""
    row = result.to_dict()
    config = row.pop("config")
    row.pop("versions")
    row.update({name: value for name, value in config.items() if name not in row})
    return row


def compare(
    configs: Sequence[RunConfig],
    *,
    warmup: int = 3,
    repeats: int = 20,
    seed: int = 0,
    baseline: int = 0,
    on_progress: Progress | None = None,
) -> CompareResult:
    """Times `configs` in `repeats` interleaved rounds (A B C, A B C, ...).

    Each config is built and first-called, then all are warmed up, then every round times each
    config once. A config that fails gets a "failed" record and NaN speed-ups; the others go on.
    """
    _check_counts(warmup, repeats)
    configs = list(configs)
    if not configs:
        raise ValueError("compare needs at least one config; got none.")
    if not 0 <= baseline < len(configs):
        raise ValueError(f"baseline must be an index from 0 to {len(configs) - 1}; got {baseline}.")
    progress = on_progress or _no_progress
    count = len(configs)
    runs: list[_Run | None] = [None] * count
    failures: dict[int, BenchResult] = {}
    for index, config in enumerate(configs):
        start, end = 0.3 * (index + 0.01) / count, 0.3 * (index + 1) / count
        span = _scaled(progress, start, end, f"{config.variant} ({index}): ")
        try:
            runs[index] = _prepare(config, seed=seed, progress=span)
        except _FAILURES as error:
            failures[index] = failed_result(config, error)
            span(1.0, f"failed: {failures[index].error}")

    def fail(index, error):
        failures[index] = failed_result(configs[index], error)
        runs[index] = None

    for round_index in range(warmup):
        for index, run in enumerate(runs):
            if run is not None:
                try:
                    run.call()
                except _FAILURES as error:
                    fail(index, error)
        progress(0.3 + 0.1 * (round_index + 1) / warmup, f"warm-up round {round_index + 1}")

    times = np.full((repeats, count), math.nan)
    peaks, kinds = [0] * count, [""] * count
    with contextlib.ExitStack() as stack:
        devices = {run.device for run in runs if run is not None}
        probes = {device: stack.enter_context(_memory_probe(device)) for device in devices}
        for round_index in range(repeats):
            for index, run in enumerate(runs):
                if run is None:
                    continue
                probe = probes[run.device]
                try:
                    probe.reset()
                    times[round_index, index] = run.call()
                    peaks[index] = max(peaks[index], probe.peak_bytes())
                    kinds[index] = probe.kind
                except _FAILURES as error:
                    fail(index, error)
            progress(
                0.4 + 0.59 * (round_index + 1) / repeats,
                f"round {round_index + 1}/{repeats}",
            )

    results = [
        failures[index]
        if index in failures
        else _result(runs[index], times[:, index], warmup, peaks[index], kinds[index])
        for index in range(count)
    ]
    speedups, p10s, p90s = [], [], []
    for index in range(count):
        if index in failures or baseline in failures:
            median = p10 = p90 = math.nan
        else:
            ratios = times[:, baseline] / times[:, index]  # paired within each round
            median = np.median(ratios)
            p10, p90 = np.percentile(ratios, [10, 90])
        speedups.append(float(median))
        p10s.append(float(p10))
        p90s.append(float(p90))
    progress(1.0, "done")
    details = [{} if run is None else dict(run.details) for run in runs]
    return CompareResult(results, speedups, p10s, p90s, baseline, details)


def _sweep_row(variant: str, axis: str, value, result: BenchResult | None, error: str = ""):
    row = {"variant": variant, "axis": axis, "value": value}
    if result is None:  # the value itself was rejected: there is no config to measure
        row.update(status="failed", error=error)
        row.update({name: math.nan for name in _NUMERIC_FIELDS})
        row.update(kernel="", device="")
        return row
    row.update(status=result.status, error=result.error)
    row.update({name: getattr(result, name) for name in _NUMERIC_FIELDS})
    row.update(kernel=result.kernel, device=result.device)
    return row


def sweep(
    config: RunConfig,
    axis: str,
    values: Iterable[int],
    *,
    warmup: int = 2,
    repeats: int = 10,
    seed: int = 0,
    on_progress: Progress | None = None,
    on_point: Callable[[BenchResult], None] | None = None,
) -> pd.DataFrame:
    """Benchmarks `config` at each value of `axis` ("time_steps" or "batch_size").

    A failing point becomes a "failed" row and the sweep goes on. `on_point` receives each
    point's BenchResult as it finishes (a value the config itself rejects has no config to
    record, so it is a row only). Columns: variant, axis, value, status, error, the numeric
    BenchResult fields, kernel, device.
    """
    if axis not in SWEEP_AXES:
        raise ValueError(f"axis must be one of {', '.join(SWEEP_AXES)}; got {axis!r}.")
    _check_counts(warmup, repeats)
    progress = on_progress or _no_progress
    values = list(values)
    rows = []
    for index, value in enumerate(values):
        # Each point starts just above where the previous ended, so fractions keep increasing.
        start, end = (index + 0.01) / len(values), (index + 1) / len(values)
        point_progress = _scaled(progress, start, end, f"{axis}={value}: ")
        try:
            point_config = config.replace(**{axis: value})
        except ValueError as error:
            rows.append(_sweep_row(config.variant, axis, value, None, error_line(error)))
            point_progress(1.0, "rejected")
            continue
        try:
            result = benchmark(
                point_config,
                warmup=warmup,
                repeats=repeats,
                seed=seed,
                on_progress=point_progress,
            )
        except Exception as error:  # an unattended sweep records any failure and goes on
            result = failed_result(point_config, error)
            point_progress(1.0, f"failed: {result.error}")
        if on_point is not None:
            on_point(result)
        rows.append(_sweep_row(config.variant, axis, value, result))
    columns = ["variant", "axis", "value", "status", "error", *_NUMERIC_FIELDS, "kernel", "device"]
    return pd.DataFrame(rows, columns=columns)


def scaling(
    config: RunConfig,
    *,
    warmup: int = 3,
    repeats: int = 20,
    seed: int = 0,
    on_progress: Progress | None = None,
) -> distribute.ScalingResult:
    """Times `config` under its strategy and one replica, in interleaved rounds (as `compare`).

    The one replica is this process's first replica device running the per-replica batch
    (`distribute.one_replica_config`), so scaling efficiency = throughput / (replicas x one
    replica's throughput) compares equal work per replica. A run that cannot happen (an odd
    batch, a missing device, no cluster) gives a "failed" result instead of raising.
    """
    if config.strategy == "none":
        raise ValueError("scaling needs strategy mirrored or multi_worker; got 'none'.")
    _check_counts(warmup, repeats)
    progress = on_progress or _no_progress
    try:
        plan = distribute.plan(config)
        one = distribute.one_replica_config(config, plan)
    except _FAILURES as error:
        failed = failed_result(config, error)
        progress(1.0, f"failed: {failed.error}")
        nan = math.nan
        return distribute.ScalingResult(
            failed, None, config.strategy, 0, 0, 0, nan, nan, nan, "", ()
        )
    outcome = compare(
        [config, one], warmup=warmup, repeats=repeats, seed=seed, baseline=1, on_progress=progress
    )
    return distribute.ScalingResult(
        result=outcome.results[0],
        one_replica=outcome.results[1],
        strategy=config.strategy,
        replicas=plan.replicas,
        per_replica_batch=plan.per_replica_batch,
        workers=plan.workers,
        scaling_efficiency=outcome.speedups[0],  # median over rounds of t_one / t_all
        efficiency_p10=outcome.speedup_p10[0],
        efficiency_p90=outcome.speedup_p90[0],
        output_checksum=outcome.details[0].get("output_checksum", ""),
        replica_devices=plan.devices,
    )


REPLICA_SWEEP_COLUMNS = (
    "replicas",
    "batch_size",
    "per_replica_batch",
    "status",
    "error",
    "median_s",
    "p10_s",
    "p90_s",
    "samples_per_s",
    "scaling_efficiency",
    "efficiency_p10",
    "efficiency_p90",
    "kernel",
    "device",
)


def replica_sweep(
    config: RunConfig,
    counts: Iterable[int],
    *,
    warmup: int = 2,
    repeats: int = 10,
    seed: int = 0,
    on_progress: Progress | None = None,
    on_point: Callable[[BenchResult], None] | None = None,
) -> pd.DataFrame:
    """Throughput and scaling efficiency of `config` on n = 1, 2, ... mirrored replicas.

    Weak scaling: every replica runs `config.batch_size` samples, so n replicas run a global
    batch of n x batch_size; the replicas are the first n of `config.devices`, else of every
    local GPU, else of every logical CPU device. All counts are timed in interleaved rounds
    (as `compare`), and scaling_efficiency of n = throughput_n / (n x throughput_1) =
    t_1 / t_n, the median of that ratio within rounds (p10/p90 likewise). 1 is always
    measured, being the reference. A count with too few devices is a "failed" row. Columns:
    `REPLICA_SWEEP_COLUMNS`. `on_point` receives each measured count's BenchResult.
    """
    if config.strategy == "multi_worker":
        raise ValueError(
            "replica_sweep varies mirrored replicas in one process; a multi-worker cluster "
            "has the size it was started with."
        )
    _check_counts(warmup, repeats)
    wanted = list(dict.fromkeys(counts))
    if not wanted or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in wanted):
        raise ValueError(f"counts must be whole numbers of 1 or more; got {wanted!r}.")
    if 1 not in wanted:
        wanted.insert(0, 1)
    base = config.replace(strategy="mirrored", device="auto", devices="")
    specs = config.device_list or distribute.replica_device_specs(base)
    rows: dict[int, dict] = {}
    configs: list[RunConfig] = []
    for count in wanted:
        row = {name: math.nan for name in REPLICA_SWEEP_COLUMNS}
        row.update(
            replicas=count,
            batch_size=count * config.batch_size,
            per_replica_batch=config.batch_size,
        )
        row.update(status="failed", kernel="", device="")
        rows[count] = row
        if count > len(specs):
            hint = "; split the CPU with --logical-cpus N" if specs[0].startswith("cpu") else ""
            row["error"] = (
                f"invalid setting: {count} replicas need {count} devices; this process has "
                f"{len(specs)} ({', '.join(specs)}){hint}"
            )
            continue
        try:
            configs.append(
                base.replace(devices=",".join(specs[:count]), batch_size=count * config.batch_size)
            )
        except ValueError as error:
            row["error"] = error_line(error)
    measured = {len(point.device_list): index for index, point in enumerate(configs)}
    if configs:
        baseline = measured.get(1, 0)
        outcome = compare(
            configs,
            warmup=warmup,
            repeats=repeats,
            seed=seed,
            baseline=baseline,
            on_progress=on_progress,
        )
        for count, index in measured.items():
            result = outcome.results[index]
            if on_point is not None:
                on_point(result)
            rows[count].update(
                {
                    name: getattr(result, name)
                    for name in REPLICA_SWEEP_COLUMNS
                    if hasattr(result, name)
                }
            )
            rows[count].update(
                replicas=count,
                batch_size=result.config.batch_size,
                per_replica_batch=config.batch_size,
                scaling_efficiency=outcome.speedups[index] if 1 in measured else math.nan,
                efficiency_p10=outcome.speedup_p10[index] if 1 in measured else math.nan,
                efficiency_p90=outcome.speedup_p90[index] if 1 in measured else math.nan,
            )
    elif on_progress is not None:
        on_progress(1.0, "no count could be measured")
    return pd.DataFrame([rows[count] for count in wanted], columns=list(REPLICA_SWEEP_COLUMNS))


def _top_level_layers(model) -> list:
    return [layer for layer in model.layers if not isinstance(layer, keras.layers.InputLayer)]


def _layer_inputs(model, layers, inputs) -> list:
    """Each layer's real input in one pass: a probe model returns every layer's output, and
    each layer's input tensors (one, or a list for `unfold`) are looked up among them."""
    probe = keras.Model(model.inputs, [layer.output for layer in layers], name="layer_probe")
    outputs = tf.nest.flatten(probe(inputs, training=False))  # one layer: a bare tensor
    values = {id(model.inputs[0]): inputs}
    values.update({id(layer.output): output for layer, output in zip(layers, outputs, strict=True)})
    return [
        keras.tree.map_structure(lambda tensor: values[id(tensor)], layer.input) for layer in layers
    ]


def layer_breakdown(
    config: RunConfig,
    *,
    repeats: int = 10,
    warmup: int = 2,
    seed: int = 0,
    on_progress: Progress | None = None,
) -> pd.DataFrame:
    """Time of each top-level layer on its real input, and of the whole model, in one run.

    Each layer is its own `tf.function` (XLA as the config says), warmed up, then all layers
    and the whole model are timed in interleaved rounds with the same synchronisation as
    `benchmark`. Columns: layer, type, median_s, p10_s, p90_s, share (of the summed medians);
    `df.attrs` holds model_median_s, sum_median_s and call_overhead_s, the median of an empty
    function timed the same way: each layer's time includes one such overhead, so the sum
    exceeds the model by about (layers - 1) overheads plus what whole-graph optimisation saves.
    """
    _check_counts(warmup, repeats)
    progress = on_progress or _no_progress
    device = resolve_device(config.device)
    progress(0.0, f"building {config.variant} on {device}")
    with tf.device(device):
        model = build_model(config, init_params(config, seed))
        inputs = tf.identity(tf.convert_to_tensor(make_inputs(config, seed)))
        layers = _top_level_layers(model)
        layer_inputs = _layer_inputs(model, layers, inputs)
        calls = [
            (
                tf.function(
                    lambda value, layer=layer: layer(value, training=False), jit_compile=config.xla
                ),
                value,
            )
            for layer, value in zip(layers, layer_inputs, strict=True)
        ]
        calls.append((make_forward(model, config), inputs))
        # An empty function measures what every separate call costs on its own (dispatch and
        # sync), which is most of the gap between the layers' sum and the whole model.
        calls.append((tf.function(tf.identity), inputs))
        progress(0.1, "tracing and warming up each layer")
        for function, value in calls:
            # Traced explicitly: TensorFlow does not count this as retracing, so many small
            # functions traced in a row do not set off its "excessive retracing" warning.
            function.get_concrete_function(value)
        for _ in range(warmup):
            for function, value in calls:
                _timed_call(function, value)
        times = np.empty((repeats, len(calls)))
        for round_index in range(repeats):
            for index, (function, value) in enumerate(calls):
                times[round_index, index] = _timed_call(function, value)
            progress(0.2 + 0.8 * (round_index + 1) / repeats, f"round {round_index + 1}")
    medians = np.median(times, axis=0)
    p10, p90 = np.percentile(times, [10, 90], axis=0)
    count = len(layers)
    layer_sum = float(medians[:count].sum())
    frame = pd.DataFrame(
        {
            "layer": [layer.name for layer in layers],
            "type": [type(layer).__name__ for layer in layers],
            "median_s": medians[:count],
            "p10_s": p10[:count],
            "p90_s": p90[:count],
            "share": medians[:count] / layer_sum,
        }
    )
    frame.attrs["model_median_s"] = float(medians[count])
    frame.attrs["sum_median_s"] = layer_sum
    frame.attrs["call_overhead_s"] = float(medians[count + 1])
    return frame

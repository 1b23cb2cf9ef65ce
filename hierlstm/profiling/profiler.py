"""A variant run under the TensorFlow Profiler: where one step's time really goes, per layer,
per op type and per line (thread or GPU stream), beside the harness's own timing of it.

`profile(config, timing, steps=N)` builds the run exactly as `benchmark` does
(`hierlstm.timing.harness.prepare`: the forward function, or for task "training" the training
step of `hierlstm.timing.training`), first-calls it, runs `timing.warmup` untimed calls, then
N calls under `tf.profiler.experimental.start/stop`, each inside a
`tf.profiler.experimental.Trace("step", step_num=i, _r=1)` marker, so the capture knows its
steps. The capture is read back and reduced by `hierlstm.profiling.xspace` (self times, steps,
layers and the "outside any layer" bucket are defined there). Then, with the profiler
stopped, the same run is timed `timing.repeats` times by the harness's own timed call
(`PreparedRun.call`, what `benchmark` samples), in the same call on the same built model: the
harness median beside the profiled step median says how much the profiler itself slowed the
step. Those harness calls also measure the step's memory peak (`hierlstm.timing.memory`), set
beside the cost model's parts (`memory_estimate`); the capture's last step is kept in time
(`ProfileResult.timeline`, `hierlstm.profiling.timeline.step_timeline`), which
`hierlstm.profiling.timeline.chrome_trace` writes as Chrome trace-event JSON.

The log directory is kept, for TensorBoard or XProf (`tensorboard --logdir DIR`, the Profile
tab), in a new default folder unless the caller names one (`hierlstm.profiling.record`: the
record, the folders, their pruning and the .zip for a download). The folder is checked before
the run (`hierlstm.refusals.writable_folder`), and a capture the disk refuses at the end (full,
read-only) raises `Refused` in one sentence, never a TensorFlow error read as the run's.

Rules of a timing run: the settings are checked first (`check_limits`, the step count's
bounds, one device only), each refusal a `SettingError`. The caller holds the device lock
(`hierlstm.admission.runlock.hold`), as for `benchmark`: the CLI and the app take it around the
run. TensorFlow runs one profiler per process, so a second profile while one is recording (a
run on another device of the same app server) is refused at once with a `SettingError`, never
queued: the first is short, and waiting inside a run that holds a device lock would hold that
device for nothing.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import tensorflow as tf

from hierlstm.admission import check_limits
from hierlstm.config import (
    BOUNDS,
    DEFAULT_TIMING,
    RunConfig,
    SettingError,
    Timing,
    out_of_bounds,
)
from hierlstm.hardware import resolve_device, versions
from hierlstm.model.builders import build_model
from hierlstm.model.params import init_params
from hierlstm.profiling.record import ProfileResult, new_capture_folder
from hierlstm.profiling.timeline import step_timeline
from hierlstm.profiling.xspace import find_xplane, read_xspace, summarise
from hierlstm.refusals import Refusal, Refused, writable_folder
from hierlstm.timing import Progress, no_progress, prepare, scaled_progress
from hierlstm.timing.breakdown import top_level_layers
from hierlstm.timing.memory import memory_probe
from hierlstm.timing.rss import peak_over_calls

DEFAULT_STEPS = 10
# TensorFlow's words for a write the disk refused, as in its OpError's message.
_WRITE_REFUSALS = {
    "No space left": "full",
    "File too large": "full",
    "Disk quota": "full",
    "Read-only file system": "read_only",
    "Permission denied": "denied",
}
_PROFILER = threading.Lock()  # TensorFlow allows one profiler session per process


def check_profile(config: RunConfig, steps: int) -> None:
    """Raises SettingError (LimitError for a server limit) if `config` cannot be profiled."""
    if isinstance(steps, bool) or not isinstance(steps, int):
        raise SettingError(f"steps must be a whole number; got {steps!r}.")
    if message := out_of_bounds("steps", steps, *BOUNDS["profile_steps"]):
        raise SettingError(message)
    if config.strategy != "none":
        raise SettingError(
            f"a profile runs on one device; strategy must be none; got {config.strategy!r}."
        )
    check_limits(config)


def _profiled_steps(run, logdir: Path, steps: int, progress: Progress) -> None:
    if not _PROFILER.acquire(blocking=False):
        raise SettingError(
            "the TensorFlow Profiler is already recording another run in this process (one "
            "profile at a time); try again when it has finished."
        )
    try:
        try:
            tf.profiler.experimental.start(str(logdir))
        except tf.errors.AlreadyExistsError:
            raise SettingError(
                "the TensorFlow Profiler is already recording in this process (started outside "
                "hierlstm); stop it first."
            ) from None
        try:
            for index in range(steps):
                with tf.profiler.experimental.Trace("step", step_num=index, _r=1):
                    run.call()
                progress((index + 1) / steps, f"profiled step {index + 1}/{steps}")
        finally:
            _stop_and_write(logdir)
    finally:
        _PROFILER.release()


def _stop_and_write(logdir: Path) -> None:
    """Stops the profiler, which writes the capture; a write the disk refuses is `Refused`."""
    try:
        tf.profiler.experimental.stop()
    except tf.errors.OpError as error:
        kind = next((k for words, k in _WRITE_REFUSALS.items() if words in error.message), None)
        if kind is None:
            raise
        raise Refused(Refusal("profile", str(logdir), kind, error.message)) from None


def profile(
    config: RunConfig,
    timing: Timing = DEFAULT_TIMING,
    *,
    steps: int = DEFAULT_STEPS,
    logdir: str | Path | None = None,
    on_progress: Progress | None = None,
) -> ProfileResult:
    """Profiles `steps` calls of `config` after its first call and `timing.warmup` untimed
    ones, then times `timing.repeats` harness samples; see the module docstring.

    Input (batch_size, height, time_steps, 1) float32, as `benchmark`'s. Raises SettingError
    for a refused setting, TensorFlow's OpError (out of memory, ...) if the run fails.
    """
    check_profile(config, steps)
    progress = on_progress or no_progress
    logdir = Path(logdir) if logdir is not None else new_capture_folder(config)
    writable_folder("profile", logdir)
    device = resolve_device(config.device)
    with tf.device(device):  # the model whose layer names the capture is read with
        model = build_model(config, init_params(config, timing.seed))
    layers = top_level_layers(model)
    run = prepare(config, seed=timing.seed, model=model, progress=scaled_progress(progress, 0, 0.2))
    warming = scaled_progress(progress, 0.2, 0.3)
    for index in range(timing.warmup):
        run.call()
        warming((index + 1) / timing.warmup, f"warm-up {index + 1}")
    _profiled_steps(run, logdir, steps, scaled_progress(progress, 0.3, 0.7))
    with memory_probe(run.device) as probe:
        harness, peak = peak_over_calls(run.call, timing.repeats, probe)
    progress(0.8, "reading the capture")
    xplane = find_xplane(logdir)
    space = read_xspace(xplane)
    summary = summarise(space, [layer.name for layer in layers])
    types = {layer.name: type(layer).__name__ for layer in layers}
    frame = summary.layers
    frame.insert(1, "type", [types.get(name, "") for name in frame["layer"]])
    result = ProfileResult(
        config=config,
        steps=summary.steps,
        warmup=timing.warmup,
        layers=frame,
        op_types=summary.op_types,
        lines=summary.lines,
        kernels=summary.kernels,
        step_s=summary.step_s,
        profiled_step_s=float(np.median(summary.step_s)),
        harness_median_s=float(np.median(harness)),
        harness_repeats=len(harness),
        logdir=str(logdir),
        trace=str(xplane),
        device=run.description,
        kernel=run.kernel,
        versions=versions(),
        peak_memory_bytes=int(peak),
        peak_memory_kind=probe.kind,
        timeline=step_timeline(space, [layer.name for layer in layers]),
    )
    progress(1.0, f"profiled step {result.profiled_step_s * 1e3:.3g} ms")
    return result

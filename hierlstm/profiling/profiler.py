"""A variant run under the TensorFlow Profiler: where one step's time goes, beside the harness's own
timing of it.

`profile` prepares the run as `benchmark` does, warms it up, records N steps each inside a
`Trace("step", step_num=i)` marker, reads the capture (`xspace`), then times `timing.repeats`
harness calls with the profiler off: their median beside the profiled one says what the profiler
cost, and they measure the memory peak. The capture is kept for TensorBoard (`profiling.record`); a
disk that refuses it raises `Refused`. The caller holds the device lock. TensorFlow runs one
profiler per process, so a second profile while one records is refused at once (SettingError):
waiting would hold a device lock for nothing."""

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
    """Profiles `steps` calls of `config`, input (batch_size, height, time_steps, 1) float32, then
    times `timing.repeats` harness samples. Raises SettingError for a refused setting, TensorFlow's
    OpError if the run fails."""
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

"""Profiles on JAX, PyTorch and the runtimes inside a backend's worker (`keras_profile`, around
the runner's capture), and the profiles-table record made from what it sends back
(`profile_record`).
TensorFlow's worker runs `hierlstm.profiling.profiler`. A JAX XSpace needs TensorFlow's protobufs to
read, so the app (which has TensorFlow) asks `read: false` and reads it with `read_profile`."""

from __future__ import annotations

import math

from hierlstm.backends import runner
from hierlstm.backends.protocol import backend_versions
from hierlstm.config import RunConfig
from hierlstm.timing.rss import peak_over_calls


def _layer_names(config: RunConfig, seed: int) -> list[str]:
    """The model's top-level layer names (the profile's per-layer rows)."""
    from hierlstm.model.builders import build_model
    from hierlstm.model.params import init_params

    model = build_model(config, init_params(config, seed))
    return [layer.name for layer in model.layers if type(layer).__name__ != "InputLayer"]


def can_read_xspace() -> bool:
    """Whether this process can read a JAX XSpace: TensorFlow's protobufs are installed."""
    import importlib.util

    return importlib.util.find_spec("tensorflow") is not None


def _harness(worker, run, repeats: int) -> tuple[list[float], int, str]:
    """`repeats` samples with the profiler off, and one's memory peak where this backend and device
    measure one (the runner's `profile_probe`); (0, "") where none is (JAX on a GPU)."""
    probe = worker.runner.profile_probe(run.description)
    if probe is None:
        return [run.sample()["step"] for _ in range(repeats)], 0, ""
    with probe:
        samples, peak = peak_over_calls(run.sample, repeats, probe)
    return [sample["step"] for sample in samples], peak, probe.kind


def keras_profile(worker, config: RunConfig, request: dict, capture) -> dict:
    """`config` prepared, warmed up, `steps` steps under the backend's profiler (`capture(run,
    logdir, steps, layers, read)`, the runner's), then `repeats` samples with it off: the
    profile's JSON form."""
    from pathlib import Path

    import numpy as np

    steps, seed = int(request["steps"]), int(request.get("seed", 0))
    logdir = Path(request["logdir"])
    logdir.mkdir(parents=True, exist_ok=True)
    layers = _layer_names(config, seed)
    run = worker.local.prepare(config, seed=seed, backend=worker.backend)
    for _ in range(int(request["warmup"])):
        run.sample()
    found = capture(run, logdir, steps, layers, bool(request.get("read", True)))
    harness, peak, kind = _harness(worker, run, int(request["repeats"]))
    step_s = found.get("step_s") or [math.nan]
    return {
        "variant": config.variant,
        "config": config.to_dict(),
        "steps": steps,
        "warmup": int(request["warmup"]),
        "profiled_step_s": float(np.median(step_s)),
        "harness_median_s": float(np.median(harness)),
        "harness_repeats": len(harness),
        "peak_memory_bytes": peak,
        "peak_memory_kind": kind,
        "kernels": [],
        "layer_names": layers,
        "logdir": str(logdir),
        "device": run.description,
        "kernel": run.kernel,
        "versions": backend_versions(worker.backend),
        **found,
    }


def profile_record(document: dict, timeline=None):
    """The `hierlstm.profiling.record.ProfileResult` of a worker's profile document
    (`timeline`: its step in time, if read)."""
    import pandas as pd

    from hierlstm.profiling.record import ProfileResult

    layers = pd.DataFrame(document["layers"], columns=["layer", "type", "time_s", "share", "ops"])
    layers["type"] = layers["type"].astype(object).fillna("")  # JAX's rows have no type
    op_types = pd.DataFrame(document["op_types"], columns=["type", "time_s", "ops", "share"])
    kernels = pd.DataFrame(
        document["kernels"], columns=["kernel", "op_type", "layer", "time_s", "launches"]
    )
    fields = ("steps", "warmup", "harness_repeats", "profiled_step_s", "harness_median_s")
    return ProfileResult(
        RunConfig(**document["config"]),
        **{name: document[name] for name in fields},
        layers=layers,
        op_types=op_types,
        kernels=kernels,
        device=document["device"],
        kernel=document["kernel"],
        logdir=document["logdir"],
        versions=document["versions"],
        lines=pd.DataFrame(document.get("lines", []), columns=["line", "op_s", "busy_s"]),
        step_s=tuple(document.get("step_s", ())),
        attribution=document.get("attribution", ""),
        trace=document["trace"],
        peak_memory_bytes=int(document.get("peak_memory_bytes", 0)),
        peak_memory_kind=document.get("peak_memory_kind", ""),
        timeline=timeline,
    )


def read_profile(document: dict):
    """A worker's profile read here by its backend's runner: an unread JAX capture summarised,
    and the last step in time (None in `timeline` without a step marker or without TensorFlow
    here)."""
    if not can_read_xspace():  # no TensorFlow's protobufs here: the document as it came
        return profile_record(document)
    document, step = runner(document["config"]["backend"]).read_capture(document)
    return profile_record(document, step)

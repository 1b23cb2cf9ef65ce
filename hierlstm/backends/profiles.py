"""Profiles on JAX and PyTorch inside a backend's worker (`profile`), and the profiles-table record
made from what it sends back (`profile_record`). TensorFlow's worker runs
`hierlstm.profiling.profiler`. A JAX XSpace needs TensorFlow's protobufs to read, so the app (which
has TensorFlow) asks `read: false` and reads it with `read_profile`."""

from __future__ import annotations

import math

from hierlstm.backends.protocol import backend_versions
from hierlstm.config import RunConfig
from hierlstm.timing.rss import peak_over_calls

JAX_ATTRIBUTION = (
    "per op and per layer: JAX's profiler writes an XSpace whose XLA ops carry the name scopes "
    "Keras opens per layer in their HLO metadata, read by hierlstm.profiling.xspace"
)
JAX_UNREAD = (
    "the XSpace capture is written but not summarised: reading it needs TensorFlow's "
    "protobufs (hierlstm.profiling.xspace), absent here; open it in XProf"
)
TORCH_ATTRIBUTION = (
    "per op only (torch.profiler's key_averages, self CPU time): Keras layers on PyTorch emit "
    "no named ranges, so no op can be given to a layer; the layers table is empty"
)


def _layer_names(config: RunConfig, seed: int) -> list[str]:
    """The model's top-level layer names (the profile's per-layer rows)."""
    from hierlstm.model.builders import build_model
    from hierlstm.model.params import init_params

    model = build_model(config, init_params(config, seed))
    return [layer.name for layer in model.layers if type(layer).__name__ != "InputLayer"]


def _records(frame) -> list[dict]:
    return frame.to_dict(orient="records")


def _can_read_xspace() -> bool:
    import importlib.util

    return importlib.util.find_spec("tensorflow") is not None


def _xspace_fields(space, layers: list[str]) -> dict:
    """What a JAX capture's XSpace says, in the document's fields (a GPU's kernels among them:
    the device planes' events, as for TensorFlow)."""
    from hierlstm.profiling.xspace import summarise

    summary = summarise(space, layers)
    return {
        "attribution": JAX_ATTRIBUTION,
        "step_s": list(summary.step_s),
        "layers": _records(summary.layers),
        "op_types": _records(summary.op_types),
        "lines": _records(summary.lines),
        "kernels": _records(summary.kernels),
    }


def _jax_capture(run, logdir, steps: int, layers: list[str], read: bool) -> dict:
    import jax

    with jax.profiler.trace(str(logdir)):
        for index in range(steps):
            with jax.profiler.StepTraceAnnotation("step", step_num=index):
                run.sample()
    from hierlstm.profiling.xspace import find_xplane

    xplane = find_xplane(logdir)
    if not read or not _can_read_xspace():
        return {"trace": str(xplane), "attribution": JAX_UNREAD, "layers": [], "op_types": []}
    from hierlstm.profiling.xspace import read_xspace

    return {"trace": str(xplane), **_xspace_fields(read_xspace(xplane), layers)}


def _torch_capture(run, logdir, steps: int) -> dict:
    import torch
    from torch.profiler import ProfilerActivity, record_function

    with torch.profiler.profile(activities=[ProfilerActivity.CPU]) as profiler:
        for _ in range(steps):
            with record_function("step"):
                run.sample()
    trace = logdir / "torch_trace.json"
    profiler.export_chrome_trace(str(trace))
    averages = [event for event in profiler.key_averages() if event.key != "step"]
    step = next(event for event in profiler.key_averages() if event.key == "step")
    total = sum(event.self_cpu_time_total for event in averages) or 1.0
    op_types = sorted(
        (
            {
                "type": event.key,
                "time_s": event.self_cpu_time_total * 1e-6 / steps,
                "ops": event.count / steps,
                "share": event.self_cpu_time_total / total,
            }
            for event in averages
            if event.self_cpu_time_total > 0
        ),
        key=lambda row: -row["time_s"],
    )
    return {
        "trace": str(trace),
        "attribution": TORCH_ATTRIBUTION,
        "step_s": [step.cpu_time_total * 1e-6 / step.count] * step.count,
        "layers": [],
        "op_types": op_types,
        "lines": [],
    }


def _harness(worker, run, repeats: int) -> tuple[list[float], int, str]:
    """`repeats` samples with the profiler off, and one's memory peak where this backend and device
    measure one; (0, "") for JAX on a GPU, which keeps no resettable peak."""
    if worker.backend == "jax" and not run.description.startswith("/CPU"):
        return [run.sample()["step"] for _ in range(repeats)], 0, ""
    with worker.memory_probe(run.description) as probe:
        samples, peak = peak_over_calls(run.sample, repeats, probe)
    return [sample["step"] for sample in samples], peak, probe.kind


def profile(worker, config: RunConfig, request: dict) -> dict:
    """`config` prepared, warmed up, `steps` steps under the backend's profiler, then `repeats`
    samples with it off: the profile's JSON form."""
    from pathlib import Path

    import numpy as np

    steps, seed = int(request["steps"]), int(request.get("seed", 0))
    logdir = Path(request["logdir"])
    logdir.mkdir(parents=True, exist_ok=True)
    if worker.backend == "tensorflow":
        from hierlstm.config import Timing
        from hierlstm.profiling.profiler import profile as tf_profile

        timing = Timing(int(request["warmup"]), int(request["repeats"]), seed)
        return tf_profile(config, timing, steps=steps, logdir=logdir).to_dict()
    layers = _layer_names(config, seed)
    run = worker.local.prepare(config, seed=seed)
    for _ in range(int(request["warmup"])):
        run.sample()
    if worker.backend == "jax":
        found = _jax_capture(run, logdir, steps, layers, bool(request.get("read", True)))
    else:
        found = _torch_capture(run, logdir, steps)
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
    """A worker's profile read here: an unread JAX capture summarised, and the last step in time
    (None in `timeline` without a step marker or without TensorFlow here)."""
    import json
    from pathlib import Path

    import numpy as np

    from hierlstm.profiling import timeline

    if not _can_read_xspace():  # no TensorFlow's protobufs here: the document as it came
        return profile_record(document)
    backend = document["config"]["backend"]
    step = None
    if backend == "jax":
        from hierlstm.profiling.xspace import read_xspace

        space = read_xspace(document["trace"])
        if document["attribution"] == JAX_UNREAD:
            document = {**document, **_xspace_fields(space, document["layer_names"])}
            document["profiled_step_s"] = float(np.median(document["step_s"]))
        try:
            step = timeline.step_timeline(space, document["layer_names"])
        except ValueError:  # no step marker: nothing was profiled in time
            step = None
    elif backend == "torch":
        trace = json.loads(Path(document["trace"]).read_text(encoding="utf-8"))
        try:
            step = timeline.torch_step_timeline(trace)
        except ValueError:
            step = None
    return profile_record(document, step)

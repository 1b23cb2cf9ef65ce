"""`python -m hierlstm doctor [--json] [--no-probe]`: whether this machine's GPUs work with this
TensorFlow, and what to do when they do not. One report of the build, the driver and the GPUs
TensorFlow sees, every mismatch as a sentence with its fix (`hardware.gpu_diagnosis`), then a live
probe per device (`folded` forward and training step: the LSTM kernel, XLA, each 16-bit precision
against float32) under the device lock. Exit 0 when every device works, 1 when a GPU is present but
unusable or a device fails, 2 for a bad argument."""

from __future__ import annotations

import math
import sys

from hierlstm.cli.format import shown, text_table
from hierlstm.cli.timing import device_lock
from hierlstm.config import PRECISIONS, RunConfig, Timing

PROBE_SIZE = {"batch_size": 8, "time_steps": 50}
PROBE_TIMING = Timing(warmup=1, repeats=5)
_MB = 1024 * 1024


def _capability(capability) -> str:
    return ".".join(map(str, capability)) if capability else "?"


def _tensorflow_gpus(report, driver) -> list[dict]:
    """The GPUs TensorFlow sees, with the total memory nvidia-smi reports for a GPU of the same
    name (TensorFlow's GPU:N need not be nvidia-smi's index N, but identical names have
    identical memory; several sizes under one name stay unknown)."""
    rows = []
    for gpu in report.gpus:
        sizes = {g.memory_total_mb for g in driver.gpus if g.name == gpu.name}
        rows.append(
            {
                "device": f"gpu:{gpu.index}",
                "name": gpu.name,
                "compute_capability": _capability(gpu.compute_capability),
                "memory_total_mb": sizes.pop() if len(sizes) == 1 else None,
            }
        )
    return rows


def _memory_state() -> dict:
    """How TensorFlow will allocate GPU memory, as it reports it (set by `_start_devices`)."""
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return {"mode": "none", "limit_mb": None}
    logical = tf.config.get_logical_device_configuration(gpus[0]) or []
    limit = logical[0].memory_limit if logical else None
    if limit:
        return {"mode": "limit", "limit_mb": int(limit)}
    growth = tf.config.experimental.get_memory_growth(gpus[0])
    return {"mode": "growth" if growth else "all", "limit_mb": None}


def probe_configs(device: str) -> list[RunConfig]:
    """What the probe runs on `device`: `folded` forward in float32, float32 + XLA (the generic
    kernel: XLA cannot compile cuDNN's), each 16-bit precision, and one training step."""
    base = RunConfig(variant="folded", device=device, **PROBE_SIZE)
    configs = [base, base.replace(xla=True), *(base.replace(precision=p) for p in PRECISIONS[1:])]
    configs.append(base.replace(task="training"))  # forward, backward, SGD update: one step
    return configs


def probe(device: str) -> dict:
    """`probe_configs(device)` compared in interleaved rounds; the kernel that ran; each run's
    time against float32's."""
    from hierlstm.hardware import device_label, precision_supported
    from hierlstm.timing import compare

    configs = probe_configs(device)
    base = configs[0]
    with device_lock([base], "doctor"):
        outcome = compare(configs, PROBE_TIMING)

    def run(index: int, kernel: bool = False) -> dict:
        """One run's outcome (with the LSTM kernel that ran and why, for `kernel`)."""
        entry = outcome.entries[index]
        result, speedup = entry.result, entry.speedup.median  # float32's time / this run's
        ratio = None if index == 0 or math.isnan(speedup) or speedup == 0 else 1 / speedup
        ok = result.status == "ok"
        return {
            "status": result.status,
            "error": result.error,
            "median_ms": result.step.median * 1e3 if ok else None,
            "first_call_s": result.first_call_s if ok else None,
            "time_vs_float32": ratio,
        } | ({"kernel": result.kernel, "kernel_reason": result.kernel_reason} if kernel else {})

    forward = outcome.results[0]
    return {
        "device": device,
        "label": device_label(device),
        "size": dict(PROBE_SIZE),
        "forward": run(0),
        "kernel": forward.kernel,
        "kernel_reason": forward.kernel_reason,
        "peak_memory_mb": forward.peak_memory_bytes / _MB if forward.status == "ok" else None,
        "peak_memory_kind": forward.peak_memory_kind,
        "xla": run(1, kernel=True),
        "precisions": [
            {
                "precision": precision,
                **run(index),
                "note": precision_supported(precision, device)[1],
            }
            for index, precision in enumerate(PRECISIONS[1:], start=2)
        ],
        "training": run(len(configs) - 1, kernel=True),
    }


def doctor_report(*, run_probe: bool = True, on_probe=None) -> dict:
    """Everything `doctor` reports, as the JSON document it prints; `on_probe(device)` is
    called before each device's probe."""
    from hierlstm.hardware import device_report
    from hierlstm.hardware.gpu_diagnosis import (
        and_cuda_packages,
        any_unusable,
        diagnose,
        gather_facts,
        missing_packages,
    )

    report = device_report()
    facts = gather_facts(report)
    problems = diagnose(facts)
    packages = and_cuda_packages()
    devices = ["cpu", *(f"gpu:{gpu.index}" for gpu in report.gpus)]
    probes = None
    if run_probe:
        probes = []
        for device in devices:
            if on_probe:
                on_probe(device)
            probes.append(probe(device))
    broken = any(
        run["status"] != "ok" for p in probes or [] for run in (p["forward"], p["training"])
    )
    status = "unusable" if any_unusable(problems) else "failed" if broken else "ok"
    return {
        "tensorflow": {
            "version": report.tensorflow,
            "keras": report.keras,
            "python": report.python,
            "cuda_build": report.cuda_build,
            "cuda_version": report.cuda_version,
            "cudnn_version": report.cudnn_version,
            "cuda_targets": list(facts.cuda_targets),
        },
        "and_cuda": {"packages": list(packages), "missing": list(missing_packages(packages))},
        "driver": {
            **facts.driver.to_dict(),
            "gpus": [
                {**vars(g), "compute_capability": _capability(g.compute_capability)}
                for g in facts.driver.gpus
            ],
        },
        "tensorflow_gpus": _tensorflow_gpus(report, facts.driver),
        "memory": _memory_state(),
        "problems": [problem.to_dict() for problem in problems],
        "probes": probes,
        "status": status,
        "exit_status": 0 if status == "ok" else 1,
    }


def _ms(run: dict) -> str:
    if run["status"] != "ok":
        return f"failed: {run['error']}"
    ratio = run["time_vs_float32"]
    versus = f", {ratio:.2f}x float32's time" if ratio is not None else ""
    return f"{run['median_ms']:.2f} ms (first call {run['first_call_s']:.2f} s{versus})"


def format_report(document: dict) -> str:
    tf, driver = document["tensorflow"], document["driver"]
    cuda = (
        f"built with CUDA {tf['cuda_version']} and cuDNN {tf['cudnn_version']} for "
        f"{', '.join(tf['cuda_targets'])}"
        if tf["cuda_build"]
        else "built without CUDA"
    )
    lines = [f"TensorFlow {tf['version']} (Keras {tf['keras']}, Python {tf['python']}), {cuda}"]
    missing, packages = document["and_cuda"]["missing"], document["and_cuda"]["packages"]
    if packages:
        lines.append(
            f"and-cuda wheels: {len(packages) - len(missing)} of {len(packages)} installed"
        )
    if driver["gpus"]:
        where = f"{driver['source']}" + (
            f", {driver['nvidia_smi']}" if driver["nvidia_smi"] else ""
        )
        lines.append(f"NVIDIA driver {driver['driver_version'] or '?'} ({where}):")
        rows = [
            (
                g["index"],
                g["name"],
                g["compute_capability"],
                f"{g['memory_total_mb'] or '?'} MiB, {g['memory_free_mb'] or '?'} MiB free",
            )
            for g in driver["gpus"]
        ]
        table = text_table(("index", "GPU", "compute capability", "memory"), rows)
        lines += ["  " + line for line in table.splitlines()]
    else:
        smi = driver["nvidia_smi"] or "no nvidia-smi on PATH"
        lines.append(f"NVIDIA driver: no NVIDIA GPU found ({smi}; none in /proc/driver/nvidia)")
    seen = document["tensorflow_gpus"]
    lines.append(
        "TensorFlow sees: "
        + (
            "; ".join(
                f"{g['device']} {g['name']} (compute capability {g['compute_capability']}, "
                f"{g['memory_total_mb'] or '?'} MiB)"
                for g in seen
            )
            or "no GPU"
        )
    )
    memory = document["memory"]
    lines.append(
        {
            "none": "GPU memory: no GPU",
            "growth": "GPU memory: growth on (each process takes only what it uses)",
            "all": "GPU memory: TensorFlow takes nearly all of it at first use",
            "limit": f"GPU memory: {memory['limit_mb']} MiB per GPU (HIERLSTM_GPU_MEMORY_MB)",
        }[memory["mode"]]
    )
    lines.append("")
    lines.append("Problems:" if document["problems"] else "Problems: none")
    for problem in document["problems"]:
        lines += [f"  [{problem['severity']}] {problem['message']}", f"    fix: {problem['fix']}"]
    for item in document["probes"] or []:
        size = item["size"]
        lines += [
            "",
            f"Probe on {item['label']}: folded, batch {size['batch_size']} x time "
            f"{size['time_steps']}, {PROBE_TIMING.warmup} warm-up + {PROBE_TIMING.repeats} "
            "timed calls per run, interleaved",
            f"  forward (float32): {_ms(item['forward'])}",
            f"  LSTM kernel: {item['kernel']}"
            + (
                f" ({item['kernel_reason']})"
                if item["kernel_reason"]
                else " (CudnnRNN in the graph)"
            ),
            f"  XLA (jit_compile): {_ms(item['xla'])}; LSTM kernel {item['xla']['kernel'] or '—'}"
            + (f", {item['xla']['kernel_reason']}" if item["xla"]["kernel_reason"] else ""),
        ]
        for run in item["precisions"]:
            note = f" [{run['note']}]" if run["note"] else ""
            lines.append(f"  {run['precision']}: {_ms(run)}{note}")
        training = item["training"]
        kernel = training["kernel"] or "—"
        reason = f", {training['kernel_reason']}" if training["kernel_reason"] else ""
        lines.append(
            f"  training step (float32, SGD): {_ms(training)}; LSTM kernel {kernel}{reason}"
        )
    if not driver["gpus"] and document["probes"] is not None:
        lines += ["", "No NVIDIA GPU was found: the probe ran on the CPU only."]
    verdict = {
        "ok": "every device works",
        "unusable": "a GPU is present but TensorFlow cannot use it",
        "failed": "a device failed its forward pass or its training step",
    }[document["status"]]
    lines += ["", f"Result: {verdict} (exit status {document['exit_status']})."]
    return "\n".join(lines)


def cmd_doctor(args) -> int:
    def probing(device: str) -> None:
        print(f"probing {device}...", file=sys.stderr, flush=True)

    document = doctor_report(run_probe=not args.no_probe, on_probe=probing)
    shown(args.json, document, lambda: format_report(document))
    return document["exit_status"]

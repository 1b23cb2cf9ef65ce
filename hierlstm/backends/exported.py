"""A run on an inference runtime (`hierlstm.registry.Backend.exported`): the variant exported to
ONNX and checked against the numpy oracle (`hierlstm.model.export`, TensorFlow in this worker),
then the runtime's session made from the file's bytes by its runner (`session(model, threads)`),
its creation or compilation and first call timed together as the first call, and each sample one
call of it. The runtime's own kernels run the file's ops, so no cuDNN question arises.

    run = exported_run(config, seed=0)    a `BackendRun`, as every backend's `prepare` returns
"""

from __future__ import annotations

import os
import platform
import time

import numpy as np

from hierlstm.backends import runner
from hierlstm.backends.compile import BackendRun
from hierlstm.backends.protocol import package_version
from hierlstm.config import RunConfig
from hierlstm.i18n import t
from hierlstm.model.export import node_layers
from hierlstm.profiling.record import OUTSIDE
from hierlstm.registry import RUNTIMES, VARIANTS, converts
from hierlstm.timing.basics import Progress, make_inputs, no_progress

# The intra-op threads every worker of a run takes (`benchmarks.model.backends.thread_environment`
# sets them all alike); unset, each runtime takes its own default.
THREAD_SETTINGS = ("OMP_NUM_THREADS", "TF_NUM_INTRAOP_THREADS")


def intra_op_threads() -> int:
    """The intra-op threads this process was given (0: the runtime's own default)."""
    for name in THREAD_SETTINGS:
        text = os.environ.get(name, "").strip()
        if text.isdigit() and int(text) > 0:
            return int(text)
    return 0


def versions(backend: str) -> dict[str, str]:
    """What ran it: python, numpy, the converter's TensorFlow and Keras, and the runtime."""
    found = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "tensorflow": package_version("tensorflow"),
        "keras": package_version("keras"),
        backend: package_version(backend),
    }
    return {key: value for key, value in found.items() if value}


def exported_run(
    config: RunConfig, *, seed: int, backend: str, progress: Progress = no_progress
) -> BackendRun:
    """`config`'s variant exported, checked, and made a session of by `backend`'s runner; the
    timed first call is the session's creation (or compilation) and its first call."""
    from hierlstm.hardware.cpu import cpu_description
    from hierlstm.model.export import export_onnx

    progress(0.0, f"exporting {config.variant} to ONNX and checking it against numpy")
    exported = export_onnx(config, seed)
    inputs = make_inputs(config, seed)  # (B, H, T, 1)
    framework = runner(backend)
    progress(0.5, f"making the {backend} session and the first call")
    start = time.perf_counter()
    call = framework.session(exported.model, intra_op_threads())
    call(inputs)
    first_call_s = time.perf_counter() - start
    progress(1.0, f"first call {first_call_s:.3g} s ({exported.lstm_ops} fused LSTM ops)")

    def sampler() -> dict[str, float]:
        begin = time.perf_counter()
        call(inputs)  # returns once the runtime has finished: a CPU call is synchronous
        return {"step": time.perf_counter() - begin}

    return BackendRun(
        config,
        f"/CPU:0 ({cpu_description()})",
        first_call_s,
        "generic",
        t("kernel.why.runtime", "en"),
        versions(backend),
        sampler,
        lambda: 0,
        backend,
        evidence=" ".join(exported.op_types),
        model=exported.model,
    )


def check(config: RunConfig, *, seed: int, backend: str) -> dict:
    """Every variant that converts, exported at `config`'s sizes and run by `backend` against
    the numpy oracle: `local.check`'s report (no gradients: a runtime runs no training)."""
    from hierlstm.model.export import TOLERANCE, export_onnx
    from hierlstm.model.params import init_params
    from hierlstm.model.reference import reference_forward

    rows = []
    for variant in (name for name in VARIANTS if converts(name)):
        each = config.replace(variant=variant)
        exported = export_onnx(each, seed)
        inputs = make_inputs(each, seed)
        outputs = runner(backend).session(exported.model, intra_op_threads())(inputs)
        expected = reference_forward(init_params(each, seed), inputs, pool_height=each.pool_height)
        difference = float(np.max(np.abs(np.asarray(outputs, dtype=np.float64) - expected)))
        rows.append(
            {
                "variant": variant,
                "max_abs_diff": difference,
                "tolerance": TOLERANCE,
                "ok": difference <= TOLERANCE,
            }
        )
    return {
        "backend": backend,
        "config": config.to_dict(),
        "forward": rows,
        "gradients": [],
        "ok": all(row["ok"] for row in rows),
    }


def node_tables(timed: list[tuple[str, str, float]], layers: list[str], steps: int) -> dict:
    """A runtime profile's per-layer and per-op-type rows from `timed` (node, op type, seconds
    over all `steps`), in the document's fields; times are per step."""
    owners = node_layers([node for node, _, _ in timed], layers, OUTSIDE)
    total = sum(seconds for _, _, seconds in timed) or 1.0
    by_layer: dict[str, list[float]] = {}
    by_type: dict[str, list[float]] = {}
    for owner, (_, op_type, seconds) in zip(owners, timed, strict=True):
        for table, key in ((by_layer, owner), (by_type, op_type)):
            entry = table.setdefault(key, [0.0, 0])
            entry[0] += seconds
            entry[1] += 1
    order = [*layers, OUTSIDE]
    layer_rows = [
        {"layer": layer, "type": "", "time_s": seconds / steps, "share": seconds / total, "ops": n}
        for layer in order
        if layer in by_layer
        for seconds, n in [by_layer[layer]]
    ]
    type_rows = sorted(
        (
            {"type": kind, "time_s": seconds / steps, "ops": n, "share": seconds / total}
            for kind, (seconds, n) in by_type.items()
        ),
        key=lambda row: -row["time_s"],
    )
    return {"layers": layer_rows, "op_types": type_rows, "lines": []}


def runtimes_missing() -> str | None:
    """None when at least one runtime (with the converter) is installed, else the first one's
    sentence saying what is missing and how to install it: a user's model is then not exported."""
    from hierlstm.backends import missing

    reasons = [missing(name) for name in RUNTIMES]
    return reasons[0] if all(reasons) else None


def bench_model(model, shapes: list[tuple], repeats: int = 5):
    """A user's `model` (`hierlstm.yours.runtimes`) exported, checked on each installed runtime
    against Keras, and its forward pass
    timed on TensorFlow and each runtime: one call each first (sessions made, graphs traced),
    then `repeats` interleaved rounds with the order rotated. Raises ExportError in one line."""
    import keras
    import tensorflow as tf

    from hierlstm.backends import missing
    from hierlstm.model.export import ExportError
    from hierlstm.timing.calls import timed_call
    from hierlstm.timing.rounds import timer_rounds
    from hierlstm.yours.runtimes import TOLERANCE, RuntimeBench, export_model, fused_ops, rejected
    from hierlstm.yours.verify import sample_inputs

    if reason := runtimes_missing():  # the converter and the runtimes are one optional extra
        raise ExportError(reason)
    exported = export_model(model, shapes)
    if message := rejected(model, exported):
        raise ExportError(message)
    inputs = sample_inputs(model, shapes)
    expected = np.asarray(keras.tree.flatten(model(inputs, training=False))[0])
    forward = tf.function(lambda *xs: model(list(xs) if len(xs) > 1 else xs[0], training=False))
    forward(*inputs)  # traced and run once
    timers = {"tensorflow": lambda: timed_call(forward, *inputs)}
    absent, differences = {}, {}
    for name in RUNTIMES:
        if reason := missing(name):
            absent[name] = reason
            continue
        call = runner(name).session(exported, intra_op_threads())
        outputs = np.asarray(call(*inputs))
        differences[name] = float(np.max(np.abs(outputs.astype(np.float64) - expected)))
        if not differences[name] <= TOLERANCE:
            raise ExportError(
                f"{name} computes {model.name} {differences[name]:.2e} away from Keras "
                f"(tolerance {TOLERANCE:.0e}); not timed."
            )
        timers[name] = lambda call=call: _timed(call, inputs)
    samples = timer_rounds(timers, repeats, warmup=1, rotate=True)
    return RuntimeBench(fused_ops(model, exported), differences, samples, absent)


def _timed(call, inputs) -> float:
    """Seconds for one call of a runtime's session (synchronous on a CPU)."""
    start = time.perf_counter()
    call(*inputs)
    return time.perf_counter() - start

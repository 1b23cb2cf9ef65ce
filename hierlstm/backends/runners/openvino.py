"""OpenVINO's runner (`hierlstm.backends.runners`): the variant exported to ONNX
(`hierlstm.backends.exported`), read by OpenVINO's ONNX front end and compiled for its CPU plugin
with the run's intra-op threads and the latency hint. OpenVINO is imported only inside the
functions."""

from __future__ import annotations

import functools

from hierlstm.backends.protocol import keras_failure_line
from hierlstm.backends.runners import runtime
from hierlstm.config import RunConfig, SettingError

NAME = __name__.rsplit(".", 1)[-1]
# What both runtimes share (`runtime`): the contract's functions that do not differ.
start, read_capture = runtime.start, runtime.read_capture
memory_probe = profile_probe = runtime.process_memory
prepare = functools.partial(runtime.prepare, backend=NAME)
check = functools.partial(runtime.check, backend=NAME)


def run_failures() -> tuple[type[BaseException], ...]:
    # OpenVINO raises RuntimeError (its C++ exceptions) for a model it cannot read or compile
    return (RuntimeError, MemoryError, SettingError)


def failure_line(error: BaseException) -> str:
    return keras_failure_line(NAME, error)


def compile_settings(threads: int) -> dict[str, str]:
    """The CPU plugin's settings: the latency hint (one stream), float32 arithmetic, `threads`
    threads when given. The plugin's own default precision is bfloat16 on a CPU that has it
    (AVX-512 BF16 or AMX): there it timed float32 models in bfloat16, 8.5e-4 away from Keras
    on Your model's shared_cell example, where the runtimes are held to 1e-4."""
    settings = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32"}
    if threads:
        settings["INFERENCE_NUM_THREADS"] = str(threads)
    return settings


def session(model: bytes, threads: int):
    """A call of the ONNX file `model` on its inputs in order (hierlstm's: (B, H, T, 1) float32
    -> (B, T, outer)), returning its first output; compiled."""
    import openvino

    core = openvino.Core()
    compiled = core.compile_model(core.read_model(model), "CPU", compile_settings(threads))
    request = compiled.create_infer_request()
    return lambda *inputs: request.infer(list(inputs))[0]


ATTRIBUTION = (
    "per node and per layer: OpenVINO's per-layer performance counters (PERF_COUNT) time each "
    "node its CPU plugin executed; a node is the layer its name scope names, else the layer "
    "before it in execution order (where the plugin folded a layer's own nodes away, its fused "
    "LSTMSequence lands in the layer before)"
)


def _capture(run, logdir, steps: int, layers: list[str], read: bool) -> dict:
    """`steps` calls of the run's file compiled with OpenVINO's performance counters on (one call
    before them, left out), summed per executed node; the counters written as JSON."""
    import json
    import time

    import openvino

    from hierlstm.backends.exported import intra_op_threads, node_tables
    from hierlstm.timing.basics import make_inputs

    core = openvino.Core()
    settings = {**compile_settings(intra_op_threads()), "PERF_COUNT": "YES"}
    request = core.compile_model(core.read_model(run.model), "CPU", settings).create_infer_request()
    inputs = make_inputs(run.config)
    request.infer([inputs])
    step_s, totals, counters = [], {}, []
    for _ in range(steps):
        start = time.perf_counter()
        request.infer([inputs])
        step_s.append(time.perf_counter() - start)
        executed = [
            (info.node_name, info.node_type, info.exec_type, info.real_time.total_seconds())
            for info in request.get_profiling_info()
            if info.status == info.Status.EXECUTED
        ]
        counters.append(executed)
        for node, node_type, _, seconds in executed:
            entry = totals.setdefault(node, [node_type, 0.0])
            entry[1] += seconds
    trace = logdir / "openvino_counters.json"
    fields = ("node", "type", "exec_type", "real_time_s")
    steps_json = [[dict(zip(fields, row, strict=True)) for row in step] for step in counters]
    trace.write_text(json.dumps({"steps": steps_json}), encoding="utf-8")
    timed = [(node, node_type, seconds) for node, (node_type, seconds) in totals.items()]
    return {
        "trace": str(trace),
        "attribution": ATTRIBUTION,
        "step_s": step_s,
        **node_tables(timed, layers, steps),
    }


def profile(worker, config: RunConfig, request: dict) -> dict:
    return runtime.profile(worker, config, request, _capture)

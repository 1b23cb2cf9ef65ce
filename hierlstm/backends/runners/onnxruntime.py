"""ONNX Runtime's runner (`hierlstm.backends.runners`): the variant exported to ONNX
(`hierlstm.backends.exported`), run by an `InferenceSession` on the CPU execution provider with the
run's intra-op threads, one inter-op thread and sequential execution. ONNX Runtime is imported only
inside the functions."""

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
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, RuntimeException

    return (Fail, RuntimeException, MemoryError, SettingError)


def failure_line(error: BaseException) -> str:
    return keras_failure_line(NAME, error)


def session_options(threads: int):
    """The session's options: `threads` intra-op threads (0: ONNX Runtime's default), one
    inter-op thread, nodes run one after another, every graph optimisation."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3  # errors only: its warnings would fill the worker's stderr
    return options


def session(model: bytes, threads: int):
    """A call of the ONNX file `model` on its inputs in order (hierlstm's: (B, H, T, 1) float32
    -> (B, T, outer)), returning its first output; its session made."""
    import onnxruntime

    made = onnxruntime.InferenceSession(
        model, session_options(threads), providers=["CPUExecutionProvider"]
    )
    names = [found.name for found in made.get_inputs()]
    return lambda *inputs: made.run(None, dict(zip(names, inputs, strict=True)))[0]


ATTRIBUTION = (
    "per node and per layer: ONNX Runtime's own profiler times each node of the exported file "
    "(its kernel time); a node is the layer its name scope names, else the layer before it"
)


def _capture(run, logdir, steps: int, layers: list[str], read: bool) -> dict:
    """`steps` calls of a new session of the run's file with ONNX Runtime's profiler on (one
    call before them, left out): its JSON trace, summed per node."""
    import json
    import time

    import onnx
    import onnxruntime

    from hierlstm.backends.exported import intra_op_threads, node_tables
    from hierlstm.timing.basics import make_inputs

    options = session_options(intra_op_threads())
    options.enable_profiling = True
    options.profile_file_prefix = str(logdir / NAME)
    made = onnxruntime.InferenceSession(run.model, options, providers=["CPUExecutionProvider"])
    feed = {made.get_inputs()[0].name: make_inputs(run.config)}
    made.run(None, feed)  # allocations and the first call's own work, left out below
    step_s = []
    for _ in range(steps):
        start = time.perf_counter()
        made.run(None, feed)
        step_s.append(time.perf_counter() - start)
    trace = made.end_profiling()
    with open(trace, encoding="utf-8") as file:
        events = json.load(file)
    runs = sorted(event["ts"] for event in events if event.get("name") == "model_run")
    since = runs[1] if len(runs) > 1 else 0  # the first profiled call left out
    totals: dict[str, list] = {}
    for event in events:
        name = event.get("name", "")
        if event.get("cat") == "Node" and name.endswith("_kernel_time") and event["ts"] >= since:
            node = name.removesuffix("_kernel_time")
            entry = totals.setdefault(node, [event.get("args", {}).get("op_name", "?"), 0.0])
            entry[1] += event["dur"] * 1e-6
    graph = [node.name for node in onnx.load_from_string(run.model).graph.node]
    order = [name for name in graph if name in totals] + [n for n in totals if n not in graph]
    timed = [(name, totals[name][0], totals[name][1]) for name in order]
    return {
        "trace": trace,
        "attribution": ATTRIBUTION,
        "step_s": step_s,
        **node_tables(timed, layers, steps),
    }


def profile(worker, config: RunConfig, request: dict) -> dict:
    return runtime.profile(worker, config, request, _capture)

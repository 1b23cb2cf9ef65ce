"""ONNX Runtime's runner (`hierlstm.backends.runners`): the variant exported to ONNX
(`hierlstm.backends.exported`), run by an `InferenceSession` on the CPU execution provider with the
run's intra-op threads, one inter-op thread and sequential execution. ONNX Runtime is imported only
inside the functions."""

from __future__ import annotations

from hierlstm.backends.protocol import keras_failure_line
from hierlstm.config import RunConfig, SettingError
from hierlstm.timing.rss import CpuRssGrowth

NAME = __name__.rsplit(".", 1)[-1]


def start() -> None:
    """TensorFlow (the converter's) imported quietly before the first request."""
    from hierlstm._native import import_tensorflow_quietly

    import_tensorflow_quietly().get_logger().setLevel("ERROR")


def run_failures() -> tuple[type[BaseException], ...]:
    from onnxruntime.capi.onnxruntime_pybind11_state import Fail, RuntimeException

    return (Fail, RuntimeException, MemoryError, SettingError)


def failure_line(error: BaseException) -> str:
    return keras_failure_line(NAME, error)


def memory_probe(device: str):
    return CpuRssGrowth()  # the runtime's arena is the process's memory


def profile_probe(device: str):
    return CpuRssGrowth()


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
    """A call (B, H, T, 1) float32 -> (B, T, outer) of the ONNX file `model`, its session made."""
    import onnxruntime

    made = onnxruntime.InferenceSession(
        model, session_options(threads), providers=["CPUExecutionProvider"]
    )
    name = made.get_inputs()[0].name
    return lambda inputs: made.run(None, {name: inputs})[0]


def prepare(config: RunConfig, *, seed: int, progress):
    from hierlstm.backends.exported import exported_run

    return exported_run(config, seed=seed, backend=NAME, progress=progress)


def check(config: RunConfig, *, seed: int) -> dict:
    from hierlstm.backends.exported import check as check_runtime

    return check_runtime(config, seed=seed, backend=NAME)


def profile(worker, config: RunConfig, request: dict) -> dict:
    raise SettingError(f"profile: the {NAME} runtime's profile is not offered yet.")


def read_capture(document: dict):
    return document, None

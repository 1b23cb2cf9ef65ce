"""OpenVINO's runner (`hierlstm.backends.runners`): the variant exported to ONNX
(`hierlstm.backends.exported`), read by OpenVINO's ONNX front end and compiled for its CPU plugin
with the run's intra-op threads and the latency hint. OpenVINO is imported only inside the
functions."""

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
    # OpenVINO raises RuntimeError (its C++ exceptions) for a model it cannot read or compile
    return (RuntimeError, MemoryError, SettingError)


def failure_line(error: BaseException) -> str:
    return keras_failure_line(NAME, error)


def memory_probe(device: str):
    return CpuRssGrowth()  # the plugin's memory is the process's


def profile_probe(device: str):
    return CpuRssGrowth()


def compile_settings(threads: int) -> dict[str, str]:
    """The CPU plugin's settings: the latency hint (one stream), `threads` threads when given."""
    settings = {"PERFORMANCE_HINT": "LATENCY"}
    if threads:
        settings["INFERENCE_NUM_THREADS"] = str(threads)
    return settings


def session(model: bytes, threads: int):
    """A call (B, H, T, 1) float32 -> (B, T, outer) of the ONNX file `model`, compiled."""
    import openvino

    core = openvino.Core()
    compiled = core.compile_model(core.read_model(model), "CPU", compile_settings(threads))
    request = compiled.create_infer_request()
    return lambda inputs: request.infer([inputs])[0]


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

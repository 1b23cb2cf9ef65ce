"""What both inference runtimes' runners share (`onnxruntime`, `openvino`): TensorFlow imported
quietly for the converter, the process's own memory as a run's peak, the variant exported and
first-called (`hierlstm.backends.exported`), and a profile read as JAX's and torch's are. Nothing
heavy is imported until a function is called."""

from __future__ import annotations

from hierlstm.config import RunConfig
from hierlstm.timing.rss import CpuRssGrowth


def start() -> None:
    """TensorFlow (the converter's) imported quietly before the first request."""
    from hierlstm._native import import_tensorflow_quietly

    import_tensorflow_quietly().get_logger().setLevel("ERROR")


def process_memory(device: str):
    """A run's (and a profile's) memory probe: a runtime's memory is the process's."""
    return CpuRssGrowth()


def prepare(config: RunConfig, *, seed: int, progress, backend: str):
    from hierlstm.backends.exported import exported_run

    return exported_run(config, seed=seed, backend=backend, progress=progress)


def check(config: RunConfig, *, seed: int, backend: str) -> dict:
    from hierlstm.backends.exported import check as check_runtime

    return check_runtime(config, seed=seed, backend=backend)


def profile(worker, config: RunConfig, request: dict, capture) -> dict:
    """A profile in the runtime's worker, its nodes timed by the runner's `capture`."""
    from hierlstm.backends.profiles import keras_profile

    return keras_profile(worker, config, request, capture)


def read_capture(document: dict):
    return document, None

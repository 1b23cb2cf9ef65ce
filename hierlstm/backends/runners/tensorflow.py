"""TensorFlow's runner (`hierlstm.backends.runners`): the harness (`hierlstm.timing`) and the
TensorFlow Profiler (`hierlstm.profiling`), the same code that runs in this process, for a
TensorFlow config in a worker beside JAX's and torch's. TensorFlow is imported only inside the
functions."""

from __future__ import annotations

from hierlstm.config import RunConfig


def start() -> None:
    """TensorFlow imported before the first request, its start-up lines off the terminal, and its
    devices set as the server sets its own (GPU memory growth or HIERLSTM_GPU_MEMORY_MB, then
    HIERLSTM_LOGICAL_CPUS): a page's run here sees the devices the page offered."""
    import logging

    from hierlstm._native import import_tensorflow_quietly
    from hierlstm.distributed import ensure_logical_cpus_from_environment
    from hierlstm.hardware import configure_memory

    import_tensorflow_quietly().get_logger().setLevel("ERROR")
    for set_up in (configure_memory, ensure_logical_cpus_from_environment):
        try:
            set_up()
        except (ValueError, RuntimeError) as error:  # the server's banner says it too
            logging.getLogger(__name__).warning("%s: %s", set_up.__name__, error)


def run_failures() -> tuple[type[BaseException], ...]:
    from hierlstm.timing.failures import RUN_FAILURES

    return RUN_FAILURES


def failure_line(error: BaseException) -> str:
    from hierlstm.timing.failures import error_line

    return error_line(error)


def memory_probe(device: str):
    from hierlstm.timing.memory import memory_probe as tensorflow_probe

    return tensorflow_probe(device)


profile_probe = memory_probe


def prepare(config: RunConfig, *, seed: int, progress):
    """The harness's prepared run, with the same surface as the other backends'."""
    from hierlstm.backends.compile import BackendRun
    from hierlstm.timing.harness import prepare as prepare_tensorflow

    prepared = prepare_tensorflow(config, seed=seed, progress=progress)
    return BackendRun(
        config,
        prepared.description,
        prepared.first_call_s,
        prepared.kernel,
        prepared.kernel_reason,
        prepared.versions,
        prepared.sample,
        prepared.forward.experimental_get_tracing_count,
    )


def profile(worker, config: RunConfig, request: dict) -> dict:
    """`hierlstm.profiling.profiler.profile` in the worker: its record's JSON form."""
    from pathlib import Path

    from hierlstm.config import Timing
    from hierlstm.profiling.profiler import profile as tf_profile

    timing = Timing(int(request["warmup"]), int(request["repeats"]), int(request.get("seed", 0)))
    logdir = Path(request["logdir"])
    logdir.mkdir(parents=True, exist_ok=True)
    return tf_profile(config, timing, steps=int(request["steps"]), logdir=logdir).to_dict()


def read_capture(document: dict):
    """(the document, no step timeline): a TensorFlow profile from a worker is read as it came."""
    return document, None

"""What the benchmarks that time TensorFlow share: TensorFlow imported quietly, the report's
header and the CPU's estimated peak. What needs no framework is in `benchmarks.record`."""

from __future__ import annotations

import datetime
import os
import platform
import sys

from benchmarks.record import cpu_model_and_mhz
from hierlstm import import_tensorflow_quietly

tf = import_tensorflow_quietly()  # before anything of hierlstm's that imports TensorFlow

tf.get_logger().setLevel("ERROR")


def fp32_peak_gflops() -> tuple[float, str]:
    """Estimated FP32 peak GFLOP/s and how it was reckoned: cores x clock x FLOPs per cycle, two
    FMA units per core assumed, at the clock /proc/cpuinfo reports now (a VM's base clock, often).
    For scale, not a measured roofline."""
    from hierlstm.hardware import cpu_flags  # imports TensorFlow: after the quiet import

    cores = len(os.sched_getaffinity(0))
    flags = cpu_flags()
    per_cycle = 64 if "avx512f" in flags else 32 if "avx2" in flags else 16
    model, mhz = cpu_model_and_mhz()
    peak = cores * mhz / 1000 * per_cycle
    method = (
        f"{cores} cores x {mhz / 1000:.2f} GHz x {per_cycle} FP32 FLOP/cycle "
        f"({'AVX-512' if per_cycle == 64 else 'AVX2' if per_cycle == 32 else 'SSE'}, "
        f"2 FMA units assumed) = {peak:.0f} GFLOP/s"
    )
    return peak, method


def command_line() -> str:
    """How this process was started, as `python -m benchmarks.NAME ...` or
    `python -m benchmarks NAME ...`."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    if spec is None:  # not run with -m
        return " ".join([".venv/bin/python", *sys.argv])
    module = spec.name.removesuffix(".__main__")
    return " ".join([".venv/bin/python", "-m", module, *sys.argv[1:]])


def header(title: str) -> str:
    import keras
    import numpy as np

    model, _ = cpu_model_and_mhz()
    gpus = tf.config.list_physical_devices("GPU")
    return "\n".join(
        [
            f"## {title}",
            "",
            f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
            f"- machine: {model}, {len(os.sched_getaffinity(0))} cores visible, "
            f"{'GPUs: ' + str(len(gpus)) if gpus else 'no GPU'}",
            f"- versions: Python {platform.python_version()}, TensorFlow {tf.__version__}, "
            f"Keras {keras.__version__}, numpy {np.__version__}",
            f"- command: `{command_line()}`",
            "",
        ]
    )

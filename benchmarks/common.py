"""What the benchmarks that time TensorFlow share: TensorFlow imported quietly, the report's
header with the GPUs it sees and the CPU's estimated peak. What needs no framework is in
`benchmarks.record`."""

from __future__ import annotations

import os

from benchmarks import record
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
    model, mhz = record.cpu_model_and_mhz()
    peak = cores * mhz / 1000 * per_cycle
    method = (
        f"{cores} cores x {mhz / 1000:.2f} GHz x {per_cycle} FP32 FLOP/cycle "
        f"({'AVX-512' if per_cycle == 64 else 'AVX2' if per_cycle == 32 else 'SSE'}, "
        f"2 FMA units assumed) = {peak:.0f} GFLOP/s"
    )
    return peak, method


def header(title: str) -> str:
    """`benchmarks.record.header` with the GPUs TensorFlow sees."""
    return record.header(title, gpus=len(tf.config.list_physical_devices("GPU")))

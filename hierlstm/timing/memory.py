"""Peak memory during timed calls: TensorFlow's GPU allocator peak on a GPU, the growth of the
process's resident set on a CPU. Neither knows memory by part; the parts are the cost model's
(`hierlstm.model.cost.memory_parts`)."""

from __future__ import annotations

import tensorflow as tf

from hierlstm.timing.rss import CpuRssGrowth


class GpuAllocatorPeak:
    """TensorFlow's GPU allocator peak (bytes in use, weights and inputs included) since the
    last reset; exact, and kept by the allocator itself, so nothing is sampled."""

    kind = "gpu_allocator_peak"

    def __init__(self, device: str, memory_info=None, reset_stats=None):
        # "/GPU:0", or a worker's description "/GPU:0 (NVIDIA ...)" -> "GPU:0", as the memory
        # APIs take it
        self.device = device.lstrip("/").split(" ")[0]
        # TensorFlow's own by default; a test hands in an allocator's stand-in
        self._memory_info = memory_info or tf.config.experimental.get_memory_info
        self._reset_stats = reset_stats or tf.config.experimental.reset_memory_stats

    def reset(self):
        self._reset_stats(self.device)

    def peak_bytes(self) -> int:
        return int(self._memory_info(self.device)["peak"])

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        pass


def memory_probe(device: str):
    return GpuAllocatorPeak(device) if "GPU" in device else CpuRssGrowth()

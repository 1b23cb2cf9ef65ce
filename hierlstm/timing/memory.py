"""Peak memory during timed calls: TensorFlow's GPU allocator peak on a GPU, the growth of the
process's resident set (sampled by a thread) on a CPU.

Neither reports memory by part (weights, gradients, optimizer slots, activations): the GPU
allocator knows bytes in use, not what they hold, and on a CPU TensorFlow keeps no statistics
at all, so the parts are the cost model's (`hierlstm.model.cost.memory_parts`) and a probe's
one number stands beside them as what was measured.
"""

from __future__ import annotations

import os
import sys
import threading

import tensorflow as tf


def _resident_bytes() -> int:
    """This process's resident set size now."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        # No procfs (macOS): the lifetime high-water mark instead, so growth shows only when
        # a pass exceeds every earlier peak of the process.
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


class CpuRssGrowth:
    """Peak growth of the process RSS during a window, sampled every `interval` seconds.

    A daemon thread reads /proc/self/statm (a few microseconds; TensorFlow ops release the GIL,
    so the sampler barely perturbs the timing). Limits: spikes shorter than the interval can
    be missed; allocations of other threads in the process (another app session) count too;
    memory the allocator kept from earlier passes and reuses does not show as growth. It
    measures what one pass adds to the process, not the model's whole working set.
    """

    kind = "cpu_rss_growth"

    def __init__(self, interval: float = 0.005):
        self.interval = interval
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._baseline = self._peak = _resident_bytes()
        self._thread = threading.Thread(target=self._sample, daemon=True, name="rss-sampler")

    def _sample(self):
        while not self._stop.wait(self.interval):
            self._observe(_resident_bytes())

    def _observe(self, resident: int):
        with self._lock:
            self._peak = max(self._peak, resident)

    def reset(self):
        with self._lock:
            self._baseline = self._peak = _resident_bytes()

    def peak_bytes(self) -> int:
        self._observe(_resident_bytes())
        with self._lock:
            return max(0, self._peak - self._baseline)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join()


class GpuAllocatorPeak:
    """TensorFlow's GPU allocator peak (bytes in use, weights and inputs included) since the
    last reset; exact, and kept by the allocator itself, so nothing is sampled."""

    kind = "gpu_allocator_peak"

    def __init__(self, device: str, memory_info=None, reset_stats=None):
        self.device = device.lstrip("/")  # "/GPU:0" -> "GPU:0", as the memory APIs take it
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


def peak_over_calls(call, count: int, probe) -> tuple[list, int]:
    """`count` results of `call()` and the largest peak `probe` (inside its `with`) saw over
    one call, reset before each: a step's own peak, not the process's history."""
    results, peak = [], 0
    for _ in range(count):
        probe.reset()
        results.append(call())
        peak = max(peak, probe.peak_bytes())
    return results, peak

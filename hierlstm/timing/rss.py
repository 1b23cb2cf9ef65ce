"""The process's resident set as a memory probe (`CpuRssGrowth`), and `peak_over_calls`, which reads
any probe (a context manager with `kind`, `reset()`, `peak_bytes()`) over calls. No TensorFlow:
every backend's worker uses it."""

from __future__ import annotations

import os
import sys
import threading


def resident_bytes() -> int:
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
    """Peak growth of the process RSS during a window, sampled from /proc/self/statm every
    `interval` seconds by a daemon thread. It misses spikes shorter than the interval, counts other
    threads' allocations, and does not see reused memory: what one pass adds, not the working
    set."""

    kind = "cpu_rss_growth"

    def __init__(self, interval: float = 0.005):
        self.interval = interval
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._baseline = self._peak = resident_bytes()
        self._thread = threading.Thread(target=self._sample, daemon=True, name="rss-sampler")

    def _sample(self):
        while not self._stop.wait(self.interval):
            self._observe(resident_bytes())

    def _observe(self, resident: int):
        with self._lock:
            self._peak = max(self._peak, resident)

    def reset(self):
        with self._lock:
            self._baseline = self._peak = resident_bytes()

    def peak_bytes(self) -> int:
        self._observe(resident_bytes())
        with self._lock:
            return max(0, self._peak - self._baseline)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join()


def peak_over_calls(call, count: int, probe) -> tuple[list, int]:
    """`count` results of `call()` and the largest peak `probe` (inside its `with`) saw over
    one call, reset before each: a step's own peak, not the process's history."""
    results, peak = [], 0
    for _ in range(count):
        probe.reset()
        results.append(call())
        peak = max(peak, probe.peak_bytes())
    return results, peak

"""The memory probes: on a GPU, TensorFlow's allocator peak of each call (a stand-in allocator
here: no GPU on this machine), reset before every call; on a CPU, the process's RSS growth,
checked against an array of known size."""

from __future__ import annotations

import numpy as np
import pytest

from hierlstm.timing.memory import GpuAllocatorPeak, memory_probe
from hierlstm.timing.rss import CpuRssGrowth, peak_over_calls


class FakeAllocator:
    """What `tf.config.experimental.get_memory_info` and `reset_memory_stats` see: bytes in
    use and the peak since the last reset, which starts at what is in use."""

    def __init__(self, resident: int):
        self.current = self.peak = resident
        self.devices = []

    def allocate(self, size: int):
        self.current += size
        self.peak = max(self.peak, self.current)

    def free(self, size: int):
        self.current -= size

    def memory_info(self, device: str) -> dict:
        self.devices.append(device)
        return {"current": self.current, "peak": self.peak}

    def reset(self, device: str):
        self.devices.append(device)
        self.peak = self.current


@pytest.mark.parametrize("device", ["/GPU:0", "/GPU:0 (NVIDIA H100 80GB HBM3)"])
def test_the_gpu_peak_is_each_calls_own_from_the_allocator(device):
    allocator = FakeAllocator(resident=1_000)  # the weights, kept between calls
    sizes = iter([300, 5_000, 200])

    def step():
        size = next(sizes)
        allocator.allocate(size)  # the step's activations, freed at its end
        allocator.free(size)
        return size

    probe = GpuAllocatorPeak(device, allocator.memory_info, allocator.reset)  # or a worker's
    with probe:
        results, peak = peak_over_calls(step, 3, probe)
    assert results == [300, 5_000, 200]
    assert peak == 1_000 + 5_000  # bytes in use at the peak, the resident weights included
    assert set(allocator.devices) == {"GPU:0"}  # the name the memory APIs take
    assert probe.kind == "gpu_allocator_peak"


def test_a_reset_forgets_an_earlier_higher_peak():
    allocator = FakeAllocator(resident=0)
    allocator.allocate(10_000)
    allocator.free(10_000)  # a warm-up's peak, before the measured calls
    probe = GpuAllocatorPeak("GPU:1", allocator.memory_info, allocator.reset)
    _, peak = peak_over_calls(lambda: allocator.allocate(64) or allocator.free(64), 2, probe)
    assert peak == 64


def test_the_probe_follows_the_device():
    assert isinstance(memory_probe("/GPU:0"), GpuAllocatorPeak)
    assert isinstance(memory_probe("/CPU:0"), CpuRssGrowth)


def test_the_cpu_probe_sees_an_array_the_call_touches():
    size = 64 * 2**20
    kept = []

    def step():
        array = np.ones(size, dtype=np.uint8)  # every page touched: resident
        kept.append(array)
        return array.nbytes

    with CpuRssGrowth() as probe:
        results, peak = peak_over_calls(step, 1, probe)
    assert results == [size]
    # the array, give or take what the interpreter and allocator did beside it
    assert 0.9 * size <= peak <= 1.5 * size
    assert probe.kind == "cpu_rss_growth"

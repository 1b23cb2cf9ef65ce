"""Where a run happens, decided once. When every config's backend runs in this process (its
registry record's `in_process`: TensorFlow's harness and profiler), the run happens here;
otherwise every config runs in its backend's worker (`hierlstm.backends.pool`), TensorFlow's too,
so that a comparison's rounds interleave across processes. compare, a sweep's point (`benchmark`),
profile and check all ask `place`; the pool is only a pool. No TensorFlow imported here.

    place(configs).compare(configs, timing, baseline=0)    -> CompareResult
    place([config]).benchmark(config, timing)               -> BenchResult
    place([config]).profile(config, timing, steps=5)        -> ProfileResult

A page's whole run, `execute(work, progress, configs)`, leaves the server's interpreter too: it
runs in the worker of the backend that would run it here (TensorFlow's), so the server keeps
drawing pages while it computes (HIERLSTM_RUNS=here keeps it in process).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Sequence

from hierlstm.config import RunConfig, Timing
from hierlstm.records import BenchResult, CompareResult
from hierlstm.registry import BACKEND_RECORDS
from hierlstm.settings import read


def runs_here(backends: Iterable[str]) -> bool:
    """Whether a run on `backends` (names) happens in this process: each one's record says so."""
    return all(BACKEND_RECORDS[name].in_process for name in backends)


class InProcess:
    """Runs in this process: the harness (`hierlstm.timing`) and the TensorFlow Profiler."""

    def compare(
        self, configs: Sequence[RunConfig], timing: Timing, *, baseline=0, on_progress=None
    ) -> CompareResult:
        from hierlstm.timing.harness import compare

        return compare(configs, timing, baseline=baseline, on_progress=on_progress)

    def benchmark(self, config: RunConfig, timing: Timing, *, on_progress=None) -> BenchResult:
        from hierlstm.timing.harness import benchmark

        return benchmark(config, timing, on_progress=on_progress)

    def profile(self, config: RunConfig, timing: Timing, *, steps: int, logdir, on_progress=None):
        from hierlstm.profiling import profile

        return profile(config, timing, steps=steps, logdir=logdir, on_progress=on_progress)


class InWorkers:
    """Runs in the backends' workers (`pool`, else the process's shared pool); the caller holds
    the device lock."""

    def __init__(self, pool=None):
        self._pool = pool

    @property
    def pool(self):
        from hierlstm.backends.pool import shared_pool

        return self._pool or shared_pool()

    def compare(
        self, configs: Sequence[RunConfig], timing: Timing, *, baseline=0, on_progress=None
    ) -> CompareResult:
        from hierlstm.backends.pool import compare

        return compare(
            configs, timing, baseline=baseline, on_progress=on_progress, pool=self.pool, lock=False
        )

    def benchmark(self, config: RunConfig, timing: Timing, *, on_progress=None) -> BenchResult:
        (result,) = self.compare([config], timing, on_progress=on_progress).results
        return result

    def profile(self, config: RunConfig, timing: Timing, *, steps: int, logdir, on_progress=None):
        """The profile in `config`'s worker, its capture in `logdir` (default a new folder under
        the data folder), read back here (a JAX capture here when this process has TensorFlow's
        protobufs, else in the worker). A failed run raises the pool's `RunFailed`."""
        from hierlstm.backends.profiles import read_profile
        from hierlstm.profiling.record import new_capture_folder

        logdir = logdir if logdir is not None else new_capture_folder(config)
        here = importlib.util.find_spec("tensorflow") is not None  # else the worker reads it
        document = self.pool.profile(config, timing, steps=steps, logdir=logdir, read=not here)
        return read_profile(document)


def place(configs: Iterable[RunConfig], pool=None) -> InProcess | InWorkers:
    """Where `configs` run, together: in this process when every backend's record says so, else
    every one in its backend's worker (`pool`, else the shared one)."""
    return InProcess() if runs_here(config.backend for config in configs) else InWorkers(pool)


def home_backend() -> str:
    """The backend whose runs happen in this process (its record's `in_process`: TensorFlow)."""
    return next(name for name, record in BACKEND_RECORDS.items() if record.in_process)


def execute(work, progress, configs: Iterable[RunConfig], *, pool=None, where: str = ""):
    """`work(progress)`, a page's whole run on `configs`, where HIERLSTM_RUNS says (`where`
    overrides it): "worker" (the default) sends it to the home backend's worker when every config
    runs in this process, "here" runs it here. A run with another backend stays here: `place`
    already sends each of its configs to its worker. In a worker, `work` must pickle (one of
    hierlstm's functions, its arguments plain data); what it raises is raised here, and a worker
    that dies is WorkerDied, one line."""
    where = where or read("HIERLSTM_RUNS")
    if where == "here" or not runs_here(config.backend for config in configs):
        return work(progress)
    from hierlstm.backends.pool import shared_pool

    return (pool or shared_pool()).job(home_backend(), work, progress)

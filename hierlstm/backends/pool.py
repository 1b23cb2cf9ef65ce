"""Keras backends side by side: one worker process per backend (`hierlstm.backends.worker`), started
on first use and kept, and `compare` in interleaved rounds across them. One request at a time, so
one process runs at a time. A worker that dies becomes one failed result saying why (its exit code
or signal and last stderr line); the next request starts a new one. No TensorFlow or Keras, so the
CLI runs JAX and PyTorch without TensorFlow."""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import functools
import os
import pickle
import sys
import threading
import time
from collections.abc import Sequence

from hierlstm.backends.protocol import Worker, WorkerDied, failed
from hierlstm.config import DEFAULT_TIMING, RunConfig, Timing
from hierlstm.records import BenchResult, CompareResult
from hierlstm.settings import SETTINGS
from hierlstm.timing import rounds
from hierlstm.timing.basics import Progress, no_progress


@dataclasses.dataclass(frozen=True)
class Prepared:
    """A run prepared in a worker: its handle there and what the first call found."""

    config: RunConfig
    handle: int
    worker_pid: int
    first_call_s: float
    kernel: str
    kernel_reason: str
    trace_count: int
    device: str


@dataclasses.dataclass(frozen=True)
class Sample(rounds.Sample):
    """One sample from a worker (the step, a training run's phases, its memory peak), with the
    worker's own wall and CPU time around it and the pool's wall time of the round trip."""

    wall_s: float
    cpu_s: float
    round_trip_s: float


class JobFailed(Exception):
    """A job's run failed in its worker (`BackendPool.job`): str() is the one line saying why,
    in the words of `hierlstm.timing.failures.error_line`."""


class RunFailed(Exception):
    """A request that failed inside a run: `result` is its failed record; `died` says the
    worker process ended (every run it held is gone with it)."""

    def __init__(self, result: BenchResult, *, died: bool = False):
        super().__init__(result.error)
        self.result, self.died = result, died


class BackendPool:
    """One worker process per Keras backend, started on first use and kept until `close()`;
    `environment` is added to each worker's (a benchmark's thread counts, say)."""

    def __init__(self, python: str = sys.executable, environment: dict[str, str] | None = None):
        self.python, self.environment = python, dict(environment or {})
        self.workers: dict[str, Worker] = {}
        self._lock = threading.Lock()  # one request in flight at a time, whoever sends it

    def __enter__(self) -> BackendPool:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def worker(self, backend: str) -> Worker:
        """`backend`'s worker, started now if it has none or the last one died."""
        worker = self.workers.get(backend)
        if worker is None or not worker.alive():
            if worker is not None:
                worker.close()
            worker = self.workers[backend] = Worker(backend, self.python, self.environment)
        return worker

    def request(self, backend: str, op: str, **fields) -> dict:
        with self._lock:
            return self.worker(backend).request(op, **fields)

    def _answer(self, config: RunConfig, op: str, **fields) -> dict:
        """A request about `config`; a failed run (a dead worker too) raises RunFailed."""
        return _checked(config, self.request, config.backend, op, config=config.to_dict(), **fields)

    def prepare(
        self, config: RunConfig, *, seed: int = 0, progress: Progress = no_progress
    ) -> Prepared:
        """Builds `config` in its backend's worker and runs its timed first call."""
        progress(0.0, f"building in the {config.backend} worker and the first call")
        answer = self._answer(config, "prepare", seed=seed)
        fields = {name: answer[name] for name in ("first_call_s", "kernel", "kernel_reason")}
        progress(1.0, f"first call {answer['first_call_s']:.3g} s ({answer['kernel']} LSTM kernel)")
        return Prepared(
            config,
            answer["handle"],
            answer["pid"],
            trace_count=answer["trace_count"],
            device=answer["device"],
            **fields,
        )

    def _handle_request(self, run: Prepared, op: str, **fields) -> dict:
        worker = self.workers.get(run.config.backend)
        if worker is None or worker.pid != run.worker_pid or not worker.alive():
            raise RunFailed(
                failed(
                    run.config,
                    f"the {run.config.backend} worker that prepared this run (pid "
                    f"{run.worker_pid}) is gone; prepare it again.",
                )
            )
        with self._lock:
            return _checked(run.config, worker.request, op, handle=run.handle, **fields)

    def sample(self, run: Prepared) -> Sample:
        """One sample of a prepared run, with the pool's wall time of its round trip."""
        start = time.perf_counter()
        answer = self._handle_request(run, "sample")
        round_trip = time.perf_counter() - start
        return Sample(
            times={name: float(value) for name, value in answer["sample"].items()},
            peak_bytes=int(answer["peak_bytes"]),
            peak_kind=answer["peak_kind"],
            wall_s=answer["wall_s"],
            cpu_s=answer["cpu_s"],
            round_trip_s=round_trip,
        )

    def result(
        self, run: Prepared, samples, warmup: int, peak_bytes: int, peak_kind: str, phases=None
    ) -> BenchResult:
        """The run's record, made in its worker (`hierlstm.backends.local.result`); the run's
        handle is released there."""
        answer = self._handle_request(
            run,
            "result",
            samples=[float(value) for value in samples],
            phases={name: list(values) for name, values in (phases or {}).items()},
            warmup=warmup,
            peak_bytes=int(peak_bytes),
            peak_kind=peak_kind,
        )
        return BenchResult.from_row(answer["row"])

    def release(self, run: Prepared) -> None:
        """Frees `run` in its worker without making its record (a gone worker holds nothing)."""
        with contextlib.suppress(RunFailed):
            self._handle_request(run, "release")

    def job(self, backend: str, execute, progress: Progress = no_progress):
        """`execute(progress)` in `backend`'s worker (one of hierlstm's own functions, pickled:
        `hierlstm.backends.dispatch.execute`), under this process's HIERLSTM_* settings as they
        are now (the results file, the limits, ...), its progress passed on as it comes; whatever
        `progress` raises cancels it there and is raised here. What `execute` raises is raised
        here, the worker's traceback in its notes; else JobFailed (a run's failure that could not
        cross: its one line), WorkerDied (the process ended: the next request starts another) or
        WorkerBug."""
        encoded = base64.b64encode(pickle.dumps(execute)).decode("ascii")
        settings = {name: os.environ.get(name) for name in (*SETTINGS, "XDG_DATA_HOME")}
        with self._lock:
            worker = self.worker(backend)
            answer = worker.request("job", job=encoded, settings=settings, on_progress=progress)
        if not answer["ok"]:
            raise JobFailed(answer["error"])
        if "raised" in answer:
            error = pickle.loads(base64.b64decode(answer["raised"]))
            error.add_note(f"raised in the {backend} worker:\n{answer['traceback']}")
            raise error
        return pickle.loads(base64.b64decode(answer["outcome"]))

    def check(self, config: RunConfig, *, seed: int = 0) -> dict:
        """`hierlstm.backends.local.check` in `config`'s backend: the oracle report."""
        return self._answer(config, "check", seed=seed)["report"]

    def profile(
        self, config: RunConfig, timing: Timing, *, steps: int, logdir: str, read: bool = True
    ) -> dict:
        """`config` profiled in its backend's worker: what was written and what it says
        (`read=False`: a JAX capture left for this process to read,
        `hierlstm.backends.profiles.read_profile`)."""
        return self._answer(
            config,
            "profile",
            steps=steps,
            warmup=timing.warmup,
            repeats=timing.repeats,
            seed=timing.seed,
            logdir=str(logdir),
            read=read,
        )["profile"]

    def pids(self) -> dict[str, int]:
        return {name: worker.pid for name, worker in self.workers.items() if worker.alive()}

    def close(self) -> None:
        """Ends every worker and waits for each (no orphans)."""
        with self._lock:
            for worker in self.workers.values():
                worker.close()
            self.workers.clear()


def _checked(about: RunConfig, send, *arguments, **fields) -> dict:
    """`send(*arguments, **fields)`'s answer about config `about`; a failed run raises RunFailed
    with its record (the worker's, else made here), `died=True` when the worker ended."""
    try:
        answer = send(*arguments, **fields)
    except WorkerDied as error:
        raise RunFailed(failed(about, str(error)), died=True) from None
    if not answer["ok"]:
        if "row" in answer:
            raise RunFailed(BenchResult.from_row(answer["row"]))
        raise RunFailed(failed(about, answer["error"]))
    return answer


_SHARED: BackendPool | None = None
_SHARED_LOCK = threading.Lock()


def shared_pool() -> BackendPool:
    """This process's pool, made on first use and closed when the process exits."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            import atexit

            _SHARED = BackendPool()
            atexit.register(_SHARED.close)
        return _SHARED


# --- interleaved rounds across processes ----------------------------------------------------


def compare(
    configs: Sequence[RunConfig],
    timing: Timing = DEFAULT_TIMING,
    *,
    baseline: int = 0,
    on_progress: Progress | None = None,
    pool: BackendPool | None = None,
    lock: bool = True,
    lock_name: str = "bench",
    program: str = "cli",
    on_wait=None,
) -> CompareResult:
    """Times `configs` in interleaved rounds across backends, every config in its backend's worker
    (`pool`, else `shared_pool()`; TensorFlow's too: whether a run goes to the workers at all is
    `hierlstm.backends.dispatch`'s decision), under the device lock when `lock`. A failing config
    (a dead worker too) gets a failed record; the others go on."""
    tracks = rounds.tracks_for(configs, baseline)
    configs = [track.config for track in tracks]
    held = contextlib.nullcontext()
    if lock:
        from hierlstm.admission.runlock import device_keys, hold

        keys = {key for config in configs for key in device_keys(config, tensorflow=False)}
        held = hold(keys, name=lock_name, program=program, on_wait=on_wait)
    progress, pool = on_progress or no_progress, pool or shared_pool()
    with held:
        return _rounds(tracks, timing, baseline, progress, pool)


def _fail(tracks: list[rounds.Track], track: rounds.Track, error: RunFailed) -> None:
    """Drops `track` with its failed record; when its worker died, every other run it held
    (every live run of that backend, when the run was not yet prepared) with the same reason."""
    track.drop(error.result)
    if error.died:
        dead = track.run.worker_pid if track.run is not None else None
        for other in tracks:
            if (
                other.live
                and other.config.backend == track.config.backend
                and dead in (None, other.run.worker_pid)
            ):
                other.drop(failed(other.config, error.result.error))


def _rounds(tracks, timing: Timing, baseline: int, progress: Progress, pool) -> CompareResult:
    fail = functools.partial(_fail, tracks)
    rounds.interleave(
        tracks,
        functools.partial(pool.prepare, seed=timing.seed),
        pool.sample,
        warmup=timing.warmup,
        repeats=timing.repeats,
        failures=(RunFailed,),
        fail=fail,
        progress=progress,
    )
    results = []
    for track in tracks:
        if track.live:
            try:
                results.append(
                    pool.result(
                        track.run,
                        track.steps,
                        timing.warmup,
                        track.peak_bytes,
                        track.peak_kind,
                        track.phases(),
                    )
                )
                continue
            except RunFailed as error:
                fail(track, error)
        results.append(track.failure)
    progress(1.0, "done")
    return rounds.comparison(tracks, results, baseline)

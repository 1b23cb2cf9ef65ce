"""The pool of backend workers, in real subprocesses (KERAS_BACKEND=jax and torch): interleaved
rounds across processes under the device lock, each sample within its round trip, a worker
killed with SIGKILL mid-run (one failed result with its reason, a new worker next), a worker
that exits with a message, and no orphan after close()."""

import math
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hierlstm.admission import runlock
from hierlstm.backends import dispatch
from hierlstm.backends.dispatch import InWorkers
from hierlstm.backends.pool import BackendPool, Worker, WorkerDied, compare
from hierlstm.config import RunConfig, Timing

ROOT = Path(__file__).resolve().parents[2]
PARENT = (
    "import time; from hierlstm.backends.pool import Worker; worker = Worker('jax'); "
    "print(worker.pid, flush=True); time.sleep(120)"
)
TINY = RunConfig(variant="folded", batch_size=2, time_steps=3)
TIMING = Timing(warmup=1, repeats=3, seed=0)


@pytest.fixture(scope="module")
def pool():
    with BackendPool() as shared:
        yield shared


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_compare_interleaves_backends_in_their_own_processes_under_the_lock(pool):
    configs = [TINY.replace(backend="jax"), TINY.replace(backend="torch")]
    configs += [TINY.replace(variant="nested", backend="jax"), TINY]  # TensorFlow's in a worker
    held = []

    def progress(fraction, message):
        if message.startswith("round"):
            held.append(runlock.is_free("CPU"))

    outcome = compare(configs, TIMING, pool=pool, on_progress=progress)
    assert held and not any(held)  # every timed round ran under the CPU's device lock
    assert [result.status for result in outcome.results] == ["ok"] * 4, [
        result.error for result in outcome.results
    ]
    assert [result.config.backend for result in outcome.results] == [
        "jax",
        "torch",
        "jax",
        "tensorflow",
    ]
    assert outcome.results[0].versions["jax"] and "tensorflow" not in outcome.results[0].versions
    assert outcome.results[1].versions["torch"]
    pids = pool.pids()
    ran_in = [entry.pid for entry in outcome.entries]
    assert ran_in == [pids["jax"], pids["torch"], pids["jax"], pids["tensorflow"]]
    assert len({*pids.values(), os.getpid()}) == 4  # a process per backend, none this one
    assert outcome.results[3].versions["tensorflow"]
    for entry in outcome.entries:
        result = entry.result
        assert result.repeats == TIMING.repeats and result.first_call_s > 0
        # The second timers: each sample is inside the worker's own timer and the round trip.
        assert len(entry.samples) == TIMING.repeats
        for sample in entry.samples:
            assert 0 < sample.times["step"] <= sample.wall_s <= sample.round_trip_s
        steps = sorted(sample.times["step"] for sample in entry.samples)
        assert math.isclose(result.step.median, steps[1])
    speedups = [entry.speedup.median for entry in outcome.entries]
    assert speedups[0] == 1.0 and speedups[1] > 0


def test_a_worker_killed_mid_compare_fails_its_runs_the_others_go_on_and_a_new_one_starts(pool):
    configs = [TINY.replace(backend="torch"), TINY.replace(backend="jax")]
    killed = []

    def progress(fraction, message):
        if message.startswith("round 1/"):
            killed.append(pool.pids()["torch"])
            os.kill(killed[0], signal.SIGKILL)

    outcome = compare(configs, TIMING, pool=pool, on_progress=progress)
    torch_result, jax_result = outcome.results
    assert torch_result.status == "failed" and torch_result.config == configs[0]
    died = f"the torch worker (pid {killed[0]}) died (killed by SIGKILL)"
    assert torch_result.error.startswith(died)
    assert math.isnan(torch_result.step.median) and gone(killed[0])
    assert jax_result.status == "ok" and jax_result.repeats == TIMING.repeats
    assert math.isnan(outcome.entries[1].speedup.median)  # the baseline failed
    again = pool.prepare(configs[0], seed=0)  # a new process
    assert again.worker_pid != killed[0] and pool.pids()["torch"] == again.worker_pid
    assert pool.sample(again).times["step"] > 0


def test_a_worker_that_exits_says_its_exit_code_and_last_stderr_line(tmp_path):
    fake = tmp_path / "python"
    fake.write_text(
        "#!/bin/sh\necho 'starting' >&2\necho 'Fatal Python error: Aborted' >&2\nexit 3\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    worker = Worker("jax", python=str(fake))
    with pytest.raises(WorkerDied) as died:
        worker.request("sample", handle=1)
    assert str(died.value) == (
        f"the jax worker (pid {worker.pid}) died (exit code 3); the last line on its stderr: "
        "Fatal Python error: Aborted"
    )
    worker.close()


def test_close_leaves_no_worker_behind():
    with BackendPool() as own:
        pid = own.worker("jax").pid  # started: its process runs, nothing asked of it yet
        assert own.pids() == {"jax": pid} and not gone(pid)
    assert gone(pid) and own.pids() == {}


def test_a_worker_ends_when_its_parent_is_killed():
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    child = int(parent.stdout.readline())
    os.kill(parent.pid, signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 30
    while not gone(child) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert gone(child)  # adopted by init, which reaps it once it exits


def test_only_tensorflow_stays_in_process(monkeypatch):
    """All-TensorFlow configs take the harness's in-process compare (the dispatch's decision, not
    the pool's), no worker started; one config of another backend sends every one to a worker."""
    calls = []

    class Harness:
        @staticmethod
        def compare(configs, timing, *, baseline, on_progress):
            calls.append(configs)
            return "in process"

    monkeypatch.setitem(sys.modules, "hierlstm.timing.harness", Harness)
    own = BackendPool()
    configs = [TINY, TINY.replace(variant="nested")]
    assert dispatch.place(configs, own).compare(configs, TIMING) == "in process"
    assert len(calls) == 1 and own.workers == {}
    assert isinstance(dispatch.place([*configs, TINY.replace(backend="jax")], own), InWorkers)

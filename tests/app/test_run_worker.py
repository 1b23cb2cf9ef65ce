"""A page's run out of the server's interpreter (`hierlstm.backends.dispatch.execute`), in a real
TensorFlow worker process: its outcome equals the same run's in this process, what it raises is
raised here, a rerun that stops it there leaves the worker for the next run, and a worker killed
mid-run is one line on the page, which goes on serving: its next run starts a new worker. The
Inside page's learning sends its curve with each progress line, and ends as it ends here."""

from __future__ import annotations

import functools
import os
import signal

import pytest
from apptests import TINY, clean, drawn, opened, run

from hierlstm.app import runs
from hierlstm.app.pages import benchmark
from hierlstm.app.sidebar import Controls
from hierlstm.backends import dispatch
from hierlstm.backends.pool import BackendPool, shared_pool
from hierlstm.config import RunConfig, Timing

CONTROLS = Controls(
    config=RunConfig(variant="folded", batch_size=1, time_steps=2),
    variants=("nested", "folded"),
    language="en",
    timing=Timing(warmup=0, repeats=1, seed=0),
    run=True,
)


class Rerun(BaseException):
    """What Streamlit raises inside a running script when the browser asks for a rerun."""


@pytest.fixture(scope="module")
def pool():
    with BackendPool() as own:
        yield own


def _run(where: str, pool, progress=None):
    work = functools.partial(benchmark.run_benchmark, CONTROLS, "folded")
    messages = []
    progress = progress or (lambda fraction, message: messages.append(message))
    outcome = dispatch.execute(work, progress, CONTROLS.configs, pool=pool, where=where)
    return outcome, messages


FIELDS = ("config", "status", "flops", "kernel", "kernel_reason", "trace_count", "device")


def _same_numbers(result) -> dict:
    """What a run computes, not how long it took."""
    return {field: getattr(result, field) for field in FIELDS}


def test_a_run_in_the_worker_equals_the_same_run_here(pool, monkeypatch, tmp_path):
    monkeypatch.setenv("HIERLSTM_DB", str(tmp_path / "worker.sqlite3"))
    there, messages = _run("worker", pool)
    worker = pool.workers["tensorflow"]
    assert worker.alive() and worker.pid != os.getpid()
    assert messages and messages[-1]  # its progress came back as it ran
    monkeypatch.setenv("HIERLSTM_DB", str(tmp_path / "here.sqlite3"))
    here, _ = _run("here", pool)
    assert [_same_numbers(r) for r in there.compared.results] == [
        _same_numbers(r) for r in here.compared.results
    ]
    assert all(r.status == "ok" for r in there.compared.results)
    assert list(there.breakdown["layer"]) == list(here.breakdown["layer"])
    assert (there.baseline, there.stored, there.settings) == (here.baseline, 2, here.settings)
    assert (tmp_path / "worker.sqlite3").exists()  # stored where this process's setting said


def test_the_learning_sends_its_curve_as_it_goes_and_ends_as_it_does_here(pool):
    import numpy as np

    from hierlstm.inside.learner import learn_job
    from hierlstm.inside.learning import Learning

    config = RunConfig(variant="folded", batch_size=4, time_steps=4, height=6, filters=2)
    learning = Learning(steps=2, every=1, batch_size=4, train_sequences=8, held_out=4)
    work = functools.partial(learn_job, config, learning)
    curves = {}
    for where in ("worker", "here"):
        sent = []

        def progress(fraction, message, curve=None, sent=sent):
            sent.append((fraction, curve))

        curves[where] = dispatch.execute(work, progress, (config,), pool=pool, where=where)
        assert [fraction for fraction, _curve in sent] == [0.0, 0.5, 1.0]
        assert [len(curve.points) for _fraction, curve in sent] == [1, 2, 3]
        assert sent[-1][1].points == curves[where].points and curves[where].done
    there, here = curves["worker"], curves["here"]
    assert pool.workers["tensorflow"].pid != os.getpid()
    assert np.allclose(
        [p.held_out_loss for p in there.points], [p.held_out_loss for p in here.points]
    )
    assert all(np.allclose(there.params[name], here.params[name]) for name in here.params)


def test_what_a_run_raises_in_the_worker_is_raised_here(pool):
    bug = functools.partial(int, "12")  # int("12", progress): a TypeError, as a bug would raise
    with pytest.raises(TypeError) as raised:
        dispatch.execute(bug, lambda f, m: None, CONTROLS.configs, pool=pool, where="here")
    with pytest.raises(TypeError) as crossed:
        dispatch.execute(bug, lambda f, m: None, CONTROLS.configs, pool=pool, where="worker")
    assert str(crossed.value) == str(raised.value)
    assert any("raised in the tensorflow worker" in note for note in crossed.value.__notes__)


def test_a_rerun_stops_the_run_in_the_worker_and_leaves_it_for_the_next(pool):
    def rerun(fraction, message):
        raise Rerun

    with pytest.raises(Rerun):
        _run("worker", pool, progress=rerun)
    worker = pool.workers["tensorflow"]
    outcome, _ = _run("worker", pool)  # answered: the same worker, not a new one
    assert pool.workers["tensorflow"] is worker and worker.alive()
    assert all(r.status == "ok" for r in outcome.compared.results)


def test_a_worker_killed_mid_run_is_one_line_and_the_page_runs_again(monkeypatch):
    monkeypatch.setenv("HIERLSTM_RUNS", "worker")
    killed = []
    shown = runs._Bar.__call__

    def kill_once(bar, fraction, message):
        if not killed and "tensorflow" in shared_pool().workers:
            killed.append(shared_pool().workers["tensorflow"].pid)
            os.kill(killed[0], signal.SIGKILL)
        shown(bar, fraction, message)

    monkeypatch.setattr(runs._Bar, "__call__", kill_once)
    at = opened("app_pages/benchmark.py", {"variants": "nested,folded", **TINY})
    clean(at)
    run(at)
    (error,) = at.error
    assert f"the tensorflow worker (pid {killed[0]}) died (killed by SIGKILL)" in error.value
    assert "\n" not in error.value.strip()
    run(at)  # the next run: a new worker
    clean(at)
    assert not at.error and drawn(at, "bench-table")
    assert shared_pool().workers["tensorflow"].pid != killed[0]

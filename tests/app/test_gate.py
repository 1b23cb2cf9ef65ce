"""`hierlstm.app.server.gate`: the warm-up or pages, never both at once; and the warm-up's step
order, checked when the steps are made."""

from __future__ import annotations

import contextlib
import threading
import time

import pytest
from apptests import APP
from factories import PAGES
from streamlit.testing.v1 import AppTest

from hierlstm.app.server import warmup
from hierlstm.app.server.gate import Gate


def _noop() -> None:
    pass


def _in_a_thread(target) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_pages_go_in_together_and_a_step_waits_until_they_leave():
    gate = Gate()
    with contextlib.ExitStack() as pages:
        pages.enter_context(gate.page())
        pages.enter_context(gate.page())  # a second session's page beside the first
        with gate.warm_up(timeout=0.2) as entered:
            assert entered is False
    with gate.warm_up(timeout=1.0) as entered:
        assert entered is True


def test_a_page_waits_while_a_step_is_inside():
    gate, inside, release, order = Gate(), threading.Event(), threading.Event(), []

    def step():
        with gate.warm_up():
            inside.set()
            release.wait(10)
            order.append("step done")

    def page():
        with gate.page():
            order.append("page ran")

    _in_a_thread(step)
    assert inside.wait(10)
    waiting = _in_a_thread(page)
    time.sleep(0.3)
    assert order == []  # the page is still waiting
    release.set()
    waiting.join(10)
    assert order == ["step done", "page ran"]


def test_no_warm_up_step_starts_while_a_page_is_inside():
    ran = []
    warm = warmup.Warmup([warmup.Step("a", lambda: ran.append("a"))], libraries=_noop)
    with warm.gate.page():
        warm.start()
        time.sleep(0.3)
        assert ran == [] and warm.status().step == "warmup.libraries"
    assert warm.wait(timeout=10) and ran == ["a"]


def test_a_later_step_is_left_out_when_the_pages_are_never_quiet(monkeypatch, caplog):
    monkeypatch.setattr(warmup, "QUIET_S", 0.0)
    monkeypatch.setattr(warmup, "QUIET_LIMIT_S", 0.2)
    ran, gate = [], Gate()
    later = warmup.Step("warmup.calibrate", lambda: ran.append("calibrate"), needed=False)
    with gate.page(), caplog.at_level("INFO", logger="hierlstm.app.server.warmup"):
        assert warmup.run_step(later, gate) is False
    assert ran == [] and "warmup.calibrate left out" in caplog.text
    assert warmup.run_step(later, gate) is True and ran == ["calibrate"]


def test_the_frame_runs_its_page_inside_the_server_s_gate(tmp_path, monkeypatch):
    from hierlstm.app import caches

    monkeypatch.setenv("HIERLSTM_DB", str(tmp_path / "results.sqlite3"))
    gate, inside, release = warmup.server_warmup().gate, threading.Event(), threading.Event()
    traced_after_the_step = []  # for each trace the page asks for: was the step done?
    trace = caches.trace
    monkeypatch.setattr(
        caches,
        "trace",
        lambda config: traced_after_the_step.append(release.is_set()) or trace(config),
    )

    def step():
        with gate.warm_up():
            inside.set()
            release.wait(30)

    _in_a_thread(step)
    assert inside.wait(10)
    threading.Timer(1.0, release.set).start()
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params = {"variants": "folded"}
    at.run()
    assert not at.exception and [t.value for t in at.title] == [PAGES["app_pages/shape_trace.py"]]
    assert traced_after_the_step == [True]  # the page ran once the step was done
    assert len(at.get("plotly_chart")) == 1


def _step(key: str, needed: bool = True, after: tuple[str, ...] = ()) -> warmup.Step:
    return warmup.Step(key, _noop, needed, after)


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        (
            [_step("devices", after=("tensorflow",)), _step("tensorflow")],
            "warm-up step devices must come after tensorflow.",
        ),
        (
            [_step("calibrate", needed=False), _step("trace")],
            "warm-up step trace is needed by the pages, so it must come before calibrate",
        ),
        ([_step("trace"), _step("trace")], "warm-up step trace comes twice."),
    ],
)
def test_a_step_out_of_order_is_refused(steps, message):
    with pytest.raises(ValueError, match=message):
        warmup.check_order(steps)
    with pytest.raises(ValueError, match=message):
        warmup.Warmup(steps)  # before any of them runs


@pytest.mark.parametrize("mode", warmup.MODES)
def test_each_mode_s_step_moved_before_what_it_needs_is_refused(mode):
    steps = warmup.steps_for(mode)  # in order: made through check_order
    dependent = [step for step in steps if step.after]
    assert dependent  # the order is declared, not only the list's
    for step in dependent:
        moved = [step, *(other for other in steps if other is not step)]
        with pytest.raises(ValueError, match=f"warm-up step {step.key} must come after"):
            warmup.check_order(moved)

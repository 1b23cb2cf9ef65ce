"""The server profile charges a script thread's CPU time to where the thread is: its app line,
or between a page's lines, the innermost function."""

import sys
import threading
import time

import pytest

from benchmarks.serving import server_profile


def spin(started: threading.Event, done: list) -> None:
    """Busy until `done` holds something (no call: the loop is this frame's own)."""
    started.set()
    while not done:
        pass


def test_a_script_thread_s_cpu_time_is_charged_to_where_it_is(tmp_path):
    sampler = server_profile.Sampler(tmp_path / "profile.json")
    started, done = threading.Event(), []
    script = threading.Thread(target=spin, args=(started, done), name=server_profile.SCRIPT_THREAD)
    other = threading.Thread(target=spin, args=(threading.Event(), done), name="other")
    script.start()
    started.wait(10)
    sampler.charge_cpu(sys._current_frames())  # what each has used so far, read
    seeded = sampler.cpu_seen[script.native_id]
    before = server_profile.thread_cpu_s(script.native_id)
    other.start()
    while server_profile.thread_cpu_s(script.native_id) - before < 0.3:
        time.sleep(0.01)
    sampler.charge_cpu(sys._current_frames())
    charged = sampler.cpu_seen[script.native_id] - seeded  # read after `before` + 0.3 s
    done.append(True)
    script.join(), other.join()
    sampler.close_phase()
    phase = sampler.phases[0]
    assert set(phase["cpu"]) == {"tests: spin"}  # the other thread is no script's
    assert phase["cpu_s"] == pytest.approx(charged) and charged >= 0.3, phase

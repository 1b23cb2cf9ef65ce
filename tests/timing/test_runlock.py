"""The per-device run lock: one run per device, the wait reported and untimed, released in
`finally` whatever stops the run."""

import threading
import time

import pytest

from hierlstm.config import RunConfig
from hierlstm.timing import runlock


def test_device_keys_name_the_physical_device():
    assert runlock.device_keys(RunConfig()) == ("CPU",)
    assert runlock.device_keys(RunConfig(device="cpu")) == ("CPU",)
    with pytest.raises(ValueError, match="gpu:3"):
        runlock.device_keys(RunConfig(device="gpu:3"))  # this machine has no such GPU


def test_a_second_run_on_the_device_waits_and_says_for_whom():
    first_in, release = threading.Event(), threading.Event()

    def first():
        with runlock.hold(["TEST:0"], name="a benchmark"):
            first_in.set()
            release.wait(10)

    thread = threading.Thread(target=first)
    thread.start()
    assert first_in.wait(10)
    assert runlock.holder("TEST:0")[0] == "a benchmark"
    waits = []

    def on_wait(holder, seconds):
        waits.append((holder, seconds))
        if len(waits) == 2:
            release.set()

    with runlock.hold(["TEST:0"], name="a sweep", on_wait=on_wait, poll=0.05) as waited:
        assert runlock.holder("TEST:0")[0] == "a sweep"
    thread.join(10)
    assert [holder for holder, _ in waits[:2]] == ["a benchmark", "a benchmark"]
    assert waited >= waits[1][1] > 0  # yielded before the body: the wait is not in the run
    assert runlock.is_free("TEST:0")


def test_other_devices_do_not_wait():
    with runlock.hold(["TEST:1"]):

        def on_wait(holder, seconds):
            raise AssertionError("waited for a device the other run does not use")

        with runlock.hold(["TEST:2"], on_wait=on_wait, poll=0.01):
            assert not runlock.is_free("TEST:1") and not runlock.is_free("TEST:2")
    assert runlock.is_free("TEST:1") and runlock.is_free("TEST:2")


def test_the_lock_is_free_after_an_exception_in_the_run():
    with pytest.raises(RuntimeError, match="out of memory"):
        with runlock.hold(["TEST:3", "TEST:4"], name="a benchmark"):
            raise RuntimeError("out of memory")
    assert runlock.is_free("TEST:3") and runlock.is_free("TEST:4")
    assert runlock.holder("TEST:3") == ("", 0.0)


def test_a_run_stopped_while_waiting_releases_what_it_took():
    """Streamlit stops a script (a rerun, a closed tab) inside its progress update, which is
    where `on_wait` runs: the devices already taken must be let go."""

    class Stopped(BaseException):  # like Streamlit's StopException / RerunException
        pass

    def stop(holder, seconds):
        raise Stopped

    with runlock.hold(["TEST:6"], name="a benchmark"):
        with pytest.raises(Stopped):
            with runlock.hold(["TEST:5", "TEST:6"], on_wait=stop, poll=0.01):
                pass
        assert runlock.is_free("TEST:5")  # taken first (sorted order), released on the way out
    assert runlock.is_free("TEST:6")


def test_two_runs_on_overlapping_devices_in_any_order_do_not_deadlock():
    done = []

    def run(keys):
        for _ in range(50):
            with runlock.hold(keys, poll=0.01):
                time.sleep(0.0005)
        done.append(keys)

    threads = [
        threading.Thread(target=run, args=(keys,))
        for keys in (["TEST:7", "TEST:8"], ["TEST:8", "TEST:7"])
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(done) == 2

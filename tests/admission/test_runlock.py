"""The per-device run lock: one run per device, the wait reported and untimed, released in
`finally` whatever stops the run; across processes through a file lock that says who holds it
and that the operating system drops when its holder dies."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hierlstm.admission import runlock
from hierlstm.config import RunConfig

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def lock_dir(tmp_path, monkeypatch):
    """Every test's lock files in its own folder: no other process on the machine shares them."""
    monkeypatch.setenv(runlock.LOCK_DIR_ENV, str(tmp_path / "locks"))
    return tmp_path / "locks"


def test_device_keys_name_the_physical_device_with_tensorflow_or_without_it():
    assert runlock.device_keys(RunConfig()) == ("CPU",)
    assert runlock.device_keys(RunConfig(device="cpu")) == ("CPU",)
    with pytest.raises(ValueError, match="gpu:3"):
        runlock.device_keys(RunConfig(device="gpu:3"))  # this machine has no such GPU
    # a run in the backends' workers: its keys come from the config and the driver
    assert runlock.device_keys(RunConfig(device="cpu"), tensorflow=False) == ("CPU",)
    assert runlock.device_keys(RunConfig(device="gpu:1"), tensorflow=False) == ("GPU:1",)


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

    def on_wait(holder, seconds, place):
        waits.append((holder, seconds))
        if len(waits) == 2:
            release.set()

    with runlock.hold(["TEST:0"], name="a sweep", on_wait=on_wait, poll=0.05) as waited:
        assert runlock.holder("TEST:0")[0] == "a sweep"
    thread.join(10)
    assert [holder.name for holder, _ in waits[:2]] == ["a benchmark", "a benchmark"]
    assert waits[0][0].here
    assert waited >= waits[1][1] > 0  # yielded before the body: the wait is not in the run
    assert runlock.is_free("TEST:0")


def test_runs_of_this_process_take_their_turns_in_the_order_they_asked():
    """First come, first served, whoever polls when the device is let go; one that stops while
    waiting (a closed tab) leaves the line without holding up those behind it."""

    class Stopped(BaseException):
        pass

    order, threads, leave, left = [], [], threading.Event(), threading.Event()
    places = {}
    with runlock.hold(["TEST:F"], name="a benchmark"):
        for index in range(6):
            asked = threading.Event()

            def on_wait(holder, seconds, place, index=index, asked=asked):
                places[index] = place
                asked.set()
                if index == 2 and leave.is_set():
                    raise Stopped

            def run(index=index, on_wait=on_wait):
                try:
                    with runlock.hold(["TEST:F"], on_wait=on_wait, poll=0.01):
                        order.append(index)
                        time.sleep(0.02)  # the others poll meanwhile
                except Stopped:
                    left.set()

            threads.append(threading.Thread(target=run))
            threads[-1].start()
            assert asked.wait(10)  # in the line before the next one asks
        assert places == {index: index + 1 for index in range(6)}
        leave.set()
        assert left.wait(10)  # the third has left the line while the device was still held
    for thread in threads:
        thread.join(10)
    assert order == [0, 1, 3, 4, 5]
    assert runlock.is_free("TEST:F")


def test_other_devices_do_not_wait():
    with runlock.hold(["TEST:1"]):

        def on_wait(holder, seconds, place):
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

    def stop(holder, seconds, place):
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


def test_the_lock_folder_follows_the_environment(tmp_path):
    assert runlock.lock_dir({"HIERLSTM_LOCK_DIR": "/x/locks"}) == Path("/x/locks")
    runtime = tmp_path / "run"
    runtime.mkdir()
    assert runlock.lock_dir({"XDG_RUNTIME_DIR": str(runtime)}) == runtime / "hierlstm"
    data = {"XDG_RUNTIME_DIR": str(tmp_path / "missing"), "XDG_DATA_HOME": str(tmp_path)}
    assert runlock.lock_dir(data) == tmp_path / "hierlstm" / "locks"
    home = Path(os.path.expanduser("~"))
    assert runlock.lock_dir({"XDG_DATA_HOME": "relative"}) == home / ".local/share/hierlstm/locks"


def test_lock_files_name_the_physical_device():
    assert runlock.lock_file_name("CPU", {}) == "cpu.lock"
    assert runlock.lock_file_name("GPU:0", {}) == "gpu-0.lock"
    assert runlock.lock_file_name("GPU:0", {"CUDA_VISIBLE_DEVICES": "3,1"}) == "gpu-3.lock"
    assert runlock.lock_file_name("GPU:1", {"CUDA_VISIBLE_DEVICES": "3,1"}) == "gpu-1.lock"
    uuid = "GPU-00000000-0000-4000-8000-000000000000"
    assert (
        runlock.lock_file_name("GPU:0", {"CUDA_VISIBLE_DEVICES": uuid})
        == f"gpu-{uuid}.lock".lower()
    )


def test_a_holder_says_who_it_is_in_both_languages():
    cli = runlock.Holder("bench", "cli", 4242)
    assert cli.describe() == "the CLI, pid 4242" and cli.describe("zh") == "命令行，进程 4242"
    viewer = runlock.Holder("benchmark", "app", os.getpid())
    assert viewer.describe() == "a benchmark of another viewer"
    assert runlock.Holder("scaling", "app", 77).describe() == "a sweep in the app, pid 77"
    assert runlock.Holder("").describe() == "another program, pid ?"


HOLDER = """
import sys, time
from hierlstm.admission import runlock
with runlock.hold([sys.argv[1]], name="bench", program="cli"):
    print("held", flush=True)
    time.sleep(120)
"""


def test_a_run_in_another_process_makes_this_one_wait_until_the_holder_is_killed(lock_dir):
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, "TEST:9"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert child.stdout.readline().strip() == "held"
        holder = runlock.file_holder("TEST:9")
        assert holder == runlock.Holder("bench", "cli", child.pid) and not holder.here
        assert runlock.is_free("TEST:9")  # this process's own lock is not taken
        waits = []

        def on_wait(holder, seconds, place):
            waits.append((holder, seconds))
            if len(waits) == 3:
                os.kill(child.pid, signal.SIGKILL)  # no finally runs in the holder

        with runlock.hold(["TEST:9"], name="benchmark", program="app", on_wait=on_wait, poll=0.05):
            assert runlock.file_holder("TEST:9") == runlock.Holder("benchmark", "app", os.getpid())
        assert waits[0][0].describe() == f"the CLI, pid {child.pid}"
        assert len(waits) >= 3 and child.wait(10) == -signal.SIGKILL
        assert runlock.file_holder("TEST:9") is None
        assert (lock_dir / "test-9.lock").read_text() == ""  # released: nothing stale to read
    finally:
        child.kill()
        child.wait(10)


BACK_TO_BACK = """
import sys, time
from hierlstm.admission import runlock
for run in range(int(sys.argv[2])):
    with runlock.hold([sys.argv[1]], name="sweep", program="cli"):
        with open(sys.argv[3], "a") as log:
            log.write(f"{run}\\n")
        time.sleep(0.1)
"""


def test_a_process_running_back_to_back_lets_a_waiting_one_have_its_turn(lock_dir, tmp_path):
    """Another process holds the device run after run with no gap: this one, waiting, gets it
    after the run in progress, not once the other stops (it did: it polled between the other's
    runs and never found the device free)."""
    runs, log = 30, tmp_path / "runs.log"
    child = subprocess.Popen(
        [sys.executable, "-c", BACK_TO_BACK, "TEST:7", str(runs), str(log)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 60
        while (not log.exists() or len(log.read_text().split()) < 2) and child.poll() is None:
            assert time.monotonic() < deadline, "the other process never started its runs"
            time.sleep(0.01)
        with runlock.hold(["TEST:7"], name="benchmark", program="app", poll=0.02):
            before_ours = len(log.read_text().split())
        assert child.wait(60) == 0
        assert len(log.read_text().split()) == runs
        # Two runs were done when we asked, and one or two more were under way or next: had we
        # waited for the other process to stop, all 30 would have been.
        assert before_ours <= 5, before_ours
    finally:
        child.kill()
        child.wait(10)

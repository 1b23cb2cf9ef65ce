"""One timing run per device across processes: a `bench` holding the CPU makes a second wait and
say for whom, and SIGKILL of the holder (no cleanup runs) lets the second through."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hierlstm.admission import runlock

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--variant", "folded", "--batch-size", "2", "--time-steps", "4", "--no-store"]


def _wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.1)
    raise AssertionError(f"gave up waiting for {what} after {seconds:.0f} s")


def test_a_cli_run_holding_the_device_makes_another_wait_until_it_is_killed(tmp_path, monkeypatch):
    monkeypatch.setenv(runlock.LOCK_DIR_ENV, str(tmp_path / "locks"))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "hierlstm", "bench", *TINY]
    holder = subprocess.Popen(
        [*command, "--warmup", "0", "--repeats", "100000"],  # minutes of timing: killed below
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    waiter = None
    try:
        held = _wait_for(lambda: runlock.file_holder("CPU"), 120, "the first bench to hold the CPU")
        assert held == runlock.Holder("bench", "cli", holder.pid)
        # Stopped, it still holds the device and no longer spends the CPU the waiter needs.
        os.kill(holder.pid, signal.SIGSTOP)
        log = tmp_path / "waiter.stderr"
        with open(log, "w") as stderr:
            waiter = subprocess.Popen(
                [*command, "--warmup", "0", "--repeats", "2", "--json"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            )
        said = f"waiting for another run (the CLI, pid {holder.pid}) to finish"
        _wait_for(lambda: said in log.read_text(), 120, "the second bench to say it waits")
        assert waiter.poll() is None  # still waiting: the holder has not finished
        os.kill(holder.pid, signal.SIGKILL)
        out, _ = waiter.communicate(timeout=120)
        assert waiter.returncode == 0, log.read_text()[-2000:]
        assert [row["status"] for row in json.loads(out)["results"]] == ["ok"]
        assert log.read_text().count("waiting for another run") == 1  # said once per holder
        assert runlock.file_holder("CPU") is None
    finally:
        for process in (holder, waiter):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait(10)

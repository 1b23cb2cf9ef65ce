"""A sweep killed with SIGKILL mid-run leaves a consistent store holding every finished point."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

from hierlstm.results.store import ResultStore


def test_sigkill_during_a_sweep_keeps_finished_points(tmp_path):
    db = tmp_path / "results.sqlite3"
    values = ",".join(str(value) for value in range(1, 41))
    sweep = "sweep --variant folded --axis time_steps --batch-size 1 --repeats 2 --warmup 0"
    command = [sys.executable, "-m", "hierlstm", *sweep.split(), "--values", values, "--db", db]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
    )
    deadline = time.monotonic() + 240
    stored = 0
    try:
        while time.monotonic() < deadline and process.poll() is None:
            if db.exists():
                with sqlite3.connect(db, timeout=30) as connection:
                    try:
                        stored = connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]
                    except sqlite3.OperationalError:  # table not created yet
                        stored = 0
                if stored >= 3:
                    break
            time.sleep(0.05)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL, process.stderr.read()[-2000:]
    assert 3 <= stored < 40  # killed mid-sweep
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    rows = ResultStore(db).rows()
    assert len(rows) >= stored
    assert set(rows["status"]) == {"ok"}
    steps = sorted(rows["time_steps"])
    assert steps == list(range(1, len(rows) + 1))  # the finished points, in sweep order
    assert rows["median_s"].notna().all()

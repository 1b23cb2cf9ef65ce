"""The app's tests run their pages on a warm server, as a visitor after the warm-up would:
the process's warm-up (`hierlstm.app.warmup`) is started and finished once, before the first
test here. tests/app/test_warmup.py looks at the frame of a server that is not warm yet.
`database` gives a test its own results file (HIERLSTM_DB); `no_estimate` leaves out a run's
estimate (tests/app/test_app.py's are the tests of the question it decides)."""

from pathlib import Path

import pytest

from hierlstm.app import runs, warmup


@pytest.fixture(scope="session", autouse=True)
def warm_server():
    warmup.start()
    assert warmup.server_warmup().wait(timeout=300), "the warm-up did not finish in 300 s"
    assert warmup.server_warmup().status().failed == ""


@pytest.fixture
def database(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "results.sqlite3"
    monkeypatch.setenv("HIERLSTM_DB", str(path))
    return path


@pytest.fixture
def no_estimate(monkeypatch):
    """Every run starts without its estimate: calibrating a training step's cost takes 4-6 s
    per variant on a CPU, and no run of a test with a limit of an hour is asked about."""
    monkeypatch.setattr(runs, "estimate", lambda workload, progress: runs.Estimate(0.0))

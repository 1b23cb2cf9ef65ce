"""The app's tests run on a warm server: the process's warm-up is finished once, first.
`database` gives a test its own results file; `no_estimate` leaves out a run's estimate."""

from pathlib import Path

import pytest

from hierlstm.app import runs
from hierlstm.app.server import warmup


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
    """Every run starts without its estimate (4-6 s of calibration per variant on a CPU)."""
    monkeypatch.setattr(runs, "estimate", lambda workload, progress: runs.Estimate(0.0))

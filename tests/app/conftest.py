"""The app's tests run their pages on a warm server, as a visitor after the warm-up would:
the process's warm-up (`hierlstm.app.warmup`) is started and finished once, before the first
test here. tests/app/test_warmup.py looks at the frame of a server that is not warm yet.
`database` gives a test its own results file (HIERLSTM_DB)."""

from pathlib import Path

import pytest

from hierlstm.app import warmup


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

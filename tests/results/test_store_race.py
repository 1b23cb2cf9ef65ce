"""Many processes opening one new results file at the same moment all succeed, and a file that
another process keeps locked is reported as busy, never as "not a results database"."""

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hierlstm.refusals import Refused
from hierlstm.results import store as store_module
from hierlstm.results.schema import SCHEMA_VERSION
from hierlstm.results.store import ResultStore

PROCESSES = 8
ROUNDS = 60  # before the fix about 1 open in 100 failed: 480 opens all but never pass
ROUND_S = 0.05
REPO_ROOT = Path(__file__).resolve().parents[2]

# One opener: round r opens its own new file at start + r * ROUND_S, the same moment as every
# other opener (sleeping, then spinning the last 2 ms), and prints what each open gave.
OPENER_SCRIPT = """
import json, sys, time
from pathlib import Path

from hierlstm.results.store import ResultStore

folder, start, rounds, round_s = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(
    sys.argv[4]
)
outcomes = []
for index in range(rounds):
    moment = start + index * round_s
    time.sleep(max(0.0, moment - time.time() - 0.002))
    while time.time() < moment:
        pass
    try:
        ResultStore(Path(folder) / f"round-{index}.sqlite3")
        outcomes.append("")
    except Exception as error:
        outcomes.append(f"{type(error).__name__}: {error}")
print(json.dumps(outcomes))
"""


def test_eight_processes_opening_one_new_file_at_once_all_succeed(tmp_path):
    start = time.time() + 2.0  # every opener has started by then
    openers = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER_SCRIPT, str(tmp_path), str(start), str(ROUNDS)]
            + [str(ROUND_S)],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    failures = []
    for opener in openers:
        output, _ = opener.communicate(timeout=120)
        assert opener.returncode == 0
        failures += [outcome for outcome in json.loads(output) if outcome]
    assert failures == []
    for index in range(ROUNDS):
        with sqlite3.connect(tmp_path / f"round-{index}.sqlite3") as connection:
            assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
            assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


@pytest.fixture
def short_busy_timeout(monkeypatch):
    monkeypatch.setattr(store_module, "BUSY_TIMEOUT_S", 0.3)


def test_a_file_locked_by_another_process_is_busy_not_damaged(tmp_path, short_busy_timeout):
    path = tmp_path / "results.sqlite3"
    holder = sqlite3.connect(path, isolation_level=None)  # a new file, still a rollback journal
    holder.execute("CREATE TABLE other (x)")
    holder.execute("BEGIN EXCLUSIVE")  # no reader gets in while it is held
    with pytest.raises(Refused) as refused:
        ResultStore(path)
    message = str(refused.value)
    assert refused.value.refusal.kind == "busy"
    assert message.startswith(f"cannot open the results file {path}: another process has kept")
    assert "database is locked" in message and "wait for the other process to finish" in message
    assert "not a" not in message and "damaged" not in message
    holder.execute("ROLLBACK")
    holder.close()
    assert ResultStore(path).count() == 0  # free again: it opens


def test_a_write_while_another_process_holds_the_file_is_busy(tmp_path, short_busy_timeout):
    from factories import make_result

    store = ResultStore(tmp_path / "results.sqlite3")
    holder = sqlite3.connect(store.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # the write lock, as a long transaction would hold it
    with pytest.raises(Refused, match=r"^cannot store a result in .*: another process has kept"):
        store.add(make_result())
    holder.execute("ROLLBACK")
    holder.close()
    store.add(make_result())
    assert store.count() == 1

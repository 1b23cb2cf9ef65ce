"""When the machine says no, through the CLI and the library: one table of cases (a folder that
cannot be made or written, a folder where a file is wanted, a missing import, a damaged, cut
short or newer results file, a full disk at three moments). For each, one line that says what was
tried, why it failed and the fix; the exit status; and the results store, seeded with real rows,
left exactly as it was (`PRAGMA integrity_check` ok)."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from factories import cli_words, make_result, python, run_cli

from hierlstm.cli.main import main
from hierlstm.refusals import Refusal, Refused
from hierlstm.results.schema import SCHEMA_VERSION
from hierlstm.results.store import ResultStore

REPO_ROOT = Path(__file__).resolve().parents[1]
TINY = "--variant folded --batch-size 1 --time-steps 2 --repeats 1 --warmup 0"


# {id: (argv, a part of the one line on stderr (or stdout for check/recover), exit status)}:
# "{db}" is the seeded store, "{tmp}" the test's folder, "{bad}" the case's BAD_FILES file.
CASES = {
    "export-to-a-folder-that-cannot-be-made": (
        "results export --db {db} --output /proc/x.csv",
        "error: cannot write the export /proc/x.csv: no such file or folder, and none can be "
        "made there (No such file or directory: /proc/x.csv); choose another --output file",
        2,
    ),
    "export-to-a-folder": (
        "results export --db {db} --output {tmp}",
        "error: cannot write the export {tmp}: it is a folder, not a file; choose another",
        2,
    ),
    "export-where-writing-is-denied": (
        "results export --db {db} --output /sys/x.csv",
        "error: cannot write the export /sys/x.csv: permission denied",
        2,
    ),
    "list-a-file-that-cannot-be-made": (
        "results list --db /proc/x.sqlite3",
        "error: cannot open the results file /proc/x.sqlite3: no such file or folder, and none "
        "can be made there (No such file or directory: /proc); set HIERLSTM_DB to a file in a "
        "writable folder (the CLI also takes --db).",
        2,
    ),
    "list-a-folder": (
        "results list --db {tmp}",
        "error: cannot open the results file {tmp}: it is a folder, not a file; set HIERLSTM_DB",
        2,
    ),
    "import-a-missing-file": (
        "results import --db {db} {tmp}/nowhere.csv",
        "error: cannot read the import {tmp}/nowhere.csv: no such file (No such file or "
        "directory: {tmp}/nowhere.csv); check the file's name and path.",
        2,
    ),
    "bench-into-a-file-that-cannot-be-made": (
        f"bench {TINY} --db /proc/x.sqlite3",
        "error: cannot open the results file /proc/x.sqlite3: no such file or folder",
        2,
    ),
    # XDG_DATA_HOME=/proc/nope and no HIERLSTM_DB
    "bench-with-an-unwritable-data-folder": (
        f"bench {TINY}",
        "error: cannot open the results file /proc/nope/hierlstm/results.sqlite3: no such file "
        "or folder, and none can be made there (No such file or directory: /proc/nope); set "
        "HIERLSTM_DB to a file in a writable folder",
        2,
    ),
    "sweep-csv-into-a-folder": (
        f"sweep {TINY} --axis time_steps --values 2 --csv {{tmp}} --no-store",
        "error: cannot write the export {tmp}: it is a folder, not a file",
        2,
    ),
    "profile-into-a-folder-that-cannot-be-made": (
        f"profile {TINY} --steps 1 --logdir /proc/nope --no-store",
        "error: cannot write the profile capture in /proc/nope: no such file or folder, and none "
        "can be made there (No such file or directory: /proc/nope); pass --logdir a writable "
        "folder, or set XDG_DATA_HOME to one.",
        2,
    ),
    "list-a-file-that-is-not-sqlite": (
        "results list --db {bad}",
        "error: cannot open the results file {bad}: it is damaged or not a SQLite database (file "
        "is not a database); it is left as it is: `python -m hierlstm results check`",
        2,
    ),
    "list-a-file-cut-short": (
        "results list --db {bad}",
        "error: cannot open the results file {bad}: it is damaged or not a SQLite database "
        "(database disk image is malformed)",
        2,
    ),
    "list-a-newer-file": (
        "results list --db {bad}",
        f"error: cannot open the results file {{bad}}: its results schema is version "
        f"{SCHEMA_VERSION + 1}, newer than this hierlstm reads; upgrade hierlstm, or",
        2,
    ),
    "check-a-file-cut-short": (
        "results check --db {bad}",
        "{bad}: integrity damaged: database disk image is malformed; rows still readable:",
        1,
    ),
    "check-a-sound-file": (
        "results check --db {db}",
        "{db}: integrity ok; rows still readable: 2 results, 0 profiles",
        0,
    ),
    "recover-a-sound-file": (
        "results recover --db {db}",
        "error: nothing to recover: {db} opens as a hierlstm results file (see results check).",
        2,
    ),
}
# The damaged results file at "{bad}": "not-sqlite" | "cut-short" | "newer" (`damaged_file`).
BAD_FILES = {
    "list-a-file-that-is-not-sqlite": "not-sqlite",
    "list-a-file-cut-short": "cut-short",
    "list-a-newer-file": "newer",
    "check-a-file-cut-short": "cut-short",
}


def damaged_file(kind: str, folder: Path) -> Path:
    """A results file spoiled as a crash or a user would spoil it."""
    folder.mkdir(exist_ok=True)
    path = folder / f"{kind}.sqlite3"
    if kind == "not-sqlite":
        path.write_text("these are not results\n" * 100)
        return path
    store = ResultStore(path)
    for _ in range(40):
        store.add(make_result())
    if kind == "newer":
        with contextlib.closing(sqlite3.connect(path)) as connection:
            connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    else:  # cut short, as by a crash while copying it
        os.truncate(path, path.stat().st_size // 2)
    return path


def integrity(path: Path) -> str:
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
        return connection.execute("PRAGMA integrity_check").fetchone()[0]


@contextlib.contextmanager
def a_reader(path: Path):
    """A reader holding the WAL's side files open, so that a child under a file size limit
    needs no new 32 KB shared-memory file to open the store: its first write is what fails."""
    with contextlib.closing(sqlite3.connect(path)) as reader:
        reader.execute("SELECT count(*) FROM results").fetchone()
        yield


@pytest.fixture
def seeded_store(tmp_path, monkeypatch) -> ResultStore:
    store = ResultStore(tmp_path / "results.sqlite3")
    store.add(make_result(), created_at="2025-01-01T10:00:00+00:00")
    store.add(make_result(config_changes={"batch_size": 4}))
    monkeypatch.setenv("HIERLSTM_DB", str(store.path))
    return store


@pytest.mark.parametrize(("id", "argv", "message", "status"), [(i, *c) for i, c in CASES.items()])
def test_a_refusal_is_one_line_with_the_fix_and_nothing_stored_is_lost(
    id, argv, message, status, seeded_store, tmp_path, monkeypatch, capsys
):
    if id == "bench-with-an-unwritable-data-folder":
        monkeypatch.setenv("XDG_DATA_HOME", "/proc/nope")
        monkeypatch.delenv("HIERLSTM_DB")
    bad = damaged_file(BAD_FILES[id], tmp_path / "bad") if id in BAD_FILES else None
    if bad:
        bad_bytes = bad.read_bytes()

    def filled(text: str) -> str:
        text = text.replace("{db}", str(seeded_store.path)).replace("{tmp}", str(tmp_path))
        return text.replace("{bad}", str(bad))

    stored = seeded_store.export_json()
    assert main([filled(part) for part in argv.split()]) == status
    out, err = capsys.readouterr()
    said = [line for line in (out + err).splitlines() if line.strip()]
    assert len(said) == 1 and "Traceback" not in out + err, said
    assert filled(message) in said[0]
    assert seeded_store.export_json() == stored and integrity(seeded_store.path) == "ok"
    if bad:  # never written to
        assert bad.read_bytes() == bad_bytes


def test_recover_keeps_the_damaged_file_renamed_and_starts_a_new_one(tmp_path, capsys):
    bad = damaged_file("cut-short", tmp_path)
    bad_bytes = bad.read_bytes()
    assert main(["results", "recover", "--db", str(bad)]) == 0
    out = capsys.readouterr().out
    kept = next(path for path in tmp_path.iterdir() if ".damaged-" in path.name)
    assert out == f"kept the damaged file as {kept}; a new results file is at {bad}\n"
    assert kept.read_bytes() == bad_bytes and kept.name.startswith("cut-short.damaged-2")
    assert ResultStore(bad).count() == 0  # a new, sound file in its place
    assert main(["results", "list", "--db", str(bad)]) == 0


def test_the_app_s_sentence_is_the_same_refusal_in_chinese():
    refusal = Refusal("results", "/proc/x.sqlite3", "missing", "No such file or directory")
    assert refusal.sentence("zh").startswith("无法打开结果文件 /proc/x.sqlite3：文件或目录不存在")
    assert "HIERLSTM_DB" in refusal.sentence("zh") and refusal.sentence("zh").endswith("。")
    assert str(Refused(refusal)) == refusal.sentence("en")


# ---- a full disk: a file size limit in a child process, at three moments ---------------------

FULL_DISK = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails instead of killing
limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from hierlstm.cli.main import main
sys.exit(main(sys.argv[2:]))
"""


def run_limited(limit: int, *argv: str | Path) -> subprocess.CompletedProcess:
    """The CLI on `cli_words(*argv)` in a child whose files cannot grow past `limit` bytes."""
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    return python("-c", FULL_DISK, limit, *cli_words(*argv), timeout=300, env=environment)


def error_lines(completed: subprocess.CompletedProcess) -> list[str]:
    return [line for line in completed.stderr.splitlines() if line.startswith(("error", "Trace"))]


def test_a_full_disk_while_a_result_is_stored_prints_it_then_one_line(seeded_store, capsys):
    stored = seeded_store.export_json()
    with a_reader(seeded_store.path):  # the child's one write is the WAL's first page
        full = run_limited(4096, "bench", TINY, "--db", seeded_store.path)
    assert full.returncode == 1
    assert "folded" in full.stdout  # the measurement, printed all the same
    (line,) = error_lines(full)
    assert line.startswith(
        f"error: cannot store a result in {seeded_store.path}: the disk could not write it: full"
    )
    assert line.endswith("The results above were measured but not stored.")
    assert seeded_store.export_json() == stored and integrity(seeded_store.path) == "ok"
    again, _, _ = run_cli(capsys, "bench", TINY, "--db", seeded_store.path)  # here: no limit
    assert again == 0 and seeded_store.count() == 3  # space is back


def test_a_full_disk_while_an_export_is_written_leaves_no_file(seeded_store, tmp_path):
    output = tmp_path / "out" / "export.json"
    output.parent.mkdir()
    with a_reader(seeded_store.path):
        full = run_limited(1000, "results export --format json --output", output)
    assert full.returncode == 2
    (line,) = error_lines(full)
    assert line.startswith(f"error: cannot write the export {output}: no space left")
    assert sorted(path.name for path in output.parent.iterdir()) == []  # no half export
    assert integrity(seeded_store.path) == "ok" and seeded_store.count() == 2
    again = run_limited(2**40, "results export --format json --output", output)
    assert again.returncode == 0 and output.read_text() == seeded_store.export_json()


def test_a_full_disk_while_a_capture_is_written_is_one_line_not_an_op_error(
    seeded_store, tmp_path, capsys
):
    logdir = tmp_path / "capture"
    with a_reader(seeded_store.path):
        full = run_limited(20000, "profile", TINY, "--steps 1 --logdir", logdir)
    assert full.returncode == 2
    (line,) = error_lines(full)
    assert line.startswith(f"error: cannot write the profile capture in {logdir}: no space left")
    assert line.endswith("free some space, then run again.")
    assert integrity(seeded_store.path) == "ok" and seeded_store.count() == 2
    again, _, _ = run_cli(capsys, "profile", TINY, "--steps 1 --logdir", logdir / "2")
    assert again == 0 and len(seeded_store.profiles()) == 1

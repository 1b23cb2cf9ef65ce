"""The results store: round trips, all-or-nothing imports, and two writers or a killed writer
leaving a consistent file."""

import json
import math
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from factories import make_failed_result, make_result

from hierlstm.config import RunConfig
from hierlstm.results.exchange import MAX_IMPORT_BYTES
from hierlstm.results.schema import COLUMNS, SCHEMA_VERSION
from hierlstm.results.store import ImportReport, ResultStore, default_path

REPO_ROOT = Path(__file__).resolve().parents[2]

# A writer in its own process: adds one pickled result `count` times once `go_file` exists,
# printing each id only after its transaction committed; it also shows that the store needs no
# TensorFlow. Unpickling a RunConfig does not re-validate it.
WRITER_SCRIPT = """
import pickle, sys, time
from pathlib import Path

from hierlstm.results.store import ResultStore

assert "tensorflow" not in sys.modules
database, result_file, go_file, count = sys.argv[1:]
result = pickle.loads(Path(result_file).read_bytes())
store = ResultStore(database)
print("ready", flush=True)
while not Path(go_file).exists():
    time.sleep(0.005)
for _ in range(int(count)):
    print(store.add(result), flush=True)
assert "tensorflow" not in sys.modules
"""


def filled_store(path: Path) -> ResultStore:
    store = ResultStore(path)
    store.add(make_result(), created_at="2025-01-01T10:00:00+00:00")
    store.add(make_result(config=RunConfig(variant="nested", batch_size=4, time_steps=4)))
    store.add(make_failed_result())
    return store


def test_default_path_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("HIERLSTM_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_path() == tmp_path / "data" / "hierlstm" / "results.sqlite3"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_path() == Path.home() / ".local" / "share" / "hierlstm" / "results.sqlite3"
    monkeypatch.setenv("HIERLSTM_DB", str(tmp_path / "chosen.sqlite3"))
    assert default_path() == tmp_path / "chosen.sqlite3"
    assert ResultStore().path == tmp_path / "chosen.sqlite3"


def test_a_new_store_creates_a_versioned_wal_schema(tmp_path):
    store = ResultStore(tmp_path / "nested" / "dirs" / "results.sqlite3")
    with sqlite3.connect(store.path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        columns = [row[1] for row in connection.execute("PRAGMA table_info(results)")]
    assert tuple(columns) == COLUMNS
    assert ResultStore(store.path).count() == 0  # reopening leaves it as it is


def test_get_returns_the_stored_result_or_none(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite3")
    result = make_result()
    stored = store.get(store.add(result, created_at="2025-03-04T05:06:07+00:00"))
    assert stored.result == result
    assert stored.created_at == "2025-03-04T05:06:07.000000+00:00"
    assert store.get("00000000-0000-4000-8000-000000000000") is None


def test_rows_are_newest_first_and_filter_by_variant_and_device(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite3")
    older = store.add(make_result(), created_at="2025-01-01T00:00:00+00:00")
    newer = store.add(make_result(device="/GPU:0"), created_at="2025-06-01T02:00:00+02:00")
    nested = make_result(config=RunConfig(variant="nested", batch_size=2, time_steps=4))
    newest = store.add(nested, created_at="2025-06-01T01:00:00+00:00")
    assert list(store.rows()["id"]) == [newest, newer, older]
    assert list(store.rows(variant="folded")["id"]) == [newer, older]
    assert list(store.rows(variant="folded", device="/CPU:0")["id"]) == [older]
    assert store.rows(variant="shared_cell").empty


def test_rows_where_newest_count_and_distinct_are_what_sqlite_picks(tmp_path):
    """A reader of a few rows of a class's thousands asks SQLite for them: `where` keeps a row
    whose value in each column named is one of those given (numpy's scalars as Python's),
    `newest` the first that many, `count` and `distinct` read the same way; a name that is not a
    column is refused before any query."""
    store = ResultStore(tmp_path / "results.sqlite3")
    ids = [
        store.add(make_result(config_changes=change), created_at=f"2026-12-0{day}")
        for day, change in enumerate(({}, {"batch_size": 3}, {"variant": "nested"}, {}), 1)
    ]
    failed = store.add(make_failed_result(), created_at="2026-12-05")
    rows = store.rows()
    assert list(rows["id"]) == [failed, *ids[::-1]]
    batch = rows["batch_size"].iloc[-1]  # numpy.int64, as a frame's values are
    picked = store.rows(where={"batch_size": [batch], "status": ["ok"]})
    assert list(picked["id"]) == [ids[3], ids[2], ids[0]]
    assert list(store.rows(where={"variant": ["folded"]}, newest=2)["id"]) == [failed, ids[3]]
    assert list(store.rows(where={"id": ids[:2]})["id"]) == ids[1::-1]
    assert store.rows(where={"variant": []}).empty  # nothing allowed, nothing kept
    assert store.count() == 5 and store.count({"status": ["ok"], "variant": ["folded"]}) == 3
    assert store.distinct("variant") == ["folded", "nested"]
    assert store.distinct("status") == ["failed", "ok"]
    with pytest.raises(ValueError, match="no column 'variant; DROP'"):
        store.rows(where={"variant; DROP": ["x"]})
    with pytest.raises(ValueError, match="no column"):
        store.distinct("1; DROP TABLE results")
    assert store.count() == 5


def test_a_failed_result_s_nan_times_are_stored_as_null(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite3")
    store.add(make_failed_result())
    with sqlite3.connect(store.path) as connection:
        stored_median = connection.execute("SELECT median_s FROM results").fetchone()[0]
    assert stored_median is None


def test_an_ok_result_without_a_median_is_refused(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite3")
    with pytest.raises(ValueError, match="median_s must be a number when status is ok"):
        store.add(make_result(step_changes={"median": math.nan}))
    assert store.count() == 0


@pytest.mark.parametrize("format", ["csv", "json"])
def test_export_then_import_into_a_fresh_store_gives_equal_rows(tmp_path, format):
    source = filled_store(tmp_path / "source.sqlite3")
    export_path = tmp_path / f"results.{format}"
    getattr(source, f"export_{format}")(export_path)
    target = ResultStore(tmp_path / "target.sqlite3")
    report = target.import_file(export_path)
    assert report == ImportReport(added=3, skipped=0)
    assert target.rows().equals(source.rows())


@pytest.mark.parametrize("format", ["csv", "json"])
def test_reimport_skips_known_ids(tmp_path, format):
    store = filled_store(tmp_path / "results.sqlite3")
    exported = getattr(store, f"export_{format}")().encode()
    store.add(make_result())
    assert store.import_file(exported, format=format) == ImportReport(added=0, skipped=3)
    assert store.count() == 4


def test_an_import_error_names_a_few_bad_rows_and_counts_the_rest(tmp_path):
    good = json.loads(filled_store(tmp_path / "source.sqlite3").export_json())["rows"][0]
    bad_rows = [
        {**good, "id": "not-a-uuid"},
        {**good, "created_at": "yesterday"},
        {**good, "status": "maybe"},
        {**good, "kernel": "fast"},
        {key: value for key, value in good.items() if key != "host"},
    ]
    document = {"format": "hierlstm-results", "version": 2, "rows": [good, *bad_rows]}
    store = ResultStore(tmp_path / "target.sqlite3")
    with pytest.raises(ValueError) as raised:
        store.import_file(json.dumps(document).encode(), format="json")
    message = str(raised.value)
    assert "\n" not in message
    assert "row 2: id must be a UUID; got 'not-a-uuid'." in message
    assert "row 3: created_at must be an ISO 8601 date and time" in message
    assert "row 4: status must be one of ok, failed; got 'maybe'." in message
    assert "row 5" not in message
    assert message.endswith("(5 of 6 rows bad; the first 3 shown)")
    assert store.count() == 0


def test_an_oversize_import_is_refused_before_parsing(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite3")
    huge_file = tmp_path / "huge.json"
    with huge_file.open("wb") as file:
        file.truncate(50 * 1024 * 1024)  # sparse: 50 MB of zero bytes, not valid JSON
    with pytest.raises(ValueError, match=r"input is 50\.0 MB, over the 20 MB limit"):
        store.import_file(huge_file)
    with pytest.raises(ValueError, match="over the 20 MB limit"):
        store.import_file(b" " * (MAX_IMPORT_BYTES + 1), format="csv")


def test_the_import_format_comes_from_the_extension_or_is_given(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite3")
    text_file = tmp_path / "results.txt"
    text_file.write_text("")
    with pytest.raises(ValueError, match="cannot tell the format"):
        store.import_file(text_file)
    with pytest.raises(ValueError, match="format must be given"):
        store.import_file(b"")
    with pytest.raises(ValueError, match="format must be csv or json; got 'xml'"):
        store.import_file(b"", format="xml")
    with pytest.raises(ValueError, match='"format": "hierlstm-results"'):
        store.import_file(b'{"rows": []}', format="json")


def start_writer(tmp_path: Path, name: str, database: Path, go_file: Path, count: int):
    """A writer subprocess (see WRITER_SCRIPT), started and waited on until it is ready."""
    result_file = tmp_path / "result.pickle"
    result_file.write_bytes(pickle.dumps(make_result()))
    environment = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
    arguments = [str(database), str(result_file), str(go_file), str(count)]
    return subprocess.Popen(
        [sys.executable, "-c", WRITER_SCRIPT, *arguments],
        stdout=subprocess.PIPE,
        stderr=(tmp_path / f"{name}.stderr").open("w"),
        text=True,
        cwd=REPO_ROOT,
        env=environment,
    )


def wait_until_ready(writer: subprocess.Popen):
    line = writer.stdout.readline()
    assert line == "ready\n", f"writer failed to start (exit code {writer.poll()})"


def test_two_processes_writing_at_once_all_land(tmp_path):
    database = tmp_path / "shared.sqlite3"  # created by the two writers racing
    go_file = tmp_path / "go"
    writers = [start_writer(tmp_path, f"writer{n}", database, go_file, 20) for n in (1, 2)]
    for writer in writers:
        wait_until_ready(writer)
    go_file.touch()
    printed_ids = []
    for writer in writers:
        output, _ = writer.communicate(timeout=60)
        assert writer.returncode == 0
        printed_ids += output.split()
    store = ResultStore(database)
    assert len(printed_ids) == 40
    assert store.count() == 40
    assert set(store.rows()["id"]) == set(printed_ids)


def test_a_writer_killed_mid_sweep_keeps_every_committed_row(tmp_path):
    database = tmp_path / "results.sqlite3"
    go_file = tmp_path / "go"
    go_file.touch()
    writer = start_writer(tmp_path, "writer", database, go_file, 100_000)
    wait_until_ready(writer)
    printed_ids = [writer.stdout.readline().strip() for _ in range(15)]
    time.sleep(0.05)  # let it get into the middle of some later transaction
    os.kill(writer.pid, signal.SIGKILL)
    rest, _ = writer.communicate(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    printed_ids += rest.split("\n")[:-1]  # a line cut short by the kill has no newline
    with sqlite3.connect(database) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store = ResultStore(database)
    stored_ids = set(store.rows()["id"])
    assert set(printed_ids) <= stored_ids
    assert len(stored_ids) >= len(printed_ids) >= 15


def test_the_harness_failed_record_is_stored_and_exported(tmp_path):
    import tensorflow as tf

    from hierlstm.timing import failed_result

    store = ResultStore(tmp_path / "results.sqlite3")
    error = tf.errors.ResourceExhaustedError(None, None, "OOM when allocating tensor")
    result_id = store.add(failed_result(RunConfig(variant="folded"), error))
    row = store.rows().set_index("id").loc[result_id]
    assert row["status"] == "failed" and row["kernel"] == ""
    assert row["error"].startswith("out of memory")
    other = ResultStore(tmp_path / "other.sqlite3")
    assert other.import_file(store.export_json().encode(), format="json").added == 1

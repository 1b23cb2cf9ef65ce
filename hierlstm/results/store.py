"""Results storage: every measurement in one SQLite file shared by the app and the CLI, and the
profiles table. WAL mode with a busy timeout and one transaction per measurement, so a sweep killed
half-way keeps its finished points; imports are all or nothing. Switching a new file to WAL cannot
wait on the busy timeout, so it is retried up to `BUSY_TIMEOUT_S`. What the machine refuses raises
`hierlstm.refusals.Refused`; a damaged file is never written to (`results.repair`). No Streamlit, no
TensorFlow."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import random
import socket
import sqlite3
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pandas as pd

from hierlstm import settings
from hierlstm.config import data_folder
from hierlstm.records import BenchResult
from hierlstm.refusals import is_busy, refusing, writable_file
from hierlstm.results import audits, exchange, profiles, schema
from hierlstm.results.schema import COLUMNS, KINDS, SCHEMA_VERSION
from hierlstm.results.validation import checked_row, checked_rows, utc_timestamp

if TYPE_CHECKING:
    from hierlstm.profiling import ProfileResult

BUSY_TIMEOUT_S = 30.0  # how long a writer waits for another process's transaction
# Fixed dtypes, so an empty store or an all-failed filter still gives float time columns.
_FRAME_DTYPES = {
    column: {"float": "float64", "int": "int64", "bool": "bool", "text": "object"}[kind]
    for column, kind in KINDS.items()
}
Where = Mapping[str, Iterable[Any]]  # column -> the values a row may have there


def default_path() -> Path:
    """`$HIERLSTM_DB` if set, else results.sqlite3 in `hierlstm.config.data_folder()`
    ($XDG_DATA_HOME/hierlstm, ~/.local/share/hierlstm by default)."""
    override = settings.read("HIERLSTM_DB")
    if override:
        return Path(override).expanduser()
    return data_folder() / "results.sqlite3"


@dataclasses.dataclass(frozen=True)
class ImportReport:
    """What an import did: rows written, and rows skipped because their id was already stored
    (or appeared earlier in the same file)."""

    added: int
    skipped: int


@dataclasses.dataclass(frozen=True)
class StoredResult:
    """One stored measurement: the record plus where and when it was taken."""

    id: str
    created_at: str  # UTC, ISO 8601
    host: str
    result: BenchResult


class ResultStore:
    """The results file. Cheap to create; opens a short-lived connection per operation, so one
    instance can be shared between threads (a cached Streamlit resource, say). Opening a file
    of an older schema migrates it; a newer one is refused."""

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path).expanduser() if path is not None else default_path()
        writable_file("results", self.path)
        self._create_schema()

    def add(self, result: BenchResult, *, created_at: datetime | str | None = None) -> str:
        """Stores one measurement in its own transaction; returns its new id (a UUID4)."""
        row = checked_row(
            {
                "id": str(uuid.uuid4()),
                "created_at": datetime.now(UTC) if created_at is None else created_at,
                "host": socket.gethostname(),
                **result.to_row(),
            }
        )
        with self._connect("store") as connection, _transaction(connection):
            connection.execute(schema.INSERT, [row[column] for column in COLUMNS])
        return row["id"]

    def add_profile(
        self, result: ProfileResult, *, created_at: datetime | str | None = None
    ) -> str:
        """Stores one profile's summary row in its own transaction; returns its new id."""
        row = profiles.profile_row(result)
        return self._add_row(profiles.PROFILE_KINDS, profiles.INSERT_PROFILE, row, created_at)

    def add_audit(self, row: dict, *, created_at: datetime | str | None = None) -> str:
        """Stores one timed run of the Your model page (`hierlstm.results.audits.audit_row`) in
        its own transaction; returns its new id."""
        return self._add_row(audits.AUDIT_KINDS, audits.INSERT_AUDIT, row, created_at)

    def _add_row(self, kinds, insert: str, row: dict, created_at) -> str:
        """`row` with its id, time and host, inserted into the table beside `results` that
        `kinds` and `insert` describe (`profiles.table_sql`); its new id."""
        row = {
            "id": str(uuid.uuid4()),
            "created_at": utc_timestamp(datetime.now(UTC) if created_at is None else created_at),
            "host": socket.gethostname(),
            **row,
        }
        values = [profiles.sql_value(kind, row[column]) for column, kind in kinds.items()]
        with self._connect("store") as connection, _transaction(connection):
            connection.execute(insert, values)
        return row["id"]

    def audits(self) -> pd.DataFrame:
        """Every stored Your model run, newest first; columns `AUDIT_COLUMNS`."""
        query = audits.SELECT_AUDITS + " ORDER BY created_at DESC, rowid DESC"
        with self._connect() as connection:
            found = connection.execute(query).fetchall()
        return pd.DataFrame(found, columns=list(audits.AUDIT_COLUMNS))

    def profiles(self, *, variant: str | None = None) -> pd.DataFrame:
        """Every stored profile's summary row, newest first, optionally of one variant.
        Columns `PROFILE_COLUMNS` (`hierlstm.results.profiles`); the JSON ones as text."""
        where, parameters = (" WHERE variant = ?", [variant]) if variant is not None else ("", [])
        query = profiles.SELECT_PROFILES + where + " ORDER BY created_at DESC, rowid DESC"
        with self._connect() as connection:
            found = connection.execute(query, parameters).fetchall()
        frame = pd.DataFrame(found, columns=list(profiles.PROFILE_COLUMNS))
        return frame.astype(profiles.FRAME_DTYPES)

    def count(self, where: Where | None = None) -> int:
        """How many measurements are stored (of them, those `where` keeps, as `rows` reads it)."""
        condition, parameters = _where(where)
        with self._connect() as connection:
            query = "SELECT count(*) FROM results" + condition
            return connection.execute(query, parameters).fetchone()[0]

    def distinct(self, column: str) -> list:
        """The values stored in `column`, each once, in SQLite's order."""
        _where({column: ()})  # refuses a name that is not a column
        with self._connect() as connection:
            query = f"SELECT DISTINCT {column} FROM results ORDER BY {column}"
            return [value for (value,) in connection.execute(query).fetchall()]

    def version(self) -> tuple[int, int]:
        """(how many measurements, the largest rowid): it changes with every row added, and rows
        are never changed or removed, so a reader may keep what it read while it stays the same
        (a page's cache, `hierlstm.app.caches.stored_rows`)."""
        query = "SELECT count(*), coalesce(max(rowid), 0) FROM results"
        with self._connect() as connection:
            count, largest = connection.execute(query).fetchone()
        return count, largest

    def rows(
        self,
        *,
        variant: str | None = None,
        device: str | None = None,
        where: Where | None = None,
        newest: int | None = None,
    ) -> pd.DataFrame:
        """Every stored row, newest first, optionally of one variant and/or device: columns
        `COLUMNS`, NaN where a failed run has no time. `where` ({column: values}) keeps the rows
        whose value in each column named is one of those given, and `newest` the first that many:
        SQLite picks them, so a reader of a few rows of a class's thousands makes only those."""
        where = dict(where or {})
        for column, value in (("variant", variant), ("device", device)):
            if value is not None:
                where[column] = [value]
        found = self._select(where=where, newest=newest)
        return pd.DataFrame(found, columns=list(COLUMNS)).astype(_FRAME_DTYPES)

    def get(self, result_id: str) -> StoredResult | None:
        """The stored measurement with this id, or None if there is none."""
        with self._connect() as connection:
            found = connection.execute(schema.SELECT + " WHERE id = ?", [str(result_id)]).fetchone()
        if found is None:
            return None
        row = dict(zip(COLUMNS, found, strict=True))
        return StoredResult(
            id=row["id"],
            created_at=row["created_at"],
            host=row["host"],
            result=BenchResult.from_row(row),
        )

    def export_csv(self, path_or_buffer: str | os.PathLike | IO[str] | None = None) -> str | None:
        """Writes every row as CSV (header = `COLUMNS`); returns the text if no target is given."""
        return exchange.write_text(exchange.csv_text(self._select()), path_or_buffer)

    def export_json(self, path_or_buffer: str | os.PathLike | IO[str] | None = None) -> str | None:
        """Writes `{"format": "hierlstm-results", "version": 3, "rows": [...]}`, each row an
        object of `COLUMNS`; returns the text if no target is given."""
        return exchange.write_text(exchange.json_text(self._select()), path_or_buffer)

    def import_file(
        self, path_or_bytes: str | os.PathLike | bytes, format: str | None = None
    ) -> ImportReport:
        """Adds the rows of a CSV or JSON export in one transaction, or none: a bad row raises
        ValueError naming the bad rows (from 1, not counting a CSV header). Ids already stored are
        skipped."""
        raw_rows, export_version = exchange.read_rows(path_or_bytes, format)
        rows = checked_rows(raw_rows, export_version)
        added = 0
        with self._connect("store") as connection, _transaction(connection):
            for row in rows:
                cursor = connection.execute(schema.INSERT_NEW, [row[column] for column in COLUMNS])
                added += cursor.rowcount
        return ImportReport(added=added, skipped=len(rows) - added)

    @contextlib.contextmanager
    def _connect(self, place: str = "results") -> Iterator[sqlite3.Connection]:
        """A connection; the machine's refusals inside raise `Refused` as `place` ("results"
        to open or read, "store" to write)."""
        with refusing(place, self.path):
            # isolation_level=None: no implicit transactions; `_transaction` begins and commits.
            connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            try:
                connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
                yield connection
            finally:
                connection.close()

    def _create_schema(self):
        with self._connect() as connection:
            version = _when_free(lambda: _wal_and_version(connection))
            schema.refuse_newer(self.path, version)
            if version == SCHEMA_VERSION:
                return
            with _transaction(connection):  # a migration is all or nothing too
                schema.upgrade(connection, self.path)

    def _select(self, *, where: Where | None = None, newest: int | None = None) -> list[dict]:
        """Stored rows as dicts of raw column values, newest first (`rows`)."""
        condition, parameters = _where(where)
        query = schema.SELECT + condition + " ORDER BY created_at DESC, rowid DESC"
        if newest is not None:
            query += f" LIMIT {int(newest)}"
        with self._connect() as connection:
            found = connection.execute(query, parameters).fetchall()
        return [dict(zip(COLUMNS, values, strict=True)) for values in found]


def _where(where: Where | None) -> tuple[str, list]:
    """`where` as SQL (" WHERE a IN (?, ?) AND b IN (?)", or "") and its parameters; numpy's
    scalars as Python's (a frame's values). ValueError for a name that is not a column."""
    conditions, parameters = [], []
    for column, values in (where or {}).items():
        if column not in KINDS:
            raise ValueError(f"the results have no column {column!r}")
        values = [value.item() if hasattr(value, "item") else value for value in values]
        conditions.append(f"{column} IN ({', '.join('?' * len(values))})")
        parameters += values
    return (f" WHERE {' AND '.join(conditions)}" if conditions else ""), parameters


def _wal_and_version(connection: sqlite3.Connection) -> int:
    if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        connection.execute("PRAGMA journal_mode=WAL")  # persistent: set once per file
    return schema.user_version(connection)


def _when_free(step):
    """`step()`, tried again while SQLite answers busy without waiting itself (the journal-mode
    switch of a new file that other processes are opening); the last busy error after
    `BUSY_TIMEOUT_S`."""
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            return step()
        except sqlite3.OperationalError as error:
            if not is_busy(error) or time.monotonic() > deadline:
                raise
        time.sleep(random.uniform(0.005, 0.03))  # spread out, so openers do not collide again


@contextlib.contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[None]:
    # IMMEDIATE takes the write lock up front, so two writers wait on the busy timeout
    # instead of failing when a read lock cannot be upgraded.
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")

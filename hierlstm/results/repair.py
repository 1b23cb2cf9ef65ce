"""A results file that cannot be opened: what is still readable (`check`, read-only), and setting it
aside (`recover` renames it with its WAL files to `<name>.damaged-<UTC time><suffix>`) for a new
file. Neither writes to the old file."""

from __future__ import annotations

import dataclasses
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from hierlstm.refusals import Refused, refusing
from hierlstm.results.schema import ResultsError

TABLES = ("results", "profiles")
_SIDE_FILES = ("-wal", "-shm")


@dataclasses.dataclass(frozen=True)
class CheckReport:
    """SQLite's integrity check of a file ("ok", or its first problems; the error when the file
    cannot even be read as SQLite) and how many rows of each table could still be read."""

    path: str
    problems: tuple[str, ...]  # empty when the check says "ok"
    readable: dict[str, int]  # table -> rows read before the first unreadable one

    @property
    def ok(self) -> bool:
        return not self.problems

    def line(self) -> str:
        rows = ", ".join(f"{count} {table}" for table, count in self.readable.items())
        verdict = "ok" if self.ok else f"damaged: {'; '.join(self.problems[:3])}"
        return f"{self.path}: integrity {verdict}; rows still readable: {rows or 'none'}"


def check(path: str | os.PathLike, problems_shown: int = 5) -> CheckReport:
    """`PRAGMA integrity_check` of the file and the rows of each table readable in it, read-only."""
    path = Path(path).expanduser()
    with refusing("results", path):
        if not path.is_file():
            raise FileNotFoundError(2, "No such file", str(path))
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        try:
            found = connection.execute(f"PRAGMA integrity_check({problems_shown})").fetchall()
            problems = tuple(row[0] for row in found if row[0] != "ok")
        except sqlite3.DatabaseError as error:
            problems = (str(error),)
        readable = {table: _readable_rows(connection, table) for table in TABLES}
    finally:
        connection.close()
    return CheckReport(str(path), problems, {k: v for k, v in readable.items() if v is not None})


def _readable_rows(connection: sqlite3.Connection, table: str) -> int | None:
    """Rows of `table` read one by one until the first that fails; None without the table."""
    count = 0
    try:
        for _row in connection.execute(f"SELECT * FROM {table}"):  # noqa: S608 (our names)
            count += 1
    except sqlite3.DatabaseError as error:
        if count == 0 and "no such table" in str(error):
            return None
    return count


def damaged_name(path: Path, now: datetime | None = None) -> Path:
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return path.with_name(f"{path.stem}.damaged-{stamp}{path.suffix}")


def recover(path: str | os.PathLike, open_store) -> tuple[Path, object]:
    """Renames the damaged file at `path` (and its WAL side files) aside, then opens a new one
    there with `open_store(path)`; (where the damaged one is now, the new store). Refuses a file
    that opens fine: only a damaged or newer one is set aside."""
    path = Path(path).expanduser()
    try:
        open_store(path)
    except Refused as error:
        if not error.refusal.damaged:
            raise
    else:
        raise ResultsError(
            f"nothing to recover: {path} opens as a hierlstm results file (see results check)."
        )
    kept = damaged_name(path)
    with refusing("recover", path):
        os.rename(path, kept)
        for side in _SIDE_FILES:
            if (old := path.with_name(path.name + side)).exists():
                os.rename(old, kept.with_name(kept.name + side))
    return kept, open_store(path)

"""Results storage: every measurement in one SQLite file, exportable and importable as CSV/JSON.

One row per `BenchResult`, with the context needed to compare runs across machines (host,
device, library versions, the full config as JSON). The file is shared by the app and the CLI,
possibly at the same moment: it runs in WAL mode with a busy timeout, and every measurement is
its own transaction, so a sweep killed half-way keeps each finished point and the file stays
consistent. Imports are all or nothing: one bad row rejects the whole file.

This module imports neither Streamlit nor TensorFlow; library versions arrive in
`BenchResult.versions`.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import math
import numbers
import os
import re
import socket
import sqlite3
import uuid
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import pandas as pd

from hierlstm.config import RunConfig
from hierlstm.timing.records import BenchResult

SCHEMA_VERSION = 1  # PRAGMA user_version; bump with a migration when the columns change
BUSY_TIMEOUT_S = 30.0  # how long a writer waits for another process's transaction
MAX_IMPORT_BYTES = 20 * 1024 * 1024  # refused before parsing: no sweep comes near this
EXPORT_FORMAT = "hierlstm-results"
EXPORT_VERSION = 1
STATUSES = ("ok", "failed")
KERNELS = ("cudnn", "generic")
_ERRORS_SHOWN = 3  # bad rows named in an import error; the rest are counted
_LARGEST_WHOLE = 2**63 - 1  # SQLite INTEGER
_CSV_MISMATCH = object()  # marks a CSV row with more or fewer fields than its header

# Columns added around the BenchResult fields, then the BenchResult fields in record order.
CONTEXT_COLUMNS = (
    "id",
    "created_at",
    "host",
    "device",
    "tensorflow_version",
    "keras_version",
    "python_version",
    "numpy_version",
    "variant",
    "config",
)
FLOAT_COLUMNS = (
    "first_call_s",
    "median_s",
    "p10_s",
    "p90_s",
    "iqr_s",
    "mean_s",
    "std_s",
    "min_s",
    "samples_per_s",
    "steps_per_s",
    "gflops_per_s",
)
WHOLE_COLUMNS = ("repeats", "warmup", "flops", "peak_memory_bytes", "trace_count")
TEXT_COLUMNS = ("host", "device", "peak_memory_kind", "kernel_reason", "error")
VERSION_COLUMNS = {  # column -> key in BenchResult.versions
    "tensorflow_version": "tensorflow",
    "keras_version": "keras",
    "python_version": "python",
    "numpy_version": "numpy",
}
COLUMNS = CONTEXT_COLUMNS + tuple(
    field.name
    for field in dataclasses.fields(BenchResult)
    if field.name not in ("config", "device")  # already among the context columns
)

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS results (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    host TEXT NOT NULL,
    device TEXT NOT NULL,
    tensorflow_version TEXT NOT NULL,
    keras_version TEXT NOT NULL,
    python_version TEXT NOT NULL,
    numpy_version TEXT NOT NULL,
    variant TEXT NOT NULL,
    config TEXT NOT NULL,
    first_call_s REAL,
    median_s REAL,
    p10_s REAL,
    p90_s REAL,
    iqr_s REAL,
    mean_s REAL,
    std_s REAL,
    min_s REAL,
    repeats INTEGER NOT NULL,
    warmup INTEGER NOT NULL,
    noisy INTEGER NOT NULL,
    samples_per_s REAL,
    steps_per_s REAL,
    flops INTEGER NOT NULL,
    gflops_per_s REAL,
    peak_memory_bytes INTEGER NOT NULL,
    peak_memory_kind TEXT NOT NULL,
    kernel TEXT NOT NULL,
    kernel_reason TEXT NOT NULL,
    trace_count INTEGER NOT NULL,
    versions TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT NOT NULL
)
"""
_CREATE_INDEX = "CREATE INDEX IF NOT EXISTS results_by_time ON results (created_at)"


def default_path() -> Path:
    """`$HIERLSTM_DB` if set, else `$XDG_DATA_HOME/hierlstm/results.sqlite3`.

    XDG_DATA_HOME defaults to ~/.local/share (and, as the XDG spec asks, a relative value is
    ignored).
    """
    override = os.environ.get("HIERLSTM_DB", "").strip()
    if override:
        return Path(override).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME", "").strip()
    if not data_home or not os.path.isabs(data_home):
        data_home = os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(data_home) / "hierlstm" / "results.sqlite3"


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
    instance can be shared between threads (a cached Streamlit resource, say)."""

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path).expanduser() if path is not None else default_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._create_schema()

    def add(self, result: BenchResult, *, created_at: datetime | str | None = None) -> str:
        """Stores one measurement in its own transaction; returns its new id (a UUID4)."""
        raw = _raw_row_from_result(result)
        raw["id"] = str(uuid.uuid4())
        raw["created_at"] = datetime.now(UTC) if created_at is None else created_at
        raw["host"] = socket.gethostname()
        row = _checked_row(raw)
        with self._connect() as connection, _transaction(connection):
            connection.execute(_INSERT, [row[column] for column in COLUMNS])
        return row["id"]

    def count(self) -> int:
        """How many measurements are stored."""
        with self._connect() as connection:
            return connection.execute("SELECT count(*) FROM results").fetchone()[0]

    def rows(self, *, variant: str | None = None, device: str | None = None) -> pd.DataFrame:
        """Every stored row, newest first, optionally only one variant and/or device.

        Columns are `COLUMNS` (config and versions as JSON text, NaN where a failed run has no
        time) followed by `config.<field>` for every RunConfig field.
        """
        records = [_frame_record(row) for row in self._select(variant=variant, device=device)]
        config_columns = [f"config.{field.name}" for field in dataclasses.fields(RunConfig)]
        frame = pd.DataFrame(records, columns=[*COLUMNS, *config_columns])
        return _with_column_types(frame)

    def get(self, result_id: str) -> StoredResult | None:
        """The stored measurement with this id, or None if there is none."""
        with self._connect() as connection:
            found = connection.execute(_SELECT + " WHERE id = ?", [str(result_id)]).fetchone()
        return None if found is None else _stored_result(dict(zip(COLUMNS, found, strict=True)))

    def export_csv(self, path_or_buffer: str | os.PathLike | IO[str] | None = None) -> str | None:
        """Writes every row as CSV (header = `COLUMNS`); returns the text if no target is given."""
        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(COLUMNS)
        for row in self._select():
            writer.writerow(_csv_cell(row[column]) for column in COLUMNS)
        return _write_text(buffer.getvalue(), path_or_buffer)

    def export_json(self, path_or_buffer: str | os.PathLike | IO[str] | None = None) -> str | None:
        """Writes `{"format": "hierlstm-results", "version": 1, "rows": [...]}`, config and
        versions as objects; returns the text if no target is given."""
        document = {
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "rows": [_json_record(row) for row in self._select()],
        }
        return _write_text(json.dumps(document, indent=1, allow_nan=False) + "\n", path_or_buffer)

    def import_file(
        self, path_or_bytes: str | os.PathLike | bytes, format: str | None = None
    ) -> ImportReport:
        """Adds the rows of a CSV or JSON export in one transaction, or none of them.

        `format` is "csv" or "json"; for a path it defaults to the file's extension. Every row
        is validated first; if any is bad, nothing is written and `ValueError` names the bad
        rows (numbered from 1, not counting a CSV header). Rows whose id is already stored are
        skipped.
        """
        format = _import_format(path_or_bytes, format)
        text = _decoded(_read_limited(path_or_bytes))
        raw_rows = _parse_csv(text) if format == "csv" else _parse_json(text)
        rows = _checked_rows(raw_rows)
        added = 0
        with self._connect() as connection, _transaction(connection):
            for row in rows:
                cursor = connection.execute(_INSERT_NEW, [row[column] for column in COLUMNS])
                added += cursor.rowcount
        return ImportReport(added=added, skipped=len(rows) - added)

    @contextlib.contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        # isolation_level=None: no implicit transactions; `_transaction` begins and commits.
        connection = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            yield connection
        finally:
            connection.close()

    def _create_schema(self):
        with self._connect() as connection:
            try:
                connection.execute("PRAGMA journal_mode=WAL")  # persistent: set once per file
                version = _user_version(connection)
            except sqlite3.DatabaseError as error:
                raise ValueError(
                    f"{self.path} is not a hierlstm results database ({error})."
                ) from error
            if version == SCHEMA_VERSION:
                return
            _refuse_newer_schema(self.path, version)
            with _transaction(connection):
                if _user_version(connection) == 0:  # another process may have just created it
                    connection.execute(_CREATE_TABLE)
                    connection.execute(_CREATE_INDEX)
                    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _select(self, *, variant: str | None = None, device: str | None = None) -> list[dict]:
        """Stored rows as dicts of raw column values, newest first."""
        conditions, parameters = [], []
        for column, value in (("variant", variant), ("device", device)):
            if value is not None:
                conditions.append(f"{column} = ?")
                parameters.append(value)
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        query = _SELECT + where + " ORDER BY created_at DESC, rowid DESC"
        with self._connect() as connection:
            found = connection.execute(query, parameters).fetchall()
        return [dict(zip(COLUMNS, values, strict=True)) for values in found]


_SELECT = f"SELECT {', '.join(COLUMNS)} FROM results"
_PLACEHOLDERS = ", ".join("?" for _ in COLUMNS)
_INSERT = f"INSERT INTO results ({', '.join(COLUMNS)}) VALUES ({_PLACEHOLDERS})"
_INSERT_NEW = f"INSERT OR IGNORE INTO results ({', '.join(COLUMNS)}) VALUES ({_PLACEHOLDERS})"


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


def _user_version(connection: sqlite3.Connection) -> int:
    return connection.execute("PRAGMA user_version").fetchone()[0]


def _refuse_newer_schema(path: Path, version: int):
    if version > SCHEMA_VERSION:
        raise ValueError(
            f"{path} has results schema version {version}, newer than this hierlstm reads "
            f"({SCHEMA_VERSION}); upgrade hierlstm or choose another file."
        )


# ---- rows in and out --------------------------------------------------------------------------


def _raw_row_from_result(result: BenchResult) -> dict[str, Any]:
    raw = {field.name: getattr(result, field.name) for field in dataclasses.fields(result)}
    raw["variant"] = result.config.variant
    for column, key in VERSION_COLUMNS.items():
        raw[column] = result.versions.get(key, "")
    return raw


def _frame_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """A stored row with NULL times as NaN, `noisy` as a bool and the config spread out."""
    record = dict(row)
    for column in FLOAT_COLUMNS:
        record[column] = math.nan if row[column] is None else row[column]
    record["noisy"] = bool(row["noisy"])
    for name, value in json.loads(row["config"]).items():
        record[f"config.{name}"] = value
    return record


def _with_column_types(frame: pd.DataFrame) -> pd.DataFrame:
    # Fixed dtypes, so an empty store or an all-failed filter still gives float time columns.
    types = {column: "float64" for column in FLOAT_COLUMNS}
    types.update({column: "int64" for column in WHOLE_COLUMNS})
    types["noisy"] = "bool"
    return frame.astype(types)


def _stored_result(row: Mapping[str, Any]) -> StoredResult:
    record = _frame_record(row)
    fields = {field.name: record[field.name] for field in dataclasses.fields(BenchResult)}
    fields["config"] = RunConfig(**json.loads(row["config"]))
    fields["versions"] = json.loads(row["versions"])
    return StoredResult(
        id=row["id"], created_at=row["created_at"], host=row["host"], result=BenchResult(**fields)
    )


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same float
    return str(value)


def _json_record(row: Mapping[str, Any]) -> dict[str, Any]:
    record = dict(row)
    record["config"] = json.loads(row["config"])
    record["versions"] = json.loads(row["versions"])
    record["noisy"] = bool(row["noisy"])
    return record


def _write_text(text: str, path_or_buffer: str | os.PathLike | IO[str] | None) -> str | None:
    if path_or_buffer is None:
        return text
    if hasattr(path_or_buffer, "write"):
        path_or_buffer.write(text)
        return None
    Path(path_or_buffer).expanduser().write_text(text, encoding="utf-8", newline="")
    return None


# ---- import: read, parse, validate ------------------------------------------------------------


def _import_format(path_or_bytes: str | os.PathLike | bytes, format: str | None) -> str:
    if format is not None:
        if format not in ("csv", "json"):
            raise ValueError(f"format must be csv or json; got {format!r}.")
        return format
    if isinstance(path_or_bytes, bytes | bytearray):
        raise ValueError("format must be given (csv or json) when importing bytes.")
    extension = Path(path_or_bytes).suffix.lower().lstrip(".")
    if extension not in ("csv", "json"):
        raise ValueError(
            f"cannot tell the format of {str(path_or_bytes)!r} from its extension; "
            "name it .csv or .json, or pass format='csv' or format='json'."
        )
    return extension


def _read_limited(path_or_bytes: str | os.PathLike | bytes) -> bytes:
    """The input's bytes, refusing anything over MAX_IMPORT_BYTES before reading it all."""
    if isinstance(path_or_bytes, bytes | bytearray):
        _refuse_oversize(len(path_or_bytes))
        return bytes(path_or_bytes)
    path = Path(path_or_bytes).expanduser()
    _refuse_oversize(path.stat().st_size)
    with path.open("rb") as file:
        data = file.read(MAX_IMPORT_BYTES + 1)  # a file that grew since stat() is caught too
    _refuse_oversize(len(data))
    return data


def _refuse_oversize(size: int):
    if size > MAX_IMPORT_BYTES:
        raise ValueError(
            f"import refused: the input is {size / 2**20:.1f} MB, over the "
            f"{MAX_IMPORT_BYTES / 2**20:.0f} MB limit; split it into smaller files."
        )


def _decoded(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")  # -sig: tolerate the BOM spreadsheets write
    except UnicodeDecodeError as error:
        raise ValueError(f"import rejected: the input is not UTF-8 text ({error}).") from None


def _parse_csv(text: str) -> list[dict[str, Any]]:
    reader = csv.DictReader(
        io.StringIO(text, newline=""), restkey=_CSV_MISMATCH, restval=_CSV_MISMATCH
    )
    try:
        raw_rows = list(reader)
    except csv.Error as error:
        raise ValueError(f"import rejected: unreadable CSV ({error}).") from error
    header = reader.fieldnames or []
    missing = [column for column in COLUMNS if column not in header]
    if missing:
        raise ValueError(f"import rejected: the CSV header lacks {', '.join(missing)}.")
    return raw_rows


def _parse_json(text: str) -> list[Any]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"import rejected: unreadable JSON ({error}).") from error
    if not isinstance(document, dict) or document.get("format") != EXPORT_FORMAT:
        raise ValueError(
            f'import rejected: JSON must be an object with "format": "{EXPORT_FORMAT}".'
        )
    if document.get("version") != EXPORT_VERSION:
        raise ValueError(
            f"import rejected: JSON version must be {EXPORT_VERSION}; "
            f"got {_shown(document.get('version'))}."
        )
    if not isinstance(document.get("rows"), list):
        raise ValueError('import rejected: JSON "rows" must be a list of objects.')
    return document["rows"]


def _checked_rows(raw_rows: list[Any]) -> list[dict[str, Any]]:
    """Every row validated and normalised; one ValueError naming the bad rows if any is bad."""
    rows, problems = [], []
    for number, raw in enumerate(raw_rows, start=1):
        try:
            rows.append(_checked_row(raw))
        except ValueError as error:
            problems.append(f"row {number}: {error}")
    if problems:
        shown = " ".join(problems[:_ERRORS_SHOWN])
        more = f"; the first {_ERRORS_SHOWN} shown" if len(problems) > _ERRORS_SHOWN else ""
        summary = f"({len(problems)} of {len(raw_rows)} rows bad{more})"
        raise ValueError(f"import rejected: {shown} {summary}".replace("\n", " "))
    return rows


def _checked_row(raw: Any) -> dict[str, Any]:
    """One row, from CSV text or JSON values, as the values to store. Raises ValueError."""
    if not isinstance(raw, Mapping):
        raise ValueError(f"a row must be an object; got {_shown(raw)}.")
    if _CSV_MISMATCH in raw or _CSV_MISMATCH in raw.values():
        raise ValueError("has a different number of fields from the header.")
    missing = [column for column in COLUMNS if column not in raw]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}.")
    status = _choice("status", raw["status"], STATUSES)
    config = _config(raw["config"])
    if raw["variant"] != config.variant:
        raise ValueError(
            f"variant {_shown(raw['variant'])} differs from the config's {config.variant!r}."
        )
    row = {
        "id": _uuid(raw["id"]),
        "created_at": _utc_timestamp(raw["created_at"]),
        "variant": config.variant,
        "config": json.dumps(config.to_dict()),
        "versions": json.dumps(_versions(raw["versions"])),
        "noisy": int(_flag("noisy", raw["noisy"])),
        # A run that failed before its first call never chose a kernel.
        "kernel": _choice("kernel", raw["kernel"], KERNELS if status == "ok" else (*KERNELS, "")),
        "status": status,
    }
    for column in (*TEXT_COLUMNS, *VERSION_COLUMNS):
        row[column] = _text(column, raw[column])
    for column in WHOLE_COLUMNS:
        row[column] = _whole(column, raw[column])
    for column in FLOAT_COLUMNS:
        row[column] = _time(column, raw[column], may_be_missing=status == "failed")
    return row


def _shown(value: Any) -> str:
    """A short one-line repr for messages, whatever size the value is."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be text; got {_shown(value)}.")
    return value


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {_shown(value)}.")
    return value


def _uuid(value: Any) -> str:
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        raise ValueError(f"id must be a UUID; got {_shown(value)}.") from None


def _utc_timestamp(value: Any) -> str:
    """ISO 8601 in UTC with microseconds, so text order is time order. Naive means UTC."""
    moment = value
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            moment = None
    if not isinstance(moment, datetime):
        raise ValueError(f"created_at must be an ISO 8601 date and time; got {_shown(value)}.")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def _json_object(name: str, value: Any) -> dict:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ValueError(f"{name} must be a JSON object; got {_shown(value)}.") from None
    if not isinstance(value, dict):
        raise ValueError(f"{name} must be a JSON object; got {_shown(value)}.")
    return value


def _config(value: Any) -> RunConfig:
    if isinstance(value, RunConfig):
        return value
    settings = _json_object("config", value)
    known = [field.name for field in dataclasses.fields(RunConfig)]
    unknown = [name for name in settings if name not in known]
    if unknown:
        raise ValueError(
            f"config has unknown setting {unknown[0]!r}; known settings are {', '.join(known)}."
        )
    return RunConfig(**settings)  # its ValueError names the field, the value and the range


def _versions(value: Any) -> dict[str, str]:
    versions = _json_object("versions", value)
    for key, version in versions.items():
        if not isinstance(version, str):
            raise ValueError(f"versions[{key!r}] must be text; got {_shown(version)}.")
    return versions


def _flag(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("0", "1", "true", "false"):
        return value.strip().lower() in ("1", "true")
    raise ValueError(f"{name} must be true or false (or 1 or 0); got {_shown(value)}.")


def _whole(name: str, value: Any) -> int:
    number = value
    if isinstance(value, str) and re.fullmatch(r"\s*\d{1,19}\s*", value):
        number = int(value)
    elif isinstance(value, numbers.Real) and float(value).is_integer():
        number = int(value)  # also numpy integers, and 3.0 from a JSON writer
    if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= _LARGEST_WHOLE:
        raise ValueError(f"{name} must be a whole number, 0 or more; got {_shown(value)}.")
    return number


def _time(name: str, value: Any, *, may_be_missing: bool) -> float | None:
    """A non-negative finite float, or None (stored NULL) where a failed run has no value."""
    number = value
    if isinstance(value, str):
        try:
            number = float(value) if value.strip() else None
        except ValueError:
            raise ValueError(f"{name} must be a number; got {_shown(value)}.") from None
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        number = float(value)  # also numpy floats
    if number is None or (isinstance(number, float) and math.isnan(number)):
        if may_be_missing:
            return None
        raise ValueError(f"{name} must be a number when status is ok; got {_shown(value)}.")
    if not isinstance(number, float):
        raise ValueError(f"{name} must be a number; got {_shown(value)}.")
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{name} must be a finite number, 0 or more; got {_shown(value)}.")
    return number

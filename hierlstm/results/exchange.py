"""The export files, CSV and JSON ({"format": "hierlstm-results", "version": 3, "rows": [...]}),
written from stored rows and read back for an import, with the stored columns. A missing time is an
empty cell or null. Versions 1 (a `config` object) and 2 (no training columns) are still read;
version 3 exists so an older hierlstm refuses a training step's times rather than read them as a
forward pass's. Inputs over `MAX_IMPORT_BYTES` are refused unread."""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any

from hierlstm.refusals import refusing
from hierlstm.results.schema import (
    ADDED_IN_V3,
    ADDED_IN_V5,
    ADDED_IN_V7,
    COLUMNS,
    KINDS,
    ResultsError,
)
from hierlstm.results.validation import MISMATCHED, format_columns, shown

MAX_IMPORT_BYTES = 20 * 1024 * 1024  # refused before parsing: no sweep comes near this
EXPORT_FORMAT = "hierlstm-results"
EXPORT_VERSION = 5  # 4 added the backend columns (results schema 5), 5 the runtimes' versions (7)
READ_VERSIONS = (1, 2, 3, 4, 5)


def csv_text(stored_rows: Iterable[Mapping[str, Any]]) -> str:
    """Stored rows (SQLite values by column) as CSV text, header first."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in stored_rows:
        writer.writerow(_csv_cell(row[column]) for column in COLUMNS)
    return buffer.getvalue()


def json_text(stored_rows: Iterable[Mapping[str, Any]]) -> str:
    """Stored rows (SQLite values by column) as the JSON export document."""
    rows = [
        {column: _json_value(KINDS[column], row[column]) for column in COLUMNS}
        for row in stored_rows
    ]
    document = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION, "rows": rows}
    return json.dumps(document, indent=1, allow_nan=False) + "\n"


def write_text(text: str, path_or_buffer: str | os.PathLike | IO[str] | None) -> str | None:
    """Writes `text` to a path or an open text file; returns it if no target is given. A path
    gets the whole text or, when the machine refuses (`hierlstm.refusals.Refused`), no file."""
    if path_or_buffer is None:
        return text
    if hasattr(path_or_buffer, "write"):
        path_or_buffer.write(text)
        return None
    path = Path(path_or_buffer).expanduser()
    partial = path.with_name(f".{path.name}.partial")
    with refusing("export", path):
        if path.is_dir():
            raise IsADirectoryError(21, "Is a directory", str(path))
        try:
            partial.write_text(text, encoding="utf-8", newline="")
            os.replace(partial, path)
        except OSError as error:  # named as the export: the partial file is ours
            raise OSError(error.errno, error.strerror, str(path)) from None
        finally:
            partial.unlink(missing_ok=True)
    return None


def read_rows(
    path_or_bytes: str | os.PathLike | bytes, format: str | None
) -> tuple[list[Any], int]:
    """The raw rows of an export and its version, unchecked. `format` "csv" or "json" (by default
    the file's extension). ValueError in one sentence for an oversize, undecodable or malformed
    input."""
    format = _import_format(path_or_bytes, format)
    text = _decoded(_read_limited(path_or_bytes))
    return _parse_csv(text) if format == "csv" else _parse_json(text)


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)  # the shortest text that reads back as the same float
    return str(value)


def _json_value(kind: str, value: Any) -> Any:
    return bool(value) if kind == "bool" else value  # SQLite gives a bool back as 0 or 1


def _import_format(path_or_bytes: str | os.PathLike | bytes, format: str | None) -> str:
    if format is not None:
        if format not in ("csv", "json"):
            raise ResultsError(f"format must be csv or json; got {format!r}.")
        return format
    if isinstance(path_or_bytes, bytes | bytearray):
        raise ResultsError("format must be given (csv or json) when importing bytes.")
    extension = Path(path_or_bytes).suffix.lower().lstrip(".")
    if extension not in ("csv", "json"):
        raise ResultsError(
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
    with refusing("import", path):
        _refuse_oversize(path.stat().st_size)
        with path.open("rb") as file:
            data = file.read(MAX_IMPORT_BYTES + 1)  # a file that grew since stat() is caught too
    _refuse_oversize(len(data))
    return data


def _refuse_oversize(size: int):
    if size > MAX_IMPORT_BYTES:
        raise ResultsError(
            f"import refused: the input is {size / 2**20:.1f} MB, over the "
            f"{MAX_IMPORT_BYTES / 2**20:.0f} MB limit; split it into smaller files."
        )


def _decoded(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")  # -sig: tolerate the BOM spreadsheets write
    except UnicodeDecodeError as error:
        raise ResultsError(f"import rejected: the input is not UTF-8 text ({error}).") from None


def _parse_csv(text: str) -> tuple[list[dict[str, Any]], int]:
    reader = csv.DictReader(io.StringIO(text, newline=""), restkey=MISMATCHED, restval=MISMATCHED)
    try:
        raw_rows = list(reader)
    except csv.Error as error:
        raise ResultsError(f"import rejected: unreadable CSV ({error}).") from error
    header = reader.fieldnames or []
    if "config" in header:  # version 1 kept the config as JSON
        version = 1
    elif any(column in header for column in ADDED_IN_V7):
        version = EXPORT_VERSION
    elif any(column in header for column in ADDED_IN_V5):  # version 4 had no runtime columns
        version = 4
    elif any(column in header for column in ADDED_IN_V3):  # version 3 had no backend columns
        version = 3
    else:  # version 2 had no training columns
        version = 2
    missing = [column for column in format_columns(version) if column not in header]
    if missing:
        raise ResultsError(f"import rejected: the CSV header lacks {', '.join(missing)}.")
    return raw_rows, version


def _parse_json(text: str) -> tuple[list[Any], int]:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ResultsError(f"import rejected: unreadable JSON ({error}).") from error
    if not isinstance(document, dict) or document.get("format") != EXPORT_FORMAT:
        raise ResultsError(
            f'import rejected: JSON must be an object with "format": "{EXPORT_FORMAT}".'
        )
    version = document.get("version")
    if isinstance(version, bool) or version not in READ_VERSIONS:
        raise ResultsError(
            f"import rejected: JSON version must be {' or '.join(map(str, READ_VERSIONS))}; "
            f"got {shown(version)}."
        )
    if not isinstance(document.get("rows"), list):
        raise ResultsError('import rejected: JSON "rows" must be a list of objects.')
    return document["rows"], version

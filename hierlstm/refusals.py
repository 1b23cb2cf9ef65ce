"""When the machine says no to a file or folder hierlstm must open or write: a refusal is data.
`refusal_of` reads an OSError or SQLite error as a `Refusal` (what, why, the fix; one sentence in
either language), carried by `Refused` (an OSError). `refusing` converts the machine's errors in a
block and lets bugs through; `writable_folder` checks a folder before a long run."""

from __future__ import annotations

import dataclasses
import errno
import os
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hierlstm.i18n import has_text, t

PLACES = ("results", "store", "export", "import", "profile", "prune", "lock", "recover")
_ERRNO_KINDS = {
    errno.ENOENT: "missing",
    errno.EACCES: "denied",
    errno.EPERM: "denied",
    errno.EISDIR: "is_folder",
    errno.ENOTDIR: "not_folder",
    errno.ENOSPC: "full",
    errno.EDQUOT: "full",
    errno.EFBIG: "full",  # a file size limit (ulimit -f): no space, as far as the file goes
    errno.EROFS: "read_only",
}
# SQLite's primary result codes (the low byte of `sqlite_errorcode`) that are the machine's.
_SQLITE_KINDS = {
    5: "busy",  # SQLITE_BUSY
    6: "busy",  # SQLITE_LOCKED
    8: "read_only",  # SQLITE_READONLY
    10: "io",  # SQLITE_IOERR: the disk (full past a size limit, or failing), not the content
    11: "damaged",  # SQLITE_CORRUPT
    13: "full",  # SQLITE_FULL
    14: "failed",  # SQLITE_CANTOPEN (a folder's own checks name the reason first)
    26: "damaged",  # SQLITE_NOTADB
}
BUSY_CODES = (5, 6)
_FIX_OF = {"store": "results", "recover": "results"}  # places that share another's fix


@dataclasses.dataclass(frozen=True)
class Refusal:
    """`place` (one of PLACES) could not use `path`: `kind` says why ("missing", "denied",
    "is_folder", "not_folder", "full", "io", "read_only", "busy", "damaged", "newer", "failed"),
    `detail`
    in the machine's own words (or, for "newer", the file's schema version)."""

    place: str
    path: str
    kind: str
    detail: str = ""

    def sentence(self, lang: str = "en") -> str:
        """One sentence: what was tried, why it failed, the fix."""
        return t(
            "refusal.line",
            lang,
            doing=t(f"refusal.{self.place}", lang, path=self.path),
            why=t(
                self._first(f"refusal.why.{self.place}.{self.kind}", lang)
                or f"refusal.why.{self.kind}",
                lang,
                detail=self.detail,
            ),
            fix=self.fix(lang),
        )

    def fix(self, lang: str = "en") -> str:
        key = self._first(f"refusal.fix.{self.place}.{self.kind}", lang) or self._first(
            f"refusal.fix.{self.kind}", lang
        )
        return t(key or f"refusal.fix.{_FIX_OF.get(self.place, self.place)}", lang, path=self.path)

    @staticmethod
    def _first(key: str, lang: str) -> str:
        return key if has_text(key, lang) else ""

    @property
    def damaged(self) -> bool:
        """A results file that can be kept aside and replaced (`results recover`)."""
        return self.kind in ("damaged", "newer")


class Refused(OSError):
    """The machine refused a file or folder; `refusal` says what, why and the fix."""

    def __init__(self, refusal: Refusal):
        super().__init__(refusal.sentence())
        self.refusal = refusal

    def __str__(self) -> str:
        return self.refusal.sentence()

    def __reduce__(self):  # a worker process's refusal crosses back whole
        return type(self), (self.refusal,)


def _detail(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        where = error.filename
        return f"{error.strerror}: {where}" if where else error.strerror
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def refusal_of(place: str, path: str | os.PathLike, error: BaseException) -> Refusal | None:
    """The machine's refusal that `error` is, or None when it is not the machine's (a bug)."""
    if isinstance(error, Refused):
        return error.refusal
    if isinstance(error, OSError):
        kind = _ERRNO_KINDS.get(error.errno, "failed")
    elif isinstance(error, sqlite3.OperationalError | sqlite3.DatabaseError) and not isinstance(
        error, sqlite3.IntegrityError | sqlite3.ProgrammingError | sqlite3.InterfaceError
    ):
        code = getattr(error, "sqlite_errorcode", None)
        kind = _SQLITE_KINDS.get(code & 0xFF) if code is not None else None
        if kind is None:
            return None  # SQL of ours that SQLite refused: a bug
    else:
        return None
    return Refusal(place, str(path), kind, _detail(error))


def is_busy(error: BaseException) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    return (
        isinstance(error, sqlite3.OperationalError)
        and code is not None
        and (code & 0xFF in BUSY_CODES)
    )


@contextmanager
def refusing(place: str, path: str | os.PathLike) -> Iterator[None]:
    """The machine's errors inside the block raise as `Refused`; any other error as it is."""
    try:
        yield
    except (OSError, sqlite3.Error) as error:
        refusal = refusal_of(place, path, error)
        if refusal is None or isinstance(error, Refused):
            raise
        raise Refused(refusal) from error


def writable_folder(place: str, folder: str | os.PathLike, path: str | os.PathLike = "") -> None:
    """Makes `folder` if it is missing and proves it takes a new file (created and removed), or
    raises `Refused` naming `path` (default: the folder) as what `place` could not use."""
    folder = Path(folder)
    named = path or folder
    probe = folder / f".hierlstm-probe-{uuid.uuid4().hex}"
    with refusing(place, named):
        if folder.exists() and not folder.is_dir():
            raise OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder))
        folder.mkdir(parents=True, exist_ok=True)
        try:
            os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except OSError as error:  # named as the folder: the probe is ours, not the user's
            raise OSError(error.errno, error.strerror, str(folder)) from None
        os.unlink(probe)


def writable_file(place: str, path: str | os.PathLike) -> None:
    """`writable_folder` of the file's folder, and the file itself not a folder."""
    path = Path(path)
    if path.is_dir():
        raise Refused(Refusal(place, str(path), "is_folder"))
    writable_folder(place, path.parent, path)

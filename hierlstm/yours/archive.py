"""A model archive's budget, checked before any member is read: the member count from the ZIP's
end record (before `zipfile` parses its directory), the members' names (only the three a Keras
model file has), every member's declared size and their total against a budget tied to the upload
cap (HIERLSTM_UPLOAD_MB), and JSON read as a refusal when it is too large or too deep. Nothing in
the archive is extracted to disk: members are read into memory within their budget."""

from __future__ import annotations

import dataclasses
import json
import struct
import zipfile
from pathlib import Path

from hierlstm import settings
from hierlstm.i18n import MessageError

UPLOAD_ENV = "HIERLSTM_UPLOAD_MB"
MB = 1024 * 1024
# What `model.save(path.keras)` writes, and all that hierlstm reads: anything else (assets, an
# .npz of weights) would make Keras extract the archive to disk under its members' names.
MEMBERS = ("config.json", "metadata.json", "model.weights.h5")
JSON_MEMBERS = ("config.json", "metadata.json")
# A Keras config nests a model, its layers, their cells and their inbound nodes: tens of levels.
MAX_DEPTH = 100
_END_RECORD = struct.Struct("<4s4H2LH")  # signature, disks, entries here, entries, size, offset
_END_SIGNATURE = b"PK\x05\x06"


class ModelFileError(MessageError, ValueError):
    """A model file hierlstm will not open: catalogue message `key` with `values`; str() is the
    English, as the command line says it."""


def upload_cap_mb() -> int:
    """The largest model file the server takes, in MiB (HIERLSTM_UPLOAD_MB, 20 by default); a bad
    value is a ModelFileError, one line naming the setting."""
    return settings.read(UPLOAD_ENV, error=ModelFileError)


@dataclasses.dataclass(frozen=True)
class Budget:
    """What one archive may expand to. Keras stores its members uncompressed, so a real model file
    expands to about its own size: twice the cap leaves room for one zipped again by hand, and a
    config is a small part of a model (a quarter of the cap, at least 1 MiB)."""

    cap_mb: int

    @property
    def total_bytes(self) -> int:
        return 2 * self.cap_mb * MB

    @property
    def json_bytes(self) -> int:
        return max(self.cap_mb * MB // 4, MB)

    def refuse(self, file: str, member: str, size: int, limit: int) -> ModelFileError:
        return ModelFileError(
            "yours.bad.expands",
            file=file,
            member=member,
            mb=round(size / MB, 1),
            limit=round(limit / MB, 1),
            cap=self.cap_mb,
        )


def declared_members(path: Path) -> int:
    """The member count a ZIP's end record declares (65535 for a ZIP64 archive, which says "more
    than fits here"); ModelFileError ("truncated") when there is no end record."""
    size = path.stat().st_size
    with open(path, "rb") as file:
        file.seek(max(size - _END_RECORD.size - 0xFFFF, 0))  # the record, then its comment
        tail = file.read()
    at = tail.rfind(_END_SIGNATURE)
    if at < 0 or at + _END_RECORD.size > len(tail):
        raise ModelFileError("yours.bad.truncated", file=path.name)
    return _END_RECORD.unpack_from(tail, at)[4]


def check_members(archive: zipfile.ZipFile, name: str, budget: Budget) -> None:
    """Each member's name and declared size, and their total, against the budget."""
    infos = archive.infolist()
    names = [info.filename for info in infos]
    for member in names:
        if member not in MEMBERS or names.count(member) > 1:
            raise ModelFileError("yours.bad.member", file=name, member=member[:80])
    for info in infos:
        limit = budget.json_bytes if info.filename in JSON_MEMBERS else budget.total_bytes
        if info.file_size > limit:
            raise budget.refuse(name, info.filename, info.file_size, limit)
    total = sum(info.file_size for info in infos)
    if total > budget.total_bytes:
        raise budget.refuse(name, " + ".join(names), total, budget.total_bytes)


def read_json_member(archive: zipfile.ZipFile, member: str, name: str, budget: Budget):
    """A JSON member read within its budget (a member that yields more than it declared is cut
    at the budget and refused), parsed, and refused when nested too deep."""
    with archive.open(member) as stream:
        text = stream.read(budget.json_bytes + 1)
    if len(text) > budget.json_bytes:
        raise budget.refuse(name, member, len(text), budget.json_bytes)
    return parse_json(text, member, name)


def parse_json(text: str | bytes, member: str, name: str):
    """JSON parsed, or ModelFileError: not JSON ("not_a_model"), or nested deeper than
    MAX_DEPTH ("deep", whether the parser ran out of stack or the depth was counted)."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ModelFileError("yours.bad.deep", file=name, member=member, limit=MAX_DEPTH) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ModelFileError("yours.bad.not_a_model", file=name) from error
    if depth(value) > MAX_DEPTH:
        raise ModelFileError("yours.bad.deep", file=name, member=member, limit=MAX_DEPTH)
    return value


def depth(value) -> int:
    """How deep lists and dicts nest in a parsed JSON value (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            level += 1
            deepest = max(deepest, level)
            if level <= MAX_DEPTH:  # deeper is refused already: stop counting there
                children = item.values() if isinstance(item, dict) else item
                stack.extend((child, level) for child in children)
    return deepest

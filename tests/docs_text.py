"""The README and docs/*.md read as a test reads them: their code blocks, line by line with each
line's place, the `hierlstm` command lines in them made into argument lists, and the Python names
they cite. Shared by tests/test_readme.py (no TensorFlow) and tests/test_docs.py (runs some)."""

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# How a command line starts: installed, or the checkout's interpreter.
PROGRAMS = ("hierlstm", "python -m hierlstm", ".venv/bin/python -m hierlstm")
# Words the docs write in place of a value, and what the test puts there. A command line with
# an upper-case word or `...` that is not here or in [brackets] fails the test, so a new
# placeholder is a decision, not a silent skip.
PLACEHOLDERS = {
    "N": "2",
    "P": "float32",
    "PATH": "results.sqlite3",
    "ID_A": "1a2b",
    "ID_B": "3c4d",
    "I/2": "0/2",
    "shard-I.json": "shard-0.json",
}
# Lines whose `...` stands for flags the page gives elsewhere, and the flags put there. A `...`
# inside [brackets] means "more flags like these" and is dropped from the longest form.
ELIDED = {
    "worker ...": "worker --cluster host-a:12345,host-b:12345 --task-index 0 --variant folded",
}


@dataclass(frozen=True)
class Line:
    page: Path
    number: int
    text: str

    @property
    def where(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page.name
        return f"{page}:{self.number}"


def code_lines(page: Path) -> list[Line]:
    """Every line inside a ``` block of `page`; ValueError for a block never closed."""
    lines, opened = [], None
    for number, text in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if text.lstrip().startswith("```"):
            opened = None if opened else number
        elif opened:
            lines.append(Line(page, number, text))
    if opened:
        raise ValueError(f"{Line(page, opened, '').where} opens a code block never closed")
    return lines


def _joined(lines: list[Line]) -> list[Line]:
    """Shell continuations (a trailing backslash) joined into the line they start."""
    joined, pending = [], None
    for line in lines:
        text = line.text if pending is None else pending.text + " " + line.text.strip()
        start = line if pending is None else pending
        if text.rstrip().endswith("\\"):
            pending = Line(start.page, start.number, text.rstrip()[:-1].rstrip())
            continue
        pending = None
        joined.append(Line(start.page, start.number, text))
    return joined


def _command(segment: str) -> str | None:
    """The part after the program's name when `segment` runs hierlstm (after any NAME=value
    settings), else None."""
    words = segment.strip()
    while re.match(r"^[A-Z_][A-Z0-9_]*=\S*\s", words):
        words = words.split(None, 1)[1]
    for program in sorted(PROGRAMS, key=len, reverse=True):
        if words == program or words.startswith(program + " "):
            return words[len(program) :].strip()
    return None


@dataclass(frozen=True)
class CommandLine:
    line: Line
    shortest: list[str]  # the [optional] parts left out
    longest: list[str]  # the [optional] parts put in


def command_lines(pages=PAGES) -> list[CommandLine]:
    """Every hierlstm command line in the pages' code blocks: comments (` # ...`) dropped, a
    pipe or `&&` split, placeholders replaced; ValueError naming file:line for a word that looks
    like a placeholder and is not in PLACEHOLDERS or ELIDED."""
    found = []
    for page in pages:
        for line in _joined(code_lines(page)):
            text = re.split(r"\s#\s|\s#$", line.text, maxsplit=1)[0]
            for segment in re.split(r"\s(?:\||&&)\s", text):
                rest = _command(segment)
                if rest is None:
                    continue
                rest = ELIDED.get(rest, rest)
                shortest = re.sub(r"\s*\[[^\]]*\]", "", rest)
                longest = re.sub(r"\[([^\]]*)\]", lambda m: m.group(1).replace("...", ""), rest)
                found.append(
                    CommandLine(line, _arguments(shortest, line), _arguments(longest, line))
                )
    return found


def _arguments(text: str, line: Line) -> list[str]:
    words = [PLACEHOLDERS.get(word, word) for word in shlex.split(text)]
    odd = [word for word in words if "..." in word or re.fullmatch(r"[A-Z][A-Z_]*", word)]
    if odd:
        raise ValueError(f"{line.where}: {odd[0]!r} is not in tests/docs_text.py's PLACEHOLDERS")
    return words

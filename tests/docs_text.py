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
    "DIR": "capture-folder",
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
    """Continuations joined into the line they start: after a trailing backslash, and an
    indented line under a hierlstm command (the docs' way of wrapping its [optional] flags)."""
    joined: list[Line] = []
    for line in lines:
        previous = joined[-1] if joined else None
        wrapped = previous and _command(previous.text) is not None and line.text[:1].isspace()
        if previous and (previous.text.endswith("\\") or wrapped):
            text = previous.text.removesuffix("\\").rstrip() + " " + line.text.strip()
            joined[-1] = Line(previous.page, previous.number, text)
        else:
            joined.append(Line(line.page, line.number, line.text.rstrip()))
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
    forms: tuple[list[str], ...]  # [optional] parts left out; put in, each `a|b` as a; as b


def _optional(rest: str, choose: int) -> str:
    """`rest` with each [group] put in, its `...` dropped (more flags like these) and of its
    alternatives `a | b` the first (`choose` 0) or the last (-1)."""

    def group(match):
        return match.group(1).replace("...", "").split("|")[choose].strip()

    word = r"([^\s\[\]|]+)"
    alternatives = re.sub(word + r"\|" + word, lambda m: m.group(1 if choose == 0 else 2), rest)
    return re.sub(r"\[([^\]]*)\]", group, alternatives)


def command_lines(pages=PAGES) -> list[CommandLine]:
    """Every hierlstm command line in the pages' code blocks: comments (` # ...`) dropped, a
    pipe or `&&` outside [brackets] split, placeholders replaced; ValueError naming file:line for
    a word that looks like a placeholder and is not in PLACEHOLDERS or ELIDED."""
    found = []
    for page in pages:
        for line in _joined(code_lines(page)):
            text = re.split(r"\s#\s|\s#$", line.text, maxsplit=1)[0]
            for segment in re.split(r"\s(?:\||&&)\s(?![^\[]*\])", text):
                rest = _command(segment)
                if rest is None:
                    continue
                rest = ELIDED.get(rest, rest)
                shortest = re.sub(r"\s*\[[^\]]*\]", "", rest)
                forms = (shortest, _optional(rest, 0), _optional(rest, -1))
                found.append(CommandLine(line, tuple(_arguments(form, line) for form in forms)))
    return found


def _arguments(text: str, line: Line) -> list[str]:
    words = [PLACEHOLDERS.get(word, word) for word in shlex.split(text)]
    odd = [word for word in words if "..." in word or re.fullmatch(r"[A-Z][A-Z_]*", word)]
    if odd:
        raise ValueError(f"{line.where}: {odd[0]!r} is not in tests/docs_text.py's PLACEHOLDERS")
    return words

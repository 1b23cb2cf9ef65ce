"""docs/cli.md's flag reference, written from the parser itself (`hierlstm.cli.parser`, which
imports no TensorFlow): every command, every flag, what it takes, its default and its help,
between the BEGIN and END lines; the prose around them is written by hand.

    python scripts/cli_reference.py          rewrites docs/cli.md
    python scripts/cli_reference.py --check  exits 1 when docs/cli.md differs (tests/test_docs.py)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checkout's package, run from any folder

from hierlstm.cli.parser import build_parser  # noqa: E402

PAGE = ROOT / "docs" / "cli.md"
COMMAND = "python scripts/cli_reference.py"
BEGIN = f"<!-- BEGIN flag reference: generated from hierlstm/cli/parser.py by `{COMMAND}` -->"
END = "<!-- END flag reference -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _takes(action: argparse.Action) -> str:
    if action.nargs == 0:
        return "(a switch)"
    if action.choices:
        return " \\| ".join(f"`{choice}`" for choice in action.choices)
    return f"`{action.metavar or action.dest.upper()}`"


def _default(action: argparse.Action) -> str:
    notes = []
    if action.required:
        notes.append("required")
    if isinstance(action, argparse._AppendAction):
        notes.append("repeatable")
    if action.nargs == "*":
        notes.append("any number")
    if action.default not in (None, False, argparse.SUPPRESS):
        notes.append(f"`{action.default}`")
    return ", ".join(notes)


def _rows(parser: argparse.ArgumentParser, command: str) -> list[str]:
    """The table of one command's flags and arguments; ValueError naming a flag without help."""
    rows = ["| flag | takes | default | what it does |", "|---|---|---|---|"]
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        name = ", ".join(action.option_strings) or (action.metavar or action.dest)
        if not action.help:
            raise ValueError(f"{command} {name} has no help text in hierlstm/cli/parser.py.")
        cells = (f"`{name}`", _takes(action), _default(action), _cell(action.help))
        rows.append("| " + " | ".join(cells) + " |")
    return rows


def _commands(group: argparse._SubParsersAction) -> list[tuple[str, argparse.ArgumentParser, str]]:
    """(name, parser, summary) of each command of `group`, once, its former names (aliases) in
    its summary."""
    helps = {choice.dest: choice.help for choice in group._choices_actions}
    names = {}  # a parser -> its names, the first its own, the rest aliases
    for name, subparser in group.choices.items():
        names.setdefault(subparser, []).append(name)
    return [
        (name, subparser, helps[name] + "".join(f" (also `{a}`, its former name)" for a in aliases))
        for subparser, (name, *aliases) in names.items()
    ]


def _sections(parser: argparse.ArgumentParser, command: str, summary: str) -> list[str]:
    """`command`'s section, then its subcommands' (results list, ...)."""
    lines = [f"### `{command}`", "", _cell(summary) + ".", ""]
    subcommands = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if len(parser._actions) > 1 + len(subcommands):  # flags besides --help
        lines += [*_rows(parser, command), ""]
    for group in subcommands:
        for name, subparser, text in _commands(group):
            lines += _sections(subparser, f"{command} {name}", text)
    return lines


def reference() -> str:
    """The generated part of docs/cli.md, its BEGIN and END lines included."""
    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    lines = [BEGIN, ""]
    for name, subparser, summary in _commands(commands):
        lines += _sections(subparser, f"hierlstm {name}", summary)
    return "\n".join([*lines, END])


def page_with_reference(page: str) -> str:
    """`page` with the text between its BEGIN and END lines replaced by `reference()`;
    ValueError when either line is missing."""
    if page.count(BEGIN) != 1 or page.count(END) != 1:
        raise ValueError(f"{PAGE.name} needs one line each of:\n{BEGIN}\n{END}")
    before, rest = page.split(BEGIN)
    after = rest.split(END)[1]
    return before + reference() + after


def main(argv: list[str]) -> int:
    current = PAGE.read_text(encoding="utf-8")
    wanted = page_with_reference(current)
    if "--check" in argv:
        if current != wanted:
            print(f"{PAGE.relative_to(ROOT)} is not the parser's; run {COMMAND}", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

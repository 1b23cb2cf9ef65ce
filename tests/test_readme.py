"""The docs tell the truth, checked without TensorFlow: docs/architecture.md's list of modules is
the tree; every code block is closed; every hierlstm command line in the README and docs/*.md is
accepted by the real parser; docs/cli.md's flag reference is the parser's; serving.md lists every
HIERLSTM_* setting; every figure is in RESULTS.md or says where it was measured. What needs
TensorFlow (cited names, commands run in earnest) is tests/test_docs.py."""

import argparse
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from docs_text import PAGES, code_lines, command_lines

from hierlstm.cli.flags import UsageError
from hierlstm.cli.main import SETTINGS
from hierlstm.cli.parser import build_parser
from scripts import cli_reference

ROOT = Path(__file__).resolve().parents[1]


def listed_modules() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = text.split("Every module, one a line", 1)[1].split("```", 2)[1]
    found, folders = [], []
    for line in block.splitlines():
        match = re.match(r"^( *)(\S+)", line)
        if not match:
            continue
        depth, name = len(match.group(1)) // 2, match.group(2)
        folders = folders[:depth]
        if name.endswith("/"):
            folders.append(name.rstrip("/"))
        elif name.endswith(".py") and folders and folders[0] == "hierlstm":
            found.append("/".join([*folders, name]))
    return found


def test_the_architecture_page_lists_every_module_once():
    listed = listed_modules()
    actual = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "hierlstm").rglob("*.py"))
    assert len(listed) == len(set(listed)), "listed twice"
    assert sorted(listed) == actual


# --- every page's code blocks and command lines ------------------------------------------------


def test_every_code_block_of_the_docs_is_closed():
    for page in PAGES:
        code_lines(page)  # ValueError naming the line of a block never closed


def _command_id(command) -> str:
    return command.line.where


@pytest.mark.parametrize("command", command_lines(), ids=_command_id)
def test_every_documented_command_line_is_accepted(command):
    """Each hierlstm line of a code block, with its [optional] parts and without (of `a|b`, a and
    b), through the
    real parser and the checks each command makes before TensorFlow is imported (no run).
    `app`'s flags are Streamlit's, passed on unparsed as `main` does; `audit` reads its model
    file first, so only its grammar is checked here (tests/test_docs.py runs one)."""
    for argv in command.forms:
        argv = argv[:1] if argv[:1] == ["app"] else argv
        try:
            args = build_parser().parse_args(argv)
            if args.command in SETTINGS and args.command != "yours":
                SETTINGS[args.command](args)
        except UsageError as error:
            if "which is not installed here" in str(error):  # an optional extra (runtimes, say)
                pytest.skip(f"{command.line.where}: {error}")
            pytest.fail(f"{command.line.where}: hierlstm {shlex.join(argv)} is refused: {error}")


def test_an_unknown_placeholder_or_an_unclosed_block_fails_naming_its_line(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```\nhierlstm results diff ID_A ID_C\n```\n")
    with pytest.raises(ValueError, match="page.md:2: 'ID_C' is not in"):
        command_lines([page])
    page.write_text("```\nhierlstm worker ... --seed 1\n```\n")  # not ELIDED's line
    with pytest.raises(ValueError, match="page.md:2: '...' is not in"):
        command_lines([page])
    page.write_text("text\n```\nhierlstm variants\n")
    with pytest.raises(ValueError, match="page.md:2 opens a code block never closed"):
        code_lines(page)


def test_the_flag_reference_in_docs_cli_md_is_the_parser_s():
    written = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert written == cli_reference.page_with_reference(written), (
        f"docs/cli.md's flag reference differs from the parser's: run {cli_reference.COMMAND}"
    )


def test_the_flag_reference_names_every_flag_of_every_command():
    reference = cli_reference.reference()
    for command, flag in _every_flag(build_parser(), "hierlstm"):
        section = reference.split(f"### `{command}`\n", 1)[1].split("\n### ", 1)[0]
        assert f"| `{flag}" in section, f"{command} {flag}"


def _every_flag(parser, command):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, subparser, _ in cli_reference._commands(action):  # aliases once
                yield from _every_flag(subparser, f"{command} {name}")
        elif action.option_strings and not isinstance(action, argparse._HelpAction):
            yield command, action.option_strings[0]


def test_the_serving_page_lists_every_hierlstm_setting_the_code_reads():
    """docs/serving.md's table of "every HIERLSTM_* variable" against the names in the package
    and the app's scripts (the benchmarks' own, such as HIERLSTM_CLASSROOM_MOVES, are theirs)."""
    sources = [*(ROOT / "hierlstm").rglob("*.py"), ROOT / "app.py", ROOT / "streamlit_app.py"]
    read = {name for path in sources for name in re.findall(r"HIERLSTM_[A-Z_]+", path.read_text())}
    read -= {"HIERLSTM_TESTS"}  # the test suite's tier (tests/conftest.py), not a setting
    text = (ROOT / "docs" / "serving.md").read_text()
    table = text.split("## Settings: every `HIERLSTM_*` environment variable", 1)[1]
    listed = set(re.findall(r"^\| `(HIERLSTM_[A-Z_]+)`", table.split("\n\n## ", 1)[0], re.M))
    assert listed == read


# --- figures: in RESULTS.md, or the text says where they were measured ------------------------

RESULTS = (ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8")
# A number with a unit, or a range of them: "1.31 s", "0.84-1.36x", "28 -> 298 MB", "25 %".
FIGURE = re.compile(
    r"(?<![\w.\-/^])(\d+(?:\.\d+)?(?:\s*(?:-|->|to)\s*\d+(?:\.\d+)?)?)\s?"
    r"(?:ms|s|min|MB|MiB|GB|GiB|%|x)(?!\w)"
)
# A sentence that reports a measurement, not a setting or a design constant.
MEASURED = re.compile(
    r"\b(measured|took|gave|grew|median|p95|percentile|efficiency|came|waited|peak)\b", re.I
)
COMMIT = re.compile(r"\bcommits? ([0-9a-f]{7,40})\b")


def blocks(text: str) -> list[str]:
    """A page's prose, outside code blocks, as blocks: a paragraph, a bullet or a table row."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        for block in re.split(r"\n(?=- |\| )", paragraph):
            found.append(" ".join(block.split()))
    return found


def unsourced_figures(text: str) -> list[str]:
    """The sentences of `text` that report a measured figure (a measurement word and a number
    with a unit, not inside `quoted output`) whose numbers are not all in RESULTS.md, in a
    block that names no commit."""
    found = []
    for block in blocks(text):
        if COMMIT.search(block):
            continue
        for sentence in re.split(r"(?<=[.;])\s+(?=[A-Z*(`])", block):
            prose = re.sub(r"`[^`]*`", "", sentence)
            if not MEASURED.search(prose):
                continue
            numbers = [n for f in FIGURE.findall(prose) for n in re.findall(r"\d+(?:\.\d+)?", f)]
            if any(not re.search(rf"(?<![\d.]){re.escape(n)}(?![\d])", RESULTS) for n in numbers):
                found.append(sentence)
    return found


def test_every_measured_figure_is_in_results_md_or_says_where_it_was_measured():
    """The README says every measurement is in RESULTS.md. Narrower than that promise: a
    figure's numbers are looked for in RESULTS.md as numbers, not as that measurement, so a
    figure whose number happens to appear there for another reason passes; what it does catch
    is a measured figure RESULTS.md cannot hold at all, in a block that names no commit."""
    found = {
        page.name: unsourced for page in PAGES if (unsourced := unsourced_figures(page.read_text()))
    }
    assert found == {}


def test_an_unsourced_figure_is_found_and_a_commit_or_results_md_clears_it():
    unsourced = "It took 9876.5 ms on two cores."
    assert unsourced_figures(unsourced) == [unsourced]
    assert unsourced_figures("It took 9876.5 ms, measured for commit abc1234.") == []
    assert unsourced_figures("It took 18.10 ms on two cores.") == []  # a figure of RESULTS.md
    assert unsourced_figures("Its default is 9876.5 ms.") == []  # a setting, not a measurement
    assert unsourced_figures("It says `took 9876.5 ms`.") == []  # quoted output


# The figures issue 54 found quoted without a source: each still names where it was measured, a
# commit that exists (its message or its RESULTS.md holds the run).
KEPT_ELSEWHERE = {
    "distributed.md": ["scaling efficiency **0.57**"],
    "serving.md": ["0.84-1.36x", "28 -> 298 MB", "first figure came 1.2 s later", "19.6-24.2 s"],
    "gpu.md": ["6 min 48 s"],
}


@pytest.mark.parametrize("page", sorted(KEPT_ELSEWHERE))
def test_the_figures_kept_outside_results_md_name_a_commit_that_exists(page):
    for block in blocks((ROOT / "docs" / page).read_text()):
        for figure in KEPT_ELSEWHERE[page]:
            if figure not in block:
                continue
            commits = COMMIT.findall(block)
            assert commits, f"{page}: {figure!r} does not say where it was measured"
            for commit in commits:
                exists = subprocess.run(
                    ["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT, capture_output=True
                )
                assert exists.returncode == 0, f"{page}: {figure!r} names {commit}, not a commit"
    text = " ".join(blocks((ROOT / "docs" / page).read_text()))
    assert all(figure in text for figure in KEPT_ELSEWHERE[page])

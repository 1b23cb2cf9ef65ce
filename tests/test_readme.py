"""docs/architecture.md's list of modules is the tree: every module of the package is listed
once, in its folder, and nothing listed is missing."""

import re
from pathlib import Path

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

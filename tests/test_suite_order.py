"""tests/suite_order.py: every file named as one of the slowest exists, once (a renamed file
would drop out silently), and collection puts them first, in order, each file's tests in theirs."""

from pathlib import Path
from types import SimpleNamespace

import suite_order as order

ROOT = Path(__file__).resolve().parents[1]


def test_the_slowest_files_exist_and_are_named_once():
    slowest = order.SLOWEST_FIRST
    assert len(slowest) == len(set(slowest))
    missing = [path for path in slowest if not (ROOT / path).is_file()]
    assert missing == []


def test_collection_puts_the_slowest_files_first_and_keeps_each_file_s_order():
    first, second = order.SLOWEST_FIRST[:2]
    names = [
        "tests/a/test_one.py::test_x",
        f"{second}::test_b1",
        "tests/a/test_one.py::test_y",
        f"{first}::test_a1",
        f"{second}::test_b2",
        f"{first}::test_a2",
        "tests/test_zero.py::test_z",
    ]
    items = [SimpleNamespace(nodeid=name) for name in names]
    order.pytest_collection_modifyitems(items)
    assert [item.nodeid for item in items] == [
        f"{first}::test_a1",
        f"{first}::test_a2",
        f"{second}::test_b1",
        f"{second}::test_b2",
        "tests/a/test_one.py::test_x",
        "tests/a/test_one.py::test_y",
        "tests/test_zero.py::test_z",
    ]

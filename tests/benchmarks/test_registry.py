"""The benchmarks' registry: every benchmark module is in it, `python -m benchmarks` lists it
without importing TensorFlow and refuses an unknown name, and every registered benchmark
starts: its `main(["--help"])` prints its usage."""

from __future__ import annotations

import importlib
import re

import pytest
from factories import python

from benchmarks.registry import BENCHMARKS, CONCERNS
from benchmarks.serving.browser import ROOT

NEEDS_AT_IMPORT = {"chromium": "playwright.sync_api"}  # torch is imported after the options


def test_every_module_with_a_main_is_registered_under_its_concern():
    modules = {
        f"benchmarks.{path.parent.name}.{path.stem}"
        for path in (ROOT / "benchmarks").rglob("[!_]*.py")  # not __init__, __main__
        if re.search(r"^def main\(argv", path.read_text(), re.M)
    }
    assert modules == {benchmark.module for benchmark in BENCHMARKS.values()}
    assert {benchmark.concern for benchmark in BENCHMARKS.values()} == set(CONCERNS)
    shared = {path.stem for path in (ROOT / "benchmarks").glob("[!_]*.py")}
    assert shared == {"common", "record", "registry"}  # at the top, what both concerns share


def test_the_listing_names_every_benchmark_and_imports_no_tensorflow():
    listed = python("-m", "benchmarks")
    assert listed.returncode == 0, listed.stderr
    for benchmark in BENCHMARKS.values():
        assert re.search(
            rf"^  {benchmark.name} +{re.escape(benchmark.summary)}", listed.stdout, re.M
        )
    code = "import sys, benchmarks.__main__ as m; m.main([]); print('tensorflow' in sys.modules)"
    assert python("-c", code).stdout.splitlines()[-1] == "False"


def test_an_unknown_name_is_refused_with_the_choices():
    refused = python("-m", "benchmarks", "nope")
    assert refused.returncode == 2
    assert refused.stderr.startswith("error: no benchmark 'nope'; choose one of variants, ")


@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_benchmark_prints_its_usage(name, capsys):
    module = NEEDS_AT_IMPORT.get(BENCHMARKS[name].needs)
    if module:
        pytest.importorskip(module, reason=f"benchmarks.{name} imports {module}")
    with pytest.raises(SystemExit) as exited:
        BENCHMARKS[name](["--help"])
    assert exited.value.code == 0
    usage = capsys.readouterr().out
    assert usage.startswith(f"usage: python -m {BENCHMARKS[name].module} ")
    description = importlib.import_module(BENCHMARKS[name].module).__doc__.splitlines()[0]
    assert " ".join(description.split()) in " ".join(usage.split())

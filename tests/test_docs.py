"""The docs tell the truth, where that needs TensorFlow: every Python name the README and
docs/*.md cite resolves, their Python blocks run (one needs a reader's own file: see below), and
a handful of their command lines, each a different command, run in earnest at tiny sizes (the
documented line as written, tiny sizes appended: a later flag wins) with their output checked.
tests/test_readme.py checks the rest without TensorFlow."""

import csv
import importlib
import json
import re

import pytest
from docs_text import PAGES, ROOT, code_lines, command_lines
from factories import run_cli

# Names a page cites that do not import from a checkout, and why.
NOT_IN_A_CHECKOUT = {"hierlstm.serve": "pip installs the root folder's app under this name"}
# Python blocks not run here, and why (their names are still resolved below).
NOT_RUN = {
    ("yours.md", "load_model_file"): "opens the reader's own my_model.keras; tests/yours runs "
    "each of its calls on the built-in examples"
}


def cited_names() -> dict[str, str]:
    """Every dotted hierlstm name in the pages (prose and code) and every name a
    `from hierlstm... import ...` line of a code block imports: name -> where it is cited."""
    names = {}
    for page in PAGES:
        for number, text in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for name in re.findall(r"\bhierlstm(?:\.[A-Za-z_]\w*)+", text):
                names.setdefault(name.rstrip("."), f"{page.name}:{number}")
        for line in code_lines(page):
            if match := re.match(r"\s*from (hierlstm[\w.]*) import (.+)", line.text):
                for imported in match.group(2).split("#")[0].split(","):
                    name = f"{match.group(1)}.{imported.split(' as ')[0].strip()}"
                    names.setdefault(name, line.where)
    return names


def resolve(name: str):
    """The object `name` names: its longest importable module, then attributes."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:end]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[end:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(name)


def test_every_cited_name_resolves():
    names = cited_names()
    assert "hierlstm.profiling.record.zip_logdir" in names  # issue 54's example, as cited now
    unresolved = []
    for name, where in sorted(names.items()):
        if name in NOT_IN_A_CHECKOUT:
            continue
        try:
            resolve(name)
        except (ImportError, AttributeError) as error:
            unresolved.append(f"{where}: {name} ({error})")
    assert unresolved == []


def test_a_name_that_is_not_there_does_not_resolve():
    with pytest.raises(AttributeError):
        resolve("hierlstm.profiling.profiler.zip_logdir")  # what training-and-profiling.md said


def python_blocks(page) -> list[str]:
    """The ```python blocks of `page`, in order."""
    return re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"), re.S | re.M)


def test_the_library_snippets_run_as_written(monkeypatch, tmp_path):
    """The README's block, then library.md's, in one namespace (the second uses the first's
    `config`), from a folder that is not the checkout."""
    monkeypatch.chdir(tmp_path)
    ran = []
    for page in (ROOT / "README.md", ROOT / "docs" / "library.md"):
        namespace = {}
        for block in python_blocks(page):
            if any(page.name == name and word in block for name, word in NOT_RUN):
                continue
            exec(compile(block, str(page), "exec"), namespace)
            ran.append(page.name)
        assert namespace["model"].output_shape == (None, None, 60)
        assert len(namespace["steps"]) > 5
    assert ran == ["README.md", "library.md", "library.md", "library.md"]
    assert len(namespace["figure"].data) == 5  # the charts block: one band per axis
    assert list(namespace["frame"]["variant"]) == ["folded", "nested"]
    assert namespace["stored"].ids and namespace["stored"].value.results


def documented(words: str) -> list[str]:
    """The documented command line that starts with `words` (its shortest form), asserted to
    be in the pages: a renamed flag there fails here."""
    for command in command_lines():
        if " ".join(command.forms[0]).startswith(words):
            return list(command.forms[0])
    raise AssertionError(f"no documented command line starts with: hierlstm {words}")


TINY = ["--batch-size", "1", "--time-steps", "2"]
TIMED = [*TINY, "--repeats", "1", "--warmup", "0", "--no-store"]


def test_trace_prints_the_fold_the_docs_describe(capsys):
    status, out, _ = run_cli(capsys, *documented("trace --variant folded --batch-size 4"))
    assert status == 0 and "(40, 12, 16)" in out  # docs/cli.md: "the fold to (40, 12, 16)"


def test_check_reports_every_variant_against_the_reference(capsys):
    status, out, _ = run_cli(capsys, *documented("check"), *TINY)
    assert status == 0
    assert out.startswith("batch 1, time 2, float32: max |variant - numpy reference|")
    assert out.count("  ok") == 6


def test_bench_times_the_documented_variants(capsys):
    argv = documented("bench --variant nested --variant fused --xla")
    status, out, _ = run_cli(capsys, *argv, *TIMED, "--json")
    assert status == 0
    results = json.loads(out)["results"]
    assert [(r["variant"], r["config"]["xla"], r["status"]) for r in results] == [
        ("nested", True, "ok"),
        ("fused", True, "ok"),
    ]


def test_sweep_writes_the_csv_the_reference_documents(capsys, tmp_path):
    argv = documented("sweep --variant folded --variant nested --axis time_steps")
    table = tmp_path / "sweep.csv"
    argv = [*argv, "--values", "2,3", *TIMED, "--csv", str(table)]
    status, _, _ = run_cli(capsys, *argv)
    assert status == 0
    rows = list(csv.DictReader(table.open()))
    assert sorted((row["variant"], row["time_steps"]) for row in rows) == [
        ("folded", "2"),
        ("folded", "3"),
        ("nested", "2"),
        ("nested", "3"),
    ]


def test_results_export_and_import_as_the_sharded_sweep_does(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HIERLSTM_DB", str(tmp_path / "merged.sqlite3"))  # where imports go
    shard = documented("sweep --variant folded --variant nested --axis time_steps --values")
    shard = [word for word in shard if word != "--no-store"]
    assert run_cli(capsys, *shard, "--values", "2", *TIMED[:-1])[0] == 0  # into shard.sqlite3
    assert run_cli(capsys, *documented("results export --format json"))[0] == 0
    assert run_cli(capsys, *documented("results import shard-0.json"))[0] == 0
    status, out, _ = run_cli(capsys, "results", "list", "--json")
    assert status == 0
    assert sorted(row["variant"] for row in json.loads(out)) == ["folded", "nested"]

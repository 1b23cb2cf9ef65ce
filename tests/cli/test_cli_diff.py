"""`python -m hierlstm results diff ID_A ID_B [--json]`: its table and JSON from stored runs, and
every refusal one line with exit 2."""

from __future__ import annotations

import json

import pytest
from factories import make_failed_result, make_result, make_training_result, python
from factories import run_cli as run

from hierlstm.results.store import ResultStore


@pytest.fixture
def stored(tmp_path):
    """A results file with a run, the same run at twice the batch and 1.6x the time, a failed
    run and a training step; (path, {name: id})."""
    path = tmp_path / "results.sqlite3"
    store = ResultStore(path)
    ids = {
        "a": store.add(make_result()),
        "b": store.add(
            make_result(step_changes={"median": 0.02}, config_changes={"batch_size": 4})
        ),
        "failed": store.add(make_failed_result()),
        "training": store.add(make_training_result()),
    }
    return path, ids


def test_the_json_has_the_ratio_b_over_a_its_interval_the_verdict_and_what_changed(capsys, stored):
    path, ids = stored
    status, out, _ = run(
        capsys, "results", "diff", ids["a"], ids["b"][:8], "--json", "--db", str(path)
    )
    assert status == 0
    document = json.loads(out)
    assert document["ratio"] == pytest.approx(0.02 / 0.0125, rel=1e-12)
    # the interval's formula: tests/results/test_diff.py
    assert document["low"] < document["ratio"] < document["high"]
    assert document["verdict"] == "slower" and document["method"] == "iqr"
    assert document["changed"] == {"batch_size": [2, 4]}
    assert (document["id_a"], document["id_b"]) == (ids["a"], ids["b"])
    assert "torch.utils.benchmark" in document["rule"]
    status, out, _ = run(capsys, "results", "diff", ids["b"], ids["a"], "--json", "--db", str(path))
    assert json.loads(out)["ratio"] == pytest.approx(0.0125 / 0.02) and "faster" in out


def test_the_table_names_both_runs_what_changed_and_the_verdict(capsys, stored):
    path, ids = stored
    status, out, _ = run(capsys, "results", "diff", ids["a"], ids["b"], "--db", str(path))
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split() == "run id settings device created (UTC) median ms".split()
    assert lines[2].split()[:2] == ["A", ids["a"]] and lines[2].split()[-1] == "12.5"
    assert lines[3].split()[:2] == ["B", ids["b"]] and lines[3].split()[-1] == "20"
    assert ["batch_size", "2", "4"] in [line.split() for line in lines]
    assert any(line.startswith("ratio B/A 1.6000 (95% interval 1.5") for line in lines)
    assert any(line.endswith("): B slower") for line in lines)
    status, out, _ = run(capsys, "results", "diff", ids["a"], ids["a"], "--db", str(path))
    assert "same settings, device and library versions" in out and "): within noise" in out


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        (
            ("a", "nothing"),
            "error: No stored run has the id nothing; `results list` shows the ids.",
        ),
        (
            ("a", "failed"),
            "error: Run {failed} failed (ResourceExhaustedError: OOM when allocating",
        ),
        (("a", "training"), "error: Run {a} measures inference and run {training} training:"),
    ],
)
def test_a_run_that_cannot_be_compared_exits_2_with_one_line(capsys, stored, pair, message):
    path, ids = stored
    argv = [ids.get(name, name) for name in pair]
    status, out, err = run(capsys, "results", "diff", *argv, "--db", str(path))
    short = {name: value[:8] for name, value in ids.items()}
    assert status == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith(message.format(**short)), err


def test_the_command_runs_as_a_module_without_tensorflow(stored):
    path, ids = stored
    code = (
        "import sys; from hierlstm.cli.main import main; "
        f"argv = ['results', 'diff', {ids['a']!r}, {ids['b']!r}, '--json', '--db', {str(path)!r}]; "
        "status = main(argv); "
        "assert 'tensorflow' not in sys.modules; sys.exit(status)"
    )
    done = python("-c", code)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "slower"


def test_runs_stored_with_their_samples_are_compared_by_a_bootstrap(capsys, tmp_path):
    path = tmp_path / "results.sqlite3"
    store = ResultStore(path)
    a, b = [0.010, 0.011, 0.012, 0.010, 0.013], [0.020, 0.022, 0.021, 0.024, 0.020]
    first = store.add(make_result(step_changes={"samples": tuple(a)}))
    second = store.add(make_result(step_changes={"samples": tuple(b)}))
    status, out, _ = run(capsys, "results", "diff", first, second, "--json", "--db", str(path))
    document = json.loads(out)
    assert status == 0 and document["method"] == "bootstrap"
    assert document["ratio"] == pytest.approx(0.021 / 0.011, rel=1e-12)  # the samples' medians
    assert document["low"] < document["ratio"] < document["high"]  # tests/results/test_diff.py
    assert document["verdict"] == "slower" and "bootstrap" in document["rule"]

"""A benchmark's kept run and RESULTS.md written from the kept runs: a run is kept with its
report, command, commit, machine and load; the file says each once, in the registry's order,
and RESULTS.md is what the kept runs in the repository make."""

from __future__ import annotations

import json
import os
import re

import pytest
from factories import is_report

from benchmarks import record
from benchmarks.registry import SUMMARIES

REPORT = """## Scaling with time steps (batch 1)

- date: 2026-12-03 10:00 UTC
- machine: a CPU, 2 cores visible, no GPU
- versions: Python 3.11.7
- command: `.venv/bin/python -m benchmarks.model.scaling`

### First call, seconds

| variant | T=4 |
|---|---|
| folded | 0.31 |"""


def kept(name: str, report: str = REPORT, **changes) -> dict:
    machine = {"cpu": "AMD EPYC", "cores": 2, "gpus": [], "versions": {"python": "3.11.7"}}
    return {
        "benchmark": name,
        "command": f".venv/bin/python -m benchmarks {name}",
        "date": "2026-12-03T10:00:00+00:00",
        "seconds": 12,
        "commit": "abc1234",
        "machine": machine,
        "load_before": "0.10 0.20 0.30",
        "load_after": "1.00 0.50 0.40",
        "status": 0,
        "report": report,
        **changes,
    }


def test_results_say_each_run_once_in_the_registrys_order(tmp_path):
    for name in ("scaling", "variants"):  # variants is registered first
        (tmp_path / f"{name}.json").write_text(json.dumps(kept(name, status=int(name < "t"))))
    (tmp_path / "gone.json").write_text(json.dumps(kept("gone")))  # no longer registered
    text = record.results_markdown(record.kept_runs(SUMMARIES, tmp_path), SUMMARIES)
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections == [
        "## variants: Scaling with time steps (batch 1)",
        "## scaling: Scaling with time steps (batch 1)",
    ]
    assert text.count("- date:") == 0 and text.count("- machine:") == 0  # said once, below
    assert text.count("- command: `.venv/bin/python -m benchmarks scaling`") == 1
    assert "commit abc1234, exit status 1" in text and "commit abc1234, exit status 0" in text
    assert "0.10 0.20 0.30 before, 1.00 0.50 0.40 after" in text
    assert text.count("| folded | 0.31 |") == 2 and "gone" not in text


def test_a_labelled_run_follows_the_newest_under_its_own_name(tmp_path):
    (tmp_path / "scaling.json").write_text(json.dumps(kept("scaling")))
    before = kept("scaling", label="before", command="HIERLSTM_RUNS=here .venv/bin/python")
    (tmp_path / "scaling.before.json").write_text(json.dumps(before))
    (tmp_path / "variants.json").write_text(json.dumps(kept("variants")))
    runs = record.kept_runs(SUMMARIES, tmp_path)
    assert [(run["benchmark"], run.get("label")) for run in runs] == [
        ("variants", None),
        ("scaling", None),
        ("scaling", "before"),
    ]
    text = record.results_markdown(runs, SUMMARIES)
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections[1:] == [
        "## scaling: Scaling with time steps (batch 1)",
        "## scaling (before): Scaling with time steps (batch 1)",
    ]
    assert '<a id="scaling-before"></a>' in text and "](#scaling-before) |" in text
    assert "- command: `HIERLSTM_RUNS=here .venv/bin/python`" in text


def test_save_as_keeps_a_run_under_its_label_with_the_settings_it_ran_under(tmp_path, monkeypatch):
    from benchmarks import __main__ as entry

    saved = []
    monkeypatch.setattr(entry, "run_and_save", lambda *a, **k: saved.append((a, k)) or 0)
    assert entry.main(["classroom", "--seconds", "5", "--save-as", "before"]) == 0
    assert saved == [(("classroom", ["--seconds", "5"]), {"label": "before"})]
    assert entry.main(["classroom", "--save-as", "no label"]) == 2
    monkeypatch.setenv("HIERLSTM_RUNS", "here")
    prefix = record.settings_prefix()
    assert "HIERLSTM_RUNS=here" in prefix.split() and prefix.endswith(" ")
    for key in [key for key in os.environ if key.startswith("HIERLSTM_")]:
        monkeypatch.delenv(key)
    assert record.settings_prefix() == ""


def test_a_run_is_kept_with_its_report_and_where_it_ran(tmp_path):
    argv = "--variants folded --batch-size 1 --time-steps 4 --steps 1 --repeats 2".split()
    assert record.run_and_save("profile_split", argv, folder=tmp_path) == 0
    run = json.loads((tmp_path / "profile_split.json").read_text())
    assert is_report(run["report"]) and run["status"] == 0
    command = " ".join([".venv/bin/python -m benchmarks profile_split", *argv])
    assert run["command"] == record.settings_prefix() + command  # the suite's settings first
    assert run["machine"]["cores"] >= 1 and run["machine"]["versions"]["tensorflow"]
    assert run["commit"] and run["date"].startswith("20")


def test_results_md_and_its_chart_are_written_from_the_kept_runs():
    runs = record.kept_runs(SUMMARIES)
    assert record.RESULTS_MD.read_text() == record.results_markdown(runs, SUMMARIES)
    (variants,) = [run for run in runs if run["benchmark"] == "variants"]
    chart = record.RESULTS_MD.parent / record.CHART
    assert chart.read_text() == record.speedup_chart(variants)
    assert f"]({record.CHART})" in record.RESULTS_MD.read_text()


def test_the_chart_draws_each_forward_speed_up_to_scale():
    def table(task, speedups):
        rows = [f"| {name} | 1.0 | 0.1 | {speedup} (1-2) |" for name, speedup in speedups]
        title = f"### batch 8, time 50, {task} (2 interleaved rounds)"
        return [title, "| variant | median ms | IQR | x |", *rows]

    forward = table("forward pass", [("nested", 1), ("folded", 2), ("fused + XLA", 4)])
    training = table("training step with SGD", [("nested", 1), ("folded", 9)])
    report = "\n".join([*forward, "| fused | failed | no kernel |", *training])
    chart = record.speedup_chart(kept("variants", report))
    bars = re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="20" height="([\d.]+)"', chart)
    heights = [float(height) for height in bars]
    assert len(heights) == 3  # the failed fused draws no bar, the training step none
    assert heights[1] == pytest.approx(2 * heights[0], rel=0.01)
    assert heights[2] == pytest.approx(4 * heights[0], rel=0.01)


def test_the_readme_shows_the_kept_variants_run():
    (run,) = [run for run in record.kept_runs(SUMMARIES) if run["benchmark"] == "variants"]
    readme = (record.ROOT / "README.md").read_text()
    assert record.headline(run) in readme
    assert f"{run['date'][:10]}, commit {run['commit']}" in readme  # where and when, said there

"""`bench`, `sweep` and `check` with `--task training`: their output and stored rows."""

import csv
import json

import pytest
from factories import run_cli as run

from hierlstm.registry import VARIANTS

PHASE_FIELDS = {
    f"{phase}_{stat}_s"
    for phase in ("forward", "forward_backward", "update")
    for stat in ("median", "p10", "p90")
}


SMALL = ("--batch-size", "2", "--time-steps", "3", "--repeats", "2", "--warmup", "1")


def test_bench_training_json_has_the_phases_and_stores_the_rows(capsys, tmp_path):
    db = tmp_path / "results.sqlite3"
    argv = ["bench", "--task", "training", "--optimizer", "adam", "--variant", "nested"]
    argv += ["--variant", "fused", *SMALL, "--json", "--db", str(db)]
    status, out, _ = run(capsys, *argv)
    assert status == 0
    report = json.loads(out)
    assert [row["variant"] for row in report["results"]] == ["nested", "fused"]
    for row in report["results"]:
        assert row["status"] == "ok", row["error"]
        assert (row["config"]["task"], row["config"]["optimizer"]) == ("training", "adam")
        fields = {*PHASE_FIELDS, "phase_sum_s", "backward_s", "kept_activation_bytes"}
        assert fields <= set(row)
        assert all(row[name] > 0 for name in PHASE_FIELDS) and row["kept_activation_bytes"] > 0
        assert row["phase_sum_s"] == row["forward_backward_median_s"] + row["update_median_s"]
        assert row["backward_s"] == row["forward_backward_median_s"] - row["forward_median_s"]
        assert {"median_s", "first_call_s", "peak_memory_bytes", "speedup_vs_baseline"} <= set(row)
    status, out, _ = run(capsys, "results", "list", "--json", "--db", str(db))
    stored = {row["id"]: row for row in json.loads(out)}
    assert set(stored) == {row["id"] for row in report["results"]}
    for row in report["results"]:
        assert (stored[row["id"]]["task"], stored[row["id"]]["optimizer"]) == ("training", "adam")
        assert stored[row["id"]]["phase_sum_s"] == pytest.approx(row["phase_sum_s"])


def test_bench_training_prints_the_phases_beside_the_step(capsys):
    status, out, _ = run(
        capsys, "bench", "--task", "training", "--variant", "folded", *SMALL, "--no-store"
    )
    assert status == 0
    assert "one training step (sgd)" in out
    assert "fwd+bwd ms" in out and "sum / step" in out and "kept MB (est.)" in out


def test_sweep_training_writes_phase_columns(capsys, tmp_path):
    csv_path = tmp_path / "sweep.csv"
    argv = ["sweep", "--task", "training", "--variant", "folded", "--axis", "time_steps"]
    argv += ["--values", "2,3", "--batch-size", "2", "--repeats", "2", "--warmup", "0"]
    status, _, _ = run(capsys, *argv, "--csv", str(csv_path), "--no-store")
    assert status == 0
    rows = list(csv.DictReader(csv_path.open()))
    assert [row["value"] for row in rows] == ["2", "3"]
    assert all(row["task"] == "training" and float(row["phase_sum_s"]) > 0 for row in rows)


def test_check_training_passes_for_every_variant(capsys, monkeypatch):
    """Checked once (the slow part), then printed as JSON and as the table: the second run
    prints the first one's results."""
    from hierlstm.model import gradcheck

    check, checked = gradcheck.check_gradients, {}

    def once(config, *args, **kwargs):
        key = (config, args, tuple(sorted(kwargs.items())))
        if key not in checked:
            checked[key] = check(config, *args, **kwargs)
        return checked[key]

    monkeypatch.setattr(gradcheck, "check_gradients", once)
    argv = ["check", "--task", "training", "--batch-size", "2", "--time-steps", "3", "--json"]
    status, out, _ = run(capsys, *argv)
    assert status == 0
    document = json.loads(out)
    assert document["task"] == "training" and document["config"]["batch_size"] == 2
    results = document["results"]
    assert [result["variant"] for result in results] == list(VARIANTS)
    for result in results:
        assert result["ok"] and not result["error"], result
        assert result["worst_error"] <= result["tolerance"] == 1e-5
        assert result["max_difference"] <= result["difference_tolerance"]
        assert result["reference_variant"] == "nested" and result["directions"] == 27
    status, out, _ = run(capsys, *argv[:-1])
    assert status == 0 and out.count(" ok\n") + out.endswith(" ok") >= len(VARIANTS)

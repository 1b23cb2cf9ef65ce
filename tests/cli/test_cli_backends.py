"""`--backend` on the command line: check, bench, sweep and profile on JAX and PyTorch with
TensorFlow's import blocked, and a backend not installed refused in one line."""

import json
import os
from pathlib import Path

import pytest
from factories import python

from hierlstm import backends
from hierlstm.cli.main import main

TINY = ["--batch-size", "2", "--time-steps", "3"]
# The oracles' tiny geometry (tests/backends/probe.py): every variant's gradient check is the cost.
# `check` runs on PyTorch here (eager: no compile); JAX's check is test_oracles.py's.
TINY_MODEL = [*TINY, "--height", "6", "--filters", "2", "--inner-units", "3", "--outer-units", "4"]
# None in sys.modules makes an import fail; one process, so the workers' pool starts once.
NO_TENSORFLOW = """
import contextlib, io, json, sys
sys.modules["tensorflow"] = None
from hierlstm.cli.main import main
outputs = []
for argv in json.loads(sys.argv[1]):
    with contextlib.redirect_stdout(io.StringIO()) as out:
        outputs.append((main(argv), out.getvalue()))
with open(sys.argv[2], "w") as file:
    json.dump(outputs, file)
"""


def without_tensorflow(folder: Path, *command_lines) -> list:
    """Each command line's JSON output, all run in one process without TensorFlow; each exits 0."""
    outputs = folder / "outputs.json"
    environment = {**os.environ, "HIERLSTM_DB": os.devnull}
    program = ("-c", NO_TENSORFLOW, json.dumps(command_lines), outputs)
    completed = python(*program, timeout=300, env=environment)
    assert completed.returncode == 0, completed.stderr[-2000:]
    found = json.loads(outputs.read_text())
    for (status, _), argv in zip(found, command_lines, strict=True):
        assert status == 0, (argv, completed.stderr[-2000:])
    return [json.loads(out) for _, out in found]


def test_check_bench_sweep_and_profile_on_jax_and_torch_never_import_tensorflow(tmp_path):
    """Each run on its backends; the profiles' captures written, read by the workers (this
    process cannot) and stored, a row per backend."""
    from hierlstm.results.store import ResultStore

    database = tmp_path / "results.sqlite3"
    checked, bench, swept, profiled = without_tensorflow(
        tmp_path,
        ["check", "--backend", "torch", "--json", *TINY_MODEL],
        ["bench", "--backend", "jax", "--backend", "torch", "--variant", "folded",
         "--repeats", "2", "--warmup", "1", "--no-store", "--json", *TINY],
        ["sweep", "--backend", "torch", "--variant", "nested", "--axis", "time_steps",
         "--values", "2,3", "--repeats", "1", "--warmup", "0", "--no-store", "--json",
         "--batch-size", "2"],
        ["profile", "--backend", "jax", "--backend", "torch", "--variant", "folded",
         "--steps", "2", "--warmup", "1", "--repeats", "2", "--json", "--db", str(database),
         "--logdir", str(tmp_path / "capture"), *TINY],
    )  # fmt: skip
    assert list(checked["backends"]) == ["torch"] and checked["backends"]["torch"]
    assert set(bench["environment"]["backends"]) == {"jax", "torch"}
    assert bench["environment"]["backends"]["torch"]["torch"].startswith("2.")
    results = bench["results"]
    assert [(row["variant"], row["config"]["backend"]) for row in results] == [
        ("folded", "jax"),
        ("folded", "torch"),
    ]
    assert all(row["status"] == "ok" and row["repeats"] == 2 for row in results)
    assert all("tensorflow" not in row["versions"] for row in results)
    assert [(p["backend"], p["value"], p["status"]) for p in swept["points"]] == [
        ("torch", 2, "ok"),
        ("torch", 3, "ok"),
    ]
    documents = profiled["profiles"]
    assert [document["stored_id"] is not None for document in documents] == [True, True]
    jax_profile, torch_profile = (document["profile"] for document in documents)
    assert jax_profile["trace"].endswith(".xplane.pb")
    assert Path(jax_profile["trace"]).parent.parent.parent.parent == tmp_path / "capture" / "jax"
    layers = {row["layer"]: row["time_s"] for row in jax_profile["layers"]}
    assert {"conv", "inner_lstm", "outer_lstm", "outside any layer"} <= set(layers)
    assert layers["inner_lstm"] > 0 and layers["outer_lstm"] > 0  # found by Keras's name scopes
    assert len(jax_profile["step_s"]) == 2
    assert Path(torch_profile["trace"]) == tmp_path / "capture" / "torch" / "torch_trace.json"
    assert json.loads(Path(torch_profile["trace"]).read_text())["traceEvents"]
    assert torch_profile["layers"] == [] and "per op only" in torch_profile["attribution"]
    assert any(row["type"] == "aten::mm" for row in torch_profile["op_types"])
    assert abs(sum(row["share"] for row in torch_profile["op_types"]) - 1) < 1e-9
    rows = ResultStore(database).profiles()
    assert sorted(rows["backend"]) == ["jax", "torch"]
    stored = rows.set_index("backend")
    assert stored.loc["jax", "top_layer"] in layers and stored.loc["jax", "jax_version"]
    assert stored.loc["torch", "torch_version"] and stored.loc["torch", "top_layer"] == ""


@pytest.mark.parametrize("command", ["check", "bench", "sweep", "profile"])
def test_a_missing_backend_package_is_refused(capsys, monkeypatch, command):
    sentence = "the torch backend needs the torch package, which is not installed here."
    monkeypatch.setattr(backends, "missing", lambda name: sentence if name == "torch" else None)
    extra = {
        "check": [],
        "bench": ["--variant", "folded", "--no-store"],
        "sweep": ["--variant", "folded", "--axis", "time_steps", "--values", "2", "--no-store"],
        "profile": ["--variant", "folded", "--no-store"],
    }[command]
    assert main([command, "--backend", "jax", "--backend", "torch", *extra, *TINY]) == 2
    _, err = capsys.readouterr()
    assert err == f"error: {sentence}\n"

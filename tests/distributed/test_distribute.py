"""tf.distribute: config validation, per-replica traces, the harness under a strategy, sharded
sweeps, and, in fresh processes (logical devices are fixed when TensorFlow starts), mirrored
runs on two logical CPUs and a two-worker cluster on loopback ports. Tiny configs; times are
never asserted."""

import json
import math
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf
from factories import python
from factories import run_cli as run

from hierlstm.config import RunConfig, SettingError, Timing
from hierlstm.distributed import cluster, distribute, ensure_logical_cpus
from hierlstm.registry import VARIANTS
from hierlstm.results.store import ResultStore
from hierlstm.timing import harness, sweeps

REPO_ROOT = Path(__file__).resolve().parents[2]
TINY = RunConfig(variant="folded", batch_size=4, time_steps=3)
MIRRORED = TINY.replace(strategy="mirrored", devices="cpu:0,cpu:1")


# --- configuration --------------------------------------------------------------------------

BAD_SETTINGS = [
    (
        {"strategy": "horovod"},
        "strategy must be one of none, mirrored, multi_worker; got 'horovod'.",
    ),
    ({"strategy": "mirrored", "devices": "gpu0"}, "devices must be empty or comma-separated"),
    ({"strategy": "mirrored", "devices": "cpu:0,cpu:0"}, "devices must name each device once"),
    ({"strategy": "mirrored", "devices": "cpu:0,gpu:0"}, "devices must be all CPUs or all GPUs"),
    ({"devices": "gpu:0,gpu:1"}, "devices lists the replicas of the mirrored strategy"),
    ({"strategy": "mirrored", "device": "cpu"}, "device must be auto under strategy mirrored"),
    (
        {"strategy": "mirrored", "devices": "cpu:0,cpu:1", "batch_size": 5},
        "batch_size 5 does not split evenly over 2 replicas; use a multiple of 2.",
    ),
]


@pytest.mark.parametrize("changes, message", BAD_SETTINGS)
def test_bad_distribution_settings_say_what_is_allowed(changes, message):
    with pytest.raises(ValueError) as error:
        TINY.replace(**changes)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_strategy_settings_round_trip_as_text():
    assert RunConfig.from_strings(MIRRORED.to_strings()) == MIRRORED
    parsed = RunConfig.from_strings({"strategy": "mirrored", "devices": "GPU:0, GPU:1"})
    assert parsed.device_list == ("gpu:0", "gpu:1")
    assert RunConfig().strategy == "none" and RunConfig().devices == ""  # old rows still load


# --- the harness in this process (one CPU device) ---------------------------------------------


def test_one_replica_run_reports_replicas_efficiency_and_checksum():
    outcome = sweeps.scaling(MIRRORED.replace(devices="cpu:0"), Timing(warmup=1, repeats=3))
    assert outcome.status == "ok", outcome.result.error
    assert (outcome.replicas, outcome.per_replica_batch, outcome.workers) == (1, 4, 1)
    assert outcome.result.device.startswith("mirrored over /CPU:0")
    assert outcome.result.trace_count == 1 and outcome.one_replica.status == "ok"
    assert outcome.throughput == pytest.approx(4 / outcome.result.step.median)
    assert outcome.efficiency_p10 <= outcome.scaling_efficiency <= outcome.efficiency_p90
    assert len(outcome.output_checksum) == 16
    row = outcome.to_dict()
    assert row["replicas"] == 1 and row["one_replica"]["config"]["devices"] == "cpu:0"


def test_a_device_this_process_lacks_gives_a_failed_result(capsys):
    result = harness.benchmark(MIRRORED.replace(devices="cpu:0,cpu:63"), Timing(repeats=1))
    assert result.status == "failed"
    assert "devices names cpu:63, but this process sees" in result.error
    outcome = sweeps.scaling(MIRRORED.replace(devices="cpu:0,cpu:63"), Timing(repeats=1))
    assert outcome.status == "failed" and math.isnan(outcome.scaling_efficiency)
    argv = "bench --variant folded --strategy mirrored --devices cpu:0,cpu:63 --batch-size 2"
    status, out, _ = run(capsys, argv, "--no-store --json")
    (row,) = json.loads(out)["results"]
    assert status == 1 and row["status"] == "failed" and row["one_replica"] is None


def test_a_variant_listed_as_unsupported_fails_with_its_reason(monkeypatch):
    reason = "the folded variant cannot run under tf.distribute: a reason in one sentence."
    monkeypatch.setitem(distribute.UNSUPPORTED, "folded", reason)
    result = harness.benchmark(MIRRORED.replace(devices="cpu:0"), Timing(repeats=1))
    assert (result.status, result.error) == ("failed", f"invalid setting: {reason}")
    assert harness.benchmark(TINY, Timing(warmup=0, repeats=1)).status == "ok"  # no strategy


def test_logical_cpus_cannot_be_added_once_tensorflow_started():
    existing = len(tf.config.list_logical_devices("CPU"))  # starts the runtime if not yet
    assert ensure_logical_cpus(existing) == existing
    with pytest.raises(RuntimeError, match="TensorFlow already started with"):
        ensure_logical_cpus(existing + 1)


CLI_BAD_ARGUMENTS = [
    (
        "sweep --variant folded --axis batch_size --values 1,2 --shard 3/2",
        "--shard must be I/N with 0 <= I < N; got '3/2'.",
    ),
    ("sweep --variant folded --axis batch_size --values 1 --shard 1", "--shard must be I/N"),
    ("bench --variant folded --strategy multi_worker", "needs a cluster"),
    ("bench --variant folded --logical-cpus 64", "cannot make 64 logical CPU"),
    (
        "worker --variant folded --cluster localhost --task-index 0",
        "--cluster must be comma-separated HOST:PORT",
    ),
    (
        "worker --variant folded --cluster a:1,b:2 --task-index 2",
        "--task-index must be a whole number from 0 to 1",
    ),
]


@pytest.mark.parametrize("argv, message", CLI_BAD_ARGUMENTS)
def test_distribution_flags_exit_2_with_one_line(capsys, monkeypatch, argv, message):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    tf.config.list_logical_devices()  # the runtime has started, as in any later command
    status, out, err = run(capsys, argv)
    assert status == 2 and out == ""
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


WORKER_0 = {"task": {"type": "worker", "index": 0}}


@pytest.mark.parametrize(
    "address, loopback",
    [
        ("127.0.0.1:1", True), ("127.8.0.1:1", True), ("localhost:1", True), ("[::1]:1", True),
        ("10.0.0.2:1", False), ("0.0.0.0:1", False), ("host-a:1", False), ("[fe80::1]:1", False),
    ],
)  # fmt: skip
def test_only_loopback_addresses_need_no_trusted_network(monkeypatch, address, loopback):
    tf_config = {"cluster": {"worker": ["127.0.0.1:2", address]}}
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config | WORKER_0))
    assert cluster.is_loopback(address) is loopback
    cluster.require_trusted_network(True)
    if loopback:
        cluster.require_trusted_network(False)
    else:
        with pytest.raises(SettingError, match=f"worker address {re.escape(address)} is off"):
            cluster.require_trusted_network(False)


def test_a_cluster_manager_s_tf_config_off_this_machine_needs_the_flag(capsys, monkeypatch):
    tf_config = {"cluster": {"worker": ["10.0.0.1:1", "10.0.0.2:1"]}}
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config | WORKER_0))
    status, out, err = run(capsys, "bench --variant folded --strategy multi_worker")
    assert status == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("error: worker address 10.0.0.1:1 is off this machine")


# --- sharded sweeps ---------------------------------------------------------------------------

SWEEP = "sweep --variant folded --axis batch_size --values 1,2,3,4,5 --time-steps 2 --repeats 1"


def _points(database) -> set[tuple[str, int]]:
    rows = ResultStore(database).rows()
    return set(zip(rows["variant"], rows["batch_size"].astype(int), strict=True))


def test_shards_split_a_sweep_and_their_import_equals_one_run(capsys, tmp_path):
    assert run(capsys, SWEEP, "--warmup 0 --db", tmp_path / "whole.sqlite3")[0] == 0
    merged = tmp_path / "merged.sqlite3"
    shards = []
    for index in range(2):
        database = tmp_path / f"shard{index}.sqlite3"
        status, _, err = run(capsys, SWEEP, f"--warmup 0 --shard {index}/2 --db", database)
        assert status == 0 and f"shard {index}/2" in err
        shards.append(_points(database))
        exported = tmp_path / f"shard{index}.json"
        export = "results export --format json --output"
        assert run(capsys, export, exported, "--db", database)[0] == 0
        assert run(capsys, "results import", exported, "--db", merged)[0] == 0
    assert shards == [
        {("folded", 1), ("folded", 3), ("folded", 5)},
        {("folded", 2), ("folded", 4)},
    ]  # disjoint, no gaps
    assert _points(merged) == _points(tmp_path / "whole.sqlite3")
    assert ResultStore(merged).count() == 5


# --- fresh processes: two logical CPUs, two workers -------------------------------------------

MIRRORED_SCRIPT = """
import json, sys
import numpy as np
from hierlstm._native import import_tensorflow_quietly

tf = import_tensorflow_quietly()
from hierlstm.distributed import cluster, distribute
from hierlstm.timing import harness

cluster.ensure_logical_cpus(2)
from hierlstm.cli.main import main
from hierlstm.config import RunConfig, Timing
from hierlstm.model.params import init_params
from hierlstm.registry import VARIANTS
from hierlstm.model.builders import build_model

report = {"variants": {}}
for name in VARIANTS:
    for xla in (False, True) if name == "folded" else (False,):
        config = RunConfig(variant=name, batch_size=4, time_steps=3, xla=xla,
                           strategy="mirrored", devices="cpu:0,cpu:1")
        single_config = config.replace(strategy="none", devices="")
        params = init_params(config, 0)
        inputs = harness.make_inputs(config, 0)
        single = build_model(single_config, params)
        expected = tf.function(lambda x: single(x, training=False), jit_compile=xla)(inputs)
        plan = distribute.plan(config)
        with plan.strategy.scope():
            model = build_model(config, params)
        replicated = distribute.ReplicatedForward(plan.strategy, model, xla=xla)
        values = distribute.distribute_inputs(plan.strategy, inputs, plan.per_replica_batch)
        parts = plan.strategy.experimental_local_results(values)
        outputs = replicated.gather(values).numpy()
        report["variants"][name + (" xla" if xla else "")] = {
            "max_abs_diff": float(np.max(np.abs(outputs - expected.numpy()))),
            "shapes": [list(part.shape) for part in parts],
            "devices": [part.device for part in parts],
        }
odd = harness.benchmark(RunConfig(variant="folded", batch_size=5, time_steps=3,
                                strategy="mirrored"), Timing(repeats=1))
report["odd"] = [odd.status, odd.error]
sys.stdout.flush()
print("REPORT " + json.dumps(report))
sys.stdout.flush()
main(["bench", "--logical-cpus", "2", "--strategy", "mirrored", "--variant", "folded",
      "--batch-size", "4", "--time-steps", "3", "--repeats", "3", "--warmup", "1",
      "--no-store", "--json"])
"""


@pytest.fixture(scope="module")
def mirrored_report():
    completed = python("-c", MIRRORED_SCRIPT, timeout=240)
    assert completed.returncode == 0, completed.stderr[-3000:]
    head, _, cli_json = completed.stdout.partition("\n{")
    report = json.loads(head.split("REPORT ", 1)[1])
    report["cli"] = json.loads("{" + cli_json)
    return report


@pytest.mark.parametrize("variant", [*VARIANTS, "folded xla"])
def test_mirrored_outputs_equal_single_device_outputs(mirrored_report, variant):
    checked = mirrored_report["variants"][variant]
    assert checked["max_abs_diff"] <= 1e-5
    assert checked["shapes"] == [[2, 36, 3, 1], [2, 36, 3, 1]]  # global batch 4 over 2
    assert [device[-5:] for device in checked["devices"]] == ["CPU:0", "CPU:1"]


def test_an_odd_global_batch_is_refused_with_a_clear_error(mirrored_report):
    assert mirrored_report["odd"] == [
        "failed",
        "invalid setting: batch_size 5 does not split evenly over 2 replicas; use a multiple of 2.",
    ]


def test_cli_bench_reports_scaling_over_two_logical_cpus(mirrored_report):
    (row,) = mirrored_report["cli"]["results"]
    assert row["status"] == "ok" and row["one_replica"]["status"] == "ok"
    assert (row["strategy"], row["replicas"], row["per_replica_batch"]) == ("mirrored", 2, 2)
    assert row["config"]["devices"] == "" and row["device"].startswith("mirrored over /CPU:0")
    assert row["one_replica"]["config"]["batch_size"] == 2
    assert row["scaling_efficiency"] > 0 and len(row["output_checksum"]) == 16


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_two_workers_on_loopback_complete_and_agree():
    cluster = f"127.0.0.1:{_free_port()},127.0.0.1:{_free_port()}"
    argv = "worker --variant folded --batch-size 4 --time-steps 3 --repeats 3 --warmup 1"
    argv = [sys.executable, "-m", "hierlstm", *argv.split(), "--cluster", cluster]
    argv += ["--no-store", "--json"]
    workers = [
        subprocess.Popen(
            [*argv, "--task-index", str(index)],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for index in range(2)
    ]
    try:
        outputs = [worker.communicate(timeout=180) for worker in workers]
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    rows = []
    for worker, (out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err[-3000:]
        document = json.loads(out)
        (row,) = document["results"]
        assert row["status"] == "ok" and row["one_replica"]["status"] == "ok"
        rows.append((document["worker"]["task_index"], row))
    assert [index for index, _ in rows] == [0, 1]
    for _, row in rows:
        assert (row["strategy"], row["replicas"], row["workers"]) == ("multi_worker", 2, 2)
        assert row["per_replica_batch"] == 2 and row["device"].startswith("multi_worker over 2")
    checksums = {row["output_checksum"] for _, row in rows}
    assert len(checksums) == 1 and len(checksums.pop()) == 16  # both gathered the same output

"""The worker's protocol on a real `python -m hierlstm.backends.worker` (KERAS_BACKEND=jax):
one JSON line per request and answer, results as rows rebuilt by the records module, a failed
run as a failed result's row, a bug as one line (its traceback on stderr, none on stdout), and
the failed record the same as TensorFlow's `failed_result` but for TensorFlow. Its `check` is
run by tests/cli/test_cli_backends.py."""

import io
import json
import os

import pytest
from factories import python

from hierlstm.backends import worker
from hierlstm.config import RunConfig
from hierlstm.records import BenchResult

TINY = RunConfig(variant="folded", batch_size=2, time_steps=3, backend="jax")


def talk(requests: list[dict], backend: str = "jax") -> tuple[list[dict], str]:
    """The answers of one worker process to `requests` (then close), and its stderr."""
    lines = "".join(json.dumps(request) + "\n" for request in requests)
    lines += json.dumps({"id": 99, "op": "close"}) + "\n"
    environment = dict(os.environ, KERAS_BACKEND=backend)
    completed = python("-m", "hierlstm.backends.worker", input=lines, timeout=300, env=environment)
    assert completed.returncode == 0, completed.stderr[-2000:]
    answers = [json.loads(line) for line in completed.stdout.splitlines()]  # JSON lines only
    return answers, completed.stderr


def test_a_jax_worker_prepares_samples_results_checks_and_fails_cleanly():
    config = TINY.to_dict()
    answers, stderr = talk(
        [
            {"id": 1, "op": "prepare", "config": config, "seed": 0},
            {"id": 2, "op": "sample", "handle": 1},
            {"id": 3, "op": "sample", "handle": 1},
            {"id": 4, "op": "result", "handle": 1, "samples": [0.5, 0.25], "warmup": 1},
            {"id": 6, "op": "prepare", "config": {**config, "variant": "fused"}, "seed": 0},
            {"id": 7, "op": "sample", "handle": 1},  # released by its result
            {"id": 8, "op": "teleport"},
        ]
    )
    by_id = {answer["id"]: answer for answer in answers}
    assert sorted(by_id) == [1, 2, 3, 4, 6, 7, 8, 99]
    prepared = by_id[1]
    assert prepared["ok"] and prepared["handle"] == 1 and prepared["first_call_s"] > 0
    assert prepared["kernel"] and prepared["pid"] > 0 and prepared["trace_count"] >= 1
    for sample in (by_id[2], by_id[3]):
        assert sample["ok"] and 0 < sample["sample"]["step"] <= sample["wall_s"]
        assert sample["peak_kind"] == "cpu_rss_growth" and sample["peak_bytes"] >= 0
    result = BenchResult.from_row(by_id[4]["row"])
    assert result.status == "ok" and result.config == TINY
    assert result.step.median == 0.375 and result.repeats == 2 and result.warmup == 1
    assert result.versions["jax"] and "tensorflow" not in result.versions
    refused = by_id[6]  # a config RunConfig itself refuses: one line, and no row to rebuild
    assert not refused["ok"] and "row" not in refused and not refused.get("bug")
    assert refused["error"] == (
        "variant fused runs on tensorflow only (it calls TensorFlow itself); got backend 'jax'."
    )
    assert not by_id[7]["ok"] and by_id[7]["bug"] and by_id[7]["error"].startswith("KeyError")
    assert by_id[8]["bug"] and by_id[8]["error"] == "unknown request 'teleport'"
    assert "Traceback" in stderr  # the bug's traceback went to stderr, never to stdout


def test_a_config_of_another_backend_is_a_failed_row():
    config = TINY.replace(backend="torch").to_dict()
    answer = worker.Worker("jax").answer({"id": 1, "op": "prepare", "config": config})
    assert not answer["ok"] and answer["error"] == (
        "backend 'torch' cannot run in the jax worker; each backend has its own process."
    )
    assert BenchResult.from_row(answer["row"]).error == answer["error"]


def test_serve_writes_one_line_per_request_and_stops_at_close():
    class Echo(worker.Worker):
        def __init__(self):
            self.backend, self.failures = "jax", ()

    requests = io.StringIO('{"id": 1, "op": "nope"}\n\n{"id": 2, "op": "close"}\n{"id": 3}\n')
    answers = io.StringIO()
    worker.serve(Echo(), requests, answers)
    lines = [json.loads(line) for line in answers.getvalue().splitlines()]
    assert [line["id"] for line in lines] == [1, 2] and lines[1] == {"id": 2, "ok": True}


def test_the_failed_record_is_failed_results_but_for_tensorflow():
    from hierlstm.timing.failures import failed_result

    config = TINY.replace(backend="tensorflow", task="training")
    ours = worker.failed(config, "out of memory (try a smaller batch_size or time_steps): x\ny")
    theirs = failed_result(config, "out of memory (try a smaller batch_size or time_steps): x")
    differs = {
        name
        for name, value in ours.to_dict().items()
        if value != theirs.to_dict()[name] and value == value  # NaN == NaN is False
    }
    assert differs <= {"device", "versions"}, differs
    assert ours.error == theirs.error


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (MemoryError("no room"), "out of memory (try a smaller batch_size or time_steps): no room"),
        (RuntimeError("bad op\nmore"), "jax could not run this model (RuntimeError): bad op"),
    ],
)
def test_failure_lines(error, line):
    assert worker.failure_line("jax", error) == line

"""The portable variants on JAX and PyTorch, each backend in one fresh process
(`probe.main`): the forward and gradient oracles with the TensorFlow run's tolerances, a
perturbed parameter that fails both, the same parameter names as TensorFlow's model, the
timed runs' records, and no TensorFlow imported by the layers that must not need it."""

import json
import math

import numpy as np
import pytest
from in_backend import run_in_backend

from hierlstm import backends
from hierlstm.config import RunConfig
from hierlstm.model.builders import build_model
from hierlstm.model.check import GRADIENT_TOLERANCES, TOLERANCES
from hierlstm.model.params import init_params
from hierlstm.registry import BACKENDS as ALL_BACKENDS

PORTABLE = ["nested", "time_distributed", "folded", "shared_cell"]
BACKENDS = ["jax", "torch"]


@pytest.fixture(scope="module", params=BACKENDS)
def probed(request) -> dict:
    return run_in_backend(request.param, "import sys; sys.path.insert(0, 'tests/backends')\n"
                          "import probe; report(probe.main())")  # fmt: skip


def test_every_portable_variant_passes_both_oracles(probed):
    check = probed["check"]
    assert sorted(check) == ["backend", "config", "forward", "gradients", "ok"]
    assert check["backend"] == probed["backend"] and check["ok"] is True
    assert [entry["variant"] for entry in check["forward"]] == PORTABLE
    assert [entry["variant"] for entry in check["gradients"]] == PORTABLE
    for entry in check["forward"]:
        assert entry["tolerance"] == TOLERANCES["float32"]
        assert 0 <= entry["max_abs_diff"] <= entry["tolerance"], entry
    tolerance, difference_tolerance = GRADIENT_TOLERANCES["float32"]
    for entry in check["gradients"]:
        assert entry["tolerance"] == tolerance
        assert entry["difference_tolerance"] == difference_tolerance
        assert entry["worst_error"] <= tolerance and entry["error"] == "", entry
        assert entry["directions"] == 3 * 9  # 8 parameter tensors and the input, 3 each
        assert entry["reference_variant"] == "nested"


def test_a_moved_parameter_fails_both_oracles(probed):
    negative = probed["negative"]
    assert negative["forward_diff"] > 100 * negative["tolerance"]
    assert negative["gradient_ok"] is False
    assert negative["gradient_error"] > 100 * GRADIENT_TOLERANCES["float32"][0]


def test_one_parameter_set_and_the_same_names_as_tensorflow(probed):
    """Every portable variant builds on the backend with TensorFlow's weight paths, and one
    `init_params` set loads and reads back unchanged."""
    assert sorted(probed["parameters"]) == sorted(PORTABLE)
    tiny = RunConfig(batch_size=2, time_steps=3, height=6, filters=2, inner_units=3, outer_units=4)
    for name, found in probed["parameters"].items():
        config = tiny.replace(variant=name)
        tensorflow_model = build_model(config, init_params(config))  # this process: TensorFlow
        assert found["paths"] == sorted(weight.path for weight in tensorflow_model.weights)
        assert found["round_trip"] is True


def test_what_the_backend_cannot_run_is_refused_in_one_sentence(probed):
    refused, backend = probed["refusals"], probed["backend"]
    wrong = f"backend tensorflow was asked for; this process's backend is {backend}."
    assert refused["other_backend"] == refused["check_other_backend"] == wrong
    assert refused["fused_config"].startswith("variant fused runs on tensorflow only")
    assert refused["fused_build"] == (
        "variant fused runs on the tensorflow backend only (it calls TensorFlow itself); "
        f"this process's Keras backend is {backend}."
    )
    if backend == "torch":
        assert refused["xla"].startswith("xla applies to TensorFlow and JAX;")
        assert refused["xla"].count(". ") == 0  # one sentence
    else:
        assert refused["xla"] == ""  # JAX is always XLA


def test_timed_runs_make_the_same_record_as_tensorflow(probed):
    for task, run in probed["runs"].items():
        record, samples = run["record"], run["samples"]
        steps = [sample["step"] for sample in samples]
        assert all(step > 0 for step in steps) and run["first_call_s"] > 0
        assert record["median_s"] == pytest.approx(float(np.median(steps)))
        assert json.loads(record["samples_json"]) == pytest.approx(steps)  # kept, as TF's are
        assert record["repeats"] == 3 and record["warmup"] == 1
        assert record["peak_memory_bytes"] == 123 and record["status"] == "ok"
        assert record["device"].startswith("/CPU:0 (")
        assert record["versions"][probed["backend"]] and "tensorflow" not in record["versions"]
        assert record["kernel"] == "generic"
        assert record["trace_count"] == run["trace_count_after"]
        # JAX traces each function once (compiled ahead of time); PyTorch traces nothing
        assert record["trace_count"] == (1 if probed["backend"] == "jax" else 0)
        if task == "training":
            assert set(samples[0]) == {"step", "forward", "forward_backward", "update"}
            forward = float(np.median([sample["forward"] for sample in samples]))
            assert record["forward_median_s"] == pytest.approx(forward)
            assert record["phase_sum_s"] == pytest.approx(
                record["forward_backward_median_s"] + record["update_median_s"]
            )
        else:
            assert set(samples[0]) == {"step"} and math.isnan(record["forward_median_s"])


def test_the_kernel_reason_comes_from_the_backends_rule(probed):
    reasons = {
        "jax": "jaxlib has no CUDA plugin here (the jax[cpu] install): cuDNN needs jax[cuda12]",
        "torch": "PyTorch was built without CUDA (a CPU wheel): cuDNN needs a CUDA build",
    }
    assert probed["runs"]["inference"]["record"]["kernel_reason"] == reasons[probed["backend"]]


def test_what_ran_on_a_cpu_holds_no_cudnn(probed):
    for task, run in probed["runs"].items():
        seen = run["kernels"]
        assert seen["ran"] is False, task
        if probed["backend"] == "jax":
            assert seen["calls"] == {"forward": 0, "backward": 0} and seen["has_while"]
        else:
            assert seen["cudnn_ops"] == [] and seen["has_sigmoid"]
            assert seen["has_backward"] is (task == "training")


def test_no_tensorflow_was_imported_and_missing_imported_no_backend(probed):
    """The config, registry, builders, local API, record maker and results imported, models
    built, run and checked: no TensorFlow. `missing` asked about torch in the JAX process
    without importing it (Keras imports jax itself whenever it is installed)."""
    assert probed["imported"]["tensorflow"] is False
    assert probed["imported"]["torch"] is (probed["backend"] == "torch")
    # the same answers as this process's (None for each installed one)
    assert probed["missing"] == {name: backends.missing(name) for name in ALL_BACKENDS}

"""The URL parameters' parsers (`state.PARSERS`): each takes a good value and refuses a bad one
in one sentence; `read_query` puts them together."""

from __future__ import annotations

import pytest

from hierlstm.app import state

# name: (good text, its value, bad text, the start of the reason)
CASES = {
    "lang": ("zh", "zh", "fr", "lang must be one of en, zh."),
    "variants": ("folded, nested,folded", ["folded", "nested"], ",", "variants must be names"),
    "backend": ("torch, jax,torch", ["torch", "jax"], "mxnet", "backend must be names from"),
    "devices": ("cpu:0", ["cpu:0"], "gpu:7", "devices must be among this server's cpu:0"),
    "warmup": ("0", 0, "-1", "warmup must be a whole number between 0 and"),
    "repeats": ("4", 4, "many", "repeats must be a whole number between 1 and"),
    "time_steps": ("7", 7, "0", "time_steps must be between 1 and"),
    "batch_size": ("3", 3, "0", "batch_size must be between 1 and"),
    "precision": ("mixed_bfloat16", "mixed_bfloat16", "fp8", "precision must be one of"),
    "task": ("training", "training", "inference_only", "task must be one of"),
    "optimizer": ("adam", "adam", "lbfgs", "optimizer must be one of"),
    "xla": ("true", True, "maybe", "xla must be"),
    "lstm_kernel": ("generic", "generic", "fast", "lstm_kernel must be one of"),
    "device": ("cpu", "cpu", "gpu:99", "device gpu:99 is not available"),
    "strategy": ("mirrored", "mirrored", "multi_worker", "the app runs strategy none or mirrored"),
    "height": ("30", 30, "0", "height must be between 1 and"),
    "filters": ("4", 4, "0", "filters must be between 1 and"),
    "kernel_size": ("5", 5, "16", "kernel_size must be between 1 and 15"),
    "pool_height": ("5", 5, "0", "pool_height must be between 1 and"),
    "inner_units": ("20", 20, "0", "inner_units must be between 1 and"),
    "outer_units": ("20", 20, "99999", "outer_units must be between 1 and"),
}


def test_every_parameter_has_a_parser_and_a_case():
    assert set(state.PARSERS) == set(CASES)
    # every setting a link can carry, under its URL name (the backends setting is backend=)
    assert set(state.PARSERS) == {state.URL_NAMES.get(name, name) for name in state.DEFAULTS}


@pytest.mark.parametrize("name", list(CASES))
def test_each_parser_takes_a_good_value_and_refuses_a_bad_one(name):
    good, value, bad, reason = CASES[name]
    assert state.PARSERS[name](good, True) == (value, "")
    refused, problem = state.PARSERS[name](bad, True)
    assert refused is None and problem.startswith(reason), problem
    assert "\n" not in problem and problem.endswith(".")


def test_the_known_variants_are_kept_beside_an_unknown_one():
    value, problem = state.PARSERS["variants"]("folded,bogus", True)
    assert value == ["folded"] and problem.startswith("variants must be names from nested")


def test_before_the_devices_are_known_a_device_is_checked_for_its_form_only():
    assert state.PARSERS["device"]("gpu:99", False) == ("gpu:99", "")
    assert state.PARSERS["devices"]("gpu:7", False) == (["gpu:7"], "")
    assert state.PARSERS["device"]("tpu:0", False)[1].startswith("device must be auto, cpu")


def test_read_query_takes_the_last_value_ignores_unknown_ones_and_checks_the_geometry():
    values, problems = state.read_query(
        {"batch_size": ["2", "5"], "variant": "nested", "height": "4", "pool_height": "5"}
    )
    assert values == {"batch_size": 5}  # variant= (singular) is no setting: ignored
    assert [(name, raw) for name, raw, _ in problems] == [("height, pool_height", "4, 5")]
    values, problems = state.read_query({"lang": "fr", "variants": "folded,bogus"})
    assert values == {"variants": ["folded"]}
    assert [name for name, _, _ in problems] == ["lang", "variants"]  # the URL's order


def test_the_backend_parameter_sets_the_backends_setting_and_a_link_carries_it_back():
    value, problem = state.PARSERS["backend"]("jax,mxnet", True)
    every = "tensorflow, jax, torch, onnxruntime, openvino"
    assert value == ["jax"] and problem == f"backend must be names from {every}."
    values, problems = state.read_query({"backend": "jax,torch", "variants": "folded"})
    assert values == {"backends": ["jax", "torch"], "variants": ["folded"]} and problems == []
    values, problems = state.read_query({"backend": "mxnet"})
    assert values == {} and [(n, raw) for n, raw, _ in problems] == [("backend", "mxnet")]
    assert state.query_for({"backends": ["tensorflow", "jax"]}) == {"backend": "tensorflow,jax"}
    assert state.query_for({"backends": ["tensorflow"]}) == {}  # the default keeps links clean

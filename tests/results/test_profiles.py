"""The profiles table (results schema 4): a profile's summary row stored and read back (a file
of schema 3 gaining it is test_migration.py's)."""

from __future__ import annotations

import json

import pytest
from factories import make_profile_result

from hierlstm.profiling import OUTSIDE
from hierlstm.results.profiles import PROFILE_COLUMNS, TOP_OP_TYPES
from hierlstm.results.store import ResultStore


def test_a_profile_is_stored_as_one_summary_row(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite3")
    result = make_profile_result()
    profile_id = store.add_profile(result, created_at="2026-12-01T10:00:00+00:00")
    frame = store.profiles()
    assert list(frame.columns) == list(PROFILE_COLUMNS) and len(frame) == 1
    row = frame.iloc[0]
    assert row["id"] == profile_id and row["created_at"] == "2026-12-01T10:00:00.000000+00:00"
    assert (row["variant"], row["batch_size"], row["time_steps"]) == ("folded", 2, 4)
    assert (row["task"], row["device_spec"], bool(row["xla"])) == ("inference", "auto", False)
    assert (row["steps"], row["warmup"], row["harness_repeats"]) == (2, 1, 3)
    assert row["profiled_step_s"] == 1.05e-3 and row["harness_median_s"] == 0.9e-3
    assert row["op_s"] == pytest.approx(result.layers["time_s"].sum())
    assert row["outside_s"] == 4e-6
    assert (row["top_layer"], row["top_op_type"]) == ("inner_lstm", "_MklMatMul")
    assert row["top_layer_share"] == pytest.approx(1.8e-4 / result.op_s)
    layers = json.loads(row["layers_json"])
    assert [layer["layer"] for layer in layers] == list(result.layers["layer"])
    assert layers[-1] == {
        "layer": OUTSIDE,
        "type": "",
        "time_s": 4e-6,
        "share": layers[-1]["share"],
        "ops": 2.0,
    }
    assert [op["type"] for op in json.loads(row["op_types_json"])] == ["_MklMatMul", "BiasAdd"]
    (kernel,) = json.loads(row["kernels_json"])
    assert kernel["kernel"] == "RNN_blockPersist_fp_LSTM" and kernel["layer"] == "outer_lstm"
    assert (row["logdir"], row["device"], row["tensorflow_version"]) == (
        "/tmp/profiles/run",
        "/CPU:0",
        "2.18.0",
    )
    assert store.count() == 0  # a profile is not a benchmark result


def test_profiles_are_newest_first_and_filter_by_variant(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite3")
    fused = make_profile_result(config=make_profile_result().config.replace(variant="fused"))
    first = store.add_profile(make_profile_result(), created_at="2026-12-01T10:00:00+00:00")
    second = store.add_profile(fused, created_at="2026-12-01T11:00:00+00:00")
    assert list(store.profiles()["id"]) == [second, first]
    assert list(store.profiles(variant="folded")["id"]) == [first]
    assert store.profiles(variant="nested").empty
    assert store.profiles(variant="nested").dtypes["profiled_step_s"] == "float64"


def test_only_the_top_op_types_are_kept(tmp_path):
    import pandas as pd

    many = pd.DataFrame({"type": [f"Op{i}" for i in range(15)], "time_s": 1e-5, "ops": 1.0})
    many["share"] = 1 / 15
    store = ResultStore(tmp_path / "results.sqlite3")
    store.add_profile(make_profile_result(op_types=many))
    kept = json.loads(store.profiles().iloc[0]["op_types_json"])
    assert len(kept) == TOP_OP_TYPES == 10

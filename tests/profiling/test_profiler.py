"""Real profiles of tiny configs (batch 2, time 4, 2 profiled steps): every variant of the
registry, a training step, XLA; the capture zipped; the settings a profile refuses. The exact
checks are identities (layers plus "outside any layer" equal the op types' total); op time is
bounded only from above by the step (ops on two threads overlap; the rest is the load's), and a
reader that drops ops is caught by counts. XProf's own tools (the `xprof` package) read the same
captures to the same op types' self times and counts (not under XLA, which it groups by HLO).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
from xprof.convert import raw_to_tool_data

from hierlstm.admission import LimitError
from hierlstm.config import RunConfig, SettingError, Timing
from hierlstm.model.builders import build_model
from hierlstm.profiling import OUTSIDE, profile, profiler, record, zip_logdir
from hierlstm.registry import VARIANTS
from hierlstm.timing.breakdown import top_level_layers

TIMING = Timing(warmup=1, repeats=3)
STEPS = 2
RESHAPES = ("FoldTime", "UnfoldTime")  # a reshape may run no op of its own (grappler folds it)


def tiny(variant: str, **changes) -> RunConfig:
    return RunConfig(variant=variant, batch_size=2, time_steps=4, **changes)


def layer_names(config: RunConfig) -> list[str]:
    return [layer.name for layer in top_level_layers(build_model(config))]


def assert_consistent(result, config: RunConfig):
    layers = result.layers
    assert list(layers["layer"]) == [*layer_names(config), OUTSIDE]
    assert (layers[["host_s", "device_s", "time_s", "ops"]] >= 0).all().all()
    for row in layers.itertuples():
        if row.layer != OUTSIDE and row.type not in RESHAPES:
            assert row.time_s > 0 and row.ops > 0, row.layer
    assert result.op_s == pytest.approx(result.op_types["time_s"].sum(), rel=1e-9)
    assert result.op_s == pytest.approx(result.lines["op_s"].sum(), rel=1e-9)
    assert layers["share"].sum() == pytest.approx(1.0)
    step = float(np.mean(result.step_s))
    busy_lines = int((result.lines["op_s"] > 0).sum())
    assert 0 < result.op_s <= busy_lines * step
    assert (result.lines["busy_s"] <= step * (1 + 1e-9)).all()
    assert result.steps == STEPS == len(result.step_s)
    assert result.profiled_step_s == pytest.approx(np.median(result.step_s))
    assert result.harness_median_s > 0 and result.harness_repeats == TIMING.repeats
    assert any("MatMul" in name for name in result.op_types["type"]), list(result.op_types["type"])


def xprof_op_types(xplane: str) -> tuple[Counter, Counter]:
    """Host self time (microseconds) and occurrences per op type, as XProf's framework op
    stats table gives them."""
    data, _ = raw_to_tool_data.xspace_to_tool_data([xplane], "framework_op_stats", {})
    table = json.loads(data)[0]
    columns = [column["id"] for column in table["cols"]]
    self_us, count = Counter(), Counter()
    for row in table["rows"]:
        cells = dict(zip(columns, (cell.get("v") for cell in row["c"]), strict=True))
        if cells["host_or_device"] == "Host" and cells["type"] != "IDLE":
            self_us[cells["type"]] += cells["total_self_time"]
            count[cells["type"]] += cells["occurrences"]
    return self_us, count


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_profiles_into_its_layers_as_xprof_reads_them(variant, tmp_path):
    config = tiny(variant)
    result = profile(config, TIMING, steps=STEPS, logdir=tmp_path / "log")
    assert_consistent(result, config)
    assert result.config == config and result.logdir == str(tmp_path / "log")
    assert result.trace.endswith(".xplane.pb") and result.trace.startswith(result.logdir)
    json.dumps(result.to_dict())  # plain JSON values throughout
    archive = zipfile.ZipFile(io.BytesIO(zip_logdir(result.logdir)))
    captures = [name for name in archive.namelist() if name.endswith(".xplane.pb")]
    assert len(captures) == 1 and captures[0].startswith("plugins/profile/")
    assert archive.read(captures[0]) == Path(result.trace).read_bytes()
    theirs, their_count = xprof_op_types(result.trace)
    ours = {row.type: row.time_s * result.steps * 1e6 for row in result.op_types.itertuples()}
    assert set(ours) == set(theirs)
    for name, microseconds in ours.items():
        assert microseconds == pytest.approx(theirs[name], rel=1e-6, abs=1e-3), name
    counts = {row.type: round(row.ops * result.steps) for row in result.op_types.itertuples()}
    assert counts == dict(their_count)


@pytest.mark.parametrize("variant", ["folded", "fused"])
def test_a_training_step_profiles_with_its_gradients_in_the_layers(variant, tmp_path):
    config = tiny(variant, task="training", optimizer="adam")
    result = profile(config, TIMING, steps=STEPS, logdir=tmp_path)
    assert_consistent(result, config)
    assert result.outside_s > 0  # the loss and the optimizer's update belong to no layer
    inference = profile(tiny(variant), TIMING, steps=STEPS, logdir=tmp_path / "inference")
    summary = result.layers.set_index("layer")["ops"]
    forward = inference.layers.set_index("layer")["ops"]
    main = layer_names(config)[-1]
    # the backward pass's ops are the layer's too (fused's hand-written one included)
    assert summary[main] > 1.5 * forward[main]
    # and most of a step's ops are a layer's: counted (0.12 of folded's, 0.19 of fused's), not
    # timed (load stretched them to 0.52 of the op time)
    assert summary[OUTSIDE] < 0.5 * summary.sum()


def test_xla_thunks_are_split_by_layer_through_the_hlo_module(tmp_path):
    config = tiny("folded", xla=True)
    result = profile(config, TIMING, steps=STEPS, logdir=tmp_path)
    time = result.layers.set_index("layer")["time_s"]
    assert time["inner_lstm"] > 0 and time["outer_lstm"] > 0 and time["conv"] > 0
    assert all(name.startswith("XLA ") for name in result.op_types["type"])
    assert "XLA dot" in set(result.op_types["type"])


def test_the_default_log_folder_is_new_under_the_data_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    config = tiny("nested", task="training")
    first, second = record.default_logdir(config), record.default_logdir(config)
    assert first.parent == tmp_path / "hierlstm" / "profiles"
    assert first.name.endswith("-nested-training") and first != second
    assert record.default_logdir(config.replace(backend="torch")).name.endswith(
        "-nested-training-torch"
    )


def test_the_default_folder_keeps_only_the_newest_captures(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    parent = tmp_path / "hierlstm" / "profiles"
    old = [f"2026010{day}T000000_000000Z-folded-inference" for day in range(1, 5)]
    old.append("20260105T000000_000000Z-folded-inference-jax")  # a worker's capture, pruned too
    for name in [*old, "mine"]:  # "mine": not a default capture's name, never removed
        (parent / name).mkdir(parents=True)
    removed = record.prune_profiles(keep=2)
    assert [path.name for path in removed] == old[:3]
    assert sorted(path.name for path in parent.iterdir()) == [*old[3:], "mine"]
    monkeypatch.setenv("HIERLSTM_KEEP_PROFILES", "2")
    result = profile(tiny("folded"), TIMING, steps=1)  # the default folder: one more capture
    kept = sorted(path.name for path in parent.iterdir())
    assert kept == [old[4], Path(result.logdir).name, "mine"]
    assert Path(result.trace).exists()
    monkeypatch.setenv("HIERLSTM_KEEP_PROFILES", "none")
    with pytest.raises(SettingError, match="HIERLSTM_KEEP_PROFILES must be a whole number"):
        profile(tiny("folded"), TIMING, steps=1)


@pytest.mark.parametrize(
    ("config", "steps", "message"),
    [
        (tiny("folded"), 0, "steps must be between 1 and 100; got 0."),
        (tiny("folded"), 101, "steps must be between 1 and 100; got 101."),
        (tiny("folded"), 2.0, "steps must be a whole number; got 2.0."),
        (tiny("folded", strategy="mirrored"), 2, "a profile runs on one device"),
    ],
)
def test_refused_settings_raise_a_setting_error(config, steps, message, tmp_path):
    with pytest.raises(SettingError, match=message.replace(".", r"\.")):
        profile(config, TIMING, steps=steps, logdir=tmp_path)
    assert not any(tmp_path.iterdir())  # refused before anything is made


def test_a_config_over_the_limits_is_refused(monkeypatch, tmp_path):
    monkeypatch.setenv("HIERLSTM_MAX_BATCH", "1")
    with pytest.raises(LimitError, match="over this server's limit of 1"):
        profile(tiny("folded"), TIMING, steps=1, logdir=tmp_path)


def test_a_second_profile_while_one_records_is_refused(tmp_path):
    with profiler._PROFILER:  # another profile of this process is recording
        with pytest.raises(SettingError, match="already recording another run"):
            profile(tiny("folded"), TIMING, steps=1, logdir=tmp_path / "second")
    tf.profiler.experimental.start(str(tmp_path / "outside"))  # started outside hierlstm
    try:
        with pytest.raises(SettingError, match="started outside hierlstm"):
            profile(tiny("folded"), TIMING, steps=1, logdir=tmp_path / "third")
    finally:
        tf.profiler.experimental.stop()
    assert profile(tiny("folded"), TIMING, steps=1, logdir=tmp_path / "fourth").steps == 1

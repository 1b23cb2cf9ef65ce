import dataclasses
import functools
import json
import pickle
import string

import keras
import numpy as np
import pytest
import tensorflow as tf
from factories import html_tables

from hierlstm.config import RunConfig
from hierlstm.i18n import LANGUAGES, MESSAGES
from hierlstm.model import cost, shapes
from hierlstm.model.builders import build_model
from hierlstm.model.trace import step_note, trace_report, trace_shapes
from hierlstm.model.walk import LayerStep, walk
from hierlstm.registry import VARIANTS
from hierlstm.yours.walk import trace_layers

TRUNK = [
    ("input", "InputLayer", (None, 36, None, 1), (4, 36, 10, 1)),
    ("conv", "Conv2D", (None, 36, None, 16), (4, 36, 10, 16)),
    ("pool", "MaxPooling2D", (None, 12, None, 16), (4, 12, 10, 16)),
    ("permute", "Permute", (None, None, 12, 16), (4, 10, 12, 16)),
]
OUTER = [("outer_lstm", "LSTM", (None, None, 60), (4, 10, 60))]

# (path, layer, symbolic shape, concrete shape) for batch 4, time 10, the seed's geometry.
EXPECTED = {
    "folded": TRUNK
    + [
        ("fold", "FoldTime", (None, 12, 16), (40, 12, 16)),
        ("inner_lstm", "LSTM", (None, 48), (40, 48)),
        ("unfold", "UnfoldTime", (None, None, 48), (4, 10, 48)),
    ]
    + OUTER,
    "shared_cell": TRUNK
    + [
        ("fold", "FoldTime", (None, 12, 16), (40, 12, 16)),
        ("inner_rnn", "RNN", (None, 48), (40, 48)),
        ("inner_rnn/inner_cell", "LSTMCell", (None, 48), (40, 48)),
        ("unfold", "UnfoldTime", (None, None, 48), (4, 10, 48)),
    ]
    + OUTER,
    "time_distributed": [
        ("input", "InputLayer", (None, 36, 10, 1), (4, 36, 10, 1)),
        ("conv", "Conv2D", (None, 36, 10, 16), (4, 36, 10, 16)),
        ("pool", "MaxPooling2D", (None, 12, 10, 16), (4, 12, 10, 16)),
        ("permute", "Permute", (None, 10, 12, 16), (4, 10, 12, 16)),
        ("summarise", "TimeDistributed", (None, 10, 48), (4, 10, 48)),
        ("summarise/inner_lstm", "LSTM", (None, 48), (4, 48)),
        ("outer_lstm", "LSTM", (None, 10, 60), (4, 10, 60)),
    ],
    "vectorized_map": TRUNK
    + [
        ("summarise", "VectorizedSummariser", (None, None, 48), (4, 10, 48)),
        ("summarise/inner_lstm", "LSTM", (None, 48), (4, 48)),
    ]
    + OUTER,
    "fused": [
        ("input", "InputLayer", (None, 36, None, 1), (4, 36, 10, 1)),
        ("fused_lstm", "FusedHierarchicalLSTM", (None, None, 60), (4, 10, 60)),
        ("fused_lstm/pool", "ops", (12, None, None, 16), (12, 10, 4, 16)),
        ("fused_lstm/inner_lstm", "ops", (None, None, 48), (10, 4, 48)),
        ("fused_lstm/outer_lstm", "ops", (None, None, 60), (10, 4, 60)),
    ],
    "nested": TRUNK
    + [
        ("nested_rnn", "RNN", (None, None, 60), (4, 10, 60)),
        ("nested_rnn/nested_cell", "NestedCell", (None, 60), (4, 60)),
        ("nested_rnn/nested_cell/inner_lstm", "RNN", (None, 48), (4, 48)),
        ("nested_rnn/nested_cell/inner_lstm/inner_cell", "LSTMCell", (None, 48), (4, 48)),
        ("nested_rnn/nested_cell/outer_cell", "LSTMCell", (None, 60), (4, 60)),
    ],
}


def predicted_as_traced(config: RunConfig, steps) -> bool:
    """The shapes a cold server draws first (`hierlstm.model.shapes`, no Keras) are the trace's,
    at every geometry the trace tests cover."""
    return shapes.disagreement(shapes.predicted_steps(config), steps) == ""


@pytest.mark.parametrize("variant", sorted(EXPECTED))
def test_trace_matches_written_out_shapes(variant):
    config = RunConfig(variant=variant, batch_size=4, time_steps=10)
    steps = trace_shapes(config)
    got = [(s.path, s.layer, s.symbolic_shape, s.concrete_shape) for s in steps]
    assert got == EXPECTED[variant]
    assert predicted_as_traced(config, steps)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_trace_is_the_walk_of_the_same_model_field_for_field(variant):
    config = RunConfig(variant=variant, batch_size=3, time_steps=5, precision="mixed_float16")
    model = build_model(config)
    traced = trace_shapes(config, model)
    walked = walk(model, [(3, 36, 5, 1)])
    names = [field.name for field in dataclasses.fields(LayerStep)]
    as_walked = [LayerStep(**{name: getattr(step, name) for name in names}) for step in traced]
    assert as_walked == walked
    assert trace_layers(model, {"batch": 3, "time": 5}) == walked  # "Your model"'s walk
    # Every field is compared: a step the walk would give differently fails the test.
    changed = dataclasses.replace(walked[-1], calls=walked[-1].calls + 1)
    assert as_walked != [*walked[:-1], changed]
    # Each FLOP count is over all calls in a forward pass: the children sum to their parent.
    for index, step in enumerate(walked):
        children = [s for s in walked[index + 1 :] if s.path.startswith(step.path + "/")]
        direct = [s.flops for s in children if s.depth == step.depth + 1]
        if direct:
            assert step.flops == sum(direct), step.path


def test_every_registered_variant_has_written_out_expectations():
    assert set(VARIANTS) <= set(EXPECTED)


def test_trace_in_another_geometry():
    config = RunConfig(
        variant="folded",
        batch_size=3,
        time_steps=5,
        height=40,
        pool_height=4,
        filters=8,
        inner_units=20,
        outer_units=30,
    )
    steps = trace_shapes(config)
    assert predicted_as_traced(config, steps)
    # The check can fail: another geometry's prediction is not this trace's.
    assert not predicted_as_traced(config.replace(pool_height=3), steps)
    assert {s.path: s.concrete_shape for s in steps} == {
        "input": (3, 40, 5, 1),
        "conv": (3, 40, 5, 8),
        "pool": (3, 10, 5, 8),
        "permute": (3, 5, 10, 8),
        "fold": (15, 10, 8),
        "inner_lstm": (15, 20),
        "unfold": (3, 5, 20),
        "outer_lstm": (3, 5, 30),
    }
    nested_config = config.replace(variant="nested")
    nested_steps = trace_shapes(nested_config)
    assert predicted_as_traced(nested_config, nested_steps)
    nested = {s.path: s.concrete_shape for s in nested_steps}
    assert nested["nested_rnn/nested_cell/inner_lstm"] == (3, 20)
    assert nested["nested_rnn"] == (3, 5, 30)


@pytest.mark.parametrize("variant", VARIANTS)
def test_trace_agrees_with_an_executed_forward_pass(variant):
    config = RunConfig(variant=variant, batch_size=3, time_steps=2)
    model = build_model(config)
    steps = [s for s in trace_shapes(config, model) if s.depth == 0]
    assert predicted_as_traced(config, steps)
    probe = keras.Model(model.input, [layer.output for layer in model.layers[1:]])
    outputs = tf.nest.flatten(probe(np.zeros((3, 36, 2, 1), np.float32)))
    executed = [(3, 36, 2, 1)] + [tuple(output.shape) for output in outputs]
    assert [s.concrete_shape for s in steps] == executed


@pytest.mark.parametrize("variant", VARIANTS)
def test_trace_totals_and_fields_are_consistent(variant):
    config = RunConfig(variant=variant, batch_size=2, time_steps=3, precision="mixed_float16")
    report = trace_report(config)
    assert report["total_params"] == cost.total_params(config) == 38800
    assert report["total_flops"] == cost.model_flops(config)
    assert report["dependent_steps"] == VARIANTS[variant].chain(12, 3)
    for step in report["layers"]:
        assert len(step["axes"]) == len(step["concrete_shape"]) == len(step["symbolic_shape"])
        assert step["note"], step["path"]
        assert step["note"] == MESSAGES[step["note_key"]]["en"].format(**step["note_values"])
        elements = int(np.prod(step["concrete_shape"]))
        assert step["output_bytes"] == elements * (4 if step["path"] == "input" else 2)


def test_time_distributed_trace_says_tracing_grows_with_time():
    steps = {s.path: s for s in trace_shapes(RunConfig(variant="time_distributed", time_steps=6))}
    assert steps["summarise/inner_lstm"].calls == 6
    assert "6 calls" in steps["summarise"].note and "grows" in steps["summarise"].note
    assert "6 次调用" in step_note(steps["summarise"], "zh")


# --- notes: catalogue keys and values -----------------------------------------------------

# Both strategies the trace supports in one process: mirrored only names its two devices.
STRATEGIES = {"none": {}, "mirrored": {"strategy": "mirrored", "devices": "cpu:0,cpu:1"}}


@functools.cache
def traced(variant: str, strategy: str) -> tuple:
    config = RunConfig(variant=variant, batch_size=4, time_steps=2, **STRATEGIES[strategy])
    return tuple(trace_shapes(config))


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("variant", VARIANTS)
def test_every_note_is_a_catalogue_message_in_both_languages(variant, strategy):
    for step in traced(variant, strategy):
        entry = MESSAGES[step.note_key]  # KeyError: a note the catalogue lacks
        assert all(type(value) in (int, str) for value in step.note_values.values()), step.path
        for lang in LANGUAGES:
            assert fields(entry[lang]) == set(step.note_values), (step.path, lang)
            assert step_note(step, lang) == entry[lang].format(**step.note_values), step.path
        record = json.loads(json.dumps(step.to_dict()))
        assert (record["note"], record["note_key"]) == (step_note(step), step.note_key)
        assert record["note_values"] == step.note_values


def test_every_note_in_the_catalogue_is_one_some_trace_gives():
    given = {step.note_key for v in VARIANTS for s in STRATEGIES for step in traced(v, s)}
    assert sorted(key for key in MESSAGES if key.startswith("note.")) == sorted(given)


def test_shapes_and_notes_are_one_replicas_in_both_languages():
    config = RunConfig(batch_size=8, time_steps=10, strategy="mirrored", devices="cpu:0,cpu:1")
    steps = {step.path: step for step in trace_shapes(config)}
    shapes = {path: steps[path].concrete_shape for path in ("input", "fold", "outer_lstm")}
    assert shapes == {"input": (4, 36, 10, 1), "fold": (40, 12, 16), "outer_lstm": (4, 10, 60)}
    assert all(step.replicas == 2 for step in steps.values())
    assert (trace_report(config)["replicas"], trace_report(config)["per_replica_batch"]) == (2, 4)
    assert (steps["input"].note_key, steps["input"].note_values) == (
        "note.input.replicas",
        {"global_batch": 8, "replicas": 2, "batch": 4, "height": 36, "time": 10},
    )
    assert step_note(steps["input"]) == (
        "The global batch of 8 is split over 2 replicas; each runs the steps below on its 4. "
        "4 spectrograms of height 36 (e.g. frequency bins) x 10 time steps, one channel."
    )
    assert step_note(steps["input"], "zh").startswith("全局批量 8 被分到 2 个副本上")
    assert "4 个频谱图" in step_note(steps["input"], "zh")
    assert step_note(steps["fold"]) == (
        "Folds batch and time into one axis: 4 x 10 = 40 independent sub-sequences of 12 steps."
    )
    assert step_note(steps["fold"], "zh") == (
        "把批量和时间折叠成一个轴：4 x 10 = 40 条相互独立的 12 步子序列。"
    )
    alone = {step.path: step for step in trace_shapes(config.replace(strategy="none", devices=""))}
    assert alone["input"].note_key == "note.input" and alone["input"].note_values["batch"] == 8
    assert trace_report(config.replace(strategy="none", devices=""))["replicas"] == 1


def test_cost_model_formulas():
    config = RunConfig(batch_size=2, time_steps=5)
    assert cost.lstm_flops(16, 48, 12, 10) == 2 * 4 * 48 * (16 + 48) * 12 * 10
    assert cost.inner_lstm_flops(config, 2, 5) == cost.lstm_flops(16, 48, 12, 2 * 5)
    assert cost.outer_lstm_flops(config, 2, 5) == cost.lstm_flops(48, 60, 5, 2)
    assert cost.conv_flops(config, 2, 5) == 2 * 9 * 16 * 2 * 36 * 5
    assert cost.lstm_params(16, 48) == 16 * 192 + 48 * 192 + 192


def test_a_notebook_shows_the_trace_as_the_shape_trace_s_table():
    config = RunConfig(variant="shared_cell", batch_size=4, time_steps=10)
    trace = trace_shapes(config)
    assert isinstance(trace, list) and trace.config == config
    html = trace._repr_html_()
    ((header, *rows),) = html_tables(html)
    assert header[:5] == ["step", "layer", "symbolic shape", "concrete shape", "axes"]
    indented = [("└ " if step.depth else "") + step.path for step in trace]
    assert [row[0] for row in rows] == indented and "└ inner_rnn/inner_cell" in indented
    permute = rows[3]
    assert permute[:5] == [
        "permute",
        "Permute",
        "(None, None, 12, 16)",
        "(4, 10, 12, 16)",
        "batch · time · height · channels",
    ]
    assert step_note(trace[3]) == permute[5]
    chain = VARIANTS["shared_cell"].chain(12, 10)
    assert "Shape trace of shared_cell: batch 4, 10 time steps" in html
    assert f"Dependent LSTM steps {chain}" in html
    ((chinese, *_rows),) = html_tables(trace.show("zh")._repr_html_())
    assert chinese[:2] == ["步骤", "层"] and "批量 · 时间 · 高度 · 通道" in _rows[3]
    assert repr(trace).splitlines()[0] == "Shape trace of shared_cell: batch 4, 10 time steps"
    assert pickle.loads(pickle.dumps(trace)).config == config  # the app's cache keeps it

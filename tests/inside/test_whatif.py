"""Interventions (`hierlstm.inside.whatif`): the command-line syntax parsed into one record and
refused in one sentence; what the equations decide alone, in the oracle; TensorFlow and the oracle
agreeing under every kind of intervention; values before an intervention's start exactly the
untouched run's, on both paths; what changed, the head's prediction, the map's PCA. Tiny sizes."""

import numpy as np
import pytest

from hierlstm.config import RunConfig
from hierlstm.inside.hidden_map import hidden_maps, principal_axes
from hierlstm.inside.sounds import SOUNDS, sound_input
from hierlstm.inside.whatif import (
    Clamp,
    Intervention,
    Place,
    SetState,
    SilenceChannel,
    SilenceHeight,
    Switch,
    WhatIfRefused,
    change_of,
    command_words,
    first_reach,
    oracle_values,
    playing,
    predict,
    summary_memory,
    time_axis,
)
from hierlstm.inside.whatif_syntax import interventions_from_text
from hierlstm.model.params import init_params

CONFIG = RunConfig(height=9, time_steps=6, filters=3, inner_units=4, outer_units=5, batch_size=1)
PARAMS = init_params(CONFIG, seed=3)
X = sound_input("rising", CONFIG.height, CONFIG.time_steps)[None, :, :, None]  # (1, 9, 6, 1)
# One line of every kind, each starting at t = 3 (the switch and the silence of the height reach
# the conv one step earlier: its 3x3 'same' kernel reads a step ahead).
KINDS = {
    "clamp_outer": "--clamp outer.f=0.2 --at t=3:",
    "clamp_inner": "--clamp inner.g=-0.5 --at t=3:5 --at s=1:",
    "set_outer": "--set outer.c=0.7 --at t=3:4",
    "set_inner": "--set inner.h=0 --at t=3: --at s=:2",
    "silence_channel": "--silence channel=1 --at t=3: --at s=0:1",
    "silence_height": "--silence height=0:5 --at t=3:",
    "switch": "--switch noise --at t=3:",
}


def oracle(line: str) -> dict:
    return oracle_values(PARAMS, X, interventions_from_text(line, CONFIG), CONFIG)


def test_a_line_is_parsed_into_records_that_write_it_back():
    line = "--clamp outer.f=0 --set inner.c=0.5 --silence height=2: --at t=-3: --at s=1:2"
    with pytest.raises(WhatIfRefused):  # height has no inner step: s is refused for it
        interventions_from_text(line, CONFIG)
    line = "--clamp inner.f=0 --set inner.c=0.5 --silence channel=2 --at t=-3: --at s=1:2"
    interventions = interventions_from_text(line, CONFIG)
    place = Place(t=slice(-3, None), s=slice(1, 2))
    assert interventions == (
        Intervention(Clamp("inner", "f", 0.0), place),
        Intervention(SetState("inner", "c", 0.5), place),
        Intervention(SilenceChannel(2), place),
    )
    assert command_words(interventions) == line
    assert interventions_from_text(command_words(interventions), CONFIG) == interventions
    assert len({*interventions, *interventions}) == 3  # hashable, slices and all
    assert interventions[0].to_dict() == {
        **{"action": "clamp", "lstm": "inner", "gate": "f", "value": 0.0},
        **{"t": [-3, None], "s": [1, 2]},
    }
    switched = interventions_from_text("--switch=tones --silence height=:3", CONFIG)
    assert [i.action for i in switched] == [SilenceHeight(slice(None, 3)), Switch("tones")]
    assert interventions_from_text("  ", CONFIG) == ()


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("--clamp outer.x=0", "inside.whatif.bad.clamp"),
        ("--clamp middle.f=0", "inside.whatif.bad.clamp"),
        ("--clamp outer.f=1.5", "inside.whatif.bad.value"),
        ("--clamp outer.g=nan", "inside.whatif.bad.value"),
        ("--set outer.o=0", "inside.whatif.bad.set"),
        ("--set outer.h=two", "inside.whatif.bad.value"),
        ("--silence channel=3", "inside.whatif.bad.channel"),
        ("--silence band=0:2", "inside.whatif.bad.silence"),
        ("--silence height=4:2", "inside.whatif.bad.empty.height"),
        ("--silence height=0:10", "inside.whatif.bad.range.height"),
        ("--switch thunder", "inside.whatif.bad.switch"),
        ("--switch noise --switch tones", "inside.whatif.bad.switch_twice"),
        ("--clamp outer.f=0 --at t=3", "inside.whatif.bad.at"),
        ("--clamp outer.f=0 --at t=::2", "inside.whatif.bad.at"),
        ("--clamp outer.f=0 --at u=1:", "inside.whatif.bad.at"),
        ("--clamp outer.f=0 --at t=7:", "inside.whatif.bad.range.t"),
        ("--clamp inner.f=0 --at s=:4", "inside.whatif.bad.range.s"),
        ("--clamp outer.f=0 --at t=2:2", "inside.whatif.bad.empty.t"),
        ("--clamp outer.f=0 --at t=1: --at t=2:", "inside.whatif.bad.twice"),
        ("--clamp outer.f=0 --at s=1:", "inside.whatif.bad.no_step"),
        ("--at t=1:", "inside.whatif.bad.alone"),
        ("clamp outer.f=0", "inside.whatif.bad.word"),
        ("--clamp", "inside.whatif.bad.word"),
        ("--clamp 'outer.f=0", "inside.whatif.bad.word"),
    ],
)
def test_a_bad_name_value_or_range_is_refused_in_one_sentence_of_each_language(line, key):
    with pytest.raises(WhatIfRefused) as refused:
        interventions_from_text(line, CONFIG)
    assert refused.value.key == key
    for lang in ("en", "zh"):
        sentence = refused.value.sentence(lang)
        assert sentence != key and "\n" not in sentence


def test_what_the_equations_decide_alone():
    untouched = oracle("")
    assert np.all(oracle("--clamp outer.o=0")["outer_h"] == 0)  # h = o · tanh(c)
    closed = oracle("--clamp outer.f=0 --clamp outer.i=0")  # c = f · c + i · g
    assert np.all(closed["outer_c"] == 0) and np.all(closed["outer_h"] == 0)
    assert np.all(oracle("--clamp inner.o=0")["summary"] == 0)  # the inner h's last step
    assert np.all(oracle("--set outer.h=0.25")["outer_h"] == 0.25)
    held = oracle("--clamp outer.i=1 --clamp outer.f=0 --clamp outer.g=0.5 --clamp outer.o=1")
    assert np.allclose(held["outer_h"], np.tanh(0.5), rtol=0, atol=1e-15)
    silent = oracle("--silence height=:")
    assert np.all(silent["input"] == 0) and np.all(
        silent["input"] == oracle("--switch silence")["input"]
    )
    noise = sound_input("noise", CONFIG.height, CONFIG.time_steps)[None, :, :, None]
    switched = oracle_values(PARAMS, noise, (), CONFIG)["outer_h"]
    assert np.array_equal(oracle("--switch noise")["outer_h"], switched)
    assert np.max(np.abs(untouched["outer_h"])) > 0.05  # none of it is a run of zeros anyway


@pytest.fixture(scope="module")
def both_paths():
    """Every kind's values from TensorFlow and the oracle, and each path's untouched run."""
    from hierlstm.inside.whatif_tf import intervened_values

    runs = {
        name: (
            intervened_values(CONFIG, PARAMS, X, interventions_from_text(line, CONFIG)),
            oracle(line),
        )
        for name, line in {"untouched": "", **KINDS}.items()
    }
    return runs


@pytest.mark.parametrize("kind", KINDS)
def test_tensorflow_and_the_oracle_agree_and_nothing_before_the_start_changes(both_paths, kind):
    interventions = interventions_from_text(KINDS[kind], CONFIG)
    start = first_reach(interventions, CONFIG)
    assert start == (2 if kind in ("silence_height", "switch") else 3)
    for path in (0, 1):  # TensorFlow, the oracle
        untouched, after = both_paths["untouched"][path], both_paths[kind][path]
        change = change_of(untouched, after)
        assert change.first_time["outer_h"] == start and change.largest["outer_h"] > 1e-4
        for view, value in after.items():  # every value before the start: exactly as untouched
            early = range(start)
            assert np.array_equal(
                np.take(value, early, axis=time_axis(view)),
                np.take(untouched[view], early, axis=time_axis(view)),
            ), (view, path)
    tensorflow, oracle_run = both_paths[kind]
    assert set(tensorflow) == set(oracle_run)
    for view in oracle_run:
        assert np.max(np.abs(tensorflow[view] - oracle_run[view])) < 1e-5, view


def test_the_change_in_one_line_and_the_sound_playing():
    change = change_of(oracle(""), oracle("--clamp outer.o=0 --at t=4:"))
    assert change.first_time["outer_h"] == 4 and change.first_time["conv"] is None
    assert (
        change.line("en")
        == f"Outputs changed from t = 4 on, by at most {change.largest['outer_h']:.2g}."
    )
    assert change.line("zh").startswith("输出从 t = 4 起发生变化")
    assert change_of(oracle(""), oracle("")).line("en") == "The outputs did not change."
    labels = np.zeros((2, CONFIG.time_steps), int)
    switched = interventions_from_text("--switch tones --at t=4:", CONFIG)
    assert playing(switched, labels, CONFIG.time_steps).tolist() == [[0, 0, 0, 0, 2, 2]] * 2


def test_the_head_gives_probabilities_of_every_sound():
    rng = np.random.default_rng(0)
    head = {
        "kernel": rng.normal(size=(5, len(SOUNDS))),
        "bias": np.arange(len(SOUNDS), dtype=float),
    }
    probabilities = predict(head, oracle("")["outer_h"][0])  # (T, sounds)
    assert probabilities.shape == (CONFIG.time_steps, len(SOUNDS))
    assert np.allclose(probabilities.sum(axis=-1), 1) and np.all(probabilities > 0)
    zero = predict(head, np.zeros((1, 5)))  # h = 0: the bias alone decides
    assert np.allclose(zero, np.exp(head["bias"]) / np.exp(head["bias"]).sum())


def test_pca_finds_the_line_the_points_lie_on_and_maps_place_moved_points_on_its_axes():
    direction = np.array([3.0, 4.0, 0.0]) / 5
    points = np.linspace(-2, 2, 9)[:, None] * direction + [1.0, 1.0, 1.0]
    axes = principal_axes(points)
    assert np.allclose(axes.axes[0], direction) and np.allclose(axes.explained, (1.0, 0.0))
    assert np.allclose(axes.project(points)[:, 0], np.linspace(-2, 2, 9))
    maps = hidden_maps(
        CONFIG, {"initial": PARAMS}, interventions_from_text("--clamp outer.o=0", CONFIG)
    )
    assert [(m.layer, m.params) for m in maps] == [("outer_h", "initial"), ("summary", "initial")]
    outer, summary = maps
    points = 8 * CONFIG.time_steps
    assert outer.points.shape == outer.moved.shape == (points, 2) and outer.labels.shape == (
        points,
    )
    assert np.allclose(outer.moved, outer.axes.project(np.zeros((1, 5))))  # every output 0
    assert np.allclose(summary.moved, summary.points)  # the outer o does not reach the summary
    assert hidden_maps(CONFIG, {"initial": PARAMS})[0].moved is None


def test_the_summary_remembers_far_back_only_while_the_forget_gate_lets_it():
    config = CONFIG.replace(height=12, time_steps=2)  # 4 inner steps
    x = sound_input("rising", config.height, config.time_steps)[None, :, :, None]
    memory = summary_memory(init_params(config, seed=0), x, config)
    zero, model, one = memory["zero"], memory["model"], memory["one"]
    assert zero.shape == (config.pooled_height,)
    assert np.all(np.diff(zero) > 0) and zero[0] < zero[-1] / 100  # each step back: fainter
    assert zero[0] < model[0] / 10 and model[0] < one[0]

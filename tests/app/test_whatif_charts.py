"""The what-if's figures, without Streamlit or TensorFlow, in either language: a view redrawn as
a change on one scale centred on 0, the prediction beside the sound playing, the map of the
hidden states with its axes' shares, and the Lesson's forget gate on a log scale."""

import numpy as np
import pytest

from hierlstm import charts
from hierlstm.i18n import LANGUAGES, t
from hierlstm.inside.hidden_map import HiddenMap, principal_axes
from hierlstm.inside.sounds import SOUNDS

RNG = np.random.default_rng(1)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_view_redrawn_as_a_change_shares_one_scale_centred_on_zero(lang):
    change = {name: RNG.uniform(-0.2, 0.2, (3, 2)) for name in charts.values.GATE_SCALES}
    change["c"][0, 0] = -0.9  # the largest change anywhere sets the scale of every panel
    figures = [
        charts.values.lstm_figure(change, "outer", "t", lang, 1),
        charts.values.maps_figure(
            RNG.uniform(-0.5, 0.5, (6, 4, 2)), "conv", "h", lang, (1, 1, 0, 2)
        ),
    ]
    for figure, limit in zip(figures, (0.9, None), strict=True):
        title = figure.layout.title.text
        figure = charts.whatif.as_change(figure, lang)
        assert figure.layout.title.text == t("inside.whatif.change_title", lang, title=title)
        heatmaps = [trace for trace in figure.data if trace.type == "heatmap"]
        limit = limit or max(float(np.max(np.abs(trace.z))) for trace in heatmaps)
        assert {(trace.zmin, trace.zmax, trace.zmid) for trace in heatmaps} == {(-limit, limit, 0)}
        assert [trace.showscale for trace in heatmaps] == [True] + [False] * (len(heatmaps) - 1)
        assert figure.layout.coloraxis.colorscale is None


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_prediction_stands_beside_the_sound_playing(lang):
    playing = np.array([0, 0, 3, 3])
    before = np.eye(len(SOUNDS))[[0, 1, 1, 1]] * 0.6 + 0.08
    after = np.eye(len(SOUNDS))[[0, 1, 3, 3]] * 0.6 + 0.08
    figure = charts.whatif.prediction_figure(playing, before, after, lang, 2)
    (heatmap,) = figure.data
    assert [list(row) for row in heatmap.z] == [[0, 0, 3, 3], [0, 1, 1, 1], [0, 1, 3, 3]]
    rows = ("playing", "before", "after")
    assert list(heatmap.y) == [t(f"inside.whatif.row.{row}", lang) for row in rows]
    assert heatmap.text[1][1] == f"{t('inside.sound.falling', lang)}<br>68%"
    assert heatmap.texttemplate == "%{customdata}" and heatmap.customdata[1][1] == "68%"
    assert list(heatmap.colorbar.ticktext) == [t(f"inside.sound.{s}", lang) for s in SOUNDS]
    assert figure.layout.shapes[0].x0 == 1.5  # t = 2 framed
    long = np.tile(before, (5, 1))  # 20 time steps: cells too narrow to write in
    without = charts.whatif.prediction_figure(None, long, None, lang, 0)  # a WAV, untouched
    assert len(without.data[0].z) == 1 and without.data[0].texttemplate is None


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_map_colours_each_sound_and_marks_the_moved_states(lang):
    points = RNG.standard_normal((12, 3))
    axes = principal_axes(points)
    labels = np.array([0, 1, 2] * 4)
    maps = [
        HiddenMap(
            layer, "initial", axes, axes.project(points), labels, axes.project(points) + 1, labels
        )
        for layer in ("outer_h", "summary")
    ]
    figure = charts.whatif.hidden_map_figure(maps, lang)
    names = [trace.name for trace in figure.data if trace.showlegend]
    sounds = [t(f"inside.sound.{sound}", lang) for sound in SOUNDS[:3]]
    assert names == [*sounds, t("inside.whatif.map.moved", lang)]  # each once, crosses in grey
    assert len(figure.data) == 2 * 3 * 2 + 1  # two maps, three sounds, untouched and moved
    share = t("inside.whatif.map.axis", lang, number=1, share=axes.explained[0])
    assert figure.layout.xaxis.title.text == share
    titles = [annotation.text for annotation in figure.layout.annotations]
    assert (
        titles[0] == f"{t('inside.whatif.map.outer_h', lang)} · {t('inside.params.initial', lang)}"
    )


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_forget_gate_lines_are_on_a_log_scale(lang):
    memory = {
        "model": np.array([0.03, 0.1]),
        "zero": np.array([0.0, 0.2]),
        "one": np.array([0.2, 0.1]),
    }
    figure = charts.whatif.memory_figure(memory, lang)
    assert [trace.name for trace in figure.data] == [
        t(f"lesson.forget.line.{name}", lang) for name in memory
    ]
    assert figure.layout.yaxis.type == "log" and min(figure.data[1].y) > 0  # 0 drawn at a floor

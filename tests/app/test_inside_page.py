"""Inside the tensors keeps the values per input and settings: moving a scrubber redraws the
views from the cache, without running the model again, and a rerun draws the figures the server
already made; another input runs it once more. Its
what-if panel shows the change in every view, in both languages, and never changes the
untouched run."""

import numpy as np
from apptests import TINY, array, clean, drawn, figure, opened

from hierlstm import charts
from hierlstm.app import caches
from hierlstm.app.pages import inside
from hierlstm.app.pages.inside import whatif as inside_whatif
from hierlstm.config import RunConfig
from hierlstm.inside.sounds import sound_input
from hierlstm.inside.whatif_syntax import interventions_from_text
from hierlstm.model.params import init_params


def test_a_scrubber_redraws_from_the_cache_and_a_new_input_runs_the_model(monkeypatch):
    calls = []
    real = inside.layer_values

    def counted(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    made, real_figures = [], charts.values.values_figures

    def counted_figures(*args, **kwargs):
        made.append(args[3])
        return real_figures(*args, **kwargs)

    monkeypatch.setattr(inside, "layer_values", counted)
    monkeypatch.setattr(charts.values, "values_figures", counted_figures)
    inside.values_of.clear()
    caches._figure.clear()
    at = opened("app_pages/inside.py", {**TINY, "height": "6", "filters": "2"})
    clean(at)
    assert len(calls) == 1
    at.run()  # a rerun draws the figures the server already made
    assert made == [(0, 0)]
    at.slider(key="inside_t").set_value(3).run()
    at.slider(key="inside_s").set_value(1).run()
    clean(at)
    assert len(calls) == 1 and "t=3, s=1" in at.get_by_key("inside-input").proto.spec
    assert made == [(0, 0), (3, 0), (3, 1)]
    at.segmented_control(key="inside_input").set_value("noise").run()
    assert len(calls) == 2


def test_the_variants_are_compared_when_asked_and_then_on_every_rerun(monkeypatch):
    calls = []
    real = inside.variant_differences

    def counted(config, *args):
        calls.append(config.variant)
        return real(config, *args)

    monkeypatch.setattr(inside, "variant_differences", counted)
    inside.differences_of.clear()
    at = opened("app_pages/inside.py", {**TINY, "height": "6", "filters": "2"})
    clean(at)
    assert not calls and not drawn(at, "inside-agree")
    at.button(key="inside-compare").click().run()
    clean(at)
    assert drawn(at, "inside-agree") and not drawn(at, "inside-compare")
    assert len(calls) == len(set(calls)) > 1  # every variant the budget allows, once each
    at.slider(key="inside_t").set_value(2).run()
    assert drawn(at, "inside-agree") and len(calls) == len(set(calls))  # kept, from the cache


def _outer_h(at) -> np.ndarray:
    """The outer LSTM view's h panel, (units, time), as the browser gets it."""
    spec = figure(at, "inside-outer")
    return array(next(trace["z"] for trace in spec["data"] if trace["name"] == "h"))


def test_the_what_if_panel_shows_the_change_in_every_view_and_keeps_the_untouched_run(monkeypatch):
    calls = []
    real = inside_whatif.intervened_values

    def counted(config, params, x, interventions=(), seed=0):
        calls.append(interventions)
        return real(config, params, x, interventions, seed)

    monkeypatch.setattr(inside_whatif, "intervened_values", counted)
    inside_whatif.whatif_values_of.clear()
    at = opened("app_pages/inside.py", {**TINY, "height": "6", "filters": "2"})
    clean(at)
    assert drawn(at, "inside-map") and not drawn(at, "inside-predict") and calls == []
    at.text_input(key="inside_whatif").set_value("--clamp outer.o=0 --at t=2:").run()
    clean(at)
    assert "**Outputs changed from t = 2 on, by at most " in [m.value[:44] for m in at.markdown]
    title = figure(at, "inside-outer")["layout"]["title"]["text"]
    assert title.endswith("· change from the untouched run")
    change = _outer_h(at)  # after - before, on the same axes: nothing before t = 2
    assert np.all(change[:, :2] == 0) and np.all(change[:, 2:] != 0)
    assert [len(chosen) for chosen in calls] == [0, 1]  # the untouched run, then the intervened
    at.segmented_control(key="inside_whatif_view").set_value("after").run()
    assert np.all(_outer_h(at)[:, 2:] == 0)  # o = 0: h = o · tanh(c)
    at.segmented_control(key="inside_whatif_view").set_value("before").run()
    untouched = _outer_h(at)
    assert np.all(untouched[:, 2:] != 0) and len(calls) == 2  # both from the cache
    at.selectbox(key="inside_whatif_preset").set_value("switch").run()
    assert at.text_input(key="inside_whatif").value == "--switch noise --at t=2:"
    at.text_input(key="inside_whatif").set_value("--clamp outer.f=2").run()
    assert [e.value for e in at.error] == ["outer.f must be a number from 0 to 1; got '2'."]
    at.selectbox(key="lang").set_value("zh").run()
    assert [e.value for e in at.error] == ["outer.f 必须是 0 到 1 之间的数；收到的是 '2'。"]
    assert at.get_by_key("inside_whatif_preset").label == "试一试"


def test_the_untouched_run_is_a_cache_entry_of_its_own():
    """Looking at an intervention never changes the untouched run: the interventions are part
    of the key."""
    config = inside.page_config(RunConfig(height=6, filters=2, time_steps=4))
    params = init_params(config, 0)
    picture = sound_input("rising", config.height, config.time_steps)
    closed = interventions_from_text("--clamp outer.o=0", config)
    inside_whatif.whatif_values_of.clear()
    first = inside_whatif.whatif_values_of(config, picture, "initial", params, (), 0)
    after = inside_whatif.whatif_values_of(config, picture, "initial", params, closed, 0)
    again = inside_whatif.whatif_values_of(config, picture, "initial", params, (), 0)
    assert np.all(after["outer_h"] == 0) and np.all(again["outer_h"] != 0)
    assert all(np.array_equal(first[view], again[view]) for view in first)

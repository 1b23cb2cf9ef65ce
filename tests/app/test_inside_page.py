"""Inside the tensors keeps the values per input and settings: moving a scrubber redraws the
views from the cache, without running the model again; another input runs it once more."""

from apptests import TINY, clean, drawn, opened

from hierlstm.app.pages import inside


def test_a_scrubber_redraws_from_the_cache_and_a_new_input_runs_the_model(monkeypatch):
    calls = []
    real = inside.layer_values

    def counted(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(inside, "layer_values", counted)
    inside.values_of.clear()
    at = opened("app_pages/inside.py", {**TINY, "height": "6", "filters": "2"})
    clean(at)
    assert len(calls) == 1
    at.slider(key="inside_t").set_value(3).run()
    at.slider(key="inside_s").set_value(1).run()
    clean(at)
    assert len(calls) == 1 and "t=3, s=1" in at.get_by_key("inside-input").proto.spec
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

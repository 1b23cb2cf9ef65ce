"""The sidebar's Backend choice through AppTest, in English and Chinese: a backend whose packages
are missing (the one seam replaced), a variant a chosen backend lacks, runs on two backends in
their real worker processes, and the Lesson's backend section. Parsing backend= is
tests/app/test_query.py's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from apptests import TINY, figure, opened
from factories import make_result
from streamlit.testing.v1 import AppTest

from hierlstm.app import sidebar
from hierlstm.app.pages import profile as profile_page
from hierlstm.i18n import LANGUAGES, t
from hierlstm.results.store import ResultStore

MISSING = "jax is not installed here; run make run BACKENDS=1."  # a sentence of the seam's


def _open(page: str, query: dict) -> AppTest:
    at = opened(page, {**TINY, **query}, timeout=180)
    assert not at.exception, [e.value for e in at.exception]
    return at


def _captions(at: AppTest) -> list[str]:
    return [caption.value for caption in at.sidebar.caption]


def _controls(at: AppTest):
    return at.session_state["_hierlstm"].controls


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_a_backend_whose_packages_are_missing_is_named_with_how_to_get_it(
    lang, database, monkeypatch
):
    monkeypatch.setattr(sidebar, "backend_missing", lambda name: MISSING if name == "jax" else None)
    query = {"lang": lang, "variants": "folded", "backend": "tensorflow,jax,torch"}
    at = _open("app_pages/benchmark.py", query)
    assert not at.error, [e.value for e in at.error]
    expected = (
        MISSING
        if lang == "en"
        else t("control.backends.missing", lang, backend="jax", switch="BACKENDS", extra="backends")
    )
    assert [c for c in _captions(at) if c.startswith("⚠️")] == ["⚠️ " + expected]
    assert [(c.variant, c.backend) for c in _controls(at).configs] == [
        ("folded", "tensorflow"),
        ("folded", "torch"),
    ]
    widget = at.multiselect(key="backends")
    assert widget.label == t("control.backends", lang)
    assert widget.format_func("jax") == t("control.backends.not_installed", lang, backend="jax")
    assert widget.format_func("torch") == "torch"


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_a_variant_without_a_chosen_backend_is_left_out_with_one_line(lang, database):
    query = {"lang": lang, "variants": "fused,folded", "backend": "tensorflow,torch"}
    at = _open("app_pages/benchmark.py", query)
    assert [(c.variant, c.backend) for c in _controls(at).configs] == [
        ("fused", "tensorflow"),
        ("folded", "tensorflow"),
        ("folded", "torch"),
    ]
    left_out = t(
        "control.backends.left_out",
        lang,
        variants="fused (tensorflow)",
        backends="tensorflow, torch",
    )
    assert [c for c in _captions(at) if c.startswith("ℹ️")] == ["ℹ️ " + left_out]
    at = _open("app_pages/benchmark.py", {"lang": lang, "variants": "fused", "backend": "jax"})
    fallback = t("control.backends.fallback", lang, variants="fused (tensorflow)", backends="jax")
    assert [c for c in _captions(at) if c.startswith("ℹ️")] == ["ℹ️ " + fallback]
    assert [(c.variant, c.backend) for c in _controls(at).configs] == [("fused", "tensorflow")]
    at = _open("app_pages/profile.py", {"lang": lang, "variants": "folded", "backend": "jax"})
    # JAX's profile runs from the page now (its worker), not only from the command line
    press = t("profile.press_run", lang, variants="folded", batch=2, time=4)
    assert [info.value for info in at.info] == [press]
    assert [c.backend for c in profile_page.profiled_configs(_controls(at))] == ["jax"]


def _seed_comparison(database: Path) -> None:
    store = ResultStore(database)
    for backend, median in (("tensorflow", 0.020), ("jax", 0.030), ("torch", 0.050)):
        store.add(
            make_result(
                step_changes={"median": median},
                config_changes={"variant": "folded", "backend": backend},
            )
        )


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_the_lesson_shows_this_machine_s_backend_numbers_or_how_to_make_them(lang, database):
    at = _open("app_pages/lesson.py", {"lang": lang})
    headers = [h.value for h in at.header]
    assert t("lesson.backends.title", lang) in headers
    assert t("lesson.backends.none", lang) in [i.value for i in at.info]
    _seed_comparison(database)
    at = _open("app_pages/lesson.py", {"lang": lang})
    assert t("lesson.backends.none", lang) not in [i.value for i in at.info]
    table = at.get_by_key("lesson-backends-table").dataframe[0].value
    assert list(table["backend"]) == ["tensorflow", "jax", "torch"]
    assert list(table["median_ms"].round(6)) == [20.0, 30.0, 50.0]
    assert list(table["vs_tensorflow"].round(6)) == [1.0, 1.5, 2.5]  # 30/20, 50/20
    assert at.get_by_key("lesson-backends") is not None


def test_a_run_on_two_backends_in_their_workers_is_drawn_and_stored_in_both_languages(database):
    query = {"lang": "zh", "variants": "nested,folded", "backend": "tensorflow,jax"}
    at = _open("app_pages/benchmark.py", query)
    at.button(key="run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    outcome = at.session_state["benchmark"].result
    pairs = [(r.config.variant, r.config.backend) for r in outcome.compared.results]
    assert pairs == [
        ("nested", "tensorflow"),
        ("nested", "jax"),
        ("folded", "tensorflow"),
        ("folded", "jax"),
    ]
    assert [r.status for r in outcome.compared.results] == ["ok"] * 4
    # every sample of the JAX configs was timed in a worker process, not in this one
    pids = [entry.pid for entry in outcome.compared.entries]
    assert len(set(pids)) == 2 and os.getpid() not in pids
    assert outcome.baseline == "nested · tensorflow" and outcome.compared.baseline == 0
    for lang in ("zh", "en"):
        if lang == "en":
            at.selectbox(key="lang").set_value("en").run()
        assert not at.exception and not at.error
        latency = figure(at, "bench-latency")
        assert [trace["name"] for trace in latency["data"]] == [f"{v} · {b}" for v, b in pairs]
        patterns = [
            trace["marker"].get("pattern", {}).get("shape", "") for trace in latency["data"]
        ]
        assert patterns == ["", "/", "", "/"]
        summary = at.success[0].value  # the fastest named with its backend, against nested's
        fastest = [f"{v} · {b}" for v, b in pairs if f"**{v} · {b}**" in summary]
        assert len(fastest) == 1, summary
        if fastest != ["nested · tensorflow"]:  # its paired speed-up against the baseline
            assert summary.count("nested · tensorflow") == 1, summary
        # the kernel of each LSTM, by variant and backend; JAX's reason is its worker's rule
        kernels = at.get_by_key("bench-kernels").table[0].value
        assert set(kernels.iloc[:, 0]) == {f"{v} · {b}" for v, b in pairs}
        why = kernels[kernels.iloc[:, 0] == "folded · jax"].iloc[:, 4]
        reason = outcome.compared.results[3].kernel_reason
        assert len(why) == 2 and reason and "TensorFlow" not in reason
        assert set(why) == ({reason} if lang == "en" else set(why) - {reason})
    stored = ResultStore(database).rows()
    assert sorted(zip(stored["variant"], stored["backend"], strict=True)) == sorted(pairs)
    assert set(stored.loc[stored["backend"] == "jax", "jax_version"]) != {""}
    at.switch_page("app_pages/results.py").run()
    assert not at.exception and not at.error
    assert at.multiselect(key="results_backend").options == ["jax", "tensorflow"]
    assert all(" · " in label for label in at.multiselect(key="results_compare").options)


def test_a_sweep_on_two_backends_draws_one_curve_per_variant_and_backend(database):
    at = _open(
        "app_pages/scaling.py", {"lang": "en", "variants": "folded", "backend": "tensorflow,torch"}
    )
    at.get_by_key("sweep_values_time_steps").set_value("2, 4")
    at.button(key="run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    frame = at.session_state["scaling"].result.frame
    points = sorted(zip(frame["backend"], frame["value"], frame["status"], strict=True))
    assert points == [("tensorflow", 2, "ok"), ("tensorflow", 4, "ok")] + [
        ("torch", 2, "ok"),
        ("torch", 4, "ok"),
    ]
    curves = {
        trace["name"]: trace["line"].get("dash", "solid")
        for trace in figure(at, "scaling-latency")["data"]
    }
    assert curves == {"folded · tensorflow": "solid", "folded · torch": "dot"}
    stored = ResultStore(database).rows()
    assert sorted(zip(stored["backend"], stored["time_steps"], strict=True)) == [
        ("tensorflow", 2),
        ("tensorflow", 4),
        ("torch", 2),
        ("torch", 4),
    ]
    at.selectbox(key="lang").set_value("zh").run()
    assert not at.exception and not at.error

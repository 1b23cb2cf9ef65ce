"""Two runs compared in the app, in English and Chinese: the Results page with none, one, a
failed and two runs of different tasks, and the Benchmark page against the previous run of its
settings; the numbers shown against the stored rows, the headers the catalogue's."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from apptests import TINY, clean, drawn, opened, shown_table
from factories import make_failed_result, make_result, make_training_result
from streamlit.testing.v1 import AppTest

from hierlstm.i18n import LANGUAGES, t
from hierlstm.results.schema import COLUMNS
from hierlstm.results.store import ResultStore


def _open(page: str, query: dict) -> AppTest:
    at = opened(page, {**TINY, **query})
    clean(at)
    return at


def _headers(lang: str, *columns: str) -> list[str]:
    return [t(f"column.{column}", lang) for column in columns]


def _summary_start(verdict: str, lang: str) -> str:
    """A comparison's summary up to its first number."""
    numbers = dict.fromkeys(("ratio", "low", "high", "a_ms", "b_ms"), 0)
    return t(f"results.diff.summary.{verdict}", lang, confidence=95, **numbers)[:6]


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_two_runs_compared_b_over_a_with_what_changed_and_chinese_headers(lang, database):
    store = ResultStore(database)
    first = store.add(make_result())
    second = store.add(make_result(step_changes={"median": 0.02}, config_changes={"batch_size": 4}))
    at = _open("app_pages/results.py", {"lang": lang})
    # B defaults to the newest run, A to the one before it.
    assert (at.selectbox(key="results_diff_a").value, at.selectbox(key="results_diff_b").value) == (
        first,
        second,
    )
    assert at.selectbox(key="results_diff_a").format_func(first).startswith(first[:8] + " · folded")
    # 20 ms over 12.5 ms, its interval from make_result's IQR (0.7 ms) and repeats (30): a
    # median's normal standard error, sqrt(pi / 2) * IQR / 1.349 / sqrt(n), on the log scale.
    relative = [math.sqrt(math.pi / 2) * 0.0007 / 1.349 / math.sqrt(30) / m for m in (0.0125, 0.02)]
    half = 1.96 * math.hypot(*relative)
    expected = t(
        "results.diff.summary.slower",
        lang,
        **{"ratio": 1.6, "low": 1.6 * math.exp(-half), "high": 1.6 * math.exp(half)},
        **{"confidence": 95, "a_ms": 12.5, "b_ms": 20},
    )
    assert at.get_by_key("results-diff").markdown[0].value == expected
    changed = shown_table(at, "results-diff-changed")
    assert list(changed.columns) == [
        t(f"results.diff.col.{c}", lang) for c in ("setting", "a", "b")
    ]
    assert changed.to_numpy().tolist() == [[t("column.batch_size", lang), "2", "4"]]
    (rule,) = [c.value for c in at.get_by_key("results-diff").caption]
    assert "torch.utils.benchmark" in rule and "0.99" in rule and "1.01" in rule
    headers = list(shown_table(at, "results-table").columns)
    assert headers[:5] == _headers(lang, "created_at", "variant", "backend", "device", "status")
    assert len(headers) == 21 and all(not h.isascii() for h in headers[1:5]) == (lang == "zh")
    # B against itself: nothing changed, within noise.
    at.selectbox(key="results_diff_b").set_value(first).run()
    said = at.get_by_key("results-diff").markdown[0].value
    assert said.startswith(_summary_start("within_noise", lang))
    assert t("results.diff.same", lang) in [c.value for c in at.get_by_key("results-diff").caption]


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_runs_that_cannot_be_compared_say_why_in_one_line(lang, database):
    store = ResultStore(database)
    at = _open("app_pages/results.py", {"lang": lang})  # nothing stored: only "empty"
    assert [info.value for info in at.info] == [t("results.empty", lang)]
    assert not drawn(at, "results_diff_a")
    inference = store.add(make_result())
    store.add(make_failed_result())
    at = _open("app_pages/results.py", {"lang": lang})  # one run completed, one failed
    assert [info.value for info in at.info] == [t("results.diff.need_two", lang, count=1)]
    training = store.add(make_training_result())
    at = _open("app_pages/results.py", {"lang": lang})  # a forward pass and a training step
    assert at.selectbox(key="results_diff_b").value == training
    assert at.selectbox(key="results_diff_a").value == inference
    warning = at.get_by_key("results-diff").warning[0].value
    assert warning == t(
        "results.diff.refuse.task",
        lang,
        a=inference[:8],
        b=training[:8],
        task_a="inference",
        task_b="training",
    )


def test_a_benchmark_is_compared_with_the_previous_run_of_its_settings(database):
    at = _open("app_pages/benchmark.py", {"lang": "en", "variants": "nested,folded"})
    at.button(key="run").click().run()
    first = shown_table(at, "bench-diff")
    assert first["Variant"].tolist() == ["nested", "folded"]
    assert first["Previous run"].tolist() == [t("bench.diff.none", "en")] * 2
    before = set(ResultStore(database).rows()["id"])
    at.button(key="run").click().run()
    assert not at.exception and not at.error
    rows = ResultStore(database).rows()
    for stored in rows.itertuples():  # the harness keeps every timed sample
        samples = json.loads(stored.samples_json)
        assert len(samples) == stored.repeats == 2
        assert np.median(samples) == pytest.approx(stored.median_s, rel=1e-12)
    new = rows[~rows["id"].isin(before)].set_index("variant")
    old = rows[rows["id"].isin(before)].set_index("variant")
    for lang in ("en", "zh"):
        if lang == "zh":
            at.selectbox(key="lang").set_value("zh").run()
        against = shown_table(at, "bench-diff")
        columns = ("variant", "previous", "ratio", "interval", "verdict", "changed")
        assert list(against.columns) == [t(f"bench.diff.col.{c}", lang) for c in columns]
        for line in against.itertuples(index=False):
            variant, previous, ratio, interval, verdict, changed = line
            assert previous.startswith(old.loc[variant, "id"][:8])
            assert ratio == pytest.approx(
                new.loc[variant, "median_s"] / old.loc[variant, "median_s"], abs=5e-4
            )
            low, high = (float(x) for x in interval.split("–"))
            assert low <= ratio <= high and changed == "—"
            assert verdict in [
                t(f"results.diff.verdict.{v}", lang) for v in ("faster", "slower", "within_noise")
            ]
        rule = t("results.diff.rule.bootstrap", lang, confidence=95, resamples=2000, seed=0)
        assert [c.value for c in at.caption if c.value.startswith(rule)] != []
        headers = list(shown_table(at, "bench-table").columns)
        assert headers[:3] == _headers(lang, "variant", "batch_size", "time_steps")
        assert t("column.speedup_vs_baseline", lang) in headers


BENCH_EXTRAS = ("replicas", "per_replica_batch", "workers", "output_checksum", "replica_devices")
SPEEDUPS = ("speedup_vs_baseline", "speedup_p10", "speedup_p90", "is_baseline")


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_every_stored_and_benchmark_column_has_one_header_of_its_own(lang):
    columns = (*COLUMNS, *BENCH_EXTRAS, *SPEEDUPS)
    headers = [t(f"column.{column}", lang) for column in columns]
    assert [c for c, h in zip(columns, headers, strict=True) if h == f"column.{c}"] == []
    assert len(set(headers)) == len(headers)  # a table's headers never collide
    if lang == "en":  # the English is the name the CSV and --json use
        assert headers == list(columns)


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_runs_stored_with_their_samples_are_compared_by_their_bootstrap(lang, database):
    store = ResultStore(database)
    store.add(make_result(step_changes={"samples": (0.010, 0.011, 0.012, 0.010, 0.013)}))
    store.add(make_result(step_changes={"samples": (0.020, 0.022, 0.021, 0.024, 0.020)}))
    at = _open("app_pages/results.py", {"lang": lang})
    said = at.get_by_key("results-diff").markdown[0].value
    assert said.startswith(_summary_start("slower", lang))
    assert f"{0.021 / 0.011:.3f}" in said and "11" in said and "21" in said
    (rule,) = [c.value for c in at.get_by_key("results-diff").caption if "torch" in c.value]
    assert rule.startswith(
        t("results.diff.rule.bootstrap", lang, confidence=95, resamples=2000, seed=0)
    )


def test_a_run_on_several_backends_names_each_row_s_backend_and_compares_it_with_its_own(database):
    """Each row against the previous run on its own backend; the name says which (as the
    charts' "variant · backend"), both languages. A run on one backend: the variant alone."""
    from hierlstm.app import diff_view

    store, backends = ResultStore(database), ("tensorflow", "onnxruntime")
    earlier = {b: store.add(make_result(config_changes={"backend": b}), created_at="2026-12-01")
               for b in backends}  # fmt: skip
    now = [store.add(make_result(config_changes={"backend": b}), created_at="2026-12-02")
           for b in backends]  # fmt: skip
    rows = store.rows().to_dict(orient="records")
    for lang in LANGUAGES:
        frame, _rules = diff_view.against_previous(rows, now, lang)
        names = frame[t("bench.diff.col.variant", lang)].tolist()
        previous = frame[t("bench.diff.col.previous", lang)].tolist()
        assert names == [f"folded · {b}" for b in backends]
        assert [label[:8] for label in previous] == [earlier[b][:8] for b in backends]
    alone, _rules = diff_view.against_previous(rows, now[:1], "en")
    assert alone[t("bench.diff.col.variant", "en")].tolist() == ["folded"]


def test_the_run_diff_reads_only_the_run_and_what_it_is_compared_with(database, monkeypatch):
    """The rows `caches.run_diff_rows` keeps give the same comparison as every stored row, and
    a row stored after the run (another session's) changes neither: it is read once per run."""
    from hierlstm.app import caches, diff_view

    store = ResultStore(database)
    for day in ("01", "02", "03"):  # three earlier runs of the settings, the newest compared
        store.add(make_result(), created_at=f"2026-12-{day}")
    store.add(make_result(config_changes={"batch_size": 3}), created_at="2026-12-03")
    store.add(make_failed_result(), created_at="2026-12-03")
    now = [store.add(make_result(), created_at="2026-12-04")]
    everything = store.rows().to_dict(orient="records")
    caches.run_diff_rows.clear()
    kept = caches.run_diff_rows(str(database), tuple(now))
    assert len(kept) == 2  # the run's row and its previous one, not the six stored
    for lang in LANGUAGES:
        expected, rules = diff_view.against_previous(everything, now, lang)
        found, found_rules = diff_view.against_previous(kept, now, lang)
        assert found.equals(expected) and found_rules == rules
    store.add(make_result(), created_at="2026-12-05")
    with monkeypatch.context() as patched:  # a rerun of the page reads nothing stored
        patched.setattr(ResultStore, "rows", lambda *a, **k: pytest.fail("read again"))
        again = caches.run_diff_rows(str(database), tuple(now))
    assert [row["id"] for row in again] == [row["id"] for row in kept]
    caches.run_diff_rows.clear()


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_the_pickers_and_table_hold_the_newest_runs_and_say_so_and_the_lesson_summarises_once(
    lang, database, monkeypatch
):
    """A class stores thousands of runs: the Results page's pickers offer the newest `NEWEST`
    completed runs of the selection and its table the newest `NEWEST` rows, each with one line
    saying how many more the filters or an export reach; the Lesson summarises the stored rows
    once per row added, not on every rerun."""
    from hierlstm.app import backend_numbers
    from hierlstm.app.pages import results

    monkeypatch.setattr(results, "NEWEST", 2)
    store = ResultStore(database)
    ids = [store.add(make_result(), created_at=f"2026-12-0{day}") for day in range(1, 5)]
    failed = store.add(make_failed_result(), created_at="2026-12-05")
    at = _open("app_pages/results.py", {"lang": lang})
    offered = at.multiselect(key="results_compare").options  # labels ending with the date
    assert [label[-16:-6] for label in offered] == ["2026-12-04", "2026-12-03"]
    assert [label[:8] for label in at.selectbox(key="results_diff_b").options] == [
        run[:8] for run in ids[:1:-1]
    ]
    captions = [c.value for c in at.caption]
    assert t("results.pickable", lang, shown=2, total=4) in captions
    assert t("results.table_newest", lang, shown=2, total=5) in captions
    assert list(at.dataframe[-1].value.iloc[:, -1]) == [failed, ids[3]]  # its last column: id
    at.multiselect(key="results_status").select("failed").run()  # a filter reaches the rest
    assert list(at.dataframe[-1].value.iloc[:, -1]) == [failed]
    assert t("results.count", lang, shown=1, total=5, path=str(database)) in [
        c.value for c in at.caption
    ]
    assert at.multiselect(key="results_compare").options == []
    summarised, real = [], backend_numbers.latest_comparison
    monkeypatch.setattr(
        backend_numbers, "latest_comparison", lambda rows: summarised.append(1) or real(rows)
    )
    backend_numbers._stored_comparison.clear()
    clean(at.switch_page("app_pages/lesson.py").run())
    clean(at.run())
    assert summarised == [1]
    store.add(make_result(), created_at="2026-12-06")
    clean(at.run())
    assert summarised == [1, 1]
    backend_numbers._stored_comparison.clear()

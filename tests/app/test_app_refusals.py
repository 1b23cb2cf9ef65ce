"""The app when the machine refuses its results file: every page serves and says once, in the
session's language, that results are not kept and why; a run still draws; the Results page
offers to set a damaged file aside."""

from __future__ import annotations

import pytest
from apptests import TINY, drawn, opened
from factories import PAGES, SHORT_RUNS
from streamlit.testing.v1 import AppTest

from hierlstm.i18n import t
from hierlstm.results.store import ResultStore

FOLDED = {**TINY, "variants": "folded"}
NOT_KEPT = {
    "en": "Results are not being kept: cannot open the results file "
    "/proc/nope/hierlstm/results.sqlite3: no such file or folder",
    "zh": "结果没有被保存：无法打开结果文件 /proc/nope/hierlstm/results.sqlite3：文件或目录不存在",
}


@pytest.fixture
def unwritable_data_folder(monkeypatch):
    monkeypatch.delenv("HIERLSTM_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", "/proc/nope")


def warnings_saying(at: AppTest, text: str) -> list[str]:
    return [w.value for w in [*at.warning, *at.error] if text in w.value]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("page", list(PAGES))
def test_every_page_serves_and_says_once_that_results_are_not_kept(
    page, lang, unwritable_data_folder
):
    at = opened(page, {**FOLDED, "lang": lang})
    assert not at.exception, [e.value for e in at.exception]
    said = warnings_saying(at, NOT_KEPT[lang])
    on_results = page == "app_pages/results.py"
    assert len(said) == (2 if on_results else 1), said  # the banner, and the Results page
    assert "HIERLSTM_DB" in said[0]
    assert not [e.value for e in at.error if NOT_KEPT[lang] not in e.value]  # no other error
    if page == "app_pages/benchmark.py":  # a run unstored is not compared with a previous one
        at.button(key="run").click().run()
        assert not at.exception
        assert t("bench.diff.unstored", lang) in [c.value for c in at.caption]
        assert not drawn(at, "bench-diff")


# The pages whose run stores results, each run short (its own inputs where it has them). The
# Lesson's run stores through the same `outcomes.stored_run` as Benchmark's, and is eleven runs:
# its drawing is checked after a stored run in test_every_page.py.
RUNS_THAT_STORE = ("benchmark", "profile", "scaling")


@pytest.mark.parametrize("name", RUNS_THAT_STORE)
def test_a_write_refused_mid_run_still_shows_the_run_unstored(name, tmp_path, monkeypatch):
    """The first write lands, the next is refused (a disk that fills mid-run): the page draws
    its outcome all the same, and says once that results are not kept. Every page's run goes
    through `hierlstm.measure` and `outcomes.stored_run`."""
    from hierlstm.refusals import Refusal, Refused

    path = tmp_path / "results.sqlite3"
    monkeypatch.setenv("HIERLSTM_DB", str(path))
    writes = []

    def fills_up(add):
        def refusing(self, record, **kwargs):
            writes.append(record)
            if len(writes) > 1:
                raise Refused(Refusal("results", str(path), "full"))
            return add(self, record, **kwargs)

        return refusing

    for method in ("add", "add_profile"):
        monkeypatch.setattr(ResultStore, method, fills_up(getattr(ResultStore, method)))
    at = opened(f"app_pages/{name}.py", {**TINY, "variants": "nested,folded"})
    if name in SHORT_RUNS:
        key, value = SHORT_RUNS[name]
        at.get_by_key(key).set_value(value)
    at.button(key="run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    said = [w.value for w in [*at.warning, *at.error] if "Results are not being kept" in w.value]
    assert len(said) == 1 and "no space left" in said[0], said
    assert not [e.value for e in at.error if e.value not in said]  # no "page failed", no other
    assert len(at.get("plotly_chart")) >= 1  # the run's outcome, drawn
    assert len(writes) >= 2  # one landed, the next refused (a sweep per variant tries again)
    stored = ResultStore(path)
    assert stored.count() + len(stored.profiles()) == 1


def test_results_offers_to_set_a_damaged_file_aside(tmp_path, monkeypatch):
    path = tmp_path / "results.sqlite3"
    path.write_text("these are not results\n" * 100)
    monkeypatch.setenv("HIERLSTM_DB", str(path))
    at = opened("app_pages/results.py", {})
    assert warnings_saying(at, "it is damaged or not a SQLite database")
    assert path.read_text() == "these are not results\n" * 100  # never written to
    at.button(key="results_recover").click().run()
    assert not at.exception
    kept = next(p for p in tmp_path.iterdir() if ".damaged-" in p.name)
    assert kept.read_text() == "these are not results\n" * 100
    assert [s.value for s in at.success if str(kept) in s.value]
    assert ResultStore(path).count() == 0 and not warnings_saying(at, "damaged")

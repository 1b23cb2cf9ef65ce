"""The classroom's visitors without browsers: a session speaking Streamlit's websocket protocol
does what a visitor does on a real server (a page, the language, a setting, a tiny run whose rows
are stored), and the Locust benchmark built on it prints its table on one session. Nothing is
timed: the benchmark runs under `make bench`."""

from __future__ import annotations

import time

import pytest
from factories import is_report

from benchmarks.registry import BENCHMARKS
from benchmarks.serving import browser
from benchmarks.serving.classroom import RUN_VARIANTS, cache_memory, finished, stored_rows, warm
from benchmarks.serving.streamlit_client import Session
from hierlstm.app.pages import PAGES
from hierlstm.i18n import t
from hierlstm.results.store import ResultStore

TINY_RUN = "variants=nested,folded&batch_size=2&repeats=2&warmup=1&time_steps=5"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app served headless and warm, with its own store; yields (url, results file)."""
    folder = tmp_path_factory.mktemp("classroom")
    port = browser.free_port()
    url = f"http://127.0.0.1:{port}"
    environment = browser.own_store(folder) | {"HIERLSTM_WARMUP": "trace"}
    process = browser.start_server(port, folder / "server.log", environment)
    try:
        browser.wait_healthy(url, process, time.perf_counter())
        warm(url)
        finished(folder / "server.log")  # what the server's log says, the benchmark reads
        yield url, folder / "results.sqlite3"
    finally:
        browser.stop(process)
        log = (folder / "server.log").read_text()
        assert browser.tracebacks(log) == [], log[-3000:]


def test_a_session_without_a_browser_does_what_a_visitor_does(server):
    url, database = server
    session = Session(url)
    try:
        opened = session.rerun()
        assert opened.errors == [] and not opened.warming_up
        assert list(session.pages) == [page.name for page in PAGES]
        switched = session.rerun("benchmark")
        assert switched.errors == [] and t("bench.title", "en") in switched.texts
        chinese = session.language("zh")
        assert chinese.errors == [] and t("bench.title", "zh") in chinese.texts
        session.rerun("shape_trace")
        session.set_value("time_steps", double_value=9)
        applied = session.rerun(run=True)
        assert applied.errors == [] and "time_steps=9" in session.query
    finally:
        session.close()
    run_session = Session(url)
    try:
        run_session.rerun("benchmark", TINY_RUN)
        ran = run_session.rerun(run=True)
    finally:
        run_session.close()
    shown = [found for text in ran.texts if (found := browser.stored_pattern("en").search(text))]
    assert ran.errors == [] and [int(found[1]) for found in shown] == [len(RUN_VARIANTS)]
    assert stored_rows(database) == (len(RUN_VARIANTS), 0)
    assert set(ResultStore(database).rows()["variant"]) == set(RUN_VARIANTS)


def test_the_locust_benchmark_prints_its_table_on_one_session(server, capsys, monkeypatch):
    from benchmarks.serving import classroom

    url, _database = server
    monkeypatch.setattr(classroom, "SETTLE_S", 1)  # the caches read at the level's first second
    BENCHMARKS["classroom"](["--url", url, "--sessions", "1", "--seconds", "4"])
    report = capsys.readouterr().out
    assert is_report(report), report
    row = next(line for line in report.splitlines() if line.startswith("| 1 |"))
    assert row.split(" | ")[-2] == "0", report  # errors
    held = report.split("What Streamlit's caches")[1]
    assert "| before |" in held and "| 1, at 0.0166667 min |" in held and "| 1 |" in held, report
    # The columns are the largest caches at the end, which depend on the pages the visitor
    # chose at random: each is one the server's metrics name.
    header = next(line for line in held.splitlines() if line.startswith("| after |"))
    named = [cell.strip() for cell in header.strip("|").split("|")][2:]
    assert named and set(named) <= set(cache_memory(url)), report


def test_the_caches_are_read_from_streamlit_s_metrics(server):
    """The warm-up traced the default model, and the page's cache says so."""
    url, _database = server
    held = cache_memory(url)
    assert held["caches._cached_trace"] > 0 and held["caches._cached_model"] > 0, held


def test_a_level_waits_for_the_warm_up_s_last_step(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("INFO warm-up: warmup.trace took 1.00 s\n")
    with pytest.raises(RuntimeError, match="warm-up had not finished after 0 s"):
        finished(log, timeout_s=0.1)
    log.write_text(log.read_text() + "INFO warm-up finished after 9.00 s\n")
    finished(log, timeout_s=0.1)


def test_the_settled_rss_is_read_from_the_level_s_fifth_minute_on():
    from benchmarks.serving.classroom import settled_rss

    samples = [(100 + at, 700 + at / 10, 50.0) for at in range(0, 900, 30)]  # 700 -> 787 MB
    assert settled_rss(samples, 100) == [730, 730, 787]
    assert settled_rss(samples[:5], 100) is None  # 2 minutes: nothing settled to read


def test_a_server_that_dies_mid_level_is_named_with_its_signal_and_its_log_s_end(tmp_path):
    from benchmarks.serving.classroom import died

    log = tmp_path / "server.log"
    log.write_text("started\nFatal Python error: Segmentation fault\n  File x.py, line 3\n")
    said = died(-11, 16, log, lines=2)
    assert said.splitlines() == [
        "the server exited (signal SIGSEGV) during the 16-session level; its log ends:",
        "Fatal Python error: Segmentation fault",
        "  File x.py, line 3",
    ]
    assert died(1, 30, tmp_path / "none.log").startswith(
        "the server exited (status 1) during the 30"
    )

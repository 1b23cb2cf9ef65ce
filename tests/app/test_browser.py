"""The app in real Chromium, for what only a browser shows (every other claim is AppTest's or a
pure function's): a cold server's first page filling in, a double click, a page input waiting
for its Run button, the dark theme, four sessions at once and a tab closed mid-run. The server
and Debian's chromium are started by `benchmarks.serving.browser`, as the benchmarks' are; the
server's log goes to test-artifacts/."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path
from urllib.parse import urljoin

import pytest
from factories import PAGES as TITLES

from benchmarks.serving.browser import (
    CHROMIUM,
    ROOT,
    VIEWPORT,
    RunEnd,
    confirm_button,
    free_port,
    launch_chromium,
    start_server,
    stop,
    wait_healthy,
)
from hierlstm.i18n import t

ARTIFACTS = ROOT / "test-artifacts"
SERVER_LOG = ARTIFACTS / "streamlit-server.log"
# Variants are named, so a variant another engineer is still adding cannot break these tests;
# the default benchmark run below uses the app's own defaults.
VARIANTS = "variants=nested,folded"
TINY = f"batch_size=2&time_steps=4&repeats=2&warmup=1&{VARIANTS}"
# url path -> the page's title (English); the first page is served at the root
PAGES = {
    ("" if index == 0 else Path(script).stem): title
    for index, (script, title) in enumerate(TITLES.items())
}
PAGE_TIMEOUT_MS = 120_000
RUN_TIMEOUT_MS = 240_000

pytestmark = pytest.mark.browser

if not CHROMIUM.exists():
    pytest.skip(
        "browser tests need Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
        allow_module_level=True,
    )
sync_api = pytest.importorskip(
    "playwright.sync_api",
    reason="browser tests need Playwright's Python package (pip install -r requirements-dev.txt)",
)

SERVER_PID: list[int] = []  # for `_server_stacks`


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app served headless; yields (base url, results file). Killed at the end."""
    folder = tmp_path_factory.mktemp("browser")
    database = folder / "results.sqlite3"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # Two logical CPU devices, so the strategy controls have two replicas to offer. The server
    # warms up as `make run`'s does, but only once WARM_GATE exists: the first test looks at it
    # cold for as long as it needs, and every other test makes sure it is warm.
    environment = {
        "HIERLSTM_DB": str(database),
        "HIERLSTM_LOGICAL_CPUS": "2",
        "HIERLSTM_WARMUP": "full",
        "HIERLSTM_WARMUP_AFTER": str(folder / "warm-up"),
        "HIERLSTM_RUNS": "worker",  # as `make run` serves it (the suite's default is "here")
    }
    ARTIFACTS.mkdir(exist_ok=True)
    process = start_server(port, SERVER_LOG, environment)
    try:
        try:
            wait_healthy(url, process, time.perf_counter(), poll_s=0.25)
        except RuntimeError as error:  # exited, or not healthy in time
            pytest.fail(f"{error}; see {SERVER_LOG}")
        SERVER_PID.append(process.pid)
        yield url, database
    finally:
        stop(process)


@pytest.fixture(autouse=True)
def warm(request, server):
    """Every test but the first one's cold look runs on a warm server."""
    gate = _warm_gate(server)
    if request.node.get_closest_marker("cold_server") is None:
        gate.touch()


def _warm_gate(server) -> Path:
    _, database = server
    return database.parent / "warm-up"


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    try:
        yield page
    finally:
        context.close()


def _open(page, url: str, title: str) -> None:
    page.goto(url)
    page.get_by_role("heading", name=title).wait_for()
    _wait_idle(page)


# The app's script state, as Streamlit's frontend sets it on stApp, "notRunning" for 300 ms on
# end (a run's end is followed at once by the rerun that draws it), and, unless the page is
# looked at cold, no warm-up placeholder left (the page has filled in).
_IDLE = """filled => {
  const app = document.querySelector('[data-testid="stApp"]');
  const idle = app !== null && app.getAttribute('data-test-script-state') === 'notRunning'
    && app.getAttribute('data-test-connection-state') === 'CONNECTED'
    && !(filled && document.querySelector('[class*="st-key-warmup-placeholder"]'));
  const now = Date.now();
  if (!idle) { window.hierlstmIdleSince = null; return false; }
  window.hierlstmIdleSince = window.hierlstmIdleSince || now;
  return now - window.hierlstmIdleSince >= 300;
}"""


def _wait_idle(page, filled: bool = True) -> None:
    """Until the script run is over (and, `filled`, the page has filled in)."""
    page.wait_for_timeout(100)
    page.evaluate("() => { window.hierlstmIdleSince = null; }")
    page.wait_for_function(_IDLE, arg=filled, polling=50)


def _no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0


_FAILED = '[data-testid="stException"], [data-testid="stAlertContentError"]'


def _wait_for_outcome(page, result) -> None:
    """Until `result` (a locator) is there; a failed run fails the test at once with its line."""
    failed = page.locator(_FAILED)
    _wait_for(page, result.or_(failed))
    if failed.count():
        pytest.fail(f"the run failed: {failed.first.inner_text()}")


def _wait_for(page, locator) -> None:
    """Until `locator` is visible; after RUN_TIMEOUT_MS, the test fails with a screenshot and
    the server's stacks (app.py dumps them on SIGUSR1), so a stall says what it waited on."""
    try:
        locator.first.wait_for(timeout=RUN_TIMEOUT_MS)
    except sync_api.TimeoutError:
        shot = ARTIFACTS / f"timeout-{int(time.time())}.png"
        page.screenshot(path=str(shot), full_page=True)
        pytest.fail(f"no outcome in {RUN_TIMEOUT_MS // 1000} s ({shot}):\n{_server_stacks()}")


def _server_stacks() -> str:
    """The server's threads' stacks: its log's end after SIGUSR1."""
    os.kill(SERVER_PID[0], signal.SIGUSR1)
    time.sleep(2)
    return SERVER_LOG.read_text(errors="replace")[-12_000:]


_PAGE_CHARTS = """() => Array.from(
    document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')
).filter(chart => !chart.closest('[class*="st-key-warmup-"]')).length"""


def _page_charts(page) -> int:
    """The page's own charts: not the warm-up placeholder's empty one."""
    return page.evaluate(_PAGE_CHARTS)


@pytest.mark.cold_server
def test_first_page_while_the_server_warms_up(server, page):
    """Title, explanation, settings and a placeholder first; the trace when the warm-up is done.
    The warm-up is held (HIERLSTM_WARMUP_AFTER) until the cold page has been looked at."""
    url, _ = server
    gate = _warm_gate(server)
    assert not gate.exists(), "this test looks at the server cold: it must run first"
    page.goto(f"{url}/?{VARIANTS}")
    page.get_by_role("heading", name=PAGES[""]).wait_for()
    page.locator('[data-testid="stSidebar"] [data-testid="stForm"]').wait_for()
    page.get_by_role("button", name="Update trace").wait_for()
    page.get_by_text("is warming up (held until the file HIERLSTM_WARMUP_AFTER names").wait_for()
    page.get_by_text("this server is importing TensorFlow").wait_for()  # the banner
    # the first figure while the server warms up: the axis flow, its shapes predicted
    page.locator('[class*="st-key-warmup-first-figure"] .js-plotly-plot').wait_for()
    page.get_by_text("Shapes predicted from your settings while TensorFlow loads").wait_for()
    assert _page_charts(page) == 0  # the page's own, from Keras's inference, is still pending
    _no_exception(page)
    # Once warm, an offline demo needs no other host, the icon included. (While cold, the
    # browser asks Google's font servers for the page's Material icon as its favicon.)
    elsewhere = []
    page.on("request", lambda r: r.url.startswith(url) or elsewhere.append(r.url))
    gate.touch()
    page.wait_for_function(f"() => ({_PAGE_CHARTS})() > 0")
    _wait_idle(page)
    page.get_by_role("heading", name=PAGES[""]).wait_for()
    assert page.get_by_role("heading", name=PAGES[""]).count() == 1  # drawn once, not twice
    assert page.get_by_text("This server started moments ago").count() == 0
    _no_exception(page)
    icon = page.locator('link[rel="shortcut icon"], link[rel="icon"]').first.get_attribute("href")
    assert icon and "gstatic" not in icon and page.request.get(urljoin(url + "/", icon)).ok
    assert "/media/" in icon  # ours (set once warm), not Streamlit's favicon.png
    assert elsewhere == []


def test_tiny_benchmark_run_double_clicked_runs_once(server, page):
    url, database = server
    from hierlstm.results.store import ResultStore

    before = ResultStore(database).count()
    _open(page, f"{url}/benchmark?{TINY}", PAGES["benchmark"])
    page.get_by_role("button", name="Run benchmark").dblclick()
    _wait_for_outcome(page, page.locator(".js-plotly-plot").nth(5))
    _wait_idle(page)
    _no_exception(page)
    # nested and folded, once each: the double click did not start a second run.
    assert ResultStore(database).count() - before == 2
    assert page.locator('[data-testid="stAlertContentSuccess"]').count() == 1


def _reruns_sent(page) -> list[list[str]]:
    """Every rerun the page asks its server for from now on (its socket's BackMsgs, read with
    Streamlit's own proto), as the widget ids each one triggers. Call before the page opens."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    reruns = []

    def read(payload):
        if isinstance(payload, bytes):
            message = BackMsg.FromString(payload)
            if message.WhichOneof("type") == "rerun_script":
                widgets = message.rerun_script.widget_states.widgets
                reruns.append([w.id for w in widgets if w.WhichOneof("value") == "trigger_value"])

    page.on("websocket", lambda socket: socket.on("framesent", read))
    return reruns


@pytest.mark.parametrize(
    ("path", "role", "field", "value"),
    [("profile", "spinbutton", "Profiled steps", "3"), ("scaling", "textbox", "Values", "2, 4")],
)
def test_a_page_s_own_input_waits_for_its_run_button(server, page, path, role, field, value):
    """Committing Profiled steps or Scaling's values asks for no rerun (one, arriving as the Run
    click's run started, made Streamlit drop the click): the page's Run applies them."""
    url, _ = server
    reruns = _reruns_sent(page)
    _open(page, f"{url}/{path}?{TINY}", PAGES[path])
    opened = len(reruns)
    assert opened >= 1  # the page's opening run, read off its socket
    box = page.locator('[data-testid="stMain"]').get_by_role(role, name=field, exact=True)
    box.fill(value)
    box.press("Tab")  # the commit, on leaving the field
    page.wait_for_timeout(1000)
    assert reruns[opened:] == []
    assert box.input_value() == value


def test_the_long_run_question_s_button_is_found_in_both_languages(page):
    """What `_wait_for_outcome` and the soak press when the app asks before a run: the yes in
    either language and either form, never the sidebar's Run or the question's Cancel."""
    labels = {}
    for lang in ("en", "zh"):
        labels[t("run.confirm.yes", lang, seconds=34)] = True
        labels[t("run.confirm.yes.unknown", lang)] = True
        labels[t("run.confirm.no", lang)] = False
        labels[t("run.benchmark", lang)] = False
    labels["Run it anyway"] = False
    buttons = "".join(f"<button>{label}</button>" for label in labels)
    page.set_content(f"<html><body>{buttons}</body></html>")
    found = confirm_button(page).all_inner_texts()
    assert found == [label for label, pressed in labels.items() if pressed]


def test_the_benchmarks_probe_waits_for_the_log_of_the_page_s_run(server, browser):
    """`benchmarks.serving.visit`'s idle: once the server has logged that the page's script run
    ended (`benchmarks.serving.browser.RunEnd`), whatever the browser drew of the run; the same
    page, idle in every other respect, is not idle while the log names no run of it."""
    from benchmarks.serving import visit

    url, _ = server
    home = visit.app_pages()[0]
    tab = visit.new_page(browser)
    try:
        opened = visit.open_page(tab, url, home, SERVER_LOG, query=VARIANTS)
        assert opened.idle_s is not None and opened.title_s is not None, opened.note
        no_run = RunEnd(SERVER_LOG, "no_such_page")
        waited = visit.timed(tab, home.title, lambda: None, no_run, timeout_s=3)
        assert waited.idle_s is None, waited.note
        assert waited.waiting_for["script"] == "notRunning", waited.waiting_for
        assert waited.waiting_for["run_end_logged"] is False
    finally:
        tab.context.close()


def test_dark_theme(server, browser):
    """Charts take their text colours from the theme: readable on a dark background too."""
    url, _ = server
    context = browser.new_context(viewport=VIEWPORT, color_scheme="dark")
    context.set_default_timeout(PAGE_TIMEOUT_MS)
    page = context.new_page()
    try:
        _open(page, f"{url}/?{VARIANTS}", PAGES[""])
        page.locator(".js-plotly-plot").first.wait_for()
        background = page.evaluate(
            "() => getComputedStyle(document.querySelector('.stApp')).backgroundColor"
        )
        red, green, blue = (int(part) for part in background[4:-1].split(",")[:3])
        assert red + green + blue < 150, background  # Streamlit followed the dark preference
        _no_exception(page)
    finally:
        context.close()


LOAD_SESSIONS = 4


def test_four_sessions_press_run_at_once(server, browser):
    """Four browser sessions on one server press Run within milliseconds of each other: the
    runs queue on the device lock, each finishes and stores its own result, none errors."""
    url, database = server
    from hierlstm.results.store import ResultStore

    contexts = [browser.new_context(viewport=VIEWPORT) for _ in range(4)]
    try:
        pages = [context.new_page() for context in contexts]
        for index, page in enumerate(pages):  # all four load at once
            page.set_default_timeout(PAGE_TIMEOUT_MS)
            # Each session its own batch size, so every stored row says which session it was.
            page.goto(
                f"{url}/benchmark?{TINY}&variants=folded&batch_size={index + 1}",
                wait_until="commit",
            )
        for page in pages:
            page.get_by_role("heading", name=PAGES["benchmark"]).wait_for()
            _wait_idle(page)
        before = set(ResultStore(database).rows()["id"])
        for page in pages:
            page.get_by_role("button", name="Run benchmark").click(no_wait_after=True)
        # While one session runs, the others say so (polled until every run has drawn).
        waiting_seen, placed = set(), set()
        deadline = time.perf_counter() + RUN_TIMEOUT_MS / 1000
        while time.perf_counter() < deadline:
            for index, page in enumerate(pages):
                if page.get_by_text("Waiting for another run to finish").count():
                    waiting_seen.add(index)
                if page.get_by_text("Your place in line:").count():
                    placed.add(index)
            if all(page.locator(".js-plotly-plot").count() >= 6 for page in pages):
                break
            pages[0].wait_for_timeout(100)
        assert waiting_seen, "no session showed that it was waiting for another's run"
        assert placed, "no waiting session showed its place in line"
        for page in pages:
            _wait_for_outcome(page, page.locator(".js-plotly-plot").nth(5))
            _wait_idle(page)
            _no_exception(page)
        rows = ResultStore(database).rows()
        new = rows[~rows["id"].isin(before)]
        assert len(new) == LOAD_SESSIONS and set(new["status"]) == {"ok"}
        assert sorted(new["batch_size"]) == [1, 2, 3, 4]  # one row from each session
    finally:
        for context in contexts:
            context.close()


def test_closing_the_tab_mid_run_stops_the_run_and_frees_the_device(server, browser):
    """Streamlit stops a closed session's script at its next progress update; the device lock
    is released in `finally`, so the next viewer's run starts at once. Had the closed run gone
    on, the next run would have waited for it and its rows would be stored first."""
    url, database = server
    from hierlstm.results.store import ResultStore

    long_run = "variants=nested,folded&batch_size=16&time_steps=100&repeats=80&warmup=1"
    contexts = [browser.new_context(viewport=VIEWPORT) for _ in range(2)]
    try:
        closing, staying = (context.new_page() for context in contexts)
        for page in (closing, staying):
            page.set_default_timeout(PAGE_TIMEOUT_MS)
        _open(closing, f"{url}/benchmark?{long_run}", PAGES["benchmark"])
        _open(staying, f"{url}/benchmark?{TINY}&variants=folded&batch_size=5", PAGES["benchmark"])
        before = set(ResultStore(database).rows()["id"])
        closing.get_by_role("button", name="Run benchmark").click()
        # The progress bar shows the timed rounds: the run holds the device and is timing.
        _wait_for_outcome(closing, closing.get_by_text(re.compile(r"round \d+/80")))
        contexts[0].close()
        staying.get_by_role("button", name="Run benchmark").click()
        _wait_for_outcome(staying, staying.locator(".js-plotly-plot").nth(5))
        _wait_idle(staying)
        _no_exception(staying)
        rows = ResultStore(database).rows()
        new = rows[~rows["id"].isin(before)]
        assert list(new["batch_size"]) == [5]  # only the staying session's run stored
    finally:
        for context in contexts:
            context.close()

"""A visit in Chromium, timed from the navigation's start (a `goto`, a click) to idle: the probe
every page gets, the app's pages as a visitor sees them, and the moves the browser benchmarks make.

The probe stamps marks in the page's own clock, so polling does not delay them. Idle is judged as
Streamlit's e2e tests judge it (script state "notRunning", no status widget), with the page
connected, no skeleton or warm-up placeholder, the server's log saying the page's run ended (a busy
server's run can reach the browser in one render, never showing "running"), and all of that
unchanged for 500 ms; idle time is when that began.
"""

from __future__ import annotations

import dataclasses
import re
import time
from pathlib import Path

from playwright import sync_api

from benchmarks.serving.browser import VIEWPORT, RunEnd, confirm_button
from hierlstm.app.pages import PAGES
from hierlstm.i18n import t

PAGE_TIMEOUT_S = 120
RUN_TIMEOUT_S = 300
IDLE_HOLD_MS = 500

# Figures count only once the expected title is there, so that after `reset(title)` the previous
# page's charts are not taken for the new page's.
PROBE = """(() => {
  if (window.__probe) return;
  const shown = selector => Array.from(document.querySelectorAll(selector)).filter(element =>
    !element.closest('[data-stale="true"]') && element.checkVisibility()
    && element.getBoundingClientRect().height > 0);
  const probe = window.__probe = {};
  probe.reset = (title = null) => Object.assign(probe,
    {marks: {}, titles: {}, expected: title, idleSince: null, state: null});
  probe.tick = () => {
    const now = Date.now(), marks = probe.marks;
    const mark = name => { if (!(name in marks)) marks[name] = now; };
    const app = document.querySelector('[data-testid="stApp"]');
    const heading = shown('[data-testid="stMain"] h1')[0];
    const title = heading ? heading.innerText.trim() : '';
    if (title && !(title in probe.titles)) probe.titles[title] = now;
    if (shown('[data-testid="stSidebar"] [data-testid="stForm"]').length) {
      mark('sidebar_form');  // its widgets may still be grey skeletons: drawn is when none is
      if (!document.querySelector('[data-testid="stSidebar"] [data-testid="stSkeleton"]')) {
        mark('sidebar');
      }
    }
    // The warm-up placeholder's empty chart is not the page's figure.
    const plots = shown('[data-testid="stMain"] .js-plotly-plot').filter(element =>
      !element.closest('[class*="st-key-warmup-placeholder"]')).length;
    const tables = shown('[data-testid="stMain"] [data-testid="stDataFrame"], '
      + '[data-testid="stMain"] [data-testid="stTable"]').length;
    const arrived = probe.expected === null
      || Object.keys(probe.titles).some(seen => seen.startsWith(probe.expected));
    if (arrived && plots) mark('plot');
    if (arrived && tables) mark('table');
    const state = {
      script: app && app.getAttribute('data-test-script-state'),
      connection: app && app.getAttribute('data-test-connection-state'),
      title, plots, tables,
      skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length,
      status_widget: shown('[data-testid="stStatusWidget"]').length,
      elements: document.querySelectorAll('[data-testid="stElementContainer"]').length,
      // A server still warming up draws the frame and a placeholder while the page waits.
      warming_up: document.querySelector('[class*="st-key-warmup-placeholder"]') !== null,
    };
    const idle = state.script === 'notRunning' && state.connection === 'CONNECTED'
      && !state.status_widget && !state.skeletons && !state.warming_up;
    if (!idle) probe.idleSince = null;
    else if (probe.idleSince === null || JSON.stringify(state) !== JSON.stringify(probe.state)) {
      probe.idleSince = now;
    }
    probe.state = state;
  };
  // The last script or style sheet fetched since `since` (ms since the epoch), loaded when.
  const lastAsset = since => Math.max(0, ...performance.getEntriesByType('resource')
    .filter(entry => /[.](js|css)([?#]|$)/.test(entry.name)
      && performance.timeOrigin + entry.startTime >= since)
    .map(entry => performance.timeOrigin + entry.responseEnd)) || null;
  probe.report = since => {
    probe.tick();
    return {now: Date.now(), marks: probe.marks, titles: probe.titles, idleSince: probe.idleSince,
      lastAsset: lastAsset(since), state: probe.state};
  };
  performance.setResourceTimingBufferSize(2000);
  probe.reset();
  setInterval(probe.tick, 20);
})()"""


@dataclasses.dataclass(frozen=True)
class Page:
    name: str  # in hierlstm.app.pages, and in the server's log when its run ends
    url_path: str  # "" for the default page
    title: str  # the page's h1
    link: str  # its label in the top navigation
    run_label: str  # its sidebar Run button


@dataclasses.dataclass
class Visit:
    """What one navigation showed, in seconds from its start; None: not seen before the
    timeout (or, for the figure, the page draws none)."""

    title_s: float | None = None
    sidebar_s: float | None = None  # the settings form drawn: no skeleton left in the sidebar
    sidebar_form_s: float | None = None  # the form itself, its widgets possibly skeletons
    figure_s: float | None = None
    figure: str = "none"  # "plot", "table" or "none"
    idle_s: float | None = None
    assets_s: float | None = None  # the last JS or CSS file the visit fetched, loaded
    waiting_for: dict | None = None  # not idle in time: what the probe last saw
    note: str = ""


# --- the app's pages ---------------------------------------------------------------------------


def app_pages(lang: str = "en") -> list[Page]:
    """The app's pages, in navigation order, in `lang`; the first is served at the root."""
    return [
        Page(
            name=entry.name,
            url_path="" if index == 0 else entry.url_path,
            title=t(f"{entry.heading}.title", lang),
            link=t(entry.title, lang),
            run_label=t(entry.action.label, lang),
        )
        for index, entry in enumerate(PAGES)
    ]


# --- the browser -------------------------------------------------------------------------------


def new_page(browser):
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(30_000)
    context.add_init_script(PROBE)
    return context.new_page()


def reset(tab, title: str) -> None:
    """The probe starts over (an in-page switch or a run), expecting `title`."""
    tab.evaluate("title => window.__probe && window.__probe.reset(title)", title)


def _report(tab, since_ms: float) -> dict | None:
    try:
        return tab.evaluate(
            "since => window.__probe ? window.__probe.report(since) : null", since_ms
        )
    except sync_api.Error:  # the page is between documents
        return None


def watch(
    tab, started_ms, title, timeout_s, ended: RunEnd | None = None, on_title=None, outcome=None
) -> Visit:
    """Polls the probe until the page is idle with `title` and, given `ended`, its run's end is
    logged; or until the timeout. A question before a long run is answered yes. `on_title` is
    called once the title is seen. `outcome`, a locator of what the run draws when done: idle
    without it was another session's run of the page, and the next end is waited for."""
    visit, deadline, report, end_ms = Visit(), time.monotonic() + timeout_s, None, None
    while time.monotonic() < deadline:
        tab.wait_for_timeout(50)
        report = _report(tab, started_ms) or report
        if not (report and any(text.startswith(title) for text in report["titles"])):
            continue
        if on_title:
            on_title()
            on_title = None
        end_ms = ended.seen_ms() if ended else 0.0
        if end_ms is None:
            continue
        if ended and confirm_button(tab).count():
            confirm_button(tab).click()
            ended.restart()
            visit.note = "asked to confirm the run; confirmed"
            continue
        idle_ms = max(report["idleSince"] or float("inf"), end_ms)
        if report["now"] - idle_ms < IDLE_HOLD_MS:
            continue
        if ended and outcome is not None and not outcome.count():
            ended.skip()
            continue
        visit.idle_s = (idle_ms - started_ms) / 1000
        break
    else:
        state = report["state"] if report else None
        visit.waiting_for = {**(state or {}), "run_end_logged": end_ms is not None}
        note = f"not idle in {timeout_s} s (last seen: {visit.waiting_for})"
        visit.note = f"{visit.note}; {note}" if visit.note else note
    return _fill(visit, report, title, started_ms)


def _fill(visit: Visit, report: dict | None, title: str, started_ms: float) -> Visit:
    if not report:
        return visit
    marks = report["marks"]
    seconds = lambda ms: (ms - started_ms) / 1000  # noqa: E731
    titles = [ms for text, ms in report["titles"].items() if text.startswith(title)]
    visit.title_s = seconds(min(titles)) if titles else None
    visit.sidebar_s = seconds(marks["sidebar"]) if "sidebar" in marks else None
    visit.sidebar_form_s = seconds(marks["sidebar_form"]) if "sidebar_form" in marks else None
    visit.assets_s = seconds(report["lastAsset"]) if report["lastAsset"] else None
    for kind in ("plot", "table"):
        if kind in marks:
            visit.figure, visit.figure_s = kind, seconds(marks[kind])
            break
    return visit


def timed(tab, title, act, ended=None, timeout_s=PAGE_TIMEOUT_S, **watching) -> Visit:
    """`act()`, a goto or a click, timed from its start until idle on the page titled `title`;
    `ended`, a RunEnd made before the call; `watching`: watch's on_title and outcome."""
    started_ms = time.time() * 1000  # before the reset: no mark can precede the start
    reset(tab, title)
    act()
    return watch(tab, started_ms, title, timeout_s, ended, **watching)


def open_url(tab, url, title, ended=None, **options) -> Visit:
    """A `goto`, timed until idle; `options` are timed's."""
    goto = lambda: tab.goto(url, wait_until="commit", timeout=PAGE_TIMEOUT_S * 1000)  # noqa: E731
    return timed(tab, title, goto, ended, **options)


def open_page(tab, url: str, target: Page, log: Path, query="", **options) -> Visit:
    """`target` by its URL on the app at `url` (`query` without its "?"), timed until idle
    after its script run ended (`log`: the server's log); `options` are timed's."""
    address = f"{url}/{target.url_path}" + (f"?{query}" if query else "")
    return open_url(tab, address, target.title, RunEnd(log, target.name), **options)


def nav_link(tab, target: Page):
    label = re.compile(f"{re.escape(target.link)}$")  # after the icon's ligature text
    return tab.locator('[data-testid="stTopNavLink"]', has_text=label)


def click_link(tab, target: Page, log: Path, timeout_s=PAGE_TIMEOUT_S) -> Visit:
    """The in-app switch: the target's link in the top navigation."""
    return timed(
        tab, target.title, nav_link(tab, target).click, RunEnd(log, target.name), timeout_s
    )


def run_button(tab, target: Page):
    return tab.locator('[data-testid="stSidebar"]').get_by_role("button", name=target.run_label)


def press_run(tab, benchmark: Page, log: Path) -> Visit:
    """The sidebar's Run button on the page, with whatever settings the session has."""
    press = run_button(tab, benchmark).click
    visit = timed(tab, benchmark.title, press, RunEnd(log, benchmark.name), RUN_TIMEOUT_S)
    visit.title_s = visit.sidebar_s = visit.sidebar_form_s = None  # there before the click
    return visit

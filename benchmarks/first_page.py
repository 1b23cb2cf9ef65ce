"""Time to the first page: a fresh server's first visitors, every page, the default run.

What a visitor's Chromium sees of a fresh server: its first and second visitor, every page
opened by URL and by the top navigation, and the Benchmark page's default run.

    .venv/bin/python -m benchmarks.first_page [--rounds 1] [--port PORT] [--json PATH]
                                               [--screenshots DIR] [--profile-server]

Each round launches Chromium, then a fresh `streamlit run app.py` with its own results file and
lock folder (so no other run on the machine queues with it), and times the process start to the
first 200 from /_stcore/health (polled every 50 ms). Then, each time from the navigation's
start (the `goto` call or the click), it opens: the first visitor (right after the health
check), a second visitor (a new browser context), every page by its URL (in that second
context: its browser cache is warm, each `goto` is a new Streamlit session), every page by its
link in the top navigation (from the page before it in the app's order), and the Benchmark
page's Run button with the default settings. For each it notes when a probe script in the page
first saw:

- title: the page's `h1` in the main block, with the page's English title;
- sidebar: the sidebar's settings form, drawn (no grey skeleton left in the sidebar; the form
  itself, often still skeletons, is in the JSON as `sidebar_form_s`);
- first figure: a drawn plotly chart; a table where the page draws no chart (marked "table");
  "none" where it draws neither;
- idle: a script run seen (the page's `data-test-script-state` said "running", or its socket
  brought the run's `new_session` message) and over (the attribute "notRunning", connected, and
  the run's `script_finished` message received, if the socket brought one), no warm-up
  placeholder (`st-key-warmup-placeholder*`: the server is still warming up), no skeleton
  and no status widget left, and nothing of that changed for 500 ms (the time is when it
  started).

The probe stamps the page's own clock, so polling and screenshots do not delay the marks. Prints
one markdown table, the median over rounds with the min-max in brackets. The targets (issue 13):
a title within 2 s of the health check and idle within 5 s; a second visitor and every page
switch idle within 1 s; the default benchmark within 10 s.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import linecache
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright import sync_api
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks.browser import (
    ROOT,
    VIEWPORT,
    confirm_button,
    free_port,
    launch_chromium,
    own_store,
    start_server,
    stop,
    wait_healthy,
)
from benchmarks.common import header, markdown_table
from hierlstm.app.pages import PAGES
from hierlstm.i18n import t

PAGE_TIMEOUT_S = 120
RUN_TIMEOUT_S = 300
ROUND_TIMEOUT_S = 1800  # a last bound for what has none of its own (a hung page's evaluate)
IDLE_HOLD_MS = 500
COLUMNS = ("title s", "sidebar s", "first figure s", "idle s")

# Installed in every page before its scripts: marks, in the page's clock (ms since the epoch),
# when each thing was first seen. `reset(title)` starts over for an in-page switch or a run:
# figures count only once the expected title and a script run have been seen, so the previous
# page's charts, still there for a moment after the click, are not taken for the new page's.
PROBE = """(() => {
  if (window.__firstPage) return;
  const shown = selector => Array.from(document.querySelectorAll(selector)).filter(element =>
    !element.closest('[data-stale="true"]') && element.checkVisibility()
    && element.getBoundingClientRect().height > 0);
  const probe = {};
  probe.reset = (title = null) => Object.assign(probe,
    {marks: {}, titles: {}, expected: title, idleSince: null, signature: null});
  probe.tick = () => {
    const now = Date.now(), marks = probe.marks;
    const mark = name => { if (!(name in marks)) marks[name] = now; };
    const app = document.querySelector('[data-testid="stApp"]');
    const state = app && app.getAttribute('data-test-script-state');
    const connection = app && app.getAttribute('data-test-connection-state');
    const heading = shown('[data-testid="stMain"] h1')[0];
    const title = heading ? heading.innerText.trim() : '';
    if (title && !(title in probe.titles)) probe.titles[title] = now;
    if (state === 'running') { mark('running'); mark('running_sampled'); }
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
    const arrived = 'running' in marks && (probe.expected === null
      || Object.keys(probe.titles).some(seen => seen.startsWith(probe.expected)));
    if (arrived && plots) mark('plot');
    if (arrived && tables) mark('table');
    const skeletons = document.querySelectorAll('[data-testid="stSkeleton"]').length;
    const status = shown('[data-testid="stStatusWidget"]').length;
    const elements = document.querySelectorAll('[data-testid="stElementContainer"]').length;
    const signature = [state, connection, title, plots, tables, skeletons, status, elements];
    // A server still warming up draws the page's frame and a placeholder while its script run
    // waits: not idle until the placeholder is gone (the page filled in).
    const warming = document.querySelector('[class*="st-key-warmup-placeholder"]') !== null;
    signature.push(warming);
    const idle = state === 'notRunning' && connection === 'CONNECTED' && !skeletons && !status
      && !warming;
    if (!idle) probe.idleSince = null;
    else if (probe.idleSince === null || signature.join('|') !== probe.signature) {
      probe.idleSince = now;
    }
    probe.signature = signature.join('|');
  };
  // The last script or style sheet fetched since `since` (ms since the epoch), loaded when.
  const lastAsset = since => Math.max(0, ...performance.getEntriesByType('resource')
    .filter(entry => /[.](js|css)([?#]|$)/.test(entry.name)
      && performance.timeOrigin + entry.startTime >= since)
    .map(entry => performance.timeOrigin + entry.responseEnd)) || null;
  probe.report = since => {
    probe.tick();
    return {now: Date.now(), marks: probe.marks, titles: probe.titles, idleSince: probe.idleSince,
      lastAsset: lastAsset(since), signature: probe.signature};
  };
  performance.setResourceTimingBufferSize(2000);
  probe.reset();
  window.__firstPage = probe;
  setInterval(probe.tick, 20);
  // A script run between two ticks (a light page's rerun while the main thread is busy) is
  // seen too: the attribute's changes are observed, not only sampled. Without it, such a run's
  // page was idle in every respect but never counted as idle (no "running" mark).
  new MutationObserver(records => {
    const ran = records.some(record => record.oldValue === 'running'
      || record.target.getAttribute('data-test-script-state') === 'running');
    if (ran && !('running_observed' in probe.marks)) probe.marks.running_observed = Date.now();
    if (ran && !('running' in probe.marks)) {
      probe.marks.running = Date.now();
      probe.idleSince = null;  // idle counts from after this run
    }
  }).observe(document, {subtree: true, attributes: true, attributeOldValue: true,
    attributeFilter: ['data-test-script-state']});
  // What the server said, as it arrived: each ForwardMsg's top-level fields (protobuf's wire
  // format), so a run is seen in the messages that make it, whatever the page rendered of it.
  // A server busy with another session's run sends a page switch's messages in one burst, and
  // React draws the whole run in one render: the attribute never says "running", and the
  // observer has nothing to see (a soak's stall, never idle, on a page fully drawn, whose socket
  // had brought the run's start and its end).
  const fields = data => {
    const bytes = new Uint8Array(data), found = [];
    let at = 0;
    const varint = () => {
      let value = 0, shift = 0, byte;
      do { byte = bytes[at++]; value += (byte & 0x7f) * 2 ** shift; shift += 7; }
      while (byte & 0x80 && at < bytes.length);
      return value;
    };
    while (at < bytes.length) {
      const key = varint(), wire = key % 8, field = Math.floor(key / 8);
      if (wire === 0) found.push([field, varint()]);
      else if (wire === 2) { found.push([field, null]); at += varint(); }
      else if (wire === 1) at += 8;
      else if (wire === 5) at += 4;
      else break;
    }
    return found;
  };
  const heard = data => {
    if (!(data instanceof ArrayBuffer)) return;
    const now = Date.now(), marks = probe.marks;
    marks.messages = (marks.messages || 0) + 1;
    for (const [field, value] of fields(data)) {
      if (field === NEW_SESSION) {
        if (!('run_started' in marks)) marks.run_started = now;
        if (!('running' in marks)) marks.running = now;  // again after a confirmation
      }
      if (field === SCRIPT_FINISHED && value !== FINISHED_EARLY) {
        marks.run_finished = now;
        probe.idleSince = null;  // idle counts from after the run's last message
      }
    }
  };
  const NativeSocket = window.WebSocket;
  window.WebSocket = class extends NativeSocket {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', event => heard(event.data));
    }
  };
})()"""
_FIELDS = ForwardMsg.DESCRIPTOR.fields_by_name
PROBE = (
    PROBE.replace("NEW_SESSION", str(_FIELDS["new_session"].number))
    .replace("SCRIPT_FINISHED", str(_FIELDS["script_finished"].number))
    .replace("FINISHED_EARLY", str(ForwardMsg.FINISHED_EARLY_FOR_RERUN))
)


@dataclasses.dataclass(frozen=True)
class Page:
    url_path: str  # "" for the default page
    title: str  # the page's h1 (English)
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
    note: str = ""


# --- the app's pages ---------------------------------------------------------------------------


def app_pages() -> list[Page]:
    """The app's pages, in navigation order, from `hierlstm.app.pages.PAGES`. Streamlit serves a
    page at its script's file name, and the default (first) page at the root."""
    return [
        Page(
            url_path="" if index == 0 else entry.name,
            title=t(f"{entry.heading}.title"),
            link=t(entry.title),
            run_label=t(entry.action.label),
        )
        for index, entry in enumerate(PAGES)
    ]


# --- the browser -------------------------------------------------------------------------------


def new_page(browser):
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(30_000)
    context.add_init_script(PROBE)
    return context.new_page()


def _report(page, since_ms: float) -> dict | None:
    try:
        return page.evaluate(
            "since => window.__firstPage ? window.__firstPage.report(since) : null", since_ms
        )
    except sync_api.Error:  # the page is between documents
        return None


def watch(page, started_ms: float, title: str, timeout_s: float, on_title=None) -> Visit:
    """Polls the probe until idle after the expected title and a script run (or the timeout).
    `started_ms`: the navigation's start, ms since the epoch. `on_title` is called once, when
    the title is first seen (a screenshot of what the visitor sees then)."""
    visit, deadline, titled = Visit(), time.monotonic() + timeout_s, False
    report = None
    while time.monotonic() < deadline:
        page.wait_for_timeout(50)
        report = _report(page, started_ms) or report
        if not report:
            continue
        seen = [ms for text, ms in report["titles"].items() if text.startswith(title)]
        if seen and not titled:
            titled = True
            if on_title:
                on_title()
        if seen and "running" in report["marks"] and confirm_button(page).count():
            confirm_button(page).click()
            page.evaluate("() => { delete window.__firstPage.marks.running; }")
            visit.note = "asked to confirm the run; confirmed"
            continue
        since = report["idleSince"]
        ready = max(seen + [report["marks"].get("running", float("inf"))]) if seen else None
        if ready is not None and since is not None and since >= ready:
            if report["now"] - since >= IDLE_HOLD_MS:
                visit.idle_s = (since - started_ms) / 1000
                break
    else:
        # What was still pending: script state|connection|title|plots|tables|skeletons|status
        # widgets|elements|warming, as the probe last saw it.
        pending = report["signature"] if report else "no report"
        visit.note = (visit.note + "; " if visit.note else "") + (
            f"not idle in {timeout_s} s (last seen: {pending})"
        )
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


def open_url(page, url: str, title: str, on_title=None, timeout_s=PAGE_TIMEOUT_S) -> Visit:
    started_ms = time.time() * 1000
    page.goto(url, wait_until="commit", timeout=PAGE_TIMEOUT_S * 1000)
    return watch(page, started_ms, title, timeout_s, on_title)


def click_link(page, target: Page, timeout_s=PAGE_TIMEOUT_S) -> Visit:
    """The in-app switch: the target's link in the top navigation."""
    label = re.compile(f"{re.escape(target.link)}$")  # after the icon's ligature text
    link = page.locator('[data-testid="stTopNavLink"]', has_text=label)
    started_ms = time.time() * 1000  # before the reset: no mark can precede the start
    page.evaluate("title => window.__firstPage.reset(title)", target.title)
    link.click()
    return watch(page, started_ms, target.title, timeout_s)


def press_run(page, benchmark: Page) -> Visit:
    """The sidebar's Run button on the page, with whatever settings the session has."""
    button = page.locator('[data-testid="stSidebar"]').get_by_role(
        "button", name=benchmark.run_label
    )
    started_ms = time.time() * 1000
    page.evaluate("title => window.__firstPage.reset(title)", benchmark.title)
    button.click()
    visit = watch(page, started_ms, benchmark.title, RUN_TIMEOUT_S)
    visit.title_s = visit.sidebar_s = visit.sidebar_form_s = None  # there before the click
    return visit


# --- one round ---------------------------------------------------------------------------------


def _shooter(page, folder: Path | None, name: str):
    """shot(moment)() saves the viewport (what the visitor sees) as folder/name-moment.png."""

    def shot(moment: str):
        def take() -> None:
            if folder:
                folder.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(folder / f"{name}-{moment}.png"))

        return take

    return shot


class Rows:
    """The round's visits by row. With a profiled server each row also ends a profile phase
    (SIGUSR1), so the phases line up with `labels`."""

    def __init__(self, process: subprocess.Popen, profiled: bool):
        self.visits: dict[str, Visit] = {}
        self.labels: list[str] = []
        self.process, self.profiled = process, profiled

    def add(self, label: str, visit: Visit | None) -> None:
        if visit is not None:
            self.visits[label] = visit
        self.labels.append(label)
        if self.profiled:
            self.process.send_signal(signal.SIGUSR1)
            time.sleep(0.05)  # the sampler looks every 10 ms


def visit_pages(browser, url: str, pages: list[Page], rows: Rows, shot) -> None:
    """After the first visitor: a second one, every page by URL, every page by its link, the
    default benchmark run; all in one new context (one visitor, a new session per `goto`)."""
    page = new_page(browser)
    try:
        rows.add("second visitor", open_url(page, url + "/", pages[0].title))
        for target in pages:
            visit = open_url(page, f"{url}/{target.url_path}", target.title)
            rows.add(f"URL: {target.link}", visit)
        for previous, target in zip([pages[-1], *pages[:-1]], pages, strict=True):
            rows.add(f"link: {target.link} (from {previous.link})", click_link(page, target))
        benchmark = next(target for target in pages if target.url_path == "benchmark")
        open_url(page, f"{url}/benchmark", benchmark.title)
        rows.add("(the Benchmark page opened for the run)", None)
        rows.add("default benchmark (from Run)", press_run(page, benchmark))
        shot(page, "default-benchmark")("idle")()
    finally:
        page.context.close()


def _phases(folder: Path, labels: list[str]) -> dict[str, dict]:
    path = folder / "profile.json"
    if not path.exists():  # the server was killed before it could write it
        return {}
    phases = json.loads(path.read_text())
    return dict(zip([*labels, "(after the last visit)"], phases, strict=False))


def _round_timeout(_number, _frame):
    raise TimeoutError(f"the round took over {ROUND_TIMEOUT_S} s")


def measure_round(number: int, pages: list[Page], args) -> dict:
    """A fresh Chromium and server: the health-check time and every row's visit."""
    folder = Path(tempfile.mkdtemp(prefix="first-page-"))
    try:
        return _measure(folder, number, pages, args)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _measure(folder: Path, number: int, pages: list[Page], args) -> dict:
    port = free_port(args.port or 0)
    url = f"http://127.0.0.1:{port}"
    shots = Path(args.screenshots) if args.screenshots else None
    shot = lambda page, name: _shooter(page, shots, f"round{number}-{name}")  # noqa: E731
    process = None
    signal.signal(signal.SIGALRM, _round_timeout)
    signal.alarm(ROUND_TIMEOUT_S)
    try:
        with sync_api.sync_playwright() as playwright:
            browser = launch_chromium(playwright)
            try:
                first = new_page(browser)  # ready before the server: the visit starts at once
                started = time.perf_counter()
                profile = folder / "profile.json" if args.profile_server else None
                process = start_server(
                    port, folder / "server.log", own_store(folder), profile=profile
                )
                rows = Rows(process, args.profile_server)
                health_s = wait_healthy(url, process, started)
                healthy_at = time.perf_counter()
                first_shot = shot(first, "first-visitor")
                gap_s = time.perf_counter() - healthy_at  # health check to the goto call
                visit = open_url(first, url + "/", pages[0].title, first_shot("title"))
                first_shot("idle")()
                rows.add("first visitor", visit)
                first.context.close()
                visit_pages(browser, url, pages, rows, shot)
            finally:
                browser.close()
    finally:
        signal.alarm(0)
        if process is not None:
            stop(process)
        if shots and (folder / "server.log").exists():
            shots.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / "server.log", shots / f"round{number}-server.log")
    result = {
        "health_s": health_s,
        "health_to_first_title_s": None if visit.title_s is None else gap_s + visit.title_s,
        "rows": {label: dataclasses.asdict(row) for label, row in rows.visits.items()},
    }
    if args.profile_server:
        result["profile"] = _phases(folder, rows.labels)
    return result


# --- the table ---------------------------------------------------------------------------------


def _cell(rounds: list[dict], label: str, field: str) -> str:
    """The median over rounds, [min-max] when there are several; "none" for a page that drew
    no figure, "-" for what the row does not measure, "timeout" for what was not seen."""
    visits = [round_["rows"][label] for round_ in rounds]
    if field == "figure_s" and all(visit["figure"] == "none" for visit in visits):
        return "none"
    values = [visit[field] for visit in visits if visit[field] is not None]
    if not values:
        return "-" if label.startswith("default benchmark") else "timeout"
    text = f"{statistics.median(values):.2f}"
    if len(values) > 1:
        text += f" [{min(values):.2f}-{max(values):.2f}]"
    missing = len(visits) - len(values)
    if missing:  # a figure not seen is a page that drew none that time, not a timeout
        text += f" ({missing} {'none' if field == 'figure_s' else 'timeout'})"
    if field == "figure_s" and any(visit["figure"] == "table" for visit in visits):
        text += " table"
    return text


def _spread(values: list[float | None]) -> str:
    values = [value for value in values if value is not None]
    if not values:
        return "not seen"
    text = f"{statistics.median(values):.2f} s"
    return text + (f" [{min(values):.2f}-{max(values):.2f}]" if len(values) > 1 else "")


def table(rounds: list[dict]) -> str:
    fields = ("title_s", "sidebar_s", "figure_s", "idle_s")
    rows = [
        (label, *(_cell(rounds, label, field) for field in fields)) for label in rounds[0]["rows"]
    ]
    return markdown_table(("", *COLUMNS), rows)


def notes(rounds: list[dict]) -> list[str]:
    return sorted(
        {
            f"{label}: {visit['note']}"
            for round_ in rounds
            for label, visit in round_["rows"].items()
            if visit["note"]
        }
    )


def _top(seconds: dict[str, float], count: int, source: bool) -> str:
    """The `count` largest entries, "name s"; an app line with its source text."""
    parts = []
    for name, value in list(seconds.items())[:count]:
        if source:
            path, number = name.rsplit(":", 1)
            name += f" `{linecache.getline(str(ROOT / path), int(number)).strip()[:60]}`"
        parts.append(f"{name} {value:.2f} s")
    return "; ".join(parts)


def profile_table(round_: dict) -> str:
    """Per row: its idle time beside the script threads' busy seconds (the app lines and
    libraries they were in) and when the last JS or CSS file it fetched had loaded."""
    rows = []
    for label, visit in round_["rows"].items():
        phase = round_["profile"].get(label, {"busy_s": 0.0, "lines": {}, "libraries": {}})
        busy = phase["busy_s"] >= 0.05
        rows.append(
            (
                label,
                "timeout" if visit["idle_s"] is None else f"{visit['idle_s']:.2f}",
                f"{phase['busy_s']:.2f}",
                "-" if visit["assets_s"] is None else f"{visit['assets_s']:.2f}",
                _top(phase["lines"], 3, source=True) if busy else "",
                _top(phase["libraries"], 3, source=False) if busy else "",
            )
        )
    columns = ("", "idle s", "script busy s", "last JS/CSS loaded s", "app lines", "libraries")
    return markdown_table(columns, rows)


def git_commit() -> str:
    def git(*arguments):
        return subprocess.run(
            ["git", *arguments], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + (" (with uncommitted changes)" if git("status", "--porcelain") else "")


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--rounds", type=int, default=1, help="fresh servers; medians printed")
    parser.add_argument("--port", type=int, help="the server's port (default: a free one)")
    parser.add_argument("--json", help="also write every round's numbers to this file")
    parser.add_argument("--screenshots", help="folder for screenshots and each server's log")
    parser.add_argument(
        "--profile-server",
        action="store_true",
        help="run each server under benchmarks.server_profile (a stack sampler) and print "
        "where round 1's script runs spent their time, row by row",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, not {args.rounds}")
    if args.port:
        try:
            free_port(args.port)
        except ValueError as error:
            parser.error(str(error))
    pages = app_pages()
    # A terminated run still stops its server and browser: the `finally` blocks run on exit.
    signal.signal(signal.SIGTERM, lambda _number, _frame: sys.exit(143))
    load_before = load_average()
    rounds = []
    for number in range(1, args.rounds + 1):
        rounds.append(measure_round(number, pages, args))
        print(f"round {number} done", file=sys.stderr, flush=True)
    load_after = load_average()
    lines = [
        header("First page: a fresh server's first visitors, every page, the default run"),
        f"- git commit: {git_commit()}; CPUs: {os.cpu_count()} "
        f"({len(os.sched_getaffinity(0))} usable)",
        f"- load average (1, 5, 15 min): {load_before} before, {load_after} after",
        f"- rounds: {args.rounds} (a fresh server and Chromium each); cells: median [min-max]",
        f"- server start to health check: {_spread([r['health_s'] for r in rounds])}",
        "- health check to the first visitor's title: "
        + _spread([r["health_to_first_title_s"] for r in rounds]),
        "",
        table(rounds),
    ]
    if notes(rounds):
        lines += ["", *(f"- {note}" for note in notes(rounds))]
    if args.profile_server:
        lines += ["", "Where the script runs spent their time (round 1, sampled):", ""]
        lines.append(profile_table(rounds[0]))
    print("\n".join(lines))
    if args.json:
        document = {"pages": [dataclasses.asdict(page) for page in pages], "rounds": rounds}
        document |= {"load_before": load_before, "load_after": load_after}
        document |= {"commit": git_commit(), "cpus": os.cpu_count()}
        Path(args.json).write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()

"""Soak: many visitors for minutes on one server, a CLI loop and a second server beside them.

    .venv/bin/python -m benchmarks.soak [--sessions 4] [--minutes 10] [--seed N] [--port 8700]
                                        [--cli-every 30] [--warmup full] [--artifacts DIR]
                                        [--json PATH]

What a demo that runs all afternoon meets, modelled on Streamlit's own Playwright load tests
(real browser sessions; the server's RSS, CPU and threads every 500 ms; load and rerun times at
p50/p95/p99). In one temporary data folder (XDG_DATA_HOME, HIERLSTM_DB, HIERLSTM_LOCK_DIR):

- server A on `--port` and server B on the next port (`benchmarks.browser.start_server`), both on
  the same results file and device locks;
- `--sessions` visitors, each its own process and Chromium, each waiting for a server to be
  warm and then walking at random (seeded; the seed is printed) for `--minutes`: every other
  move a page of its share of the tour (every page in both languages by URL, Chinese first)
  until it is done; each kind of move once; then, by weight, pages by URL (with and without
  settings, in either language, one in ten on server B) and by the top navigation, the
  sidebar's language switch, setting changes, tiny benchmark runs with Run pressed once or
  twice (a double click), a run abandoned by closing its tab, and the Results page's CSV and
  JSON exports (read back);
- a CLI loop: `python -m hierlstm bench` at a tiny size every `--cli-every` seconds, from when
  the first visitor has found server A warm.

Every visit is timed with first_page.py's probe, from the navigation's start to idle. A visit
not idle within 20 s is a stall (what the probe last saw is kept; the visit is then given 100 s
more to see whether it recovers); a run not finished within first_page's run timeout is one too.
After each visit the page's exception elements and error alerts are read; at the end both
servers' logs are read for tracebacks, and the results file's rows are counted against the
runs that finished. Each kind of run has its own time steps, so its rows can be told apart: the
app's finished runs (4-6, each stores one row per variant, as its "stored" line says), the
CLI's (7) and the abandoned ones (30: whatever they stored before the tab closed is reported,
not checked).

Prints a markdown report; writes the samples (CSV), their plot (HTML) and every step (JSON) to
`--artifacts`. Exits 1 when a correctness target fails: a stall, an exception element or error
alert, a traceback in a server log or the CLI's output, a step the walk could not take, or rows
stored that differ from the runs finished. RSS (within +-50 MB after the first 5 minutes) and
the p95 page switch (<= 1.5 s) are reported against their targets, not in the exit status:
they measure the machine as much as the app.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import csv
import dataclasses
import io
import json
import math
import multiprocessing
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from playwright import sync_api

from benchmarks import first_page
from benchmarks.browser import (
    ROOT,
    SERVER_START_TIMEOUT_S,
    free_port,
    launch_chromium,
    own_store,
    start_server,
    wait_healthy,
)
from benchmarks.browser import stop as stop_server
from benchmarks.common import markdown_table
from hierlstm.i18n import LANGUAGES, MESSAGES, t

STALL_S = 20  # a page not idle by then is a stall
RECOVER_S = 100  # how much longer a stalled page is watched, to say whether it recovers
WARM_S = SERVER_START_TIMEOUT_S  # a session's first visit waits for the warm-up
RUN_S = first_page.RUN_TIMEOUT_S
LAST_RUN_S = 20  # a run takes seconds: none starts this close to the end
SAMPLE_S = 0.5
RSS_AFTER_S = 300
RSS_BAND_MB = 50
SWITCH_P95_S = 1.5
APP_TIME_STEPS = (4, 5, 6)
CLI_TIME_STEPS = 7
ABANDONED_TIME_STEPS = 30
TINY = {"repeats": 2, "warmup": 1}
ABANDONED = {"variants": "nested,folded", "batch_size": 8, "time_steps": ABANDONED_TIME_STEPS}
ABANDONED |= {"repeats": 20, "warmup": 1}
CLI_RUN = ("bench", "--variant", "folded", "--batch-size", "1", "--time-steps")
CLI_RUN += (str(CLI_TIME_STEPS), "--repeats", "2", "--warmup", "1")
# The walk's moves and their weights. A setting change is on a page whose button only applies.
MOVES = {"run": 12, "link": 30, "export": 7, "language": 8, "abandon": 3, "setting": 10, "url": 30}
SETTING_PAGES = ("", "results")
WAITING = [MESSAGES["run.waiting"][lang].split("(")[0].split("（")[0] for lang in LANGUAGES]
# Marks, in every page, whether a progress bar said the run waits for the device lock.
LOCK_PROBE = """(() => {
  if (window.__soak) return;
  const soak = window.__soak = {waited: false};
  const waiting = WAITING;
  setInterval(() => {
    for (const bar of document.querySelectorAll('[data-testid="stProgress"]')) {
      if (waiting.some(text => bar.innerText.includes(text))) soak.waited = true;
    }
  }, 100);
})()""".replace("WAITING", json.dumps(WAITING))
FAILED_PAGE = [MESSAGES["page.failed"][lang].split("{")[0] for lang in LANGUAGES]
IDLE_FIRST = "idle with no outcome yet "  # a run's page, before its run started
SIGNATURE = ("script", "connection", "title", "plots", "tables", "skeletons", "status widgets")
SIGNATURE += ("elements", "warming up")


# --- the pages in either language --------------------------------------------------------------


def _key(english: str, prefix: str = "", suffix: str = "") -> str:
    """The catalogue key of an English text, among keys of one kind ("Profile" is both a link,
    page.profile, and a Run label, run.profile)."""
    return next(
        key
        for key, message in MESSAGES.items()
        if message["en"] == english and key.startswith(prefix) and key.endswith(suffix)
    )


def localized(page: first_page.Page, lang: str) -> first_page.Page:
    """The page's title, link and Run label in `lang` (first_page reads them in English)."""
    return dataclasses.replace(
        page,
        title=t(_key(page.title, suffix=".title"), lang),
        link=t(_key(page.link, prefix="page."), lang),
        run_label=t(_key(page.run_label, prefix="run."), lang),
    )


def stored_pattern(lang: str) -> re.Pattern:
    """The Benchmark page's "N result(s) stored in PATH." line, N captured."""
    before, after = MESSAGES["bench.stored"][lang].split("{path}")[0].split("{count}")
    return re.compile(re.escape(before) + r"(\d+)" + re.escape(after))


# --- one visitor ------------------------------------------------------------------------------


@dataclasses.dataclass
class Step:
    session: int
    number: int
    kind: str  # url, link, language, setting, run, abandon, export; "warm" for the first visit
    page: str  # the url path, "" for the default page
    lang: str
    server: str  # "A" or "B"
    at_s: float  # since the soak's start
    seconds: float | None = None  # start to idle (a run: press to idle)
    stalled: bool = False
    waiting_for: dict | None = None  # what the probe last saw of a stalled page
    recovered_s: float | None = None  # a stalled page idle after all, when
    errors: list[str] = dataclasses.field(default_factory=list)  # exception elements, alerts
    failure: str = ""  # the step could not be taken (a Playwright error)
    pressed: str = ""  # a run: "once" or "twice"
    expected: int | None = None  # a run: the rows it should store
    stored: int | None = None  # a run: the rows its page said it stored
    lock_wait: bool = False
    run_seen_by: str = ""  # what first saw the step's script run (see _run_seen_by)
    heard: dict | None = None  # what the page's socket brought after the step's start
    note: str = ""


def _waiting_for(note: str) -> dict:
    """first_page's "not idle in N s (last seen: a|b|...)" as named fields."""
    seen = note.rsplit("last seen: ", 1)[-1].rstrip(")")
    return dict(zip(SIGNATURE, seen.split("|"), strict=False)) if "|" in seen else {"note": note}


def _run_seen_by(marks: dict) -> str:
    """Which of first_page's probes saw a step's script run, from its marks: "tick" (its 20 ms
    sample of the script-state attribute), "observer" (the attribute's change, between two
    ticks) or "socket" (only the run's messages: the page drew the run in one render, so the
    attribute never said running); "" for none. Before the observer and the socket, a visit
    seen by neither of them never counted as idle: a stall."""
    if "running_sampled" in marks:
        return "tick"
    if "running_observed" in marks:
        return "observer"
    return "socket" if "run_started" in marks else ""


def _heard(marks: dict) -> dict:
    """What the page's socket brought since the step's start (first_page's probe reads the
    server's messages off it): how many messages, and whether a script run started and
    finished in them."""
    return {
        "messages": marks.get("messages", 0),
        "run_started": "run_started" in marks,
        "run_finished": "run_finished" in marks,
    }


class Visitor:
    """One session's walk: one Chromium, one tab (and a second one for an abandoned run)."""

    def __init__(self, number: int, browser, urls: dict, rng: random.Random, log: Path, start):
        self.number, self.browser, self.urls, self.rng = number, browser, urls, rng
        self.log, self.start = log, start
        self.pages = first_page.app_pages()
        self.page = self._new_tab()
        self.current: first_page.Page | None = None  # where the tab is, and in which language
        self.lang, self.server, self.steps, self.variants = "en", "A", 0, ""
        self.untoured: list[tuple[first_page.Page, str]] = []  # (page, language) to visit
        self.first: list[str] = []  # the kinds of move still to make once, last first
        self.moves, self.kind = 0, ""

    def _new_tab(self):
        tab = first_page.new_page(self.browser)
        tab.context.add_init_script(LOCK_PROBE)
        return tab

    def _step(self, kind: str, target: first_page.Page, lang: str, server: str) -> Step:
        self.steps += 1
        at = time.monotonic() - self.start
        return Step(self.number, self.steps, kind, target.url_path, lang, server, round(at, 2))

    def _record(self, step: Step) -> None:
        with open(self.log, "a") as log:
            log.write(json.dumps(dataclasses.asdict(step)) + "\n")

    def _settle(self, step: Step, visit: first_page.Visit, started_ms: float, title: str):
        """The visit's idle time; a stall's last state, and whether it recovers; the page's
        exception elements and error alerts."""
        step.seconds = visit.idle_s
        if visit.note:
            step.note = visit.note
        if visit.idle_s is None:
            step.stalled, step.waiting_for = True, _waiting_for(visit.note)
            with contextlib.suppress(sync_api.Error):  # what the visitor saw at 20 s
                shot = self.log.with_name(f"stall-{self.number}-{step.number}.png")
                self.page.screenshot(path=str(shot), timeout=10_000)
            later = first_page.watch(self.page, started_ms, title, RECOVER_S)
            step.recovered_s = later.idle_s
        marks = self.page.evaluate("() => window.__firstPage ? window.__firstPage.marks : {}")
        step.run_seen_by, step.heard = _run_seen_by(marks), _heard(marks)
        step.errors += self._errors(self.page)

    @staticmethod
    def _errors(tab) -> list[str]:
        found = []
        for selector in ('[data-testid="stException"]', '[data-testid="stAlertContentError"]'):
            found += [text.strip()[:400] for text in tab.locator(selector).all_inner_texts()]
        return found

    def _query(self, lang: str, settings: bool) -> str:
        values = {}
        if settings:
            values = {"variants": self.rng.choice(["nested", "folded", "nested,folded"])}
            values |= {"batch_size": self.rng.randint(1, 4)}
            values |= {"time_steps": self.rng.choice(APP_TIME_STEPS), **TINY}
        if lang != "en":
            values["lang"] = lang
        self.variants = values.get("variants", "")  # what a run pressed next will time
        return "&".join(f"{name}={value}" for name, value in values.items())

    def visit_url(self, target, lang, settings, server="A", kind="url", timeout_s=STALL_S):
        step = self._step(kind, target, lang, server)
        shown = localized(target, lang)
        query = self._query(lang, settings)
        url = f"{self.urls[server]}/{target.url_path}" + (f"?{query}" if query else "")
        started_ms = time.time() * 1000
        visit = first_page.open_url(self.page, url, shown.title, timeout_s=timeout_s)
        self.current, self.lang, self.server = target, lang, server
        self._settle(step, visit, started_ms, shown.title)
        return step

    def click_link(self, target) -> Step:
        step = self._step("link", target, self.lang, self.server)
        shown = localized(target, self.lang)
        started_ms = time.time() * 1000
        visit = first_page.click_link(self.page, shown, timeout_s=STALL_S)
        self.current = target
        self._settle(step, visit, started_ms, shown.title)
        return step

    def switch_language(self) -> Step:
        lang = self.rng.choice([other for other in LANGUAGES if other != self.lang])
        step = self._step("language", self.current, lang, self.server)
        shown = localized(self.current, lang)
        started_ms = time.time() * 1000  # before the reset: no mark can precede the start
        self.page.evaluate("title => window.__firstPage.reset(title)", shown.title)
        self.page.get_by_role("combobox", name="Language · 语言").click()
        self.page.get_by_role("option", name=LANGUAGES[lang]).click()
        visit = first_page.watch(self.page, started_ms, shown.title, STALL_S)
        self.lang = lang
        self._settle(step, visit, started_ms, shown.title)
        return step

    def change_setting(self) -> Step:
        """Time steps or batch size changed in the form; its button applies (no timing run)."""
        step = self._step("setting", self.current, self.lang, self.server)
        shown = localized(self.current, self.lang)
        name = self.rng.choice(["control.time_steps", "control.batch_size"])
        value = self.rng.randint(4, 12) if name == "control.time_steps" else self.rng.randint(1, 8)
        sidebar = self.page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_role("spinbutton", name=t(name, self.lang)).fill(str(value))
        started_ms = time.time() * 1000
        self.page.evaluate("title => window.__firstPage.reset(title)", shown.title)
        sidebar.get_by_role("button", name=shown.run_label).click()
        visit = first_page.watch(self.page, started_ms, shown.title, STALL_S)
        self._settle(step, visit, started_ms, shown.title)
        return step

    def run(self) -> list[Step]:
        """A tiny benchmark in a new session, Run pressed once or twice (a double click)."""
        benchmark = next(page for page in self.pages if page.url_path == "benchmark")
        lang = self.rng.choice(list(LANGUAGES))
        opened = self.visit_url(benchmark, lang, settings=True)
        if opened.stalled:
            return [opened]
        step = self._step("run", benchmark, lang, "A")
        step.pressed = self.rng.choice(["once", "once", "twice"])
        step.expected = len(self.variants.split(","))
        shown = localized(benchmark, lang)
        button = self.page.locator('[data-testid="stSidebar"]').get_by_role(
            "button", name=shown.run_label
        )
        started_ms = time.time() * 1000
        self.page.evaluate("title => { window.__firstPage.reset(title); }", shown.title)
        self.page.evaluate("() => { window.__soak.waited = false; }")
        if step.pressed == "twice":
            button.dblclick()
        else:
            button.click()
        step.seconds, step.stored, step.note = self._outcome(started_ms, shown.title, lang)
        if step.seconds is None:
            step.stalled, step.waiting_for = True, _waiting_for(step.note)
        step.lock_wait = bool(self.page.evaluate("() => window.__soak.waited"))
        step.errors += self._errors(self.page)
        return [opened, step]

    def _outcome(self, started_ms: float, title: str, lang: str):
        """(seconds to idle with the run's outcome drawn, rows its page says it stored, note).
        The page can be idle for over the probe's 500 ms before the run starts (after a double
        click): idle counts only once the "stored" line or an error is there."""
        deadline = time.monotonic() + RUN_S
        stored = self.page.locator('[data-testid="stMain"]').get_by_text(stored_pattern(lang))
        outcome = stored.or_(self.page.locator('[data-testid="stAlertContentError"]')).first
        visit, notes = first_page.watch(self.page, started_ms, title, RUN_S), []
        if visit.idle_s is not None and not outcome.count():
            notes.append(f"{IDLE_FIRST}{visit.idle_s:.2f} s after the press")
            try:
                outcome.wait_for(timeout=max(1.0, deadline - time.monotonic()) * 1000)
            except sync_api.TimeoutError:
                return None, None, f"{notes[0]}; no outcome in {RUN_S} s"
            notes.append(f"the outcome came {time.time() - started_ms / 1000:.1f} s after it")
            visit = first_page.watch(self.page, started_ms, title, deadline - time.monotonic())
        note = "; ".join([*notes, visit.note] if visit.note else notes)
        found = stored.all_inner_texts()
        count = int(stored_pattern(lang).search(found[0])[1]) if found else None
        return visit.idle_s, count, note

    def abandon(self) -> Step:
        """A longer run in a second tab, closed while it waits or runs."""
        benchmark = next(page for page in self.pages if page.url_path == "benchmark")
        step = self._step("abandon", benchmark, "en", "A")
        tab = self._new_tab()
        try:
            query = "&".join(f"{name}={value}" for name, value in ABANDONED.items())
            started_ms = time.time() * 1000
            url = f"{self.urls['A']}/benchmark?{query}"
            visit = first_page.open_url(tab, url, benchmark.title, timeout_s=STALL_S)
            step.seconds, step.note = visit.idle_s, visit.note
            if visit.idle_s is None:
                step.stalled, step.waiting_for = True, _waiting_for(visit.note)
            step.errors += self._errors(tab)
            tab.locator('[data-testid="stSidebar"]').get_by_role(
                "button", name=benchmark.run_label
            ).click()
            tab.wait_for_timeout(self.rng.uniform(500, 4000))
            bars = tab.locator('[data-testid="stProgress"]').all_inner_texts()
            step.note = f"closed {time.time() - started_ms / 1000:.1f} s after the goto" + (
                f", while: {bars[0][:80]}" if bars else ", no progress bar yet"
            )
        finally:
            tab.context.close()
        return step

    def export(self) -> Step:
        """The Results page's CSV and JSON downloads, read back."""
        results = next(page for page in self.pages if page.url_path == "results")
        step = self.visit_url(results, self.rng.choice(list(LANGUAGES)), settings=False)
        step.kind = "export"
        if step.stalled:
            return step
        counts = {}
        for key, kind in (("results.export.csv", "csv"), ("results.export.json", "json")):
            with self.page.expect_download(timeout=30_000) as download:
                self.page.get_by_role("button", name=t(key, step.lang)).click()
            text = Path(download.value.path()).read_text()
            try:
                rows = (
                    json.loads(text)["rows"]
                    if kind == "json"
                    else [*csv.DictReader(io.StringIO(text))]
                )
                counts[kind] = len(rows)
                if rows and "variant" not in rows[0]:
                    raise ValueError(f"no variant in its first row: {rows[0]}")
            except (ValueError, KeyError, TypeError) as error:
                step.errors.append(f"the {kind} export does not read back: {error}")
        # Each export read the store when the page was drawn: a row stored between the two
        # reads makes them differ by one, which is no error.
        step.note = ", ".join(f"{kind} {count} rows" for kind, count in counts.items())
        return step

    def _kind(self, remaining_s: float) -> str:
        """Each kind of move once (the sessions start at different kinds, so a short soak makes
        every kind), a tour visit between them while any is left; then by MOVES' weights. The
        first move is a kind, not a tour visit: the first session's is a run, which a loaded
        machine's slow tour visits would otherwise push into the last LAST_RUN_S, where no run
        starts (a half-minute soak then pressed none)."""
        self.moves += 1
        if self.untoured and not self.moves % 2:
            return "tour"
        kind = self.first.pop() if self.first else None
        kind = kind or self.rng.choices(list(MOVES), weights=list(MOVES.values()))[0]
        if kind in ("run", "abandon") and remaining_s < LAST_RUN_S:
            return "url"
        return kind if self.current is not None or kind not in ("link", "language") else "url"

    def move(self, remaining_s: float) -> list[Step]:
        kind = self.kind = self._kind(remaining_s)
        if kind == "tour":
            target, lang = self.untoured.pop(0)
            return [self.visit_url(target, lang, settings=self.rng.random() < 0.5)]
        if kind == "link":
            others = [page for page in self.pages if page != self.current]
            return [self.click_link(self.rng.choice(others))]
        if kind == "language":
            return [self.switch_language()]
        if kind == "setting":
            if self.current is None or self.current.url_path not in SETTING_PAGES:
                page = self.rng.choice([p for p in self.pages if p.url_path in SETTING_PAGES])
                opened = self.visit_url(page, self.lang, settings=False)
                return [opened] if opened.stalled else [opened, self.change_setting()]
            return [self.change_setting()]
        if kind == "run":
            return self.run()
        if kind == "abandon":
            return [self.abandon()]
        if kind == "export":
            return [self.export()]
        server = "B" if self.rng.random() < 0.1 else "A"
        lang = self.rng.choice(["en", "en", "zh"])
        return [self.visit_url(self.rng.choice(self.pages), lang, self.rng.random() < 0.5, server)]

    def walk(self, deadline: float, max_steps: int) -> None:
        while time.monotonic() < deadline and self.steps < max_steps:
            try:
                steps = self.move(deadline - time.monotonic())
            except sync_api.Error as error:  # a button or link that never came, a closed page
                step = self._step("failed", self.current or self.pages[0], self.lang, self.server)
                step.failure = f"{self.kind}: {str(error).splitlines()[0][:300]}"
                with contextlib.suppress(sync_api.Error):
                    shot = self.log.with_name(f"failed-{self.number}-{step.number}.png")
                    self.page.screenshot(path=str(shot), timeout=10_000)
                    step.note = f"screenshot {shot.name}"
                steps = [step]
                self.page.context.close()
                self.page, self.current = self._new_tab(), None
            for step in steps:
                self._record(step)


def session(number: int, count: int, urls: dict, seed: int, folder: Path, start: float, walk_s):
    """One visitor's process: its own Chromium; the warm visit, then `walk_s` of walk (with its
    share of the tour of every page in both languages)."""
    signal.signal(signal.SIGTERM, lambda _number, _frame: sys.exit(143))
    rng = random.Random(f"{seed}-{number}")
    log = folder / f"session-{number}.jsonl"
    with sync_api.sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            visitor = Visitor(number, browser, urls, rng, log, start)
            pages = visitor.pages
            # The last visitor waits for server B, the others for A (both warm up at once).
            servers = ["A"] if number < count - 1 else ["B"] if count > 1 else ["A", "B"]
            for server in servers:
                visitor._record(
                    visitor.visit_url(pages[0], "en", False, server, "warm", timeout_s=WARM_S)
                )
            # Chinese first: English is what the other browser tests draw.
            tour = [(page, lang) for lang in sorted(LANGUAGES, key="zh".__ne__) for page in pages]
            visitor.untoured = tour[number::count]  # the sessions share the tour
            offset = number * len(MOVES) // count
            visitor.first = [*MOVES][offset:] + [*MOVES][:offset]
            visitor.first.reverse()
            visitor.walk(time.monotonic() + walk_s, max_steps=int(10 * walk_s))
        finally:
            browser.close()


# --- beside the visitors: the server's samples, the CLI loop -----------------------------------


def _proc(pid: int) -> tuple[float, float, int]:
    """(RSS MB, CPU seconds, threads) of a live process, from /proc."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(status["VmRSS"].split()[0]) / 1024, cpu, int(status["Threads"])


def sample(servers: dict, start: float, stop: threading.Event, rows: list) -> None:
    """Every SAMPLE_S: each server's RSS, CPU (% of one core since the last sample), threads."""
    last = {}
    while not stop.wait(SAMPLE_S):
        now = time.monotonic()
        for name, process in servers.items():
            with contextlib.suppress(OSError, KeyError, IndexError, ValueError):
                rss, cpu, threads = _proc(process.pid)
                if name in last:
                    then, was = last[name]
                    percent = 100 * (cpu - was) / (now - then)
                    rows.append(
                        (round(now - start, 2), name, round(rss, 1), round(percent), threads)
                    )
                last[name] = (now, cpu)


def cli_loop(every_s, start, deadline, stop: threading.Event, runs: list, warm: Path):
    """`python -m hierlstm bench` at a tiny size every `every_s`, on the soak's results file,
    from when the file `warm` exists (a visitor found the server warm: the CLI's TensorFlow
    import does not slow the servers' own)."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    while not warm.exists() and time.monotonic() < deadline:
        if stop.wait(SAMPLE_S):
            return
    for _number in range(math.ceil((deadline - start) / every_s)):
        if stop.wait(every_s / 2) or time.monotonic() > deadline:
            return
        began = time.monotonic()
        command = [sys.executable, "-m", "hierlstm", *CLI_RUN]
        try:
            done = subprocess.run(
                command, cwd=ROOT, env=environment, capture_output=True, text=True, timeout=RUN_S
            )
            code, output = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as error:
            code, output = None, f"timed out after {RUN_S} s: {error.stderr or ''}"
        runs.append(
            {
                "at_s": round(began - start, 2),
                "seconds": round(time.monotonic() - began, 2),
                "returncode": code,
                "lock_waits": output.count("waiting for another run"),
                "output": output[-3000:] if code != 0 or "Traceback" in output else "",
            }
        )
        if stop.wait(every_s / 2):
            return


# --- the report --------------------------------------------------------------------------------


ANSI = re.compile(r"\x1b\[[0-9;]*m")
BOX = " │╭╰─"  # Streamlit draws an uncaught exception's traceback in a box (rich)


def tracebacks(text: str) -> list[str]:
    """Every traceback in a log, plain or in Streamlit's box: from its first line to the
    exception's line (chained ones included)."""
    found, lines, index = [], ANSI.sub("", text).splitlines(), 0
    while index < len(lines):
        if "Traceback (most recent call last)" not in lines[index]:
            index += 1
            continue
        block = [lines[index]]
        index += 1
        while index < len(lines):
            line = lines[index]
            block.append(line)
            index += 1
            if line and line[0] not in BOX and "Traceback (most recent call last)" not in line:
                chained = lines[index : index + 3]
                if not any(part.startswith(("During handling", "The above")) for part in chained):
                    break
        found.append("\n".join(block))
    return found


def percentiles(values: list[float]) -> str:
    if not values:
        return "-"
    p50, p95, p99 = np.percentile(values, [50, 95, 99])
    return f"{p50:.2f} / {p95:.2f} / {p99:.2f} ({len(values)})"


def rows_by_kind(database: Path) -> dict[str, int]:
    from hierlstm.results.store import ResultStore

    steps = ResultStore(database).rows()["time_steps"].astype(int)
    return {
        "app": int(steps.isin(APP_TIME_STEPS).sum()),
        "cli": int((steps == CLI_TIME_STEPS).sum()),
        "abandoned": int((steps == ABANDONED_TIME_STEPS).sum()),
        "other": int((~steps.isin([*APP_TIME_STEPS, CLI_TIME_STEPS, ABANDONED_TIME_STEPS])).sum()),
    }


def rss_band(samples: list, after_s: float) -> dict | None:
    """Server A's RSS from the first sample at `after_s` on: its value there, the range after."""
    later = [rss for at, name, rss, _cpu, _threads in samples if name == "A" and at >= after_s]
    if not later:
        return None
    return {"at_start_mb": later[0], "min_mb": min(later), "max_mb": max(later), "last": later[-1]}


def plot(samples: list, folder: Path, stem: str) -> Path:
    from plotly.subplots import make_subplots

    figure = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.05)
    for name in sorted({row[1] for row in samples}):
        mine = [row for row in samples if row[1] == name]
        times = [row[0] for row in mine]
        for index, (label, column) in enumerate((("RSS MB", 2), ("CPU %", 3), ("threads", 4))):
            figure.add_scatter(
                x=times,
                y=[row[column] for row in mine],
                name=f"server {name}",
                legendgroup=name,
                showlegend=index == 0,
                row=index + 1,
                col=1,
            )
            figure.update_yaxes(title_text=label, row=index + 1, col=1)
    figure.update_xaxes(title_text="seconds since the soak's start", row=3, col=1)
    figure.update_layout(title="The servers every 500 ms", height=900)
    path = folder / f"{stem}.html"
    figure.write_html(path, include_plotlyjs="directory")  # plotly.min.js beside it, offline
    return path


def report(steps: list[dict], cli: list[dict], rows: dict, samples: list, logs: dict, meta) -> dict:
    """Every figure the issue asks for, and which correctness targets failed."""
    visits = [step for step in steps if step["kind"] != "failed"]
    settled = [step for step in visits if step["kind"] not in ("run", "abandon")]  # _settle's
    stalls = [step for step in visits if step["stalled"]]
    errors = [(step, error) for step in visits for error in step["errors"]]
    crashes = [(step, e) for step, e in errors if any(text in e for text in FAILED_PAGE)]
    failed_steps = [step for step in steps if step["kind"] == "failed"]
    runs = [step for step in visits if step["kind"] == "run"]
    finished = [step for step in runs if step["stored"] is not None]
    expected_app = sum(step["expected"] for step in finished)
    said_app = sum(step["stored"] for step in finished)
    cli_ok = [run for run in cli if run["returncode"] == 0]
    traces = {name: tracebacks(text) for name, text in logs.items()}
    traces["CLI"] = [trace for run in cli for trace in tracebacks(run["output"])]
    seconds = lambda kinds: [s["seconds"] for s in visits if s["kind"] in kinds and s["seconds"]]  # noqa: E731
    band = rss_band(samples, RSS_AFTER_S)
    switch = seconds(("link",))
    result = {
        **meta,
        "visits": len(visits),
        "visits_by_kind": {
            kind: sum(s["kind"] == kind for s in visits) for kind in (*MOVES, "warm")
        },
        "visits_by_page_and_language": {
            f"{page or 'shape_trace'} {lang}": sum(
                1 for s in visits if s["page"] == page and s["lang"] == lang
            )
            for page in sorted({s["page"] for s in visits})
            for lang in LANGUAGES
        },
        "server_B_visits": sum(s["server"] == "B" for s in visits),
        "stalls": stalls,
        "errors": [
            {
                "step": step["number"],
                "session": step["session"],
                "page": step["page"],
                "lang": step["lang"],
                "text": error,
            }
            for step, error in errors
        ],
        "internal_errors": len(crashes),
        "failed_steps": failed_steps,
        "tracebacks": {name: found for name, found in traces.items()},
        "runs_pressed": len(runs),
        "runs_pressed_twice": sum(step["pressed"] == "twice" for step in runs),
        "runs_finished": len(finished),
        "app_rows_expected": expected_app,
        "app_rows_said_stored": said_app,
        "cli_runs": len(cli),
        "cli_runs_ok": len(cli_ok),
        "rows": rows,
        "runs_idle_before_their_outcome": [
            {"session": step["session"], "pressed": step["pressed"], "note": step["note"]}
            for step in runs
            if step["note"].startswith(IDLE_FIRST)
        ],
        "abandoned_runs": sum(step["kind"] == "abandon" for step in visits),
        "lock_waits_app": sum(step["lock_wait"] for step in runs),
        "runs_seen_by": dict(collections.Counter(s["run_seen_by"] or "none" for s in settled)),
        "lock_waits_cli": sum(run["lock_waits"] > 0 for run in cli),
        "times": {
            "load (URL, new session)": percentiles(seconds(("url", "export"))),
            "page switch (top navigation)": percentiles(switch),
            "rerun (language, setting)": percentiles(seconds(("language", "setting"))),
            "run (Run pressed to idle)": percentiles(seconds(("run",))),
        },
        "switch_p95_s": float(np.percentile(switch, 95)) if switch else None,
        "rss_after_5_min": band,
        "server_samples": len(samples),
    }
    problems = []
    if stalls:
        problems.append(f"{len(stalls)} stall(s)")
    if errors:
        problems.append(f"{len(errors)} exception element(s) or error alert(s)")
    if any(traces.values()):
        problems.append(f"{sum(map(len, traces.values()))} traceback(s)")
    if failed_steps:
        problems.append(f"{len(failed_steps)} step(s) the walk could not take")
    if rows["app"] != expected_app or said_app != expected_app:
        problems.append(
            f"app rows stored {rows['app']}, its pages said {said_app}, finished runs' "
            f"variants {expected_app}"
        )
    if rows["cli"] != len(cli_ok):
        problems.append(f"CLI rows stored {rows['cli']}, CLI runs that succeeded {len(cli_ok)}")
    if len(cli_ok) != len(cli):
        problems.append(f"{len(cli) - len(cli_ok)} CLI run(s) failed")
    if rows["other"]:
        problems.append(f"{rows['other']} row(s) of no run the soak made")
    result["failures"] = problems
    return result


def markdown(result: dict) -> str:
    band = result["rss_after_5_min"]
    rss = "not reached (a shorter soak)"
    if band:
        low, high = band["min_mb"] - band["at_start_mb"], band["max_mb"] - band["at_start_mb"]
        rss = f"{band['at_start_mb']:.0f} MB at 5 min, then {low:+.0f} / {high:+.0f} MB"
        rss += f" (last {band['last']:.0f} MB)"
    rows = result["rows"]
    p95 = result["switch_p95_s"]
    lines = [
        f"- seed {result['seed']}; {result['sessions']} sessions for {result['minutes']} min "
        f"(they took {result['walked_s']:.0f} s, warm-up included), CLI every "
        f"{result['cli_every']} s, warm-up {result['warmup']}; commit {result['commit']}; load "
        f"average {result['load_before']} before, {result['load_after']} after",
        f"- visits: {result['visits']} ({_pairs(result['visits_by_kind'])}); "
        f"server B {result['server_B_visits']}",
        f"- by page and language: {_pairs(result['visits_by_page_and_language'])}",
        f"- stalls (not idle in {STALL_S} s): {len(result['stalls'])}",
        f"- exception elements and error alerts: {len(result['errors'])} "
        f"({result['internal_errors']} 'internal error')",
        f"- tracebacks: {', '.join(f'{k} {len(v)}' for k, v in result['tracebacks'].items())}",
        f"- steps the walk could not take: {len(result['failed_steps'])}",
        f"- runs pressed {result['runs_pressed']} ({result['runs_pressed_twice']} twice), finished "
        f"{result['runs_finished']}: rows expected {result['app_rows_expected']}, said stored "
        f"{result['app_rows_said_stored']}, stored {rows['app']}",
        f"- CLI runs {result['cli_runs']} ({result['cli_runs_ok']} ok): rows stored {rows['cli']}; "
        f"abandoned runs {result['abandoned_runs']}: rows stored {rows['abandoned']}; "
        f"other rows {rows['other']}",
        f"- lock waits: {result['lock_waits_app']} app runs, {result['lock_waits_cli']} CLI runs",
        f"- visits' script runs first seen by the probe's: {_pairs(result['runs_seen_by'])} "
        "(tick: its 20 ms sample of the script state; observer: the state's change; socket: "
        "only the run's messages, the page drawn in one render)",
        f"- runs whose page was idle before their outcome: "
        f"{len(result['runs_idle_before_their_outcome'])} "
        f"({sum(r['pressed'] == 'twice' for r in result['runs_idle_before_their_outcome'])} "
        "pressed twice)",
        f"- server A's RSS after the first 5 min: {rss} (target within +-{RSS_BAND_MB} MB)",
        f"- p95 page switch: {'-' if p95 is None else f'{p95:.2f} s'} (target <= {SWITCH_P95_S} s)",
        "",
        markdown_table(("seconds", "p50 / p95 / p99 (count)"), list(result["times"].items())),
    ]
    for stall in result["stalls"]:
        recovered = stall["recovered_s"]
        lines.append(
            f"- stall: session {stall['session']} step {stall['number']} {stall['kind']} "
            f"'{stall['page']}' {stall['lang']} server {stall['server']} at {stall['at_s']:.0f} s; "
            f"{'idle after ' + format(recovered, '.1f') + ' s' if recovered else 'never idle'}; "
            f"waiting for: {stall['waiting_for']}; heard: {stall.get('heard')}"
        )
    seen = {}
    for error in result["errors"]:
        seen.setdefault(error["text"], []).append(
            f"{error['page'] or 'shape_trace'} {error['lang']}"
        )
    for text, where in seen.items():
        lines.append(f"- error x{len(where)} ({', '.join(sorted(set(where)))}): {text[:300]}")
    for step in result["failed_steps"]:
        lines.append(f"- could not take a step: session {step['session']}: {step['failure']}")
    for name, found in result["tracebacks"].items():
        for text, count in _count(found).items():
            lines.append(f"- traceback in {name}'s log x{count}:\n\n```\n{text}\n```")
    lines.append("")
    lines.append("FAILED: " + "; ".join(result["failures"]) if result["failures"] else "PASSED")
    return "\n".join(lines)


def _pairs(counts: dict) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items())


def _count(found: list[str]) -> dict[str, int]:
    counts = {}
    for text in found:
        counts[text] = counts.get(text, 0) + 1
    return counts


def free_ports(first: int, count: int, span: int = 100) -> list[int]:
    """`count` ports from `first` on (within `span`) that nothing listens on, nor holds a
    closed connection to (the last soak's, for a minute)."""
    found = []
    for port in range(first, first + span):
        with contextlib.suppress(ValueError):
            found.append(free_port(port))
        if len(found) == count:
            return found
    raise ValueError(f"no {count} free ports in {first}-{first + span - 1}")


# --- the soak ----------------------------------------------------------------------------------


def soak(args) -> dict:
    ports = dict(zip("AB", free_ports(args.port, 2), strict=True))
    folder = Path(tempfile.mkdtemp(prefix="hierlstm-soak-"))
    os.environ.update(
        XDG_DATA_HOME=str(folder / "data"),
        HIERLSTM_DB=str(folder / "results.sqlite3"),
        HIERLSTM_LOCK_DIR=str(folder / "locks"),
        HIERLSTM_WARMUP=args.warmup,
    )
    urls = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
    servers, children, samples, cli = {}, [], [], []
    stop = threading.Event()
    load_before = first_page.load_average()
    began = time.monotonic()
    try:
        for name, port in ports.items():
            log = folder / f"server-{name}.log"
            servers[name] = start_server(port, log, own_store(folder))
        for name, process in servers.items():
            wait_healthy(urls[name], process, time.perf_counter())
        start = time.monotonic()
        walk_s = args.minutes * 60
        deadline = start + WARM_S + walk_s  # the last a CLI run may start
        # fork: each visitor starts with this process's imports (first_page's common imports
        # TensorFlow) instead of importing them again on two busy cores; no thread runs yet.
        forking = multiprocessing.get_context("fork")
        for number in range(args.sessions):
            child = forking.Process(
                target=session,
                args=(number, args.sessions, urls, args.seed, folder, start, walk_s),
            )
            child.start()
            children.append(child)
        threads = [
            threading.Thread(target=sample, args=(servers, start, stop, samples), daemon=True),
            threading.Thread(
                target=cli_loop,
                args=(args.cli_every, start, deadline, stop, cli, folder / "session-0.jsonl"),
                daemon=True,
            ),
        ]
        for thread in threads:
            thread.start()
        for child in children:
            child.join(timeout=max(1.0, deadline + RUN_S + RECOVER_S - time.monotonic()))
        walked_s = time.monotonic() - start
        stop.set()
        for thread in threads:
            thread.join(timeout=RUN_S)
    finally:
        stop.set()
        for child in children:
            if child.is_alive():
                child.terminate()
                child.join(timeout=15)
        for process in servers.values():
            stop_server(process)
    steps = []
    for number in range(args.sessions):
        log = folder / f"session-{number}.jsonl"
        if log.exists():
            steps += [json.loads(line) for line in log.read_text().splitlines()]
    unfinished = [n for n, child in enumerate(children) if child.exitcode != 0]
    logs = {f"server {name}": (folder / f"server-{name}.log").read_text() for name in servers}
    meta = {
        "seed": args.seed,
        "sessions": args.sessions,
        "minutes": args.minutes,
        "cli_every": args.cli_every,
        "warmup": args.warmup,
        "walked_s": walked_s,
        "total_s": time.monotonic() - began,
        "commit": first_page.git_commit(),
        "load_before": load_before,
        "load_after": first_page.load_average(),
    }
    result = report(steps, cli, rows_by_kind(folder / "results.sqlite3"), samples, logs, meta)
    if unfinished:
        result["failures"].append(f"session(s) {unfinished} did not end by themselves")
    result |= {"steps": steps, "cli": cli, "samples_columns": "at_s,server,rss_mb,cpu_pct,threads"}
    artifacts = Path(args.artifacts)
    artifacts.mkdir(parents=True, exist_ok=True)
    stem = f"soak-{time.strftime('%Y%m%d-%H%M%S')}"
    with open(artifacts / f"{stem}.csv", "w") as table:
        table.write(result["samples_columns"] + "\n")
        table.writelines(",".join(map(str, row)) + "\n" for row in samples)
    if samples:
        result["plot"] = str(plot(samples, artifacts, stem))
    for name in servers:
        shutil.copyfile(folder / f"server-{name}.log", artifacts / f"{stem}-server-{name}.log")
    for shot in [*folder.glob("failed-*.png"), *folder.glob("stall-*.png")]:
        shutil.copyfile(shot, artifacts / f"{stem}-{shot.name}")
    shutil.rmtree(folder, ignore_errors=True)
    (artifacts / f"{stem}.json").write_text(json.dumps(result, indent=1) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--sessions", type=int, default=4, help="visitors, each its own Chromium")
    parser.add_argument("--minutes", type=float, default=10, help="how long the visitors walk")
    parser.add_argument("--seed", type=int, help="the walks' seed (default: a random one)")
    parser.add_argument(
        "--port",
        type=int,
        default=8700,
        help="server A's (or the next free one); B's is the next free one",
    )
    parser.add_argument("--cli-every", type=float, default=30, help="seconds between CLI runs")
    parser.add_argument("--warmup", default="full", help="HIERLSTM_WARMUP of both servers")
    parser.add_argument("--artifacts", default=str(ROOT / "test-artifacts"), help="output folder")
    parser.add_argument("--json", help="also write the report's figures to this file")
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.minutes <= 0 or args.cli_every <= 0:
        parser.error("--sessions must be at least 1; --minutes and --cli-every above 0")
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(10**6)
    print(f"soak: seed {args.seed}", file=sys.stderr, flush=True)
    signal.signal(signal.SIGTERM, lambda _number, _frame: sys.exit(143))
    result = soak(args)
    print(markdown(result))
    sys.exit(1 if result["failures"] else 0)


if __name__ == "__main__":
    main()

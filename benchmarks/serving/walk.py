"""A visitor's walk through the app in Chromium, for `benchmarks.serving.soak`: each kind of move (a
page by URL or link, the language, a setting, a tiny run pressed once or twice, a run abandoned,
the Results page's exports read back) timed to idle and recorded as a `Step`. A move not idle in
STALL_S is a stall, watched RECOVER_S more to say whether it recovers."""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import io
import json
import random
import signal
import sys
import time
from pathlib import Path

from playwright import sync_api

from benchmarks.serving import browser, visit
from hierlstm.i18n import LANGUAGES, t

STALL_S = 20  # a move not idle by then is a stall
RECOVER_S = 100  # how much longer a stalled page is watched, to say whether it recovers
LAST_RUN_S = 20  # a run takes seconds: none starts this close to the end
WARM_S = browser.SERVER_START_TIMEOUT_S  # a session's first visit waits for the warm-up
TIME_STEPS = {"app": (4, 5, 6), "cli": (7,), "abandoned": (30,)}  # the runs' rows told apart
ABANDONED = f"variants=nested,folded&batch_size=8&time_steps={TIME_STEPS['abandoned'][0]}"
ABANDONED += "&repeats=20&warmup=1"
# The walk's moves and their weights. A setting change is on a page whose button only applies.
MOVES = {"run": 12, "link": 30, "export": 7, "language": 8, "abandon": 3, "setting": 10, "url": 30}
SETTING_PAGES = ("shape_trace", "results")
ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'


def export_rows(kind: str, text: str) -> list[dict]:
    """The rows of the Results page's CSV or JSON export."""
    return [*csv.DictReader(io.StringIO(text))] if kind == "csv" else json.loads(text)["rows"]


@dataclasses.dataclass
class Step:
    """One move of a session's walk, as the report reads it."""

    session: int
    number: int
    kind: str  # a key of MOVES; "warm" for a first visit, "failed" for a move not made
    page: str  # its name in hierlstm.app.pages
    lang: str
    server: str  # "A" or "B"
    at_s: float  # since the soak's start
    seconds: float | None = None  # start to idle (a run: press to idle)
    stalled: bool = False
    waiting_for: dict | None = None  # what a stalled page showed last
    recovered_s: float | None = None  # a stalled page idle after all, when
    errors: list[str] = dataclasses.field(default_factory=list)  # exception elements, alerts
    pressed: str = ""  # a run: "once" or "twice"
    expected: int | None = None  # a run: the rows it should store
    stored: int | None = None  # a run: the rows its page said it stored
    note: str = ""  # a move that failed: why


class Visitor:
    """One session's walk: its own Chromium, one tab (and a second one for an abandoned run).
    Each kind of move is a method of its name that returns the steps it took."""

    def __init__(self, number: int, chromium, urls: dict, logs: dict, seed, folder: Path, start):
        self.number, self.chromium, self.urls, self.logs = number, chromium, urls, logs
        self.rng, self.folder, self.start = random.Random(f"{seed}-{number}"), folder, start
        self.pages = {lang: {p.name: p for p in visit.app_pages(lang)} for lang in LANGUAGES}
        self.names = list(self.pages["en"])
        self.tab = visit.new_page(chromium)
        self.current, self.lang, self.server = None, "en", "A"  # where the tab is
        self.steps, self.moves, self.variants = 0, 0, ""
        self.untoured: list[tuple[str, str]] = []  # (page, language) still to visit
        self.first: list[str] = []  # the kinds of move still to make once, the next one last

    def _step(self, kind: str, page: str, lang: str, server: str) -> Step:
        self.steps += 1
        at_s = round(time.monotonic() - self.start, 2)
        return Step(self.number, self.steps, kind, page, lang, server, at_s)

    def _shoot(self, tab, name: str) -> None:
        with contextlib.suppress(sync_api.Error):
            tab.screenshot(path=str(self.folder / f"{name}-{self.number}-{self.steps}.png"))

    def record(self, steps: list[Step]) -> None:
        with open(self.folder / f"session-{self.number}.jsonl", "a") as log:
            log.writelines(json.dumps(dataclasses.asdict(step)) + "\n" for step in steps)

    def _timed(self, step: Step, act, timeout_s=STALL_S, tab=None, outcome=None) -> Step:
        """`act()` timed until the step's page is idle after its run; a stall's screenshot and
        whether it recovers; the page's exception elements and error alerts."""
        tab = tab or self.tab
        title = self.pages[step.lang][step.page].title
        ended = browser.RunEnd(self.logs[step.server], step.page)
        started_ms = time.time() * 1000
        seen = visit.timed(tab, title, act, ended, timeout_s, outcome=outcome)
        step.seconds, step.waiting_for = seen.idle_s, seen.waiting_for
        if seen.idle_s is None:
            step.stalled = True
            self._shoot(tab, "stall")
            later = visit.watch(tab, started_ms, title, RECOVER_S, ended, outcome=outcome)
            step.recovered_s = later.idle_s
        step.errors += [text.strip()[:400] for text in tab.locator(ERRORS).all_inner_texts()]
        return step

    def visit_url(self, name, lang, settings, server="A", kind="url", timeout_s=STALL_S) -> Step:
        step = self._step(kind, name, lang, server)
        query = {"lang": lang} if lang != "en" else {}
        if settings:
            self.variants = self.rng.choice(["nested", "folded", "nested,folded"])
            query |= {"variants": self.variants, "batch_size": self.rng.randint(1, 4)}
            query |= {"time_steps": self.rng.choice(TIME_STEPS["app"]), "repeats": 2, "warmup": 1}
        url = f"{self.urls[server]}/{self.pages[lang][name].url_path}?"
        url += "&".join(f"{key}={value}" for key, value in query.items())
        self._timed(step, lambda: self.tab.goto(url, wait_until="commit"), timeout_s)
        self.current, self.lang, self.server = name, lang, server
        return step

    def tour(self) -> list[Step]:
        name, lang = self.untoured.pop(0)
        return [self.visit_url(name, lang, settings=self.rng.random() < 0.5)]

    def url(self) -> list[Step]:
        server = "B" if self.rng.random() < 0.1 else "A"
        name, lang = self.rng.choice(self.names), self.rng.choice(["en", "en", "zh"])
        return [self.visit_url(name, lang, self.rng.random() < 0.5, server)]

    def link(self) -> list[Step]:
        name = self.rng.choice([name for name in self.names if name != self.current])
        step = self._step("link", name, self.lang, self.server)
        self._timed(step, visit.nav_link(self.tab, self.pages[self.lang][name]).click)
        self.current = name
        return [step]

    def language(self) -> list[Step]:
        self.lang = self.rng.choice([other for other in LANGUAGES if other != self.lang])
        step = self._step("language", self.current, self.lang, self.server)
        self.tab.get_by_role("combobox", name="Language · 语言").click()
        return [self._timed(step, self.tab.get_by_role("option", name=LANGUAGES[self.lang]).click)]

    def setting(self) -> list[Step]:
        """Time steps or batch size changed in the form; its button applies (no timing run)."""
        opened = []
        if self.current not in SETTING_PAGES:
            opened = [self.visit_url(self.rng.choice(SETTING_PAGES), self.lang, settings=False)]
            if opened[0].stalled:
                return opened
        step = self._step("setting", self.current, self.lang, self.server)
        key = self.rng.choice(["control.time_steps", "control.batch_size"])
        value = self.rng.randint(4, 12) if key == "control.time_steps" else self.rng.randint(1, 8)
        sidebar = self.tab.locator('[data-testid="stSidebar"]')
        sidebar.get_by_role("spinbutton", name=t(key, self.lang)).fill(str(value))
        button = visit.run_button(self.tab, self.pages[self.lang][self.current])
        return [*opened, self._timed(step, button.click)]

    def run(self) -> list[Step]:
        """A tiny benchmark in a new session, Run pressed once or twice (a double click)."""
        lang = self.rng.choice(list(LANGUAGES))
        opened = self.visit_url("benchmark", lang, settings=True)
        if opened.stalled:
            return [opened]
        step = self._step("run", "benchmark", lang, "A")
        step.pressed = self.rng.choice(["once", "once", "twice"])
        step.expected = len(self.variants.split(","))
        button = visit.run_button(self.tab, self.pages[lang]["benchmark"])
        pattern = browser.stored_pattern(lang)
        stored = self.tab.locator('[data-testid="stMain"]').get_by_text(pattern)
        press = button.dblclick if step.pressed == "twice" else button.click
        self._timed(step, press, visit.RUN_TIMEOUT_S, outcome=stored.or_(self.tab.locator(ERRORS)))
        found = stored.all_inner_texts()
        step.stored = int(pattern.search(found[0])[1]) if found else None
        return [opened, step]

    def abandon(self) -> list[Step]:
        """A longer run in a second tab, closed while it waits or runs."""
        step = self._step("abandon", "benchmark", "en", "A")
        tab = visit.new_page(self.chromium)
        try:
            url = f"{self.urls['A']}/benchmark?{ABANDONED}"
            self._timed(step, lambda: tab.goto(url, wait_until="commit"), tab=tab)
            visit.run_button(tab, self.pages["en"]["benchmark"]).click()
            tab.wait_for_timeout(self.rng.uniform(500, 4000))
        finally:
            tab.context.close()
        return [step]

    def export(self) -> list[Step]:
        """The Results page's CSV and JSON downloads, read back."""
        step = self.visit_url("results", self.rng.choice(list(LANGUAGES)), False, kind="export")
        if step.stalled:
            return [step]
        for kind in ("csv", "json"):
            with self.tab.expect_download(timeout=30_000) as download:
                self.tab.get_by_role("button", name=t(f"results.export.{kind}", step.lang)).click()
            text = Path(download.value.path()).read_text()
            try:
                rows = export_rows(kind, text)
                if rows and "variant" not in rows[0]:
                    raise ValueError(f"no variant in its first row: {rows[0]}")
            except (ValueError, KeyError, TypeError) as error:
                step.errors.append(f"the {kind} export does not read back: {error}")
        return [step]

    def next_kind(self, remaining_s: float) -> str:
        """Each kind of move once (each session starts at a different kind, so a short soak makes
        every kind), a tour visit between them while any is left; then by MOVES' weights. A kind
        first, so slow tour visits cannot push the first run into the last LAST_RUN_S."""
        self.moves += 1
        if self.untoured and not self.moves % 2:
            return "tour"
        kind = self.first.pop() if self.first else None
        kind = kind or self.rng.choices(list(MOVES), weights=list(MOVES.values()))[0]
        if kind in ("run", "abandon") and remaining_s < LAST_RUN_S:
            return "url"
        return kind if self.current is not None or kind not in ("link", "language") else "url"

    def walk(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            kind = self.next_kind(deadline - time.monotonic())
            try:
                self.record(getattr(self, kind)())
            except sync_api.Error as error:  # a button or link that never came, a closed page
                failed = self._step("failed", self.current or "", self.lang, self.server)
                failed.note = f"{kind}: {str(error).splitlines()[0][:300]}"
                self._shoot(self.tab, "failed")
                self.record([failed])
                self.tab.context.close()
                self.tab, self.current = visit.new_page(self.chromium), None


def session(number: int, count: int, urls, logs, seed, folder: Path, start, walk_s) -> None:
    """One visitor's process: the warm visit, then `walk_s` of walk, with its share of the tour
    of every page in both languages (Chinese first: English is what the browser tests draw)."""
    signal.signal(signal.SIGTERM, lambda _number, _frame: sys.exit(143))
    with sync_api.sync_playwright() as playwright:
        chromium = browser.launch_chromium(playwright)
        try:
            visitor = Visitor(number, chromium, urls, logs, seed, folder, start)
            # The last visitor waits for server B, the others for A (both warm up at once).
            for server in ["A"] if number < count - 1 else ["B"] if count > 1 else ["A", "B"]:
                home = visitor.names[0]
                visitor.record([visitor.visit_url(home, "en", False, server, "warm", WARM_S)])
            languages = sorted(LANGUAGES, key="zh".__ne__)
            tour = [(name, lang) for lang in languages for name in visitor.names]
            visitor.untoured = tour[number::count]  # the sessions share the tour
            offset = number * len(MOVES) // count
            visitor.first = [*[*MOVES][offset:], *[*MOVES][:offset]][::-1]
            visitor.walk(time.monotonic() + walk_s)
        finally:
            chromium.close()

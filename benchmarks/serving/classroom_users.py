"""The visitors of `classroom` (beside it), as Locust users (`locust -f` this file; Locust patches
the standard library with gevent when it is imported, so nothing else imports it). Each opens a
session over Streamlit's websocket protocol (`streamlit_client`) and, with a pause to
read between moves, switches pages, changes a setting, switches the language, runs a tiny
benchmark in a new session, and sometimes leaves a longer run by closing its session mid-run.
Each rerun is reported to Locust by its server time (the request to `script_finished`), failed
when the page drew an exception or an error, or the server did not finish it in time."""

from __future__ import annotations

import contextlib
import json
import os
import random
import time

from locust import User, between, events, task

from benchmarks.serving.browser import stored_pattern
from benchmarks.serving.classroom import (
    ABANDONED_TIME_STEPS,
    LANGUAGE,
    MOVES_FILE,
    OPEN,
    PAGE,
    RUN,
    RUN_TIME_STEPS,
    RUN_VARIANTS,
    SETTING,
)
from benchmarks.serving.streamlit_client import Session
from hierlstm.app.pages import PAGES
from hierlstm.i18n import LANGUAGES

RUN_QUERY = f"variants={','.join(RUN_VARIANTS)}&batch_size=2&repeats=3&warmup=1&time_steps="
ABANDONED_QUERY = "variants=nested,folded&batch_size=8&repeats=20&warmup=1"
ABANDONED_QUERY += f"&time_steps={ABANDONED_TIME_STEPS}"
SETTING_PAGE = "shape_trace"  # its button applies the settings and traces: nothing is timed
# Every move, one JSON line each, for the classroom's table: Locust writes its own statistics
# when the run time ends, before the moves still in flight have finished.
MOVES = open(os.environ[MOVES_FILE], "a", buffering=1) if MOVES_FILE in os.environ else None


def report(name: str, seconds: float, error: Exception | None = None, page: str = "") -> None:
    """One move to Locust and to the classroom's file; `page`: the page it went to."""
    if MOVES:
        found = {"name": name, "seconds": seconds, "error": error and repr(error), "page": page}
        MOVES.write(json.dumps(found) + "\n")
    events.request.fire(
        request_type="rerun",
        name=name,
        response_time=seconds * 1000,
        response_length=0,
        exception=error,
        context={},
    )


def timed(name: str, act, page: str = ""):
    """`act()`'s Rerun, reported as `name`; None when it failed (reported as a failure)."""
    start = time.perf_counter()
    try:
        rerun = act()
    except Exception as error:  # a lost connection or a timeout is the server's failure here
        report(name, time.perf_counter() - start, error, page)
        return None
    report(name, rerun.seconds, RuntimeError(rerun.errors[0]) if rerun.errors else None, page)
    return None if rerun.errors else rerun


def timed_run(session: Session) -> None:
    """Run pressed, reported as RUN; failed unless the page says both variants' rows were
    stored."""
    start = time.perf_counter()
    try:
        rerun = session.rerun(run=True)
    except Exception as error:
        report(RUN, time.perf_counter() - start, error)
        return
    shown = [match for text in rerun.texts if (match := stored_pattern("en").search(text))]
    stored = int(shown[0][1]) if shown else 0
    error = rerun.errors[0] if rerun.errors else None
    if error is None and stored != len(RUN_VARIANTS):
        error = f"the page says {stored} rows stored, not {len(RUN_VARIANTS)}"
    report(RUN, rerun.seconds, error and RuntimeError(error))


@contextlib.contextmanager
def opened(host: str, query: str):
    """A new session on the Benchmark page with `query` (its opening reported as OPEN), closed
    after; None when it could not open."""
    try:
        session = Session(host)
    except Exception as error:
        report(OPEN, 0, error)
        yield None
        return
    try:
        yield session if timed(OPEN, lambda: session.rerun("benchmark", query)) else None
    finally:
        session.close()


class Visitor(User):
    wait_time = between(1, 5)  # reading the page before the next move

    def on_start(self):
        self.rng = random.Random()
        self.lang = "en"
        self.session = Session(self.host)
        timed(OPEN, self.session.rerun)

    def on_stop(self):
        self.session.close()

    @task(30)
    def page(self):
        others = [page.name for page in PAGES if page.name != self.session.page]
        page = self.rng.choice(others)
        timed(PAGE, lambda: self.session.rerun(page), page)

    @task(10)
    def setting(self):
        if self.session.page != SETTING_PAGE:
            timed(PAGE, lambda: self.session.rerun(SETTING_PAGE), SETTING_PAGE)
        self.session.set_value("time_steps", double_value=self.rng.randint(4, 40))
        timed(SETTING, lambda: self.session.rerun(run=True))

    @task(8)
    def language(self):
        self.lang = next(lang for lang in LANGUAGES if lang != self.lang)
        timed(LANGUAGE, lambda: self.session.language(self.lang))

    @task(12)
    def tiny_run(self):
        """A tiny benchmark in a new session, as a link with its settings opens one."""
        query = RUN_QUERY + str(self.rng.choice(RUN_TIME_STEPS))
        with opened(self.host, query) as session:
            if session:
                timed_run(session)

    @task(3)
    def abandon(self):
        """A longer run left by closing its session mid-run (or while it waits its turn)."""
        with opened(self.host, ABANDONED_QUERY) as session:
            if session:
                session.rerun(run=True, wait=False)
                time.sleep(self.rng.uniform(0.5, 4))

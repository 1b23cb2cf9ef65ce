"""Time to the first page: a fresh server's first visitors, every page, the default run.

    .venv/bin/python -m benchmarks first_page [--rounds 1] [--port PORT] [--json PATH]
                                               [--screenshots DIR] [--profile-server]

Each round, a fresh Chromium and `streamlit run app.py` with its own results file and lock folder:
the process start to the first healthy answer, then, each timed from the navigation's start, the
first visitor, a second visitor (a new context), every page by URL and by its top link, and the
Benchmark page's default run. Columns, from `visit`'s probe: the page's title seen, the
sidebar's form drawn without skeletons, the first plotly chart (or table), and idle. The targets
(issue 13): a title within 2 s of health and idle within 5 s; a second visitor and every switch
idle within 1 s; the default benchmark within 10 s.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright import sync_api

from benchmarks.record import argument_parser, git_commit, header, load_average, markdown_table
from benchmarks.serving import browser, server_profile
from benchmarks.serving.visit import (
    Page,
    Visit,
    app_pages,
    click_link,
    new_page,
    open_page,
    press_run,
)

ROUND_TIMEOUT_S = 1800  # a last bound for what has none of its own (a hung page's evaluate)
COLUMNS = ("title s", "sidebar s", "first figure s", "idle s")


# --- one round ---------------------------------------------------------------------------------


class Rows:
    """The round's visits by row, and the screenshots. With a profiled server each row also
    ends a profile phase (server_profile.PHASE_SIGNAL), so the phases line up with `labels`."""

    def __init__(self, process: subprocess.Popen, profiled: bool, shots: Path | None, prefix):
        self.visits: dict[str, Visit] = {}
        self.labels: list[str] = []
        self.process, self.profiled, self.shots, self.prefix = process, profiled, shots, prefix

    def add(self, label: str, visit: Visit | None) -> None:
        if visit is not None:
            self.visits[label] = visit
        self.labels.append(label)
        if self.profiled:
            self.process.send_signal(server_profile.PHASE_SIGNAL)
            time.sleep(0.05)  # the sampler looks every 10 ms

    def shoot(self, tab, name: str) -> None:
        """The viewport (what the visitor sees) as SHOTS/roundN-name.png, with --screenshots."""
        if self.shots:
            self.shots.mkdir(parents=True, exist_ok=True)
            tab.screenshot(path=str(self.shots / f"{self.prefix}-{name}.png"))


def visit_pages(chromium, url: str, log: Path, pages: list[Page], rows: Rows) -> None:
    """After the first visitor: a second one, every page by URL, every page by its link, the
    default benchmark run; all in one new context (one visitor, a new session per `goto`)."""
    tab = new_page(chromium)
    try:
        rows.add("second visitor", open_page(tab, url, pages[0], log))
        for target in pages:
            rows.add(f"URL: {target.link}", open_page(tab, url, target, log))
        for previous, target in zip([pages[-1], *pages[:-1]], pages, strict=True):
            visit = click_link(tab, target, log)
            rows.add(f"link: {target.link} (from {previous.link})", visit)
        benchmark = next(target for target in pages if target.name == "benchmark")
        open_page(tab, url, benchmark, log)
        rows.add("(the Benchmark page opened for the run)", None)
        rows.add("default benchmark (from Run)", press_run(tab, benchmark, log))
        rows.shoot(tab, "default-benchmark-idle")
    finally:
        tab.context.close()


def _round_timeout(_number, _frame):
    raise TimeoutError(f"the round took over {ROUND_TIMEOUT_S} s")


def measure_round(number: int, pages: list[Page], args) -> dict:
    """A fresh Chromium and server: the health-check time and every row's visit."""
    with tempfile.TemporaryDirectory(prefix="first-page-") as name:
        folder = Path(name)
        port = browser.free_port(args.port or 0)
        url, log = f"http://127.0.0.1:{port}", folder / "server.log"
        shots = Path(args.screenshots) if args.screenshots else None
        profile = folder / "profile.json" if args.profile_server else None
        process = None
        signal.signal(signal.SIGALRM, _round_timeout)
        signal.alarm(ROUND_TIMEOUT_S)
        try:
            with sync_api.sync_playwright() as playwright:
                chromium = browser.launch_chromium(playwright)
                try:
                    first = new_page(chromium)  # ready before the server: it starts at once
                    started = time.perf_counter()
                    process = browser.start_server(
                        port, log, browser.own_store(folder), profile=profile
                    )
                    rows = Rows(process, args.profile_server, shots, f"round{number}")
                    health_s = browser.wait_healthy(url, process, started)
                    healthy_at = time.perf_counter()
                    on_title = lambda: rows.shoot(first, "first-visitor-title")  # noqa: E731
                    gap_s = time.perf_counter() - healthy_at  # the health check to the goto
                    visit = open_page(first, url, pages[0], log, on_title=on_title)
                    rows.shoot(first, "first-visitor-idle")
                    rows.add("first visitor", visit)
                    first.context.close()
                    visit_pages(chromium, url, log, pages, rows)
                finally:
                    chromium.close()
        finally:
            signal.alarm(0)
            if process is not None:
                browser.stop(process)
            if shots and log.exists():
                shots.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(log, shots / f"round{number}-server.log")
        title_s = visit.title_s
        result = {
            "health_s": health_s,
            "health_to_first_title_s": None if title_s is None else gap_s + title_s,
            "rows": {label: dataclasses.asdict(row) for label, row in rows.visits.items()},
        }
        if args.profile_server:
            result["profile"] = server_profile.phases(profile, rows.labels)
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


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--rounds", type=int, default=1, help="fresh servers; medians printed")
    parser.add_argument("--port", type=int, help="the server's port (default: a free one)")
    parser.add_argument("--json", help="also write every round's numbers to this file")
    parser.add_argument("--screenshots", help="folder for screenshots and each server's log")
    parser.add_argument(
        "--profile-server",
        action="store_true",
        help="run each server under benchmarks.serving.server_profile (a stack sampler) and print "
        "where round 1's script runs spent their time, row by row",
    )
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, not {args.rounds}")
    if args.port:
        try:
            browser.free_port(args.port)
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
        lines.append(server_profile.table(rounds[0]))
    print("\n".join(lines))
    if args.json:
        document = {"pages": [dataclasses.asdict(page) for page in pages], "rounds": rounds}
        document |= {"load_before": load_before, "load_after": load_after}
        document |= {"commit": git_commit(), "cpus": os.cpu_count()}
        Path(args.json).write_text(json.dumps(document, indent=1) + "\n")


if __name__ == "__main__":
    main()

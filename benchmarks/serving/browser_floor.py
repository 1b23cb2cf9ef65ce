"""What a new browser costs before any of hierlstm's work: the floor under a second visitor.

    .venv/bin/python -m benchmarks browser_floor [--visits 5] [--json PATH]

A new browser context fetches and starts Streamlit's frontend, then the code of every kind of
element the page draws. Each row is its own fresh server: its first visitor, a new browser at the
health check as first_page's first visitor (the first figure and idle), then each later visit a
new context timed from `goto` to idle. Rows: a title-only script, one that adds a tiny plotly
figure and/or table, hierlstm's sidebar and banner around the title, and the real app's default
page (its first visitor is a fresh server's, warming up; its later ones first_page's "second
visitor"). Each row's later visits' median is given as a multiple of the title-only page's.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from playwright import sync_api

from benchmarks.record import argument_parser, git_commit, header, load_average, markdown_table
from benchmarks.serving import browser
from benchmarks.serving.visit import Visit, app_pages, new_page, open_url

HIERLSTM = "hierlstm Shape trace"
_FRAME = """
    from hierlstm.app import banner, sidebar, state

    sidebar.language_ui(devices_known=False)
    sidebar.controls_ui(sidebar.Action("run.trace", False), devices_known=False)
    banner.starting_banner()
"""
# Each page draws the Shape trace's English title, so one probe title fits every row.
SCRIPTS = {
    "title": "",
    "title + plotly": """
        import plotly.graph_objects as go

        st.plotly_chart(go.Figure(go.Bar(x=[1, 2, 3], y=[3, 1, 2])))
    """,
    "title + table": """
        import pandas as pd

        st.dataframe(pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}))
    """,
    "title + plotly + table": """
        import pandas as pd
        import plotly.graph_objects as go

        st.plotly_chart(go.Figure(go.Bar(x=[1, 2, 3], y=[3, 1, 2])))
        st.dataframe(pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}))
    """,
    "hierlstm frame": _FRAME,
}


def script_text(title: str, body: str) -> str:
    head = f"import streamlit as st\n\nst.set_page_config(layout='wide')\nst.title({title!r})\n"
    return head + textwrap.dedent(body)


def measure_row(chromium, label: str, visits: int, title: str) -> tuple[Visit, list]:
    """(the fresh server's first visit, the later visits' idle seconds) of one row."""
    folder = Path(tempfile.mkdtemp(prefix="browser-floor-"))
    port = browser.free_port()
    url = f"http://127.0.0.1:{port}"
    script = "app.py"
    if label != HIERLSTM:
        script = str(folder / "page.py")
        Path(script).write_text(script_text(title, SCRIPTS[label]))
    log = folder / "server.log"
    process = browser.start_server(port, log, browser.own_store(folder), script=script)
    # The app logs its page's run's end; the rows' own scripts do not.
    ended = (lambda: browser.RunEnd(log, "shape_trace")) if label == HIERLSTM else (lambda: None)
    try:
        browser.wait_healthy(url, process, time.perf_counter())
        # The server's first visitor, as first_page's is: a new browser at the health check.
        warm = new_page(chromium)
        first = open_url(warm, url + "/", title, ended())
        warm.context.close()
        time.sleep(5 if label == HIERLSTM else 1)  # the warm-up's quiet-time steps, then quiet
        idles = []
        for _ in range(visits):
            page = new_page(chromium)
            try:
                idles.append(open_url(page, url + "/", title, ended()).idle_s)
            finally:
                page.context.close()
        return first, idles
    finally:
        browser.stop(process)


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--visits", type=int, default=5, help="new browser contexts per row")
    parser.add_argument("--json", help="also write every visit's idle time to this file")
    args = parser.parse_args(argv)
    if args.visits < 1:
        parser.error(f"--visits must be at least 1, not {args.visits}")
    title = app_pages()[0].title
    labels = [*SCRIPTS, HIERLSTM]
    load_before = load_average()
    rows, firsts = {}, {}
    with sync_api.sync_playwright() as playwright:
        chromium = browser.launch_chromium(playwright)
        try:
            for label in labels:
                firsts[label], rows[label] = measure_row(chromium, label, args.visits, title)
                print(f"{label} done", file=sys.stderr, flush=True)
        finally:
            chromium.close()
    seen = {label: [v for v in idles if v is not None] for label, idles in rows.items()}
    base = statistics.median(seen["title"]) if seen["title"] else None
    table = []
    for label in labels:
        values = seen[label]
        first = firsts[label]
        seen_first = [_seconds(first.figure_s), _seconds(first.idle_s)]
        if not values:
            table.append((label, *seen_first, "timeout", "-"))
            continue
        median = statistics.median(values)
        cell = f"{median:.2f} [{min(values):.2f}-{max(values):.2f}]"
        missing = len(rows[label]) - len(values)
        cell += f" ({missing} timeout)" if missing else ""
        table.append((label, *seen_first, cell, f"{median / base:.2f}x" if base else "-"))
    print(header("What a new browser costs before any of hierlstm's work"))
    print(f"- git commit: {git_commit()}; visits per row: {args.visits}")
    print(f"- load average (1, 5, 15 min): {load_before} before, {load_average()} after")
    print()
    head = ("page", "fresh server's first visitor: first figure s", "its idle s")
    print(
        markdown_table(
            (*head, "later visitors, new browser context: idle s", "vs title only"), table
        )
    )
    if args.json:
        found = {
            label: {"first": dataclasses.asdict(firsts[label]), "idle_s": rows[label]}
            for label in labels
        }
        Path(args.json).write_text(json.dumps(found, indent=1) + "\n")


def _seconds(value: float | None) -> str:
    return "none" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    main()

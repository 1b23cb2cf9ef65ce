"""A page while the server warms up (`warmup`): where the page's content will be, a
placeholder that says what the warm-up is doing, until it is ready; then the page runs again,
warm. The frame (streamlit_app.py) draws it on every page."""

from __future__ import annotations

import time
from collections.abc import Callable

import plotly.graph_objects as go
import streamlit as st

from hierlstm.app.server import warmup
from hierlstm.app.state import text

WAIT_S = 120.0  # a cold page waits this long in its own script run, then polls
POLL_S = 0.5  # how often a polling page looks again


def _progress(bar, status: warmup.Status) -> None:
    what = text(status.step) if status.step else ""
    bar.progress(
        status.done / max(1, status.needed),
        text=text("warmup.waiting", what=what, seconds=status.seconds),
    )


def wait_in_page(first_figure: Callable[[], go.Figure | None] | None = None) -> None:
    """Where the page's content will be, until the warm-up is ready: `first_figure()` (a figure
    that needs no TensorFlow, None if there is none for these settings) once plotly is loaded,
    else an empty chart; what the warm-up is doing, updated
    four times a second while this script run waits (an Event's wait, which leaves the
    interpreter to the warm-up; each update is a Streamlit call, so a rerun or a closed tab
    ends the wait at once), then the page runs again, warm. Past WAIT_S the page polls instead.
    It waits in the run rather than rerunning to look again, which would take the CPU from the
    warm-up it waits for."""
    warm = warmup.server_warmup()
    deadline = time.monotonic() + WAIT_S
    early = st.container(key="warmup-first-figure")  # the page's, drawn before the page runs
    box = st.container(key="warmup-placeholder")  # what a browser can wait for to be gone
    bar = box.progress(0.0)
    _progress(bar, warm.status())
    charted = False
    while True:
        if not charted and warm.charts_drawable.is_set():
            # Either way the browser fetches and starts plotly (4.7 MB of its code) while the
            # server warms up, instead of after it.
            figure = first_figure() if first_figure else None
            if figure is None:  # an empty chart where the page's charts will be
                box.plotly_chart(_empty_chart(), key="warmup-chart", config={"staticPlot": True})
            else:
                early.plotly_chart(figure, key="warmup-first-figure-chart", width="stretch")
                early.caption(text("warmup.first_figure"))
            charted = True
            warm.first_visitor.figure_drawn.set()  # TensorFlow's import may take the CPU now
        if warm.wait(0.25):
            break
        if time.monotonic() > deadline:
            bar.empty()
            _poll()
            return
        _progress(bar, warm.status())
    st.rerun()


def _empty_chart() -> go.Figure:
    figure = go.Figure()
    figure.update_layout(height=160, margin={"l": 0, "r": 0, "t": 0, "b": 0})
    figure.update_xaxes(visible=False)
    figure.update_yaxes(visible=False)
    return figure


@st.fragment(run_every=POLL_S)
def _poll() -> None:
    if warmup.server_warmup().status().ready:
        st.rerun()
    with st.container(key="warmup-placeholder-polling"):
        _progress(st.progress(0.0), warmup.server_warmup().status())

"""The Lesson's numbers for the three backends, from the stored rows: this host's newest run on
JAX or torch beside the newest of each variant and backend with its settings, made once per row
added."""

from __future__ import annotations

import socket

import pandas as pd
import streamlit as st

from hierlstm.records import CONFIG_COLUMNS
from hierlstm.refusals import Refused
from hierlstm.registry import BACKENDS, REFERENCE_BACKEND, VARIANTS

# The newest stored row that ran on JAX or torch, and the newest row of each variant and backend
# with its settings: every config column but the variant and the backend, which are compared.
SAME_SETTINGS = tuple(
    column for column in CONFIG_COLUMNS.values() if column not in ("variant", "backend")
)
COMPARISON_COLUMNS = (
    *("variant", "backend", "median_s", "p10_s", "p90_s", "vs_tensorflow", "created_at"),
)


def latest_comparison(rows: pd.DataFrame, host: str | None = None) -> pd.DataFrame:
    """This host's latest stored comparison of several backends, one row per (variant, backend):
    `COMPARISON_COLUMNS`, `vs_tensorflow` the median over the same variant's TensorFlow median (NaN
    without one). Empty when there is none."""
    host = socket.gethostname() if host is None else host
    empty = pd.DataFrame(columns=list(COMPARISON_COLUMNS))
    if rows is None or rows.empty:
        return empty
    here = rows[(rows["host"] == host) & (rows["status"] == "ok")]
    others = here[here["backend"] != REFERENCE_BACKEND]
    if others.empty:
        return empty
    newest = others.sort_values("created_at").iloc[-1]
    same = here
    for column in SAME_SETTINGS:
        same = same[same[column] == newest[column]]
    latest = same.sort_values("created_at").groupby(["variant", "backend"], sort=False).tail(1)
    if latest["backend"].nunique() < 2:
        return empty
    order = {name: index for index, name in enumerate(BACKENDS)}
    variants = {name: index for index, name in enumerate(VARIANTS)}
    latest = latest.assign(
        _variant=latest["variant"].map(variants), _backend=latest["backend"].map(order)
    ).sort_values(["_variant", "_backend"])
    tensorflow = latest[latest["backend"] == REFERENCE_BACKEND].set_index("variant")["median_s"]
    ratio = latest["median_s"].to_numpy() / latest["variant"].map(tensorflow).to_numpy(float)
    frame = latest.assign(vs_tensorflow=ratio)[list(COMPARISON_COLUMNS)].reset_index(drop=True)
    frame.attrs.update(
        settings={column: newest[column] for column in SAME_SETTINGS},
        host=host,
        device=newest["device"],
    )
    return frame


def stored_comparison(store) -> pd.DataFrame:
    """`latest_comparison` of `store`'s rows; empty when there is no store or it refuses to be
    read (the banner and the Results page say why)."""
    if store is None:
        return pd.DataFrame(columns=list(COMPARISON_COLUMNS))
    try:
        return _stored_comparison(str(store.path), store.version(), store)
    except Refused:
        return pd.DataFrame(columns=list(COMPARISON_COLUMNS))


@st.cache_data(max_entries=4, show_spinner=False)
def _stored_comparison(path: str, version: tuple[int, int], _store) -> pd.DataFrame:
    # Made once per row added, not per rerun, from the rows it compares, which SQLite finds: the
    # comparison is a few rows, the stored rows a class's thousands (6.5 MB allocated by a rerun
    # of the Lesson at 3,000 rows when it read them all).
    return latest_comparison(comparison_rows(_store))


def comparison_rows(store, host: str | None = None) -> pd.DataFrame:
    """The stored rows `latest_comparison` reads of `store`: this host's completed runs with the
    settings of its newest run on a backend other than TensorFlow (none without one)."""
    host = socket.gethostname() if host is None else host
    here = {"host": [host], "status": ["ok"]}
    others = [name for name in BACKENDS if name != REFERENCE_BACKEND]
    newest = store.rows(where=here | {"backend": others}, newest=1)
    if newest.empty:
        return newest
    settings = {column: [newest.iloc[0][column]] for column in SAME_SETTINGS}
    return store.rows(where=here | settings)

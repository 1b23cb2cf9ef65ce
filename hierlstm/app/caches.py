"""Cached compute for the pages: built models and their traces, the weight-sharing reports, the live
TimeDistributed pitfall, the figures every session shares (`figure`), and the results store (None
when the machine refuses its file or the last write; `store_refusal` says why) and its rows, read
again only when they change. Models and traces live in `st.cache_resource`, keyed by the frozen
`RunConfig` and bounded by `max_entries`; cached models are only read, and each has a lock, because
Keras layers are not safe to trace from two sessions at once. What a cache misses is computed
under `COMPUTING`, one computation at a time for the whole server."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from hierlstm.admission.limits import (
    TRACE_SECONDS_PER_CALL,
    LimitError,
    check_trace_budget,
    current_limits,
)
from hierlstm.admission.turns import TurnLock
from hierlstm.app.server.cleanup import forget_kernels
from hierlstm.app.state import GEOMETRY, text
from hierlstm.config import RunConfig
from hierlstm.model.builders import build_model
from hierlstm.refusals import Refusal, Refused
from hierlstm.registry import VARIANTS
from hierlstm.results.store import ResultStore, default_path

# --- cached compute -------------------------------------------------------------------------

# One cache miss computed at a time, server-wide. Every session's script shares one interpreter:
# with N traces computing at once each gets 1/N of it, and a page drawn from the caches (a tenth
# of a second alone) waits behind all N. In turn, it shares the interpreter with one at most.
# Taken only by the outermost cached computation (a trace, not the model it builds): a body that
# took it inside another cache's body could wait on a thread that waits on that cache's key.
# Runs do not take it: they are serialised per device already (`hierlstm.app.runs`).
# First come, first served: a visit is never overtaken. As each computation ends, TensorFlow's
# kernels for the models it built are let go (`forget_kernels`), while no other can start.
COMPUTING = TurnLock(reentrant=True, on_release=forget_kernels)


def _trace_key(config: RunConfig) -> RunConfig:
    """Settings that cannot change a trace's shapes are normalised, so they share one entry: a
    setting that changes nothing the trace shows costs no tracing."""
    return config.replace(
        xla=False, device="auto", lstm_kernel="auto", task="inference", optimizer="sgd",
        backend="tensorflow",
    )  # fmt: skip


def _model_key(config: RunConfig) -> RunConfig:
    # Batch and time are symbolic in every model except a static-time variant's.
    static = VARIANTS[config.variant].static_time
    return _trace_key(config).replace(batch_size=1, time_steps=config.time_steps if static else 1)


@st.cache_resource(max_entries=16, show_spinner=False)
def _cached_model(config: RunConfig):
    """A built model (Keras's random weights; only its structure is read) and its lock."""
    return build_model(config), threading.Lock()


# A trace is ~1.3 KB pickled: every variant at every time length a class tries (4 to 40, say)
# fits, where 64 entries held ten settings' six variants and a class's settings evicted each other.
@st.cache_resource(max_entries=512, show_spinner=False)
def _cached_trace(config: RunConfig) -> tuple:
    from hierlstm.distributed import planned_replicas
    from hierlstm.model.trace import trace_shapes

    with COMPUTING:
        model, lock = _cached_model(_model_key(config))
        with lock:
            return tuple(trace_shapes(config, model, planned_replicas(config)))


def trace(config: RunConfig) -> tuple:
    """The TraceSteps of `config` (cached); symbolic and concrete shapes, no timing."""
    return _cached_trace(_trace_key(config))


def trace_problem(config: RunConfig) -> str:
    """Why tracing `config` would take too long ("" if it will not): the trace budget of
    `hierlstm.admission.limits`, in the session's language."""
    try:
        check_trace_budget(config)
    except LimitError:
        return text(
            "trace.static_too_long",
            variant=config.variant,
            limit=current_limits().trace_budget_steps,
            time=config.time_steps,
            seconds=config.time_steps * TRACE_SECONDS_PER_CALL,
        )
    return ""


def model_lstms(config: RunConfig) -> list[tuple[str, str, object]]:
    """(path, kind, layer) of every LSTM in the variant's model: kind "layer" for a Keras
    `LSTM` (cuDNN-eligible), "cell" for an `RNN(LSTMCell)` or a custom cell's LSTM."""
    import keras

    from hierlstm.model.layers import NestedCell, VectorizedSummariser

    model, _ = _cached_model(_model_key(config))
    found = []

    def visit(layer, prefix):
        path = f"{prefix}{layer.name}"
        if isinstance(layer, keras.layers.LSTM):
            found.append((path, "layer", layer))
        elif isinstance(layer, keras.layers.RNN):
            if isinstance(layer.cell, NestedCell):
                found.append(
                    (f"{path}/{layer.cell.name}/inner_lstm", "cell", layer.cell.inner_lstm)
                )
                found.append(
                    (f"{path}/{layer.cell.name}/outer_cell", "cell", layer.cell.outer_cell)
                )
            else:
                found.append((path, "cell", layer))
        elif isinstance(layer, keras.layers.TimeDistributed):
            visit(layer.layer, path + "/")
        elif isinstance(layer, VectorizedSummariser):
            visit(layer.inner_lstm, path + "/")

    for layer in model.layers:
        visit(layer, "")
    return found


@st.cache_resource(max_entries=8, show_spinner=False)
def _sharing_models(units: int, rows: int, features: int) -> dict:
    from hierlstm.model.sharing import FORMS, build_pair

    return {form: (build_pair(form, units, rows, features), threading.Lock()) for form in FORMS}


@st.cache_resource(max_entries=16, show_spinner=False)
def sharing_reports(units: int, rows: int, features: int, sequences: int) -> dict:
    """Per form, the live SharingReport on (sequences, rows, features) inputs (cached)."""
    from hierlstm.model.sharing import pair_inputs, sharing_report

    inputs = pair_inputs(sequences, rows, features)
    reports = {}
    with COMPUTING:
        for form, (model, lock) in _sharing_models(units, rows, features).items():
            with lock:
                reports[form] = sharing_report(model, inputs)
    return reports


def sharing_reports_of(config: RunConfig) -> dict:
    """`sharing_reports` at a config's sizes, as the Weight sharing and Lesson pages show them
    (and the warm-up makes them): its inner units over its pooled rows of `filters` features,
    one sequence per batch item."""
    return sharing_reports(
        config.inner_units, config.pooled_height, config.filters, config.batch_size
    )


def forget_memory(config: RunConfig, seed: int) -> dict:
    """The Lesson's forget gate (`whatif.summary_memory`) at `config`'s geometry, from the seeded
    parameters, on the rising chirp over 8 time steps (each time step's summary is its own).
    Cached by the geometry alone: the numpy oracle reads nothing else, so a batch, a variant or a
    precision chosen costs no recomputing."""
    sizes = {name: getattr(config, name) for name in GEOMETRY}
    return _forget_memory(RunConfig(**sizes, time_steps=8, batch_size=1), seed)


@st.cache_data(max_entries=16, show_spinner=False)
def _forget_memory(config: RunConfig, seed: int) -> dict:
    from hierlstm.inside.sounds import sound_input
    from hierlstm.inside.whatif import summary_memory
    from hierlstm.model.params import init_params

    picture = sound_input("rising", config.height, config.time_steps, seed)
    with COMPUTING:
        return summary_memory(init_params(config, seed), picture[None, :, :, None], config)


@st.cache_resource(max_entries=4, show_spinner=False)
def pitfall_outcomes(outer_units: int) -> tuple:
    """The answer's TimeDistributed model at unknown length, run live at (batch, time) =
    (2, 4), (5, 4) and (4, 4): wrong shape, an error, and the one case that is right."""
    from hierlstm.model.pitfalls import time_distributed_unknown_length

    config = RunConfig(outer_units=outer_units)
    with COMPUTING:
        return tuple(
            time_distributed_unknown_length(batch, time, config=config)
            for batch, time in ((2, 4), (5, 4), (4, 4))
        )


# A page's figures at one key are ~0.1-1 MB (the Inside page's seven heatmaps at 40 steps are the
# largest): a class's time lengths (4 to 40) in two languages fit.
@st.cache_resource(max_entries=128, show_spinner=False)
def _figure(key: tuple, _make: Callable[[], Any]):
    return _make()


def figure(key: tuple, make: Callable[[], Any]):
    """`make()` (a figure, or several in a dict), made once per `key` for the whole server and
    shared by every session that asks with the same key. `key` names everything the figures
    show: the figure's name, the data they are drawn from (the data itself where it is small,
    which Streamlit hashes; else a name for it, such as a digest), the selection and the
    language. Whoever reads them must not
    change them (`st.plotly_chart` copies what it sends). Building a plotly figure is mostly
    plotly validating it, which made most of a rerun of the pages that draw large ones; a
    rerun now pays for sending its figures, not for making them again."""
    return _figure(key, make)


@st.cache_resource(max_entries=4, show_spinner=False)
def _store(path: str) -> ResultStore:
    return ResultStore(path)


def result_store() -> ResultStore | None:
    """The results file ($HIERLSTM_DB, else the XDG default), one instance per path; None when
    the machine refuses it (`store_refusal` says why)."""
    try:
        return _store(str(default_path()))
    except Refused:  # not cached: the next call tries again (a folder made writable, say)
        return None


def store_path() -> Path:
    return default_path()


def stored_values(store: ResultStore, columns: tuple[str, ...]) -> dict[str, list]:
    """{column: the values stored there, each once} (`ResultStore.distinct`), read again only
    when a row was added since (`ResultStore.version`, one small query): the Results page's
    filters offer them on every rerun. Raises `Refused` as the store does."""
    return _stored_values(str(store.path), store.version(), columns, store)


@st.cache_data(max_entries=4, show_spinner=False)
def _stored_values(path: str, version: tuple[int, int], columns: tuple, _store) -> dict:
    return {column: _store.distinct(column) for column in columns}


@st.cache_data(max_entries=64, show_spinner=False)
def run_diff_rows(path: str, ids: tuple[str, ...]) -> list[dict]:
    """The stored rows of one run (`ids`) and, for each, the newest earlier row of its settings:
    every row the run diff reads (`diff_view.against_previous`), read from the store once per run
    rather than on every rerun of its page (what came before a stored run never changes). SQLite
    finds the rows of the run's settings (`ResultStore.rows(where=...)`): in a class the store
    holds thousands, and a copy of them all per new run (65 a minute at 30 sessions) was the
    server's largest CPU line and kept its memory growing with the store. The rule
    (`previous_row`) then reads only those. Raises `Refused` as the store does."""
    from hierlstm.records import CONFIG_COLUMNS
    from hierlstm.results.diff import previous_row

    store = _store(path)
    ran = store.rows(where={"id": ids}).to_dict("records")
    settings = (*CONFIG_COLUMNS.values(), "device")
    alike = {tuple(row[column] for column in settings) for row in ran}
    rows = [
        row
        for values in alike
        for row in store.rows(
            where={c: [v] for c, v in zip(settings, values, strict=True)}
        ).to_dict("records")
    ]
    previous = [previous_row(rows, row, exclude=ids) for row in ran if row["status"] == "ok"]
    return ran + [row for row in previous if row is not None]


_refused_writes: dict[str, Refusal] = {}  # path -> the last write refused there, until one lands
_writes_lock = threading.Lock()


def store_refusal() -> Refusal | None:
    """Why results are not being kept: their file cannot be opened, or its last write was
    refused (`note_write`); None while they are."""
    path = str(default_path())
    try:
        _store(path)
    except Refused as error:
        return error.refusal
    with _writes_lock:
        return _refused_writes.get(path)


def note_write(refused: Refused | None) -> None:
    """A run's writes to the results file: refused (`hierlstm.measure.Stored.refused`), or landed
    (None)."""
    path = str(default_path())
    with _writes_lock:
        if refused is None:
            _refused_writes.pop(path, None)
        else:
            _refused_writes[path] = refused.refusal

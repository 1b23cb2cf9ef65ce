"""Small display helpers shared by the pages: a chart with its CSV, a keyed table, tables headed
in the session's language (built by `hierlstm.tables`, which notebooks share), the LSTM kernel
each LSTM ran, the source code that runs, times as text."""

from __future__ import annotations

import inspect
import math
from collections.abc import Sequence

import pandas as pd
import streamlit as st

from hierlstm import tables
from hierlstm.app.caches import model_lstms
from hierlstm.app.devices import cached_device_report
from hierlstm.app.state import label, language, text
from hierlstm.i18n import MESSAGES
from hierlstm.model import cudnn, trace_notes
from hierlstm.records import BenchResult
from hierlstm.registry import BACKEND_RECORDS


def _translated_reason(english: str) -> str:
    """A backend's kernel reason (the English of a `kernel.why.*` message) in the session's
    language; as it is when no message has that English."""
    if not english:
        return text("kernel.why.cudnn")
    keys = {MESSAGES[key]["en"]: key for key in MESSAGES if key.startswith("kernel.why.")}
    return text(keys[english]) if english in keys else english


def lstm_kernel_rows(results: Sequence[BenchResult]) -> pd.DataFrame:
    """The LSTM kernel that ran, per LSTM of every measured variant, and why (the rule of
    `hierlstm.model.cudnn`, the same as the harness's `kernel_reason`). A JAX or torch run's
    is what its worker found and its backend's rule (`hierlstm.backends.kernels`); with several
    backends each variant is named with its backend."""
    report = cached_device_report()
    several = len({result.config.backend for result in results}) > 1
    rows = []
    for result in results:
        if result.status != "ok":
            continue
        config = result.config
        for path, kind, _layer in model_lstms(config):
            here = BACKEND_RECORDS[config.backend].in_process  # else a worker found the kernel
            if not here and kind == "cell":  # never cuDNN, any backend
                ran, why = "generic", text("kernel.why.cell")
            elif not here:  # the worker's reason: a kernel.why.* in English
                ran, why = result.kernel, _translated_reason(result.kernel_reason)
            elif kind == "layer" and result.kernel == "cudnn":
                ran, why = "cudnn", text("kernel.why.cudnn")
            else:
                key = cudnn.RULES[config.backend](
                    config,
                    cuda_build=report.cuda_build,
                    gpu_visible=bool(report.gpus),
                    cell=kind == "cell",
                )
                ran, why = "generic", text(key or "kernel.why.other")
            variant, kind = label(config, several), text(f"kernel.kind.{kind}")
            rows.append({"variant": variant, "lstm": path, "kind": kind, "ran": ran, "why": why})
    return named(rows, "kernel.col.")


# --- display helpers -------------------------------------------------------------------------

_PNG = {"format": "png", "scale": 2}


def chart(figure, data: pd.DataFrame | None, key: str, *captions: str) -> None:
    """A plotly figure (PNG from its toolbar's camera button), its data as CSV, then
    `captions`, one line each."""
    config = {"displaylogo": False, "toImageButtonOptions": {**_PNG, "filename": f"hierlstm-{key}"}}
    st.plotly_chart(figure, key=key, theme="streamlit", config=config, width="stretch")
    if data is not None:
        csv = data.to_csv(index=False)
        download(text("download.chart_csv"), csv, f"hierlstm-{key}.csv", f"{key}-csv", "tertiary")
    for line in captions:
        st.caption(line)


def chart_row(*charts: tuple | None) -> list:
    """Charts side by side, one column each: `chart`'s arguments as a tuple per chart, or None
    for a column the page fills itself; returns the columns."""
    columns = st.columns(len(charts))
    for column, arguments in zip(columns, charts, strict=True):
        if arguments is not None:
            with column:
                chart(*arguments)
    return columns


def code_expander(label: str, key: str):
    """An expander of code, drawn only while open (opening it reruns the page): a closed one
    costs a new browser no code highlighter (1.6 MB). The expander, or None while closed."""
    expander = st.expander(label, icon=":material/code:", key=key, on_change="rerun")
    return expander if expander.open else None


def error(message: str) -> None:
    """One line of what went wrong."""
    st.error(message, icon=":material/error:")


# A .keras model is a zip archive.
_MIMES = {"csv": "text/csv", "json": "application/json", "zip": "application/zip"}
_MIMES["keras"] = _MIMES["zip"]


def download(label: str, data, file_name: str, key: str, kind="secondary", where=st) -> None:
    """A download button (in `where`, a column) that does not rerun the page; `data` may be a
    function, called only when clicked. The MIME type follows the file name's extension."""
    where.download_button(
        label,
        data,
        file_name=file_name,
        mime=_MIMES[file_name.rsplit(".", 1)[-1]],
        key=key,
        type=kind,
        icon=":material/download:",
        on_click="ignore",
    )


def table(frame: pd.DataFrame, key: str, static: bool = False, **options) -> None:
    """A read-only table inside a keyed container (a display-only table keeps no key, so tests
    find it through its container). `static`: every cell shown in full, text wrapped (for
    short tables of sentences); otherwise a scrollable, sortable, downloadable grid."""
    with st.container(key=key):
        if static:
            st.table(frame, hide_index=True, **options)
        else:
            st.dataframe(frame, hide_index=True, **options)


def named(rows, prefix: str) -> pd.DataFrame:
    """A table of `rows` (dicts, or a frame) whose headers are the catalogue's `prefix` +
    column, in the session's language."""
    return tables.named(rows, prefix, language())


def headed(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose headers are its columns' names in the catalogue (`column.*`), in the
    session's language; a column the catalogue does not name keeps its own."""
    return tables.headed(frame, language())


def step_note(step) -> str:
    """The step's one-line explanation in the session's language: its catalogue message, filled
    with the values the trace computed."""
    return trace_notes.step_note(step, language())


def related_sources(function) -> list[tuple[str, str]]:
    """(name, source) of `function` and of the hierlstm functions and classes it uses, read
    from the running code: what is shown is what runs."""
    seen, order = set(), []

    def visit(obj, depth):
        if obj in seen or depth > 2:
            return
        seen.add(obj)
        order.append(obj)
        code = getattr(obj, "__code__", None)
        if code is None:
            return
        module_globals = getattr(obj, "__globals__", {})
        for name in code.co_names:
            found = module_globals.get(name)
            if (inspect.isfunction(found) or inspect.isclass(found)) and getattr(
                found, "__module__", ""
            ).startswith("hierlstm."):
                visit(found, depth + 1)

    visit(function, 0)
    return [(f"{obj.__module__}.{obj.__qualname__}", inspect.getsource(obj)) for obj in order]


def format_ms(seconds: float) -> str:
    """Seconds as milliseconds to three figures ("8.1 ms"), whole past a second ("1,630 ms",
    never "1.63e+03 ms"); "—" for none."""
    if seconds is None or math.isnan(seconds):
        return "—"
    ms = seconds * 1e3
    return f"{ms:,.0f} ms" if ms >= 1000 else f"{ms:.3g} ms"

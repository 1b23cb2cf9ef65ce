"""The look every hierlstm figure shares: a colour-blind-safe colour per variant, a bar pattern and
line dash per Keras backend, titles, legends, p10-p90 error bars, and the empty figure. Text, grid
and background colours are left to the viewer's theme; no Streamlit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from hierlstm.registry import VARIANTS

# Okabe-Ito: distinguishable with colour-blindness, legible on white and on near-black.
_PALETTE = ("#D55E00", "#E69F00", "#0072B2", "#009E73", "#CC79A7", "#56B4E9", "#999999")


# One bar pattern and one line dash per backend or runtime, so colour keeps meaning the variant.
BACKEND_PATTERNS = {
    "tensorflow": "",
    "jax": "/",
    "torch": "x",
    "onnxruntime": ".",
    "openvino": "+",
}
BACKEND_DASHES = {
    "tensorflow": "solid",
    "jax": "dash",
    "torch": "dot",
    "onnxruntime": "dashdot",
    "openvino": "longdash",
}


def backend_pattern(name: str) -> str:
    return BACKEND_PATTERNS.get(name, ".")


def backend_marker_pattern(shape) -> dict:
    """A bar marker's pattern of `shape` (one, or one per bar: `backend_pattern`s), drawn over
    the bar's own colour, so that colour keeps meaning the variant and values stay legible."""
    return {"shape": shape, "fillmode": "overlay", "fgcolor": "rgba(255, 255, 255, 0.6)", "size": 9}


def backend_dash(name: str) -> str:
    return BACKEND_DASHES.get(name, "dashdot")


def several_backends(frame: pd.DataFrame) -> bool:
    """Whether `frame`'s rows ran on more than one Keras backend (a `backend` column)."""
    return "backend" in frame and frame["backend"].nunique() > 1


def pair_labels(frame: pd.DataFrame) -> list[str]:
    """Each row's variant, with its backend when the frame has several ("folded · jax")."""
    if not several_backends(frame):
        return frame["variant"].astype(str).tolist()
    return [f"{v} · {b}" for v, b in zip(frame["variant"], frame["backend"], strict=True)]


def variant_color(name: str) -> str:
    """One stable colour per variant: registry order, then a hash for names added later."""
    names = list(VARIANTS)
    index = names.index(name) if name in names else sum(map(ord, name))
    return _PALETTE[index % len(_PALETTE)]


_LEGEND_TOP = {"orientation": "h", "yanchor": "bottom", "y": 1.0, "xanchor": "right", "x": 1.0}
_LEGEND_RIGHT = {"orientation": "v", "yanchor": "top", "y": 1.0, "xanchor": "left", "x": 1.02}


def bar_label(value: float) -> str:
    """A bar's number: three significant digits, whole numbers from 1,000 on (never 1.22e+03)."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def apply_layout(
    figure: go.Figure, title: str, x_title: str, y_title: str, legend_right=False, **extra
) -> go.Figure:
    """Title, axis titles, room for them, and a legend that never covers the title: above the
    plot for two or three entries, at the right for more (`legend_right`)."""
    figure.update_layout(
        title={"text": title, "x": 0.0, "xanchor": "left"},
        xaxis_title=x_title,
        yaxis_title=y_title,
        margin={"l": 70, "r": 20, "t": 70, "b": 60},
        legend=_LEGEND_RIGHT if legend_right else _LEGEND_TOP,
        hovermode="closest",
        **extra,
    )
    figure.update_xaxes(automargin=True)
    figure.update_yaxes(automargin=True)
    return figure


def ok_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows that ran (status "ok"); every row of a frame without a status column."""
    return frame[frame["status"] == "ok"] if "status" in frame else frame


def error_bars(values, low, high) -> dict:
    """Plotly `error_y` / `error_x` from each bar's value and its low and high (p10, p90)."""
    values, low, high = (np.asarray(v, dtype=float) for v in (values, low, high))
    return {
        "type": "data",
        "symmetric": False,
        "array": np.maximum(high - values, 0),
        "arrayminus": np.maximum(values - low, 0),
        "thickness": 1.5,
    }


def variant_line(variant: str, x, y, backend: str | None = None, **options) -> go.Scatter:
    """One variant's curve in its colour (`options`: error_y, ...); with a `backend`, in that
    backend's dash and named "variant · backend"."""
    line = {"color": variant_color(variant), "width": 2.5}
    if backend is not None:
        line["dash"] = backend_dash(backend)
    return go.Scatter(
        x=x,
        y=y,
        mode="lines+markers",
        name=variant if backend is None else f"{variant} · {backend}",
        line=line,
        **options,
    )


def series(frame: pd.DataFrame):
    """(variant, backend, rows) per curve: per variant, or per (variant, backend) when the
    rows ran on several Keras backends (backend None otherwise)."""
    if several_backends(frame):
        yield from ((*key, rows) for key, rows in frame.groupby(["variant", "backend"], sort=False))
    else:
        yield from ((key, None, rows) for key, rows in frame.groupby("variant", sort=False))


def curves(frame, x, y, titles, spread=None, scale=1.0, log=False, **layout) -> go.Figure:
    """One curve of `frame[y] * scale` over `frame[x]` per variant, or per (variant, backend)
    when the rows ran on several backends, with p10-p90 bars from the `spread` columns (low,
    high); `titles` are (title, x title, y title); log-log with `log`. The failed rows are left
    out; with none left, the empty figure."""
    frame = ok_rows(frame)
    if frame.empty:
        return empty_figure(titles[0], "—")
    figure = go.Figure()
    for variant, backend, points in series(frame):
        points = points.sort_values(x)
        values = points[y].to_numpy(dtype=float) * scale
        bars = {}
        if spread:
            low, high = (points[name] * scale for name in spread)
            bars["error_y"] = error_bars(values, low, high)
        figure.add_trace(variant_line(variant, points[x], values, backend, **bars))
    if log:
        figure.update_xaxes(type="log", dtick="D2")
        figure.update_yaxes(type="log", dtick="D2")
    return apply_layout(figure, *titles, **layout)


def grouped_bars(x, series, title: str, x_title: str, y_title: str, **layout) -> go.Figure:
    """Bars side by side at each of `x`, one trace per (name, values, color, pattern) in `series`
    (a color, or one per bar; a bar pattern, "" for none), each bar labelled with its value."""
    figure = go.Figure()
    for name, values, color, pattern in series:
        values = np.asarray(values, dtype=float)
        figure.add_bar(
            x=list(x),
            y=values,
            name=name,
            marker_color=color,
            marker_pattern_shape=pattern,
            text=[bar_label(value) for value in np.nan_to_num(values)],
            textposition="outside",
            cliponaxis=False,
        )
    return apply_layout(figure, title, x_title, y_title, barmode="group", **layout)


def empty_figure(title: str, message: str) -> go.Figure:
    """A titled figure with `message` in its middle and no axes: what a chart of no rows shows."""
    figure = go.Figure()
    figure.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    figure.update_xaxes(visible=False)
    figure.update_yaxes(visible=False)
    return apply_layout(figure, title, "", "")

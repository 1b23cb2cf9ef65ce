"""Figures of the values inside the model, no Streamlit: the input spectrogram and every layer's
values as heatmaps with their axes named, the selected (t, s) marked in each (and its provenance
on the input). `values_figures` makes the Inside the tensors page's figures at once, for it and
for a notebook; the variants against the oracle are `agreement`'s, the learning curves
`learning`'s."""

from __future__ import annotations

import functools
import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from hierlstm.charts.style import apply_layout
from hierlstm.config import RunConfig
from hierlstm.i18n import DEFAULT_LANGUAGE, t
from hierlstm.inside.provenance import pooled_rows, receptive_field

MARK = {"color": "#D55E00", "width": 2}  # the selected (t, s), in every view
FIELD = {"color": "#D55E00", "width": 2, "dash": "dot"}  # its provenance on the input
SIGNED = "RdBu_r"  # conv, pooled, cell and hidden states: blue below zero, red above
UNSIGNED = "Viridis"  # the input and the gates, in [0, 1]


def _box(figure, x0, x1, y0, y1, line) -> None:
    """A rectangle around cells x0..x1, y0..y1 (inclusive) of a one-panel heatmap."""
    figure.add_shape(type="rect", x0=x0 - 0.5, x1=x1 + 0.5, y0=y0 - 0.5, y1=y1 + 0.5, line=line)


def input_figure(picture: np.ndarray, lang: str, selected, field: np.ndarray) -> go.Figure:
    """The input (height, time) with row 0 the lowest band at the bottom, the input cells that
    reach the selected (t, s) (`field`, (height, time) bool) framed."""
    figure = go.Figure(go.Heatmap(z=picture, colorscale=UNSIGNED, zmin=0, zmax=1, name="input"))
    rows, times = np.flatnonzero(field.any(axis=1)), np.flatnonzero(field.any(axis=0))
    _box(figure, times[0], times[-1], rows[0], rows[-1], FIELD)
    time_step, row = selected
    title = t("inside.fig.input", lang, t=time_step, s=row, cells=int(field.sum()))
    return apply_layout(
        figure, title, t("inside.axis.time", lang), t("inside.axis.band", lang), height=340
    )


@functools.lru_cache(maxsize=32)
def _grid(
    count: int,
    columns: int,
    titles: tuple,
    height: int,
    x_title: str,
    y_title: str,
    title_size: int | None = None,
):
    """An empty grid of `count` panels, `columns` a row, sharing their axes, `titles` in
    `title_size` (else the theme's): (its layout as JSON, each panel's (x axis, y axis)
    reference). Its panels (make_subplots), the house style
    and the axis titles on the bottom panel of each column and the first of each row were most of
    a grid figure's cost, so a grid is built once per shape and language and copied."""
    rows = math.ceil(count / columns)
    figure = make_subplots(
        rows=rows,
        cols=columns,
        subplot_titles=list(titles),
        shared_xaxes=True,
        shared_yaxes=True,
        horizontal_spacing=0.03,
        vertical_spacing=0.12 / max(1, rows / 2),
    )
    apply_layout(figure, "", "", "", height=height)  # before the axis and panel titles
    axes = [figure.get_subplot(*_panel(index, columns)) for index in range(count)]
    named = {}
    for index, panel in enumerate(axes):
        if index + columns >= count:
            named[panel.xaxis.plotly_name] = {"title": {"text": x_title}}
        if index % columns == 0:
            named[panel.yaxis.plotly_name] = {"title": {"text": y_title}}
    figure.update_layout(named)
    if title_size is not None:
        figure.update_annotations(font_size=title_size)
    refs = tuple(
        (panel.xaxis.plotly_name.replace("axis", ""), panel.yaxis.plotly_name.replace("axis", ""))
        for panel in axes
    )
    return figure.layout.to_plotly_json(), refs


def _panel(index: int, columns: int) -> tuple[int, int]:
    return index // columns + 1, index % columns + 1


def _gridded(grid, title: str, traces: list, boxes: list, line) -> go.Figure:
    """`grid` (`_grid`) with `title`, trace i in panel i, framed by box i: (x0, x1, y0, y1)
    cells inclusive."""
    layout, refs = grid
    shapes = [
        {
            "type": "rect",
            **{"xref": x, "yref": y, "x0": x0 - 0.5, "x1": x1 + 0.5, "y0": y0 - 0.5},
            **{"y1": y1 + 0.5, "line": line},
        }
        for (x, y), (x0, x1, y0, y1) in zip(refs, boxes, strict=True)
    ]
    for trace, (x, y) in zip(traces, refs, strict=True):
        trace.update(xaxis=x, yaxis=y)
    figure = go.Figure(traces, layout)
    figure.update_layout(title_text=title, shapes=shapes)
    return figure


def maps_figure(values: np.ndarray, title: str, y_title: str, lang: str, box) -> go.Figure:
    """Small multiples of (rows, time, channels) values, one panel a channel, one colour scale;
    `box` (t0, t1, row0, row1) frames what feeds or is the selected (t, s) in every panel."""
    channels = values.shape[-1]
    columns = min(channels, 4)
    names = tuple(t("inside.fig.channel", lang, channel=index) for index in range(channels))
    height = 150 + 150 * math.ceil(channels / columns)
    grid = _grid(channels, columns, names, height, t("inside.axis.time", lang), y_title, 11)
    limit = float(np.max(np.abs(values))) or 1.0
    traces = [
        go.Heatmap(z=values[:, :, index], coloraxis="coloraxis", name=names[index])
        for index in range(channels)
    ]
    figure = _gridded(grid, title, traces, [box] * channels, MARK)
    figure.update_layout(coloraxis={"colorscale": SIGNED, "cmin": -limit, "cmax": limit})
    return figure


def sequence_figure(values: np.ndarray, lang: str, selected) -> go.Figure:
    """The permuted tensor at the selected t: its sub-sequence (inner steps, channels), the
    inner LSTM's input, step s framed."""
    time_step, row = selected
    figure = go.Figure(go.Heatmap(z=values, colorscale=SIGNED, zmid=0, name="permute"))
    _box(figure, 0, values.shape[1] - 1, row, row, MARK)
    title = t("inside.fig.permute", lang, t=time_step, steps=values.shape[0])
    x_title, y_title = t("inside.axis.channel", lang), t("inside.axis.inner_step", lang)
    return apply_layout(figure, title, x_title, y_title, height=340)


GATE_SCALES = {"i": UNSIGNED, "f": UNSIGNED, "g": SIGNED, "o": UNSIGNED, "c": SIGNED, "h": SIGNED}
# Three colour bars: the gates in [0, 1], g and h in [-1, 1] (tanh), the cell state its own.
_BARS = {"i": (0.86, "i f o"), "g": (0.5, "g h"), "c": (0.14, "c")}


def _lstm_range(name: str, values: dict) -> tuple[float, float]:
    if GATE_SCALES[name] == UNSIGNED:
        return 0.0, 1.0
    if name == "c":
        limit = float(np.max(np.abs(values["c"]))) or 1.0
        return -limit, limit
    return -1.0, 1.0


def lstm_figure(values: dict, title: str, x_title: str, lang: str, column: int) -> go.Figure:
    """An LSTM's gates i, f, g, o and states c, h, each (steps, units), as (units x steps)
    panels, the selected step `column` framed in each."""
    names = list(GATE_SCALES)
    titles = tuple(t(f"inside.gate.{name}", lang) for name in names)
    panels = _grid(len(names), 3, titles, 520, x_title, t("inside.axis.unit", lang))
    traces, boxes = [], []
    for name in names:
        grid = values[name].T  # (units, steps)
        low, high = _lstm_range(name, values)
        bar = _BARS.get(name)
        traces.append(
            go.Heatmap(
                z=grid,
                colorscale=GATE_SCALES[name],
                zmin=low,
                zmax=high,
                showscale=bar is not None,
                colorbar={"len": 0.28, "y": bar[0], "thickness": 12, "title": {"text": bar[1]}}
                if bar
                else None,
                name=name,
            )
        )
        boxes.append((column, column, 0, grid.shape[0] - 1))
    return _gridded(panels, title, traces, boxes, MARK)


def summary_figure(values: np.ndarray, lang: str, time_step: int) -> go.Figure:
    """The summary (time, inner units) as (units x time), column t framed."""
    grid = values.T
    figure = go.Figure(go.Heatmap(z=grid, colorscale=SIGNED, zmid=0, name="summary"))
    _box(figure, time_step, time_step, 0, grid.shape[0] - 1, MARK)
    title = t("inside.fig.summary", lang, t=time_step)
    x_title, y_title = t("inside.axis.time", lang), t("inside.axis.unit", lang)
    return apply_layout(figure, title, x_title, y_title, height=340)


def input_field(config: RunConfig, selected) -> np.ndarray:
    """(height, time) bool: the input cells that reach the selected (t, s) of `config`'s model."""
    time_step, row = selected
    return receptive_field(
        time_step,
        row,
        height=config.height,
        time_steps=config.time_steps,
        pool_height=config.pool_height,
        kernel_size=config.kernel_size,
    )


def _one_example(values: dict) -> dict:
    """`layer_values`' arrays at the batch's first example; one example's values as they are."""
    if values["summary"].ndim == 3:  # (batch, time, inner units)
        return {name: value[0] for name, value in values.items()}
    return values


def values_figures(
    config: RunConfig, picture: np.ndarray, values: dict, selected=(0, 0), lang=DEFAULT_LANGUAGE
) -> dict[str, go.Figure]:
    """Every figure of the Inside the tensors page, the selected (t, s) framed in each.

    Args:
        config: the model's geometry (height, pool height, kernel size, time steps).
        picture: the input, (height, time), e.g. `hierlstm.inside.sound_input("chirp", 36, 12)`.
        values: `hierlstm.inside.layer_values(config, params, picture[None, :, :, None])` (its
            batch's first example is drawn), or one example's values.
        selected: (t, s), the outer time step and the inner step (a pooled row).
        lang: "en" or "zh".

    Returns:
        {name: figure} in the order the tensor flows: "input" (its provenance framed), "conv",
        "pool" (a panel a channel), "permute" (the sub-sequence at t), "inner" (the inner LSTM's
        gates and states at t), "summary", "outer" (the outer LSTM's).

    Example:
        `values_figures(config, picture, values, (3, 5))["inner"].show()` in a notebook.
    """
    values = _one_example(values)
    time_step, row = selected
    conv = pooled_rows(row, config.pool_height)
    inner = {name: values[f"inner_{name}"][time_step] for name in GATE_SCALES}
    return {
        "input": input_figure(picture, lang, selected, input_field(config, selected)),
        "conv": maps_figure(
            values["conv"],
            t("inside.fig.conv", lang),
            t("inside.axis.height", lang),
            lang,
            (time_step, time_step, conv.start, conv.stop - 1),
        ),
        "pool": maps_figure(
            values["pool"],
            t("inside.fig.pool", lang, pool=config.pool_height),
            t("inside.axis.pooled", lang),
            lang,
            (time_step, time_step, row, row),
        ),
        "permute": sequence_figure(values["permute"][time_step], lang, selected),
        "inner": lstm_figure(
            inner,
            t("inside.fig.inner", lang, t=time_step, steps=config.pooled_height, s=row),
            t("inside.axis.inner_step", lang),
            lang,
            row,
        ),
        "summary": summary_figure(values["summary"], lang, time_step),
        "outer": lstm_figure(
            {name: values[f"outer_{name}"] for name in GATE_SCALES},
            t("inside.fig.outer", lang, t=time_step),
            t("inside.axis.time", lang),
            lang,
            time_step,
        ),
    }

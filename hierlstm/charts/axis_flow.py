"""The shape trace as a picture: each named axis a coloured band through the model's top-level
steps, showing where an axis moves, is folded or consumed. `TraceStep`s in, a figure out."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from hierlstm.charts.style import apply_layout
from hierlstm.i18n import t

_BASE_AXES = ("batch", "time", "height", "channels", "units")
_AXIS_COLORS = {
    "batch": "#0072B2",
    "time": "#D55E00",
    "height": "#009E73",
    "channels": "#CC79A7",
    "units": "#E69F00",
}


def _axis_slots(axes: Sequence[str]) -> dict[str, int]:
    """Base axis name -> position in the shape; "batch*time" puts both at one position."""
    slots = {}
    for position, name in enumerate(axes):
        for part in name.split("*"):
            slots[part] = position
    return slots


def axis_flow_figure(steps, lang: str = "en", title: str | None = None) -> go.Figure:
    """Each named axis as a coloured band through every top-level step of a trace.

    x: the steps in order; y: the axis's position in that step's shape (first axis on top).
    A band that changes position moves (Permute); two bands that meet are folded into one axis
    (batch*time); a band that ends is consumed (the LSTM reads the height and channels).

    Args:
        steps: `hierlstm.trace_shapes(config)`'s trace (any `TraceStep`s).
        lang: "en" or "zh".
        title: the figure's title; by default the catalogue's.

    Returns:
        A plotly figure, one band (trace) per axis present: batch, time, height, channels,
        units.

    Example:
        `axis_flow_figure(trace_shapes(RunConfig(variant="folded")), "zh").show()`.
    """
    top = [step for step in steps if step.depth == 0]
    figure = go.Figure()
    labels = [step.path for step in top]
    offsets = {"batch": -0.1, "time": 0.1}  # folded bands run side by side, not on top
    for axis in _BASE_AXES:
        xs, ys, texts, hovers = [], [], [], []
        present = False
        for index, step in enumerate(top):
            slots = _axis_slots(step.axes)
            if axis not in slots:
                xs.append(None)
                ys.append(None)
                texts.append("")
                hovers.append("")
                continue
            present = True
            position = slots[axis]
            name = step.axes[position]
            folded = "*" in name
            size = step.concrete_shape[position]
            symbolic = step.symbolic_shape[position]
            xs.append(index)
            ys.append(position + (offsets.get(axis, 0.0) if folded else 0.0))
            if not folded:
                texts.append(f"{t('axis.' + axis, lang)} {size}")
            elif axis == "time":  # one label for the folded axis
                parts = " × ".join(t("axis." + part, lang) for part in name.split("*"))
                texts.append(f"{parts} {size}")
            else:
                texts.append("")
            hovers.append(
                t(
                    "chart.flow.hover",
                    lang,
                    step=step.path,
                    axis=" × ".join(t("axis." + part, lang) for part in name.split("*")),
                    size=size,
                    symbolic="None" if symbolic is None else symbolic,
                    position=position,
                )
            )
        if not present:
            continue
        figure.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines+markers+text",
                name=t("axis." + axis, lang),
                line={"color": _AXIS_COLORS[axis], "width": 10, "shape": "spline"},
                marker={"size": 16, "color": _AXIS_COLORS[axis]},
                text=texts,
                textposition="top center",
                hovertext=hovers,
                hoverinfo="text",
                opacity=0.85,
                connectgaps=False,
            )
        )
    depth = max((len(step.axes) for step in top), default=1)
    figure.update_xaxes(
        tickmode="array", tickvals=list(range(len(labels))), ticktext=labels, showgrid=False
    )
    figure.update_yaxes(
        autorange="reversed",
        tickmode="array",
        tickvals=list(range(depth)),
        range=[depth - 0.4, -0.9],  # room above the first band for its size labels
        zeroline=False,
    )
    return apply_layout(
        figure,
        title or t("chart.flow.title", lang),
        t("chart.flow.x", lang),
        t("chart.flow.y", lang),
        legend_right=True,
        height=360,
    )

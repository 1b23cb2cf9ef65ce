"""Bar charts of measured times: one benchmark's variants (latency, paired speed-up, first call
against steady state, throughput, GFLOP/s, per-layer breakdown), stored runs side by side, rows
that are not variants (weight-sharing forms, precisions), and the weight-sharing page's gradient
norms. `CompareResult.to_frame()`, `layer_breakdown` frames and store rows in, plotly figures
out; no Streamlit. Every axis title names its unit.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from hierlstm.app.figure_style import (
    apply_layout,
    backend_marker_pattern,
    backend_pattern,
    empty_figure,
    error_bars,
    ok_rows,
    pair_labels,
    several_backends,
    variant_color,
)
from hierlstm.i18n import t

# --- one benchmark ---------------------------------------------------------------------------


def _bars(frame, column, low, high, label_column, scale, title, x_title, y_title) -> go.Figure:
    """One bar per row, coloured by variant. Rows of several Keras backends: one trace per
    (variant, backend), in its variant's colour and its backend's pattern, named by both in
    the legend, each bar labelled with its backend."""
    frame = ok_rows(frame)
    if frame.empty:
        return empty_figure(title, "—")
    several = several_backends(frame)
    if label_column == "variant":
        labels = pair_labels(frame)
    else:
        labels = frame[label_column].astype(str).tolist()
    frame = frame.assign(_label=labels)
    groups = frame.groupby(["variant", "backend"], sort=False) if several else [(None, frame)]
    figure = go.Figure()
    for key, rows in groups:
        values = rows[column].to_numpy(dtype=float) * scale
        bar = go.Bar(
            x=rows["_label"].tolist(),
            y=values,
            marker_color=[variant_color(name) for name in rows["variant"]],
            text=[f"{value:.3g}" for value in values],
            # Inside the bar, so the value never collides with the p10-p90 whisker above it.
            textposition="inside" if low is not None else "outside",
            insidetextanchor="middle",
            cliponaxis=False,
            hovertemplate="%{x}: %{y:.4g}<extra></extra>",
        )
        if key is not None:  # the pattern over the variant's colour, so the values stay legible
            bar.name = f"{key[0]} · {key[1]}"
            bar.marker.pattern = backend_marker_pattern(backend_pattern(key[1]))
        if low is not None:
            bar.error_y = error_bars(
                values,
                rows[low].to_numpy(dtype=float) * scale,
                rows[high].to_numpy(dtype=float) * scale,
            )
        figure.add_trace(bar)
    figure.update_yaxes(rangemode="tozero")
    if several:  # one bar per category: traces side by side at full width, in row order
        figure.update_layout(barmode="relative")
        figure.update_xaxes(categoryorder="array", categoryarray=labels)
        return apply_layout(figure, title, x_title, y_title, legend_right=True)
    return apply_layout(figure, title, x_title, y_title, showlegend=False)


def latency_figure(
    frame: pd.DataFrame, lang: str = "en", label_column: str = "variant", task: str = "inference"
):
    """Median time per forward pass (or per training step) with p10-p90 bars, one bar per row."""
    suffix = ".training" if task == "training" else ""
    return _bars(
        frame,
        "median_s",
        "p10_s",
        "p90_s",
        label_column,
        1e3,
        t("chart.latency.title" + suffix, lang),
        t("chart.variant", lang),
        t("chart.latency.y" + suffix, lang),
    )


def speedup_figure(frame: pd.DataFrame, baseline: str, lang: str = "en") -> go.Figure:
    """Paired speed-up against the baseline (median of per-round ratios, p10-p90 bars)."""
    figure = _bars(
        frame,
        "speedup_vs_baseline",
        "speedup_p10",
        "speedup_p90",
        "variant",
        1.0,
        t("chart.speedup.title", lang, baseline=baseline),
        t("chart.variant", lang),
        t("chart.speedup.y", lang, baseline=baseline),
    )
    figure.add_hline(y=1.0, line_dash="dot", line_color="#999999")
    return figure


def first_call_figure(frame: pd.DataFrame, lang: str = "en") -> go.Figure:
    """First call (tracing, compilation, first run) beside the steady-state median, log scale."""
    frame = ok_rows(frame)
    title = t("chart.first_call.title", lang)
    if frame.empty:
        return empty_figure(title, "—")
    figure = go.Figure()
    for column, name, pattern in (
        ("first_call_s", t("chart.first_call.first", lang), "/"),
        ("median_s", t("chart.first_call.steady", lang), ""),
    ):
        values = frame[column].to_numpy(dtype=float) * 1e3
        figure.add_trace(
            go.Bar(
                x=pair_labels(frame),
                y=values,
                name=name,
                marker_color=[variant_color(v) for v in frame["variant"]],
                marker_pattern_shape=pattern,
                text=[f"{value:.3g}" for value in values],
                textposition="outside",
                cliponaxis=False,
            )
        )
    figure.update_yaxes(type="log", dtick="D2")
    return apply_layout(
        figure, title, t("chart.variant", lang), t("chart.first_call.y", lang), barmode="group"
    )


def throughput_figure(frame: pd.DataFrame, lang: str = "en") -> go.Figure:
    """Input spectrograms per second at the median time."""
    return _bars(
        frame,
        "samples_per_s",
        None,
        None,
        "variant",
        1.0,
        t("chart.throughput.title", lang),
        t("chart.variant", lang),
        t("chart.throughput.y", lang),
    )


def gflops_figure(frame: pd.DataFrame, lang: str = "en") -> go.Figure:
    """Analytic FLOPs of one pass divided by its median time."""
    return _bars(
        frame,
        "gflops_per_s",
        None,
        None,
        "variant",
        1.0,
        t("chart.gflops.title", lang),
        t("chart.variant", lang),
        t("chart.gflops.y", lang),
    )


def layer_breakdown_figure(frame: pd.DataFrame, variant: str, lang: str = "en") -> go.Figure:
    """Each top-level layer's median time on its real input (p10-p90 bars), in model order;
    each layer's share of the summed medians is in its label."""
    values = frame["median_s"].to_numpy(dtype=float) * 1e3
    labels = [
        f"{layer} · {share:.0%}"
        for layer, share in zip(frame["layer"], frame["share"], strict=True)
    ]
    bar = go.Bar(
        y=labels,
        x=values,
        orientation="h",
        marker_color=variant_color(variant),
        error_x=error_bars(values, frame["p10_s"] * 1e3, frame["p90_s"] * 1e3),
        hovertemplate="%{y}: %{x:.4g} ms<extra></extra>",
    )
    figure = go.Figure(bar)
    figure.update_yaxes(autorange="reversed")
    return apply_layout(
        figure,
        t("chart.layers.title", lang, variant=variant),
        t("chart.layers.x", lang),
        t("chart.layers.y", lang),
        showlegend=False,
        height=max(320, 130 + 40 * len(frame)),
    )


# --- stored runs and the other pages -----------------------------------------------------------


def runs_figure(rows: pd.DataFrame, labels: Sequence[str], lang: str = "en") -> go.Figure:
    """Stored runs side by side: median with p10-p90 bars, one bar per row (store columns)."""
    frame = rows.assign(label=list(labels))
    figure = latency_figure(frame, lang, label_column="label")
    figure.update_layout(title={"text": t("chart.runs.title", lang)})
    figure.update_xaxes(title_text=t("chart.runs.x", lang))
    return figure


def gradient_figure(variable_names, norms_a, norms_b, norms_total, lang: str = "en"):
    """Gradient norm per shared variable from path a, path b and both together."""
    figure = go.Figure()
    for name, values, color in (
        (t("chart.gradients.a", lang), norms_a, "#0072B2"),
        (t("chart.gradients.b", lang), norms_b, "#E69F00"),
        (t("chart.gradients.total", lang), norms_total, "#009E73"),
    ):
        figure.add_trace(
            go.Bar(
                x=list(variable_names),
                y=list(values),
                name=name,
                marker_color=color,
                text=[f"{value:.3g}" for value in values],
                textposition="outside",
                cliponaxis=False,
            )
        )
    return apply_layout(
        figure,
        t("chart.gradients.title", lang),
        t("chart.gradients.x", lang),
        t("chart.gradients.y", lang),
        barmode="group",
    )


def timing_figure(frame: pd.DataFrame, label_column: str, title: str, lang: str = "en"):
    """Median with p10-p90 bars for rows that are not variants (forms, precisions); `frame`
    has median_s, p10_s, p90_s, `label_column` and a `variant` column for the colour."""
    figure = latency_figure(frame, lang, label_column=label_column)
    figure.update_layout(title={"text": title})
    figure.update_xaxes(title_text="")
    return figure

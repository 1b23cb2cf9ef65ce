"""Bar charts of measured times: a benchmark's variants (latency, speed-up, first call, throughput,
GFLOP/s, per-layer split), stored runs side by side, non-variant rows and gradient norms. Frames in,
plotly figures out; no Streamlit. Every axis title names its unit."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from hierlstm.charts.style import (
    apply_layout,
    backend_marker_pattern,
    backend_pattern,
    bar_label,
    empty_figure,
    error_bars,
    grouped_bars,
    ok_rows,
    pair_labels,
    several_backends,
    variant_color,
)
from hierlstm.i18n import t

# --- one benchmark ---------------------------------------------------------------------------


def _bars(frame, column, lang, chart, spread=None, label_column="variant", scale=1.0, **values):
    """One bar per row of `frame[column] * scale`, coloured by variant, with p10-p90 bars from
    the `spread` columns (low, high); titled by the catalogue's `chart.<chart>.title` and
    `chart.<chart>.y` (then `suffix`, e.g. ".training"), filled with `values`. Rows of several
    Keras backends: one trace per (variant, backend), in its variant's colour and its
    backend's pattern, named by both in the legend, each bar labelled with its backend."""
    suffix = values.pop("suffix", "")
    title = t(f"chart.{chart}.title{suffix}", lang, **values)
    y_title = t(f"chart.{chart}.y{suffix}", lang, **values)
    x_title = t("chart.variant", lang)
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
            text=[bar_label(value) for value in values],
            # Inside the bar, so the value never collides with the p10-p90 whisker above it.
            textposition="inside" if spread else "outside",
            insidetextanchor="middle",
            cliponaxis=False,
            hovertemplate="%{x}: %{y:.4g}<extra></extra>",
        )
        if key is not None:  # the pattern over the variant's colour, so the values stay legible
            bar.name = f"{key[0]} · {key[1]}"
            bar.marker.pattern = backend_marker_pattern(backend_pattern(key[1]))
        if spread:
            low, high = (rows[name].to_numpy(dtype=float) * scale for name in spread)
            bar.error_y = error_bars(values, low, high)
        figure.add_trace(bar)
    figure.update_yaxes(rangemode="tozero")
    if several:  # one bar per category: traces side by side at full width, in row order
        figure.update_layout(barmode="relative")
        figure.update_xaxes(categoryorder="array", categoryarray=labels)
        return apply_layout(figure, title, x_title, y_title, legend_right=True)
    return apply_layout(figure, title, x_title, y_title, showlegend=False)


def _frame(compared) -> pd.DataFrame:
    """A comparison's frame: `CompareResult.to_frame()`, or a frame of its rows as it is."""
    return compared.to_frame() if hasattr(compared, "to_frame") else compared


def latency_figure(
    frame, lang: str = "en", label_column: str = "variant", task: str = "inference"
) -> go.Figure:
    """Median time per forward pass (or per training step) with its p10-p90 spread, a bar per
    config.

    Args:
        frame: a comparison (`hierlstm.timing.compare`'s `CompareResult`) or its `to_frame()`
            (any frame with variant, median_s, p10_s, p90_s and status).
        lang: "en" or "zh".
        label_column: the column naming each bar.
        task: "training" titles it per training step.

    Returns:
        A plotly bar chart in milliseconds, one colour a variant, one pattern a backend.

    Example:
        `latency_figure(compare([config, config.replace(variant="nested")], timing))`.
    """
    frame = _frame(frame)
    suffix = ".training" if task == "training" else ""
    spread = ("p10_s", "p90_s")
    return _bars(frame, "median_s", lang, "latency", spread, label_column, 1e3, suffix=suffix)


def speedup_figure(frame, baseline: str | None = None, lang: str = "en") -> go.Figure:
    """Paired speed-up against the baseline: the median over rounds of baseline time / its
    time, with p10-p90 bars.

    Args:
        frame: a comparison (`CompareResult`) or its `to_frame()`.
        baseline: its name in the title; by default the baseline row's variant.
        lang: "en" or "zh".

    Returns:
        A plotly bar chart, a dotted line at 1 (as fast as the baseline).
    """
    frame = _frame(frame)
    if baseline is None:
        baseline = str(frame.loc[frame["is_baseline"], "variant"].iloc[0])
    spread = ("speedup_p10", "speedup_p90")
    figure = _bars(frame, "speedup_vs_baseline", lang, "speedup", spread, baseline=baseline)
    figure.add_hline(y=1.0, line_dash="dot", line_color="#999999")
    return figure


def first_call_figure(frame: pd.DataFrame, lang: str = "en") -> go.Figure:
    """First call (tracing, compilation, first run) beside the steady-state median, log scale."""
    frame = ok_rows(frame)
    title = t("chart.first_call.title", lang)
    if frame.empty:
        return empty_figure(title, "—")
    colors = [variant_color(v) for v in frame["variant"]]
    series = [
        (t(f"chart.first_call.{name}", lang), frame[column] * 1e3, colors, pattern)
        for name, column, pattern in (("first", "first_call_s", "/"), ("steady", "median_s", ""))
    ]
    x_title, y_title = t("chart.variant", lang), t("chart.first_call.y", lang)
    return grouped_bars(
        pair_labels(frame), series, title, x_title, y_title, yaxis_type="log", yaxis_dtick="D2"
    )


def throughput_figure(frame: pd.DataFrame, lang: str = "en") -> go.Figure:
    """Input spectrograms per second at the median time."""
    return _bars(frame, "samples_per_s", lang, "throughput")


def gflops_figure(frame: pd.DataFrame, lang: str = "en") -> go.Figure:
    """Analytic FLOPs of one pass divided by its median time."""
    return _bars(frame, "gflops_per_s", lang, "gflops")


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
    series = [
        (t(f"chart.gradients.{name}", lang), values, color, "")
        for name, values, color in (
            ("a", norms_a, "#0072B2"),
            ("b", norms_b, "#E69F00"),
            ("total", norms_total, "#009E73"),
        )
    ]
    return grouped_bars(
        variable_names,
        series,
        t("chart.gradients.title", lang),
        t("chart.gradients.x", lang),
        t("chart.gradients.y", lang),
    )


def timing_figure(frame: pd.DataFrame, label_column: str, title: str, lang: str = "en"):
    """Median with p10-p90 bars for rows that are not variants (forms, precisions); `frame`
    has median_s, p10_s, p90_s, `label_column` and a `variant` column for the colour."""
    figure = latency_figure(frame, lang, label_column=label_column)
    figure.update_layout(title={"text": title})
    figure.update_xaxes(title_text="")
    return figure

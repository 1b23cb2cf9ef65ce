"""Plotly figures from hierlstm's records and DataFrames. No Streamlit here: every function takes
plain data (TraceSteps, `CompareResult.to_frame()`, `sweep` / `layer_breakdown` frames, store
rows) and a language code, and returns a `plotly.graph_objects.Figure` (or a small DataFrame the
figures are drawn from).

Figures leave colours of text, grid and background to the viewer's theme (Streamlit's light or
dark), and give each variant one colour from a colour-blind-safe palette, the same in every
chart. Every axis title names its unit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from hierlstm.app.figure_style import (
    apply_layout,
    empty_figure,
    error_bars,
    ok_rows,
    variant_color,
    variant_line,
)
from hierlstm.i18n import t
from hierlstm.registry import VARIANTS

# --- one benchmark ---------------------------------------------------------------------------


def _bars(frame, column, low, high, label_column, scale, title, x_title, y_title) -> go.Figure:
    frame = ok_rows(frame)
    if frame.empty:
        return empty_figure(title, "—")
    labels = frame[label_column].astype(str).tolist()
    values = frame[column].to_numpy(dtype=float) * scale
    colors = [variant_color(name) for name in frame["variant"]]
    bar = go.Bar(
        x=labels,
        y=values,
        marker_color=colors,
        text=[f"{value:.3g}" for value in values],
        # Inside the bar, so the value never collides with the p10-p90 whisker above it.
        textposition="inside" if low is not None else "outside",
        insidetextanchor="middle",
        cliponaxis=False,
        hovertemplate="%{x}: %{y:.4g}<extra></extra>",
    )
    if low is not None:
        bar.error_y = error_bars(
            values,
            frame[low].to_numpy(dtype=float) * scale,
            frame[high].to_numpy(dtype=float) * scale,
        )
    figure = go.Figure(bar)
    figure.update_yaxes(rangemode="tozero")
    return apply_layout(figure, title, x_title, y_title, showlegend=False)


def latency_figure(frame: pd.DataFrame, lang: str = "en", label_column: str = "variant"):
    """Median time per forward pass with p10-p90 bars, one bar per row of `frame`."""
    return _bars(
        frame,
        "median_s",
        "p10_s",
        "p90_s",
        label_column,
        1e3,
        t("chart.latency.title", lang),
        t("chart.variant", lang),
        t("chart.latency.y", lang),
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
                x=frame["variant"],
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


# --- scaling ---------------------------------------------------------------------------------


def crossovers(sweep_frame: pd.DataFrame) -> pd.DataFrame:
    """Where two variants' median curves cross between measured points.

    Columns: first, second (variant names), value (the axis value, interpolated on log-log
    axes), median_s (there). First is faster below the crossing, second above.
    """
    frame = ok_rows(sweep_frame)
    names = list(dict.fromkeys(frame["variant"]))
    rows = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            a = frame[frame["variant"] == first].set_index("value")["median_s"]
            b = frame[frame["variant"] == second].set_index("value")["median_s"]
            common = sorted(set(a.index) & set(b.index))
            for low, high in zip(common, common[1:], strict=False):
                before = math.log(a[low] / b[low])
                after = math.log(a[high] / b[high])
                if before == 0 or before * after >= 0:
                    continue
                share = before / (before - after)  # where log(a/b) crosses 0
                log_value = math.log(low) + share * (math.log(high) - math.log(low))
                log_time = math.log(a[low]) + share * (math.log(a[high]) - math.log(a[low]))
                faster_below = first if before < 0 else second
                slower_below = second if faster_below == first else first
                rows.append(
                    {
                        "first": faster_below,
                        "second": slower_below,
                        "value": math.exp(log_value),
                        "median_s": math.exp(log_time),
                    }
                )
    return pd.DataFrame(rows, columns=["first", "second", "value", "median_s"])


def scaling_figure(sweep_frame: pd.DataFrame, axis: str, lang: str = "en") -> go.Figure:
    """Median latency against time steps or batch size, log-log, crossings marked."""
    frame = ok_rows(sweep_frame)
    title = t("chart.scaling.title", lang, axis=t("axis_name." + axis, lang))
    if frame.empty:
        return empty_figure(title, "—")
    figure = go.Figure()
    for variant, points in frame.groupby("variant", sort=False):
        points = points.sort_values("value")
        values = points["median_s"].to_numpy(dtype=float) * 1e3
        figure.add_trace(
            variant_line(
                variant,
                points["value"],
                values,
                error_y=error_bars(values, points["p10_s"] * 1e3, points["p90_s"] * 1e3),
            )
        )
    crossings = crossovers(sweep_frame)
    if not crossings.empty:
        figure.add_trace(
            go.Scatter(
                x=crossings["value"],
                y=crossings["median_s"] * 1e3,
                mode="markers+text",
                name=t("chart.scaling.crossover", lang),
                marker={"symbol": "x", "size": 14, "color": "#999999", "line": {"width": 2}},
                text=[f"≈{value:.3g}" for value in crossings["value"]],
                textposition="bottom center",
                hovertext=[
                    t("chart.scaling.crossover_hover", lang, first=a, second=b, value=v)
                    for a, b, v in zip(
                        crossings["first"], crossings["second"], crossings["value"], strict=True
                    )
                ],
                hoverinfo="text",
            )
        )
    figure.update_xaxes(type="log", dtick="D2")
    figure.update_yaxes(type="log", dtick="D2")
    return apply_layout(
        figure, title, t("axis_title." + axis, lang), t("chart.latency.y", lang), legend_right=True
    )


def replica_throughput_figure(replica_frame: pd.DataFrame, lang: str = "en") -> go.Figure:
    """Samples per second against mirrored replicas (weak scaling: each replica keeps its
    batch), per variant, beside the ideal n x one replica's throughput (dashed)."""
    frame = ok_rows(replica_frame)
    title = t("chart.replicas.throughput.title", lang)
    if frame.empty:
        return empty_figure(title, "—")
    figure = go.Figure()
    for variant, points in frame.groupby("variant", sort=False):
        points = points.sort_values("replicas")
        figure.add_trace(variant_line(variant, points["replicas"], points["samples_per_s"]))
        one = points[points["replicas"] == 1]["samples_per_s"]
        if not one.empty:
            figure.add_trace(
                go.Scatter(
                    x=points["replicas"],
                    y=points["replicas"] * float(one.iloc[0]),
                    mode="lines",
                    name=t("chart.replicas.ideal", lang, variant=variant),
                    line={"color": variant_color(variant), "width": 1.5, "dash": "dash"},
                )
            )
    figure.update_xaxes(dtick=1)
    return apply_layout(
        figure,
        title,
        t("chart.replicas.x", lang),
        t("chart.throughput.y", lang),
        legend_right=True,
    )


def replica_efficiency_figure(replica_frame: pd.DataFrame, lang: str = "en") -> go.Figure:
    """Scaling efficiency (throughput with n replicas / (n x one replica)) with p10-p90 bars;
    1 is perfect scaling."""
    frame = ok_rows(replica_frame)
    title = t("chart.replicas.efficiency.title", lang)
    if frame.empty:
        return empty_figure(title, "—")
    figure = go.Figure()
    for variant, points in frame.groupby("variant", sort=False):
        points = points.sort_values("replicas")
        figure.add_trace(
            variant_line(
                variant,
                points["replicas"],
                points["scaling_efficiency"],
                error_y=error_bars(
                    points["scaling_efficiency"], points["efficiency_p10"], points["efficiency_p90"]
                ),
            )
        )
    figure.add_hline(y=1.0, line={"dash": "dash", "color": "#999999", "width": 1})
    figure.update_xaxes(dtick=1)
    figure.update_yaxes(rangemode="tozero")
    return apply_layout(
        figure, title, t("chart.replicas.x", lang), t("chart.replicas.efficiency.y", lang)
    )


def cost_per_step(sweep_frame: pd.DataFrame) -> pd.DataFrame:
    """Least-squares fit median_s = intercept_s + slope_s * value, per variant.

    slope_s is the cost of one more time step (or one more sample); intercept_s the fixed cost.
    Columns: variant, slope_s, intercept_s, r2, points.
    """
    frame = ok_rows(sweep_frame)
    rows = []
    for variant, points in frame.groupby("variant", sort=False):
        x = points["value"].to_numpy(dtype=float)
        y = points["median_s"].to_numpy(dtype=float)
        if len(points) < 2 or np.ptp(x) == 0:
            slope = intercept = r2 = math.nan
        else:
            slope, intercept = np.polyfit(x, y, 1)
            residual = y - (intercept + slope * x)
            total = float(np.sum((y - y.mean()) ** 2))
            r2 = 1.0 - float(np.sum(residual**2)) / total if total > 0 else math.nan
        rows.append(
            {
                "variant": variant,
                "slope_s": float(slope),
                "intercept_s": float(intercept),
                "r2": r2,
                "points": len(points),
            }
        )
    return pd.DataFrame(rows, columns=["variant", "slope_s", "intercept_s", "r2", "points"])


def cost_per_step_figure(fit: pd.DataFrame, axis: str, lang: str = "en") -> go.Figure:
    """The fitted slope per variant: milliseconds per extra time step (or sample)."""
    title = t("chart.cost.title." + axis, lang)
    fit = fit.dropna(subset=["slope_s"])
    if fit.empty:
        return empty_figure(title, "—")
    values = fit["slope_s"].to_numpy(dtype=float) * 1e3
    figure = go.Figure(
        go.Bar(
            x=fit["variant"],
            y=values,
            marker_color=[variant_color(v) for v in fit["variant"]],
            text=[f"{value:.3g}" for value in values],
            textposition="outside",
            cliponaxis=False,
            customdata=fit["r2"],
            hovertemplate="%{x}: %{y:.4g} ms (R² %{customdata:.3f})<extra></extra>",
        )
    )
    return apply_layout(
        figure, title, t("chart.variant", lang), t("chart.cost.y." + axis, lang), showlegend=False
    )


def chain_frame(variants: Sequence[str], rows: int, times: Sequence[int]) -> pd.DataFrame:
    """Dependent sequential LSTM steps per variant and time length, from the registry's formula.
    Columns: variant, time_steps, chain."""
    records = [
        {"variant": name, "time_steps": int(time), "chain": VARIANTS[name].chain(rows, int(time))}
        for name in variants
        for time in sorted(set(times))
    ]
    return pd.DataFrame(records, columns=["variant", "time_steps", "chain"])


def chain_figure(chains: pd.DataFrame, lang: str = "en") -> go.Figure:
    """Length of the dependent chain against time steps (from `chain_frame`), log-log."""
    figure = go.Figure()
    for variant, points in chains.groupby("variant", sort=False):
        figure.add_trace(variant_line(variant, points["time_steps"], points["chain"]))
    figure.update_xaxes(type="log", dtick="D2")
    figure.update_yaxes(type="log", dtick="D2")
    return apply_layout(
        figure,
        t("chart.chain.title", lang),
        t("axis_title.time_steps", lang),
        t("chart.chain.y", lang),
        legend_right=True,
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

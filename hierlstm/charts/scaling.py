"""How cost grows, as plotly figures: latency over a swept axis with the curves' crossings, the
fitted cost of one more step, replica scaling, and the dependent LSTM chain. No Streamlit."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from hierlstm.charts.style import (
    apply_layout,
    backend_pattern,
    bar_label,
    curves,
    empty_figure,
    ok_rows,
    pair_labels,
    series,
    variant_color,
)
from hierlstm.i18n import t
from hierlstm.registry import VARIANTS

# --- latency over a swept axis ---------------------------------------------------------------


def crossovers(sweep_frame: pd.DataFrame) -> pd.DataFrame:
    """Where two variants' median curves cross between measured points.

    Columns: first, second (variant names, "variant · backend" when the rows ran on several
    backends), value (the axis value, interpolated on log-log axes), median_s (there). First is
    faster below the crossing, second above.
    """
    frame = ok_rows(sweep_frame)
    frame = frame.assign(_curve=pair_labels(frame))
    names = list(dict.fromkeys(frame["_curve"]))
    rows = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            a = frame[frame["_curve"] == first].set_index("value")["median_s"]
            b = frame[frame["_curve"] == second].set_index("value")["median_s"]
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
    """Median latency against time steps or batch size, log-log, with its p10-p90 spread and
    the crossings marked (`crossovers`).

    Args:
        sweep_frame: a sweep's points (`hierlstm.timing.sweep`'s, one variant's or several
            concatenated).
        axis: the axis swept, "time_steps" or "batch_size".
        lang: "en" or "zh".

    Returns:
        A plotly figure: a line per variant (and backend) in milliseconds, an x at each
        crossing.
    """
    training = "task" in sweep_frame and (sweep_frame["task"] == "training").all()
    titles = (
        t("chart.scaling.title", lang, axis=t("axis_name." + axis, lang)),
        t("axis_title." + axis, lang),
        t("chart.latency.y.training" if training else "chart.latency.y", lang),
    )
    spread = ("p10_s", "p90_s")
    figure = curves(sweep_frame, "value", "median_s", titles, spread, 1e3, True, legend_right=True)
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
    return figure


def cost_per_step(sweep_frame: pd.DataFrame) -> pd.DataFrame:
    """Least-squares fit median_s = intercept_s + slope_s * value, per variant.

    slope_s is the cost of one more time step (or one more sample); intercept_s the fixed cost.
    Columns: variant, backend ("" unless the rows ran on several backends), slope_s,
    intercept_s, r2, points.
    """
    frame = ok_rows(sweep_frame)
    rows = []
    for variant, backend, points in series(frame):
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
                "backend": backend or "",
                "slope_s": float(slope),
                "intercept_s": float(intercept),
                "r2": r2,
                "points": len(points),
            }
        )
    return pd.DataFrame(
        rows, columns=["variant", "backend", "slope_s", "intercept_s", "r2", "points"]
    )


def cost_per_step_figure(fit: pd.DataFrame, axis: str, lang: str = "en") -> go.Figure:
    """The fitted slope per variant: milliseconds per extra time step (or sample)."""
    title = t("chart.cost.title." + axis, lang)
    fit = fit.dropna(subset=["slope_s"])
    if fit.empty:
        return empty_figure(title, "—")
    values = fit["slope_s"].to_numpy(dtype=float) * 1e3
    several = fit["backend"].astype(bool).any() if "backend" in fit else False
    labels = [
        f"{v} · {b}" if several else v
        for v, b in zip(fit["variant"], fit.get("backend", [""] * len(fit)), strict=True)
    ]
    figure = go.Figure(
        go.Bar(
            x=labels,
            y=values,
            marker_color=[variant_color(v) for v in fit["variant"]],
            marker_pattern_shape=[backend_pattern(b) for b in fit["backend"]] if several else "",
            text=[bar_label(value) for value in values],
            textposition="outside",
            cliponaxis=False,
            customdata=fit["r2"],
            hovertemplate="%{x}: %{y:.4g} ms (R² %{customdata:.3f})<extra></extra>",
        )
    )
    return apply_layout(
        figure, title, t("chart.variant", lang), t("chart.cost.y." + axis, lang), showlegend=False
    )


# --- mirrored replicas -----------------------------------------------------------------------


def replica_throughput_figure(replica_frame: pd.DataFrame, lang: str = "en") -> go.Figure:
    """Samples per second against mirrored replicas (weak scaling: each replica keeps its
    batch), per variant, beside the ideal n x one replica's throughput (dashed)."""
    titles = (
        t("chart.replicas.throughput.title", lang),
        t("chart.replicas.x", lang),
        t("chart.throughput.y", lang),
    )
    figure = curves(replica_frame, "replicas", "samples_per_s", titles, legend_right=True)
    for variant, points in ok_rows(replica_frame).groupby("variant", sort=False):
        points = points.sort_values("replicas")
        one = points[points["replicas"] == 1]["samples_per_s"]
        if not one.empty:
            figure.add_scatter(
                x=points["replicas"],
                y=points["replicas"] * float(one.iloc[0]),
                mode="lines",
                name=t("chart.replicas.ideal", lang, variant=variant),
                line={"color": variant_color(variant), "width": 1.5, "dash": "dash"},
            )
    return figure.update_xaxes(dtick=1)


def replica_efficiency_figure(replica_frame: pd.DataFrame, lang: str = "en") -> go.Figure:
    """Scaling efficiency (throughput with n replicas / (n x one replica)) with p10-p90 bars;
    1 is perfect scaling."""
    titles = (
        t("chart.replicas.efficiency.title", lang),
        t("chart.replicas.x", lang),
        t("chart.replicas.efficiency.y", lang),
    )
    spread = ("efficiency_p10", "efficiency_p90")
    figure = curves(replica_frame, "replicas", "scaling_efficiency", titles, spread)
    if figure.data:
        figure.add_hline(y=1.0, line={"dash": "dash", "color": "#999999", "width": 1})
        figure.update_xaxes(dtick=1).update_yaxes(rangemode="tozero")
    return figure


# --- the dependent chain ---------------------------------------------------------------------


def chain_frame(variants: Sequence[str], pooled_height: int, times: Sequence[int]) -> pd.DataFrame:
    """Dependent sequential LSTM steps per variant and time length, from the registry's formula.
    Columns: variant, time_steps, chain."""
    records = [
        {
            "variant": name,
            "time_steps": int(time),
            "chain": VARIANTS[name].chain(pooled_height, int(time)),
        }
        for name in variants
        for time in sorted(set(times))
    ]
    return pd.DataFrame(records, columns=["variant", "time_steps", "chain"])


def chain_figure(chains: pd.DataFrame, lang: str = "en") -> go.Figure:
    """Length of the dependent chain against time steps (from `chain_frame`), log-log."""
    titles = (
        t("chart.chain.title", lang),
        t("axis_title.time_steps", lang),
        t("chart.chain.y", lang),
    )
    return curves(chains, "time_steps", "chain", titles, log=True, legend_right=True)

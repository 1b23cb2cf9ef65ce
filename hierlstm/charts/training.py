"""Figures of a training-step benchmark, no Streamlit: the phases (forward, backward, update)
stacked beside the whole step, and the memory peak beside the estimated kept activations. The
backward bar is forward_backward's median less forward's, so the bars add to `phase_sum_s`; the gap
to the step's median is what one fused step saves over three calls."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from hierlstm.charts.style import (
    apply_layout,
    bar_label,
    empty_figure,
    grouped_bars,
    ok_rows,
    variant_color,
)
from hierlstm.i18n import t

_MIB = 2**20
# Shades of one hue per phase would hide the variant colour; the phases take fixed patterns.
_PHASE_PATTERNS = {"forward": "", "backward": "/", "update": "."}


def phases_figure(phases: pd.DataFrame, lang: str = "en") -> go.Figure:
    """Stacked forward, backward and update medians per variant, the whole step as a diamond.
    `phases` is `hierlstm.records.phase_frame` of a run's results (seconds)."""
    title = t("chart.phases.title", lang)
    if phases.empty:
        return empty_figure(title, "—")
    variants = list(dict.fromkeys(phases["variant"]))
    figure = go.Figure()
    for phase, pattern in _PHASE_PATTERNS.items():
        rows = phases[phases["phase"] == phase].set_index("variant").loc[variants]
        values = rows["median_s"] * 1e3
        figure.add_trace(
            go.Bar(
                x=variants,
                y=values.to_numpy(),
                name=t(f"chart.phases.{phase}", lang),
                marker_color=[variant_color(name) for name in variants],
                marker_pattern_shape=pattern,
                marker_line_color="#ffffff",
                marker_line_width=1,
                # Numbers on the solid forward bar only: on the patterned ones they are unreadable.
                text=[bar_label(value) for value in values] if not pattern else None,
                textposition="inside",
                insidetextanchor="middle",
                hovertemplate=f"%{{x}} · {t(f'chart.phases.{phase}', lang)}: %{{y:.4g}} ms"
                "<extra></extra>",
            )
        )
    steps = phases.drop_duplicates("variant").set_index("variant").loc[variants]
    figure.add_trace(
        go.Scatter(
            x=variants,
            y=steps["step_median_s"].to_numpy() * 1e3,
            name=t("chart.phases.step", lang),
            mode="markers",
            marker={"symbol": "diamond", "size": 12, "color": "#444444"},
            hovertemplate="%{x}: %{y:.4g} ms<extra></extra>",
        )
    )
    figure.update_yaxes(rangemode="tozero")
    return apply_layout(
        figure,
        title,
        t("chart.variant", lang),
        t("chart.phases.y", lang),
        barmode="stack",
        legend_right=True,
    )


def training_memory_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Per variant that ran: the measured peak and the estimated kept activations, in MiB."""
    rows = ok_rows(frame)
    return pd.DataFrame(
        {
            "variant": rows["variant"],
            "measured_mib": rows["peak_memory_bytes"].to_numpy(dtype=float) / _MIB,
            "measured_kind": rows["peak_memory_kind"],
            "estimated_kept_mib": rows["kept_activation_bytes"].to_numpy(dtype=float) / _MIB,
        }
    )


def training_memory_figure(frame: pd.DataFrame, lang: str = "en") -> go.Figure:
    """Grouped bars per variant: measured peak (labelled with how it was measured) beside the
    cost model's activations kept for the backward pass."""
    title = t("chart.train_memory.title", lang)
    memory = training_memory_frame(frame)
    if memory.empty:
        return empty_figure(title, "—")
    kinds = ", ".join(sorted(set(memory["measured_kind"]) - {""})) or "—"
    colors = [variant_color(v) for v in memory["variant"]]
    series = [
        (t("chart.train_memory.measured", lang, kind=kinds), memory["measured_mib"], colors, ""),
        (t("chart.train_memory.estimated", lang), memory["estimated_kept_mib"], colors, "/"),
    ]
    y_title = t("chart.train_memory.y", lang)
    return grouped_bars(
        memory["variant"],
        series,
        title,
        t("chart.variant", lang),
        y_title,
        legend_right=True,
        yaxis_rangemode="tozero",
    )

"""The Profile page's figure: per variant, where a step's time goes by layer, as the TensorFlow
Profiler saw it (each op's self time, by its layer's name scope) beside the Benchmark page's
separate-call split (each layer timed as its own function). Shares, not milliseconds: the
profiler slows what it records, and a separate call pays its own dispatch, so the two splits are
compared by the fraction of the variant's time each layer takes. Frames in, plotly out; no
Streamlit.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import plotly.graph_objects as go

from hierlstm.app.figure_style import apply_layout
from hierlstm.i18n import t
from hierlstm.profiling import OUTSIDE

# Layers are not variants: a palette of their own, assigned in order of first appearance, so a
# layer name (conv, inner_lstm, ...) has one colour across every variant's bars.
_LAYER_PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#882255",
)
_OUTSIDE_COLOR = "#BBBBBB"


def split_frame(profiled: pd.DataFrame, separate: pd.DataFrame | None) -> pd.DataFrame:
    """One variant's two splits in long form: method ("profiler" or "separate"), layer, time_s
    per step, share of that method's total. The profiler's split keeps its outside bucket."""
    rows = [
        ("profiler", row.layer, float(row.time_s), float(row.share))
        for row in profiled.itertuples()
    ]
    if separate is not None:
        rows += [
            ("separate", row.layer, float(row.median_s), float(row.share))
            for row in separate.itertuples()
        ]
    return pd.DataFrame(rows, columns=["method", "layer", "time_s", "share"])


def split_frames(splits: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Every variant's `split_frame` in one, with a variant column: the figure's data as CSV."""
    return pd.concat(
        [frame.assign(variant=variant) for variant, frame in splits.items()], ignore_index=True
    )[["variant", "method", "layer", "time_s", "share"]]


def layer_split_figure(splits: Mapping[str, pd.DataFrame], lang: str = "en") -> go.Figure:
    """Stacked horizontal bars, two per variant (the profiler's split, then the separate
    calls'), each segment one layer's share of that bar's time; hover gives ms per step."""
    method_label = {
        "profiler": t("profile.method.profiler", lang),
        "separate": t("profile.method.separate", lang),
    }
    layers = list(
        dict.fromkeys(
            layer for frame in splits.values() for layer in frame["layer"] if layer != OUTSIDE
        )
    )
    colors = {name: _LAYER_PALETTE[i % len(_LAYER_PALETTE)] for i, name in enumerate(layers)}
    colors[OUTSIDE] = _OUTSIDE_COLOR
    bars = [
        (variant, method)
        for variant, frame in splits.items()
        for method in ("profiler", "separate")
        if (frame["method"] == method).any()
    ]
    labels = [f"{variant} · {method_label[method]}" for variant, method in bars]
    figure = go.Figure()
    for layer in [*layers, OUTSIDE]:
        shares, times = [], []
        for variant, method in bars:
            frame = splits[variant]
            row = frame[(frame["method"] == method) & (frame["layer"] == layer)]
            shares.append(float(row["share"].sum()) * 100)
            times.append(float(row["time_s"].sum()) * 1e3)
        if not any(shares):
            continue
        name = t("profile.outside", lang) if layer == OUTSIDE else layer
        figure.add_bar(
            y=labels,
            x=shares,
            name=name,
            orientation="h",
            marker_color=colors[layer],
            customdata=times,
            text=[f"{share:.0f}%" if share >= 6 else "" for share in shares],
            textposition="inside",
            insidetextanchor="middle",
            hovertemplate=f"{name}: %{{x:.1f}}% · %{{customdata:.3g}} ms<extra>%{{y}}</extra>",
        )
    figure.update_layout(barmode="stack", legend_traceorder="normal")  # legend in model order
    figure.update_xaxes(range=[0, 100])
    figure.update_yaxes(autorange="reversed")
    return apply_layout(
        figure,
        t("profile.chart.title", lang),
        t("profile.chart.x", lang),
        t("profile.chart.y", lang),
        legend_right=True,
        height=max(300, 120 + 46 * len(bars)),
    )

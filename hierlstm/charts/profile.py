"""The Profile page's figures; frames in, plotly out, no Streamlit: the profiler's per-layer split
beside the separate-call split (as shares, since the profiler and the separate calls each add their
own cost), one step's timeline (a row per thread or stream, ops coloured by layer, ms from the
step's start), and a training step's estimated memory parts beside the measured peak. Profiles are
keyed by label ("folded · jax"); torch's ops carry no layer (`UNATTRIBUTED`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from hierlstm.charts.style import (
    apply_layout,
    backend_marker_pattern,
    backend_pattern,
    bar_label,
    variant_color,
)
from hierlstm.i18n import t
from hierlstm.model.cost import MEMORY_PARTS, memory_parts
from hierlstm.profiling import OUTSIDE, UNATTRIBUTED

# Layers' own palette, assigned in order of first appearance, so a layer name has one colour
# across every variant's bars: one per top-level layer name of today's variants, and one more.
_LAYER_PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#882255",
    "#44AA99",
    "#332288",
    "#117733",
    "#AA4499",
)
_OUTSIDE_COLOR = "#BBBBBB"
_UNATTRIBUTED_COLOR = "#6F6F6F"


def layer_name(layer: str, lang: str) -> str:
    """A layer as a legend names it: the two buckets that are no layer in the language."""
    if layer == OUTSIDE:
        return t("profile.outside", lang)
    if layer == UNATTRIBUTED:
        return t("profile.unattributed", lang)
    return layer


def layer_colors(frames: Iterable[pd.DataFrame]) -> dict[str, str]:
    """Layer -> colour, in order of first appearance over the frames' `layer` columns, then
    `OUTSIDE` in grey: the split's colours, which the timeline takes too."""
    layers = dict.fromkeys(
        layer
        for frame in frames
        for layer in frame["layer"]
        if layer not in (OUTSIDE, UNATTRIBUTED)
    )
    colors = {name: _LAYER_PALETTE[i % len(_LAYER_PALETTE)] for i, name in enumerate(layers)}
    colors[OUTSIDE] = _OUTSIDE_COLOR
    return colors


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


def layer_split_figure(
    splits: Mapping[str, pd.DataFrame],
    lang: str = "en",
    backends: Mapping[str, str] | None = None,
) -> go.Figure:
    """Stacked horizontal bars, two per profile (the profiler's split, then the separate
    calls'), each segment one layer's share of that bar's time; hover gives ms per step.
    `splits` by label; `backends` (label -> backend): with several, each bar in its
    backend's pattern."""
    method_label = {
        "profiler": t("profile.method.profiler", lang),
        "separate": t("profile.method.separate", lang),
    }
    colors = layer_colors(splits.values())
    layers = [name for name in colors if name not in (OUTSIDE, UNATTRIBUTED)]
    bars = [
        (variant, method)
        for variant, frame in splits.items()
        for method in ("profiler", "separate")
        if (frame["method"] == method).any()
    ]
    labels = [f"{variant} · {method_label[method]}" for variant, method in bars]
    backends = backends or {}
    patterns = None
    if len(set(backends.values())) > 1:
        patterns = backend_marker_pattern([backend_pattern(backends[label]) for label, _ in bars])
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
        name = layer_name(layer, lang)
        figure.add_bar(
            y=labels,
            x=shares,
            name=name,
            orientation="h",
            marker_color=colors[layer],
            marker_pattern=patterns,
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


# A bar is an SVG path in the browser: past a few thousand a figure stops being interactive.
MAX_TIMELINE_BARS = 3000
_BAR_WIDTH = 0.8  # of a row, for an op at depth 0; each level inside is drawn thinner
_LONG_ID = re.compile(r"/(-?\d{4})\d{5,}")  # TF's thread names end in a 19-digit id


def line_label(plane: str, thread: str) -> str:
    """A row's name: the plane without "/host:" or "/device:", then the thread, its long
    numeric id cut to four digits ("CPU tf_Compute/1302…", "GPU:0 Stream #13(...)")."""
    short = plane.removeprefix("/host:").removeprefix("/device:")
    return f"{short} {_LONG_ID.sub(lambda match: f'/{match.group(1)}…', thread)}"


def drawn_events(events: pd.DataFrame, cap: int = MAX_TIMELINE_BARS) -> pd.DataFrame:
    """The events a timeline draws: all of them up to `cap`, else the `cap` longest."""
    if len(events) <= cap:
        return events
    return events.nlargest(cap, "duration_s", keep="first").sort_index()


def timeline_frame(timelines: Mapping[str, object]) -> pd.DataFrame:
    """Every variant's step events in one frame (a variant column, times in ms): the figure's
    data as CSV, every event, drawn or not."""
    frames = [timeline.events.assign(variant=variant) for variant, timeline in timelines.items()]
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if frame.empty:
        return frame
    frame["start_ms"], frame["duration_ms"] = frame["start_s"] * 1e3, frame["duration_s"] * 1e3
    columns = ["variant", "line", "start_ms", "duration_ms", "name", "type", "layer", "depth"]
    return frame[columns]


# Steps within this factor of each other share one time axis; past it (a torch step beside a
# JAX one, 500x here) the short ones would be slivers, so each row gets its own.
SHARED_AXIS_RATIO = 10


def shares_time_axis(timelines: Mapping[str, object]) -> bool:
    """Whether the steps are alike enough in length to be drawn on one time axis."""
    lengths = [timeline.step_s for timeline in timelines.values() if timeline.step_s > 0]
    return not lengths or max(lengths) <= SHARED_AXIS_RATIO * min(lengths)


def timeline_figure(
    timelines: Mapping[str, object],
    colors: Mapping[str, str],
    lang: str = "en",
    cap: int = MAX_TIMELINE_BARS,
) -> go.Figure:
    """One step per variant (`StepTimeline`s by variant), one above the other on a shared time
    axis (each on its own when their lengths differ past `SHARED_AXIS_RATIO`): horizontal bars
    (base = start, length = duration, ms) on one row per line, coloured by layer (`colors`,
    from `layer_colors`), ops nested in another op thinner on top of it. Each variant draws at
    most `cap` bars, the longest, and its title says so."""
    variants = list(timelines)
    titles = []
    for variant in variants:
        timeline, count = timelines[variant], len(timelines[variant].events)
        shown = min(count, cap)
        key = "chart.timeline.row" if shown == count else "chart.timeline.row_capped"
        titles.append(
            t(key, lang, variant=variant, ops=count, shown=shown, ms=timeline.step_s * 1e3)
        )
    figure = make_subplots(
        rows=max(1, len(variants)),
        cols=1,
        shared_xaxes=shares_time_axis(timelines),
        subplot_titles=titles or None,
        vertical_spacing=0.12 if len(variants) > 1 else 0.0,
        row_heights=[max(1, timelines[v].events["line"].nunique()) for v in variants] or None,
    )
    legend = set()
    hover = (
        f"%{{customdata[0]}}<br>{t('chart.timeline.type', lang)}: %{{customdata[1]}}"
        f"<br>{t('chart.timeline.duration', lang)}: %{{customdata[2]:.3g}} µs"
    )
    for row, variant in enumerate(variants, 1):
        events = drawn_events(timelines[variant].events, cap)
        labels = [
            line_label(plane, thread)
            for plane, thread in zip(events["plane"], events["thread"], strict=True)
        ]
        events = events.assign(label=labels)
        order = {layer: index for index, layer in enumerate(colors)}  # the legend in model order
        groups = events.groupby(["depth", "layer"], sort=False)
        for (depth, layer), group in sorted(
            groups, key=lambda g: (g[0][0], order.get(g[0][1], 99))
        ):
            name = layer_name(layer, lang)
            figure.add_trace(
                go.Bar(
                    orientation="h",
                    y=group["label"],
                    base=group["start_s"] * 1e3,
                    x=group["duration_s"] * 1e3,
                    width=_BAR_WIDTH * 0.7**depth,
                    name=name,
                    legendgroup=layer,
                    showlegend=layer not in legend,
                    marker_color=_UNATTRIBUTED_COLOR
                    if layer == UNATTRIBUTED
                    else colors.get(layer, _OUTSIDE_COLOR),
                    marker_line_width=0,
                    customdata=group[["name", "type"]]
                    .assign(us=group["duration_s"] * 1e6)
                    .to_numpy(),
                    hovertemplate=hover + f"<extra>{name}</extra>",
                ),
                row=row,
                col=1,
            )
            legend.add(layer)
        figure.update_yaxes(autorange="reversed", row=row, col=1)
    figure.update_layout(barmode="overlay", bargap=0)
    figure.update_xaxes(rangemode="tozero")
    rows = sum(max(1, timelines[v].events["line"].nunique()) for v in variants)
    apply_layout(
        figure,
        t("chart.timeline.title", lang),
        "",
        "",
        legend_right=True,
        height=max(320, 140 + 110 * len(variants) + 50 * rows),
    )
    # after the layout, which titles the first row's axis: the time axis is the bottom row's
    figure.update_xaxes(title_text=t("chart.timeline.x", lang), row=max(1, len(variants)), col=1)
    return figure


_MIB = 2**20
_PART_COLORS = {
    "parameters": "#0072B2",
    "gradients": "#56B4E9",
    "optimizer": "#009E73",
    "kept_activations": "#E69F00",
    "transient": "#CC79A7",
}


def memory_frame(results: Iterable, labels: Iterable[str] | None = None) -> pd.DataFrame:
    """Per training-step profile (`ProfileResult`, or a worker's `ProfileRecord`), the
    estimated parts and the measured peak in long form: variant, source ("estimate" or
    "measured"), part (a `MEMORY_PARTS` name, or the probe's kind for the measured row), bytes,
    mib, then backend and label (`labels`, one per result; the variant when none are given).
    Forward passes are left out, and so is the measured row of a profile that measured none."""
    results = list(results)
    labels = [r.config.variant for r in results] if labels is None else list(labels)
    rows = []
    for result, label in zip(results, labels, strict=True):
        if result.config.task != "training":
            continue
        variant, backend = result.config.variant, result.config.backend
        for part, size in memory_parts(result.config).as_dict().items():
            rows.append((variant, "estimate", part, size, backend, label))
        if result.peak_memory_kind:
            kind, peak = result.peak_memory_kind, result.peak_memory_bytes
            rows.append((variant, "measured", kind, peak, backend, label))
    frame = pd.DataFrame(rows, columns=["variant", "source", "part", "bytes", "backend", "label"])
    frame.insert(4, "mib", frame["bytes"] / _MIB)
    return frame


def memory_figure(frame: pd.DataFrame, lang: str = "en") -> go.Figure:
    """Per profile two bars: the estimate stacked by part, and the measured peak beside it
    (labelled with what the probe measures: the GPU allocator's peak, or a CPU's RSS growth,
    which is not the same quantity), in its variant's colour, hatched; with several backends,
    in its backend's pattern instead."""
    labels = list(dict.fromkeys(frame["label"]))
    estimate_label, figure = t("chart.memory.estimate", lang), go.Figure()
    for part in MEMORY_PARTS:
        rows = frame[(frame["source"] == "estimate") & (frame["part"] == part)]
        name = t(f"chart.memory.part.{part}", lang)
        figure.add_bar(
            x=[list(rows["label"]), [estimate_label] * len(rows)],
            y=rows["mib"],
            name=name,
            marker_color=_PART_COLORS[part],
            customdata=rows["bytes"],
            hovertemplate=f"{name}: %{{y:.4g}} MiB (%{{customdata:,}} B)<extra>%{{x}}</extra>",
        )
    measured = frame[frame["source"] == "measured"]
    several = frame["backend"].nunique() > 1
    for kind in dict.fromkeys(measured["part"]):
        rows = measured[measured["part"] == kind]
        name = t(f"chart.memory.measured.{kind}", lang)
        figure.add_bar(
            x=[list(rows["label"]), [t("chart.memory.measured", lang)] * len(rows)],
            y=rows["mib"],
            name=name,
            marker_color=[variant_color(v) for v in rows["variant"]],
            marker_pattern=backend_marker_pattern([backend_pattern(b) for b in rows["backend"]])
            if several
            else {"shape": "/"},
            text=[bar_label(value) for value in rows["mib"]],
            textposition="outside",
            cliponaxis=False,
            customdata=rows["bytes"],
            hovertemplate=f"{name}: %{{y:.4g}} MiB (%{{customdata:,}} B)<extra>%{{x}}</extra>",
        )
    totals = frame[frame["source"] == "estimate"].groupby("label", sort=False)["mib"].sum()
    figure.add_scatter(
        x=[list(totals.index), [estimate_label] * len(totals)],
        y=totals.to_numpy(),
        mode="text",
        text=[bar_label(value) for value in totals],
        textposition="top center",
        showlegend=False,
        hoverinfo="skip",
    )
    figure.update_yaxes(rangemode="tozero")
    return apply_layout(
        figure,
        t("chart.memory.title", lang),
        t("chart.variant", lang),
        t("chart.memory.y", lang),
        barmode="relative",
        legend_right=True,
        height=max(360, 200 + 30 * len(labels)),
    )

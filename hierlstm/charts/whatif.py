"""Figures of the what-if, no Streamlit: any view of `values` redrawn as a change from the
untouched run (one diverging scale centred on 0), the trained model's prediction at every time step
beside the sound playing, the map of the hidden states (PCA), and the Lesson's forget gate: how
far back the summary remembers."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from hierlstm.charts.style import apply_layout
from hierlstm.charts.values import MARK, SIGNED
from hierlstm.i18n import t
from hierlstm.inside.sounds import SOUNDS

# One colour a sound (Okabe-Ito), silence grey: the prediction's cells and the map's points.
SOUND_COLORS = dict(
    zip(SOUNDS, ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#999999"), strict=True)
)


def as_change(figure: go.Figure, lang: str) -> go.Figure:
    """`figure`, a heatmap view of a change (values after - before), redrawn on one diverging
    scale centred on 0 across its panels, one colour bar, its title marked as a change."""
    heatmaps = [trace for trace in figure.data if trace.type == "heatmap"]
    limit = max((float(np.max(np.abs(trace.z))) for trace in heatmaps), default=0.0) or 1.0
    scale = {"colorscale": SIGNED, "zmin": -limit, "zmax": limit, "zmid": 0}
    bar = {"title": {"text": t("inside.whatif.scale", lang)}, "thickness": 12}
    for index, trace in enumerate(heatmaps):
        trace.update(coloraxis=None, showscale=index == 0, colorbar=bar, **scale)
    figure.update_layout(coloraxis=None)
    title = figure.layout.title.text or ""
    figure.update_layout(title_text=t("inside.whatif.change_title", lang, title=title))
    return figure


WRITTEN = 16  # time steps up to which a cell is wide enough for its probability


def prediction_figure(
    playing: np.ndarray | None,
    before: np.ndarray,
    after: np.ndarray | None,
    lang: str,
    time_step: int,
) -> go.Figure:
    """Rows of cells over time: the sound playing (`playing` (T,) indices into SOUNDS, None for
    a WAV), the trained head's prediction untouched and under the interventions (`before`,
    `after`: (T, sounds) probabilities; `after` None without interventions), each cell coloured
    by its sound, the prediction's probability written in it where the cells are wide enough
    (`WRITTEN` time steps at most) and on hover always; column t framed."""
    rows = []
    if playing is not None:
        rows.append(("playing", np.asarray(playing), None))
    for name, probabilities in (("before", before), ("after", after)):
        if probabilities is not None:
            rows.append((name, probabilities.argmax(axis=-1), probabilities.max(axis=-1)))
    names = [t(f"inside.sound.{sound}", lang) for sound in SOUNDS]
    count = len(SOUNDS)
    scale = []  # a band of the scale per sound, so each index is its sound's colour
    for index, sound in enumerate(SOUNDS):
        scale += [[index / count, SOUND_COLORS[sound]], [(index + 1) / count, SOUND_COLORS[sound]]]
    z = [list(map(int, sounds)) for _name, sounds, _p in rows]
    text = [
        [names[s] if p is None else f"{names[s]}<br>{p[i]:.0%}" for i, s in enumerate(sounds)]
        for _name, sounds, p in rows
    ]
    figure = go.Figure(
        go.Heatmap(
            z=z,
            y=[t(f"inside.whatif.row.{name}", lang) for name, _s, _p in rows],
            text=text,
            texttemplate="%{customdata}" if len(before) <= WRITTEN else None,
            customdata=[
                ["" if p is None else f"{p[i]:.0%}" for i in range(len(s))] for _n, s, p in rows
            ],
            hovertemplate="t %{x}: %{text}<extra>%{y}</extra>",
            colorscale=scale,
            zmin=-0.5,
            zmax=count - 0.5,
            xgap=2,
            ygap=2,
            colorbar={"tickvals": list(range(count)), "ticktext": names, "thickness": 12},
        )
    )
    figure.add_shape(
        type="rect",
        x0=time_step - 0.5,
        x1=time_step + 0.5,
        y0=-0.5,
        y1=len(rows) - 0.5,
        line=MARK,
    )
    figure.update_yaxes(autorange="reversed")
    title = t("inside.whatif.fig.predict", lang, t=time_step)
    return apply_layout(figure, title, t("inside.axis.time", lang), "", height=120 + 70 * len(rows))


def hidden_map_figure(maps, lang: str) -> go.Figure:
    """A panel per map (`hidden_map.HiddenMap`): a row a layer, a column a parameter set; the
    untouched states as dots, those under the interventions as crosses, each coloured by the
    sound playing; each panel's axes say the share of the variance they hold."""
    layers = list(dict.fromkeys(m.layer for m in maps))
    params = list(dict.fromkeys(m.params for m in maps))
    titles = [
        f"{t(f'inside.whatif.map.{m.layer}', lang)} · {t(f'inside.params.{m.params}', lang)}"
        for m in sorted(maps, key=lambda m: (layers.index(m.layer), params.index(m.params)))
    ]
    figure = make_subplots(
        rows=len(layers), cols=len(params), subplot_titles=titles, vertical_spacing=0.14
    )
    apply_layout(figure, t("inside.whatif.fig.map", lang), "", "", legend_right=True)
    shown = set()
    for one in maps:
        row, col = layers.index(one.layer) + 1, params.index(one.params) + 1
        for index, sound in enumerate(SOUNDS):
            for points, labels, symbol in (
                (one.points, one.labels, "circle"),
                (one.moved, one.moved_labels, "x"),
            ):
                if points is None or not np.any(labels == index):
                    continue
                chosen = points[labels == index]
                moved = symbol == "x"
                figure.add_trace(
                    go.Scatter(
                        x=chosen[:, 0],
                        y=chosen[:, 1],
                        mode="markers",
                        marker={
                            "color": SOUND_COLORS[sound],
                            "symbol": symbol,
                            "size": 7,
                            "opacity": 0.85,
                        },
                        name=t(f"inside.sound.{sound}", lang),
                        legendgroup=sound,
                        showlegend=not moved and sound not in shown,
                    ),
                    row=row,
                    col=col,
                )
                shown.add(sound)
        for axis, update in ((0, figure.update_xaxes), (1, figure.update_yaxes)):
            share = one.axes.explained[axis]
            update(
                title_text=t("inside.whatif.map.axis", lang, number=axis + 1, share=share),
                row=row,
                col=col,
            )
    if any(one.moved is not None for one in maps):  # one legend entry for every cross
        marker = {"color": "#555555", "symbol": "x", "size": 7}
        name = t("inside.whatif.map.moved", lang)
        cross = go.Scatter(x=[None], y=[None], mode="markers", marker=marker, name=name)
        figure.add_trace(cross.update(showlegend=True))
    figure.update_layout(height=180 + 330 * len(layers))
    return figure


MEMORY_LINES = {
    "model": ("#0072B2", "solid"),
    "zero": ("#D55E00", "dash"),
    "one": ("#009E73", "dot"),
}


def memory_figure(memory: dict, lang: str) -> go.Figure:
    """The Lesson's forget gate: for each inner step s, the summary's largest change when the
    input at s is removed (`whatif.summary_memory`), a line per forget gate, on a log scale."""
    figure = go.Figure()
    for name, values in memory.items():
        color, dash = MEMORY_LINES[name]
        figure.add_trace(
            go.Scatter(
                x=list(range(len(values))),
                y=np.maximum(values, 1e-16),
                mode="lines+markers",
                name=t(f"lesson.forget.line.{name}", lang),
                line={"color": color, "dash": dash},
            )
        )
    figure.update_yaxes(type="log", exponentformat="power")
    return apply_layout(
        figure,
        t("lesson.forget.fig", lang),
        t("lesson.forget.axis.step", lang),
        t("lesson.forget.axis.change", lang),
        height=400,
    )

"""The agreement grid, no Streamlit: each variant's difference from the numpy oracle at every layer
output, on one log colour scale, as the Inside the tensors page and a notebook show it."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from hierlstm.charts.style import apply_layout
from hierlstm.i18n import DEFAULT_LANGUAGE, t

FLOOR = 1e-12  # an exact zero difference, drawn as the floor of the log scale
# light for no difference, dark for a large one: written out, so no theme replaces it
DIFFERENCE_SCALE = [[0.0, "#f7fbff"], [0.25, "#c6dbef"], [0.5, "#6baed6"], [0.75, "#2171b5"]]
DIFFERENCE_SCALE += [[0.875, "#d94801"], [1.0, "#7f2704"]]


def agreement_figure(
    differences: dict,
    outputs: tuple | None = None,
    lang: str = DEFAULT_LANGUAGE,
    precision: str = "float32",
) -> go.Figure:
    """The agreement grid: one row per variant, one column per layer output, log10 |variant -
    oracle| over (rows or units, time), the largest over channels; a variant without that
    output as a layer of its own shows none.

    Args:
        differences: {variant: {output: |difference|}}, each variant's
            `hierlstm.inside.variant_differences(config, params, x, oracle)`.
        outputs: the columns, in order; by default every output any variant has, in the order
            the tensor flows.
        lang: "en" or "zh".
        precision: the precision the variants ran at, for the title.

    Returns:
        A plotly grid of heatmaps on one log colour scale (1e-9 to 1e-1).
    """
    variants = list(differences)
    if outputs is None:  # each variant's are in the flow's order: the fullest's first
        fullest = sorted(differences.values(), key=len, reverse=True)
        outputs = tuple(dict.fromkeys(output for found in fullest for output in found))
    titles = [
        t(f"inside.agree.{output}", lang) if row == 0 else ""
        for row in range(len(variants))
        for output in outputs
    ]
    figure = make_subplots(
        rows=len(variants),
        cols=len(outputs),
        subplot_titles=titles,
        horizontal_spacing=0.07,
        vertical_spacing=0.04,
    )
    apply_layout(figure, t("inside.fig.agreement", lang, precision=precision), "", "")
    last_present = {
        output: max(
            (row for row, v in enumerate(variants, 1) if output in differences[v]), default=0
        )
        for output in outputs
    }
    for row, variant in enumerate(variants, start=1):
        labelled = False  # the variant's name on the first picture of its row
        for col, output in enumerate(outputs, start=1):
            value = differences[variant].get(output)
            if value is None:
                figure.add_trace(go.Heatmap(z=[[None]], showscale=False), row=row, col=col)
                figure.update_xaxes(visible=False, row=row, col=col)
                figure.update_yaxes(visible=False, row=row, col=col)
                continue
            grid = value[0] if value.ndim == 4 else value[0].T  # (rows, time) or (units, time)
            grid = grid.max(axis=-1) if value.ndim == 4 else grid
            figure.add_trace(
                go.Heatmap(
                    z=np.log10(np.maximum(grid, FLOOR)),
                    coloraxis="coloraxis",
                    customdata=grid,
                    hovertemplate="t %{x}, %{y}: %{customdata:.2e}<extra>" + variant + "</extra>",
                ),
                row=row,
                col=col,
            )
            if not labelled:
                figure.update_yaxes(title_text=variant, row=row, col=col)
                labelled = True
            if row == last_present[output]:
                figure.update_xaxes(title_text=t("inside.axis.time", lang), row=row, col=col)
    figure.update_layout(
        height=160 + 150 * len(variants),
        margin={"b": 90},
        coloraxis={
            "colorscale": DIFFERENCE_SCALE,
            "cmin": -9,
            "cmax": -1,
            "colorbar": {"title": {"text": t("inside.agree.scale", lang)}},
        },
    )
    return figure

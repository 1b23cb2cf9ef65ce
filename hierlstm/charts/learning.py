"""The learning curves, no Streamlit: loss and accuracy over training steps, training and held-out,
with the chance accuracy as a line, as the Inside the tensors page and a notebook show them."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from hierlstm.charts.style import apply_layout
from hierlstm.i18n import DEFAULT_LANGUAGE, t


def curve_figure(curve, lang: str = DEFAULT_LANGUAGE) -> go.Figure:
    """The learning curves of a learning run.

    Args:
        curve: `hierlstm.inside.learn`'s `Curve` (or one it passed to its `on_progress`).
        lang: "en" or "zh".

    Returns:
        `learning_figure` of its points, its chance accuracy and its steps.
    """
    return learning_figure(curve.points, curve.chance, lang, curve.learning.steps)


def learning_figure(points, chance: float, lang: str, total_steps: int) -> go.Figure:
    """Loss and accuracy over training steps, training solid and held-out dashed, the chance
    accuracy as a line."""
    figure = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=[t("inside.axis.loss", lang), t("inside.axis.accuracy", lang)],
    )
    steps = [point.step for point in points]
    for col, measure in enumerate(("loss", "accuracy"), start=1):
        for which, dash, color in (("train", "solid", "#0072B2"), ("held_out", "dash", "#E69F00")):
            figure.add_trace(
                go.Scatter(
                    x=steps,
                    y=[getattr(point, f"{which}_{measure}") for point in points],
                    name=t(f"inside.curve.{which}", lang),
                    mode="lines+markers",
                    line={"dash": dash, "color": color},
                    showlegend=col == 1,
                ),
                row=1,
                col=col,
            )
    title = t("inside.fig.learning", lang, step=steps[-1] if steps else 0, steps=total_steps)
    apply_layout(figure, title, "", "", height=400)
    figure.update_xaxes(title_text=t("inside.axis.training_step", lang), range=[0, total_steps])
    figure.update_layout(
        legend={"orientation": "h", "yanchor": "top", "y": -0.22, "x": 0.0, "xanchor": "left"},
        margin={"b": 110},
    )
    figure.add_hline(
        y=chance,
        line={"dash": "dot", "color": "#999999"},
        annotation_text=t("inside.curve.chance", lang, chance=chance),
        annotation_position="bottom right",
        row=1,
        col=2,
    )
    figure.update_yaxes(title_text=t("inside.axis.loss", lang), row=1, col=1)
    figure.update_yaxes(title_text=t("inside.axis.accuracy", lang), range=[0, 1.02], row=1, col=2)
    return figure

"""hierlstm in a notebook (Jupyter, VS Code, Colab): the Inside the tensors page's two scrubbers
(outer time step t, inner step s) over every layer's values, and the model learning with its curve
drawn as it grows, as ipywidgets. Where no widget frontend runs (ipywidgets missing, no kernel, a
notebook converted to HTML), the same figures are shown static: a widget's output carries them
beside the widget, and a frontend that cannot draw the widget draws them. Tables come from the
records themselves (`hierlstm.tables`), figures from `hierlstm.charts`.

ipywidgets, not anywidget: its core widgets (sliders, a progress bar, an output area) render in
JupyterLab, Notebook 7, VS Code and Colab with nothing to install or enable, and this module
needs no JavaScript of its own. plotly's FigureWidget is an anywidget since plotly 6, so each
figure is redrawn into an output area instead."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from hierlstm.charts import learning as learning_charts
from hierlstm.charts import values as value_charts
from hierlstm.config import RunConfig
from hierlstm.i18n import DEFAULT_LANGUAGE, t
from hierlstm.inside.sounds import SOUNDS, sound_input

VIEWS = (
    "input",
    "inner",
    "outer",
)  # what a scrubber redraws by default: the provenance, both LSTMs


def _shell():
    """IPython's shell running this code, None outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def widgets_here() -> bool:
    """Whether this process is a Jupyter kernel with ipywidgets installed (a frontend that draws
    widgets is likely, not known: a widget's output carries its static figures too)."""
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return getattr(_shell(), "kernel", None) is not None


def figure_bundle(figure) -> dict:
    """A figure's output as plotly's default renderers make it (`plotly.io.renderers.default`:
    its JSON for JupyterLab and VS Code, HTML for Colab and a page), without the renderers'
    set-up, which plotly does once, with the first figure shown (a figure's own
    `_repr_mimebundle_` does it again, plotly.js whole, on every call); HTML with plotly.js from
    its CDN where the renderers give none."""
    import plotly.io as pio
    from plotly.io.base_renderers import MimetypeRenderer

    spec, bundle = figure.to_dict(), {}
    for name in filter(None, (pio.renderers.default or "").split("+")):
        renderer = pio.renderers[name]
        if isinstance(renderer, MimetypeRenderer):
            bundle.update(renderer.to_mimebundle(spec))
    if "text/html" not in bundle:
        bundle["text/html"] = pio.to_html(figure, full_html=False, include_plotlyjs="cdn")
    return bundle


def _bundle(widget, static_html: str, text: str) -> dict:
    """`widget`'s output, its static figures beside it (a frontend draws what it can)."""
    bundle = widget._repr_mimebundle_()
    bundle["text/html"] = static_html
    bundle["text/plain"] = text
    return bundle


def _redraw(output, figures) -> None:
    """`figures` into an output area, set as its state at once (each as plotly's renderers
    format it). Not through the area's `with` block: that reads the kernel's current message,
    which ipykernel 7 can report stale, and the figures then land below the cell instead
    (ipywidgets#4020)."""
    output.outputs = tuple(
        {"output_type": "display_data", "data": figure_bundle(figure), "metadata": {}}
        for figure in figures
    )


@dataclasses.dataclass(frozen=True, eq=False)
class Scrubbers:
    """Every layer's values for one input, and two sliders choosing the outer time step t and
    the inner step s; the `views` (of `hierlstm.charts.values_figures`) are redrawn, (t, s)
    framed in each. A notebook shows it as the widget, or, where no widget frontend runs, as the
    views at (0, 0)."""

    config: RunConfig
    picture: np.ndarray  # (height, time)
    values: dict  # `hierlstm.inside.layer_values`' answer
    lang: str = DEFAULT_LANGUAGE
    views: tuple[str, ...] = VIEWS

    def figures(self, selected=(0, 0)) -> list:
        """The views at `selected` (t, s)."""
        drawn = value_charts.values_figures(
            self.config, self.picture, self.values, selected, self.lang
        )
        return [drawn[name] for name in self.views]

    def widget(self):
        """The sliders and the views, an ipywidgets box."""
        import ipywidgets as widgets

        def slider(key: str, top: int):
            return widgets.IntSlider(
                0,
                0,
                top,
                description=t(key, self.lang),
                style={"description_width": "initial"},
                layout=widgets.Layout(width="48%"),
                continuous_update=False,  # a figure is redrawn when the slider is let go
            )

        time_step = slider("inside.scrub.t", self.config.time_steps - 1)
        row = slider("inside.scrub.s", self.config.pooled_height - 1)
        output = widgets.Output()

        def redraw(_change=None):
            _redraw(output, self.figures((time_step.value, row.value)))

        time_step.observe(redraw, "value")
        row.observe(redraw, "value")
        redraw()
        return widgets.VBox([widgets.HBox([time_step, row]), output])

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        static = "\n".join(figure_bundle(figure)["text/html"] for figure in self.figures())
        if not widgets_here():
            return {"text/html": static, "text/plain": repr(self)}
        return _bundle(self.widget(), static, repr(self))

    def __repr__(self) -> str:
        return (
            f"Scrubbers(t 0-{self.config.time_steps - 1}, s 0-{self.config.pooled_height - 1}; "
            f"views {', '.join(self.views)})"
        )


def scrubbers(
    config: RunConfig,
    picture: np.ndarray | None = None,
    params=None,
    lang: str = DEFAULT_LANGUAGE,
    views: Sequence[str] = VIEWS,
    seed: int = 0,
) -> Scrubbers:
    """The t and s scrubbers over every layer's values of `config`'s model on one input.

    Args:
        config: the geometry and the time steps (its batch, variant and precision are not used:
            the values are the folded model's, in float32, for one input).
        picture: the input, (height, time_steps); by default the first built-in sound
            (`hierlstm.inside.SOUNDS`).
        params: the parameters (`hierlstm.init_params`, or a `Curve`'s); by default the seeded.
        lang: "en" or "zh".
        views: which of `hierlstm.charts.values_figures` to redraw.
        seed: the seed of the default sound and parameters.

    Returns:
        `Scrubbers`, shown in a notebook as the sliders and the views.

    Example:
        `scrubbers(RunConfig(time_steps=12), views=("input", "inner"))` as a cell's last line.
    """
    from hierlstm.inside.keras_values import layer_values
    from hierlstm.model.params import init_params

    config = config.replace(variant="folded", batch_size=1, precision="float32", xla=False)
    if picture is None:
        picture = sound_input(SOUNDS[0], config.height, config.time_steps, seed)
    if params is None:
        params = init_params(config, seed)
    values = layer_values(config, params, picture[None, :, :, None])
    return Scrubbers(config, picture, values, lang, tuple(views))


def learn(config: RunConfig, learning=None, lang: str = DEFAULT_LANGUAGE):
    """The model learning the sounds task now, its curve drawn as it grows (an ipywidgets
    progress bar and the figure; without widgets, the figure updated in place).

    Args:
        config: the geometry and time steps (`hierlstm.inside.learn` trains the folded model with
            a Dense head, batches of `learning.batch_size`).
        learning: `hierlstm.inside.Learning` (steps, sequences, seed); by default its defaults.
        lang: "en" or "zh".

    Returns:
        The last `Curve`, shown in a notebook as a table, a row per measurement.
    """
    from hierlstm.inside.learner import learn as learn_values
    from hierlstm.inside.learning import Learning

    learning = learning or Learning()
    shown = _Progress(learning.steps, lang)
    curve = learn_values(config, learning, shown.update)
    shown.finish(curve)
    return curve


class _Progress:
    """Where a learning run's curve is drawn as it grows: in a widget (a progress bar above the
    figure), in a display updated in place (IPython without widgets), or nowhere (no IPython)."""

    def __init__(self, steps: int, lang: str):
        self.steps, self.lang, self.handle, self.box = steps, lang, None, None
        self.text = t("inside.section.learn", lang)
        if widgets_here():
            import ipywidgets as widgets
            from IPython.display import display

            self.bar = widgets.IntProgress(0, 0, steps, layout=widgets.Layout(width="50%"))
            self.label = widgets.Label()
            self.output = widgets.Output()
            self.box = widgets.VBox([widgets.HBox([self.bar, self.label]), self.output])
            self.handle = display(_bundle(self.box, "", self.text), raw=True, display_id=True)

    def update(self, curve) -> None:
        figure = learning_charts.curve_figure(curve, self.lang)
        point = curve.points[-1]
        if self.box is not None:
            self.bar.value = point.step
            accuracy = point.held_out_accuracy
            progress = {"step": point.step, "steps": self.steps, "accuracy": accuracy}
            self.label.value = t("inside.learn.progress", self.lang, **progress)
            _redraw(self.output, [figure])
        elif self.handle is not None:
            self.handle.update(figure)
        elif _shell() is not None:
            from IPython.display import display

            self.handle = display(figure, display_id=True)

    def finish(self, curve) -> None:
        """The last figure kept beside the widget, for a page that cannot draw the widget."""
        if self.box is not None:
            figure = learning_charts.curve_figure(curve, self.lang)
            static = figure_bundle(figure)["text/html"]
            self.handle.update(_bundle(self.box, static, self.text), raw=True)

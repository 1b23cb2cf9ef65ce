"""The notebook's widgets as plain objects, no kernel and no TensorFlow: the scrubbers' sliders span
t and s and redraw their views into the output area's state, the learning run's widget follows
its curve, and where no widget frontend runs, both carry their figures as HTML."""

import numpy as np
import pytest
from IPython import display as ipython_display

from hierlstm import charts, notebook
from hierlstm.config import RunConfig
from hierlstm.i18n import t
from hierlstm.inside.learning import Curve, Learning, Point

HEIGHT, TIME, ROWS, CHANNELS, UNITS = 9, 5, 3, 2, 2
CONFIG = RunConfig(height=HEIGHT, pool_height=3, time_steps=TIME, filters=CHANNELS, batch_size=1)


@pytest.fixture(autouse=True)
def renderer(monkeypatch):
    """Plotly's renderers as in JupyterLab with a page's HTML too, whatever this process has."""
    import plotly.io as pio

    monkeypatch.setattr(pio.renderers, "default", "plotly_mimetype+notebook")


def scrubbers(lang="en", views=notebook.VIEWS) -> notebook.Scrubbers:
    rng = np.random.default_rng(0)
    shapes = {"conv": (HEIGHT, TIME, CHANNELS), "pool": (ROWS, TIME, CHANNELS)}
    shapes |= {"permute": (TIME, ROWS, CHANNELS), "summary": (TIME, UNITS)}
    shapes |= {f"inner_{name}": (TIME, ROWS, UNITS) for name in charts.values.GATE_SCALES}
    shapes |= {f"outer_{name}": (TIME, UNITS) for name in charts.values.GATE_SCALES}
    values = {name: rng.uniform(-1, 1, (1, *shape)) for name, shape in shapes.items()}
    return notebook.Scrubbers(CONFIG, rng.random((HEIGHT, TIME)), values, lang, views)


def plotly_divs(html: str) -> int:
    return html.count("Plotly.newPlot")


def test_without_a_widget_frontend_the_scrubbers_are_their_views_at_the_start():
    shown = scrubbers()
    assert not notebook.widgets_here()  # pytest is no kernel
    bundle = shown._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    assert plotly_divs(bundle["text/html"]) == len(notebook.VIEWS) == 3
    assert bundle["text/plain"] == "Scrubbers(t 0-4, s 0-2; views input, inner, outer)"


def test_the_sliders_span_t_and_s_and_a_move_redraws_the_views_there():
    shown = scrubbers("zh", views=("inner",))
    box = shown.widget()
    sliders, output = box.children
    time_step, row = sliders.children
    assert (time_step.min, time_step.max, row.max) == (0, TIME - 1, ROWS - 1)
    assert time_step.description == t("inside.scrub.t", "zh")
    (first,) = output.outputs
    assert first["data"]["application/vnd.plotly.v1+json"]["layout"]["title"]["text"].startswith(
        "外层时间步 t = 0"
    )
    time_step.value = 3
    (moved,) = output.outputs
    title = moved["data"]["application/vnd.plotly.v1+json"]["layout"]["title"]["text"]
    assert title.startswith("外层时间步 t = 3") and "s = 0" in title
    assert "text/html" in moved["data"]  # for a frontend without plotly's own renderer (Colab)


def test_in_a_kernel_the_widget_carries_its_views_for_a_page_that_cannot_draw_it(monkeypatch):
    monkeypatch.setattr(notebook, "widgets_here", lambda: True)
    bundle = scrubbers()._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert plotly_divs(bundle["text/html"]) == 3


def test_a_learning_run_s_widget_follows_its_curve_and_keeps_the_last_figure(monkeypatch):
    shown = []

    class Handle:
        def update(self, bundle, raw=False):
            shown.append(bundle)

    def display(bundle, raw=False, display_id=False):
        shown.append(bundle)
        return Handle()

    monkeypatch.setattr(notebook, "widgets_here", lambda: True)
    monkeypatch.setattr(ipython_display, "display", display)
    progress = notebook._Progress(10, "en")
    points = [Point(0, 1.6, 0.2, 1.7, 0.25)]
    curve = Curve(CONFIG, Learning(steps=10, every=5), tuple(points), 0.4, {}, {})
    progress.update(curve)
    assert progress.bar.value == 0 and progress.label.value == t(
        "inside.learn.progress", step=0, steps=10, accuracy=0.25
    )
    points.append(Point(5, 1.2, 0.5, 1.4, 0.5))
    curve = Curve(CONFIG, curve.learning, tuple(points), 0.4, {}, {})
    progress.update(curve)
    (figure,) = progress.output.outputs
    assert figure["data"]["application/vnd.plotly.v1+json"]["data"][0]["x"] == [0, 5]
    progress.finish(curve)
    first, last = shown
    assert first["text/html"] == "" and plotly_divs(last["text/html"]) == 1
    assert (
        first["application/vnd.jupyter.widget-view+json"]
        == (last["application/vnd.jupyter.widget-view+json"])
    )


def test_outside_ipython_a_learning_run_draws_nothing():
    progress = notebook._Progress(10, "en")
    curve = Curve(CONFIG, Learning(steps=10), (Point(0, 1.6, 0.2, 1.7, 0.25),), 0.4, {}, {})
    progress.update(curve)
    progress.finish(curve)
    assert progress.box is None and progress.handle is None


@pytest.mark.parametrize("name", ["plotly_mimetype", "notebook", "colab"])
def test_a_figure_s_output_is_what_plotly_s_renderer_makes_without_its_set_up_again(
    monkeypatch, name
):
    import plotly.io as pio

    monkeypatch.setattr(pio.renderers, "default", name)
    bundle = notebook.figure_bundle(charts.learning_figure((), 0.5, "en", 4))
    assert "text/html" in bundle
    assert len(bundle["text/html"]) < 100_000  # plotly.js (4.8 MB) is never inlined here
    assert ("application/vnd.plotly.v1+json" in bundle) is (name == "plotly_mimetype")

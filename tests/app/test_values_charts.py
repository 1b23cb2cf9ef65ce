"""The values figures, without Streamlit or TensorFlow: every picture names its axes in either
language, the selected (t, s) is framed in every panel, and the agreement grid labels each
variant's row, a variant without a layer output showing none."""

import numpy as np
import pytest

from hierlstm import charts
from hierlstm.i18n import LANGUAGES, t
from hierlstm.inside.learning import Point

RNG = np.random.default_rng(0)
HEIGHT, TIME, ROWS, CHANNELS, UNITS = 9, 5, 3, 4, 2
LSTM = {name: RNG.uniform(-1, 1, (ROWS, UNITS)) for name in charts.values.GATE_SCALES}
FIELD = np.zeros((HEIGHT, TIME), bool)
FIELD[2:7, 1:4] = True


def figures(lang):
    points = [Point(0, 1.6, 0.2, 1.6, 0.2), Point(10, 0.5, 0.8, 0.6, 0.7)]
    return {
        "input": charts.values.input_figure(RNG.random((HEIGHT, TIME)), lang, (2, 1), FIELD),
        "maps": charts.values.maps_figure(
            RNG.standard_normal((HEIGHT, TIME, CHANNELS)), "conv", "row", lang, (2, 2, 3, 5)
        ),
        "sequence": charts.values.sequence_figure(
            RNG.standard_normal((ROWS, CHANNELS)), lang, (2, 1)
        ),
        "lstm": charts.values.lstm_figure(LSTM, "inner", "s", lang, 1),
        "summary": charts.values.summary_figure(RNG.standard_normal((TIME, UNITS)), lang, 2),
        "learning": charts.learning.learning_figure(points, 0.3, lang, 20),
    }


def axis_titles(figure, axis: str) -> list[str]:
    layout = figure.to_plotly_json()["layout"]
    return [
        value.get("title", {}).get("text", "")
        for name, value in layout.items()
        if name.startswith(axis) and value.get("visible", True)
    ]


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_every_picture_names_its_axes(lang):
    for name, figure in figures(lang).items():
        for axis in ("xaxis", "yaxis"):
            titles = [title for title in axis_titles(figure, axis) if title]
            assert titles and all("{" not in title for title in titles), (name, axis)


def test_the_selected_cell_is_framed_in_every_panel():
    shown = figures("en")
    assert len(shown["maps"].layout.shapes) == CHANNELS
    assert len(shown["lstm"].layout.shapes) == len(charts.values.GATE_SCALES)
    frame = shown["input"].layout.shapes[0]
    assert (frame.x0, frame.x1, frame.y0, frame.y1) == (0.5, 3.5, 1.5, 6.5)  # FIELD's cells
    for name in ("maps", "lstm"):  # each frame on its own panel's axes
        panels = [(trace.xaxis, trace.yaxis) for trace in shown[name].data]
        frames = [(shape.xref, shape.yref) for shape in shown[name].layout.shapes]
        assert frames == panels and len(set(panels)) == len(panels), name


def test_a_grid_figure_changed_after_it_was_made_leaves_the_next_one_as_it_was():
    """The empty grids are made once and copied (`charts.values._grid`)."""
    values = RNG.standard_normal((HEIGHT, TIME, CHANNELS))
    first = charts.values.maps_figure(values, "conv", "row", "en", (2, 2, 3, 5))
    first.update_layout(title_text="changed", height=10, shapes=[])
    first.layout.annotations[0].text = "changed"
    second = charts.values.maps_figure(values, "conv", "row", "en", (2, 2, 3, 5))
    assert second.layout.title.text == "conv" and second.layout.height == 300
    assert second.layout.annotations[0].text != "changed" and len(second.layout.shapes) == CHANNELS


def test_the_agreement_grid_labels_every_variants_row_and_leaves_missing_outputs_blank():
    full = {output: RNG.random((1, TIME, UNITS)) for output in ("summary", "output")}
    differences = {"folded": full, "fused": {"output": full["output"]}}
    figure = charts.agreement.agreement_figure(differences, ("summary", "output"), "en", "float32")
    assert figure.layout.title.text == "|variant − oracle| at each layer output, float32"
    assert [title for title in axis_titles(figure, "yaxis") if title] == ["folded", "fused"]
    blank = [trace for trace in figure.data if trace.z is not None and trace.z[0][0] is None]
    assert len(blank) == 1


def test_the_page_s_figures_come_at_once_with_t_and_s_framed_in_each():
    from hierlstm.config import RunConfig

    config = RunConfig(height=HEIGHT, pool_height=3, time_steps=TIME, filters=CHANNELS)
    shapes = {"conv": (HEIGHT, TIME, CHANNELS), "pool": (ROWS, TIME, CHANNELS)}
    shapes |= {"permute": (TIME, ROWS, CHANNELS), "summary": (TIME, UNITS)}
    shapes |= {f"inner_{name}": (TIME, ROWS, UNITS) for name in charts.values.GATE_SCALES}
    shapes |= {f"outer_{name}": (TIME, UNITS) for name in charts.values.GATE_SCALES}
    values = {name: RNG.uniform(-1, 1, (1, *shape)) for name, shape in shapes.items()}  # batch 1
    picture = RNG.random((HEIGHT, TIME))
    shown = charts.values_figures(config, picture, values, (3, 1), "zh")
    assert list(shown) == ["input", "conv", "pool", "permute", "inner", "summary", "outer"]
    cells = int(charts.values.input_field(config, (3, 1)).sum())
    assert shown["input"].layout.title.text == t("inside.fig.input", "zh", t=3, s=1, cells=cells)
    conv_box = shown["conv"].layout.shapes[0]
    assert (conv_box.x0, conv_box.x1, conv_box.y0, conv_box.y1) == (2.5, 3.5, 2.5, 5.5)  # rows 3-5
    assert shown["inner"].layout.title.text.startswith("外层时间步 t = 3")
    one = {name: value[0] for name, value in values.items()}  # one example's values: the same
    again = charts.values_figures(config, picture, one, (3, 1), "zh")
    assert again["pool"].to_dict() == shown["pool"].to_dict()


def test_the_agreement_grid_takes_every_output_in_the_order_the_tensor_flows():
    summary, output = (RNG.random((1, TIME, UNITS)) for _ in range(2))
    differences = {"nested": {"output": output}, "folded": {"summary": summary, "output": output}}
    figure = charts.agreement_figure(differences)
    titles = [annotation.text for annotation in figure.layout.annotations[:2]]
    assert titles == [t("inside.agree.summary"), t("inside.agree.output")]
    assert "float32" in figure.layout.title.text


def test_a_learning_run_s_curve_is_drawn_from_its_record():
    from hierlstm.config import RunConfig
    from hierlstm.inside.learning import Curve, Learning

    points = (Point(0, 1.6, 0.2, 1.6, 0.2), Point(5, 1.0, 0.6, 1.2, 0.5))
    curve = Curve(RunConfig(), Learning(steps=5, every=5), points, 0.3, {}, {})
    figure = charts.curve_figure(curve, "en")
    assert figure.layout.title.text == "Loss and accuracy, step 5 of 5"
    assert list(figure.data[0].x) == [0, 5] and figure.layout.xaxis.range == (0, 5)

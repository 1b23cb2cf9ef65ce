"""The Profile page's timeline and memory figures from frames built here."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from hierlstm import charts
from hierlstm.charts.style import variant_color
from hierlstm.config import RunConfig
from hierlstm.i18n import LANGUAGES, t
from hierlstm.model.cost import MEMORY_PARTS, memory_parts
from hierlstm.profiling import OUTSIDE, StepTimeline
from hierlstm.profiling.timeline import TIMELINE_COLUMNS

THREAD = "tf_Compute/1302392353698861789"


def timeline(*ops: tuple[str, float, float, int]) -> StepTimeline:
    """(layer, start ms, duration ms, depth) per op, all on one CPU thread."""
    rows = [
        ("/host:CPU " + THREAD, "/host:CPU", THREAD, start / 1e3, duration / 1e3)
        + (f"{layer}/op{index}", "MatMul", layer, depth)
        for index, (layer, start, duration, depth) in enumerate(ops)
    ]
    events = pd.DataFrame(rows, columns=[*TIMELINE_COLUMNS, "depth"])
    end = max(start + duration for _, start, duration, _ in ops)
    return StepTimeline(step=1, step_s=end / 1e3, events=events)


def split(*layers: str) -> pd.DataFrame:
    share = 1 / len(layers)
    return charts.profile.split_frame(
        pd.DataFrame({"layer": list(layers), "time_s": share, "share": share}), None
    )


def bar_colors(figure) -> dict[str, str]:
    found = {}
    for trace in figure.data:
        found.setdefault(trace.legendgroup or trace.name, trace.marker.color)
    return found


def test_the_timeline_colours_each_layer_as_the_split_does():
    splits = {"nested": split("conv", "nested_rnn", OUTSIDE), "folded": split("conv", "fold")}
    timelines = {
        "nested": timeline(("nested_rnn", 0, 2, 0), ("conv", 2, 1, 0), (OUTSIDE, 3, 1, 0)),
        "folded": timeline(("fold", 0, 1, 0), ("conv", 1, 1, 0)),
    }
    colors = charts.profile.layer_colors(splits.values())
    split_colors = {
        layer: color
        for layer, color in bar_colors(charts.profile.layer_split_figure(splits)).items()
    }
    drawn = bar_colors(charts.profile.timeline_figure(timelines, colors))
    assert drawn == {"nested_rnn": colors["nested_rnn"], "conv": colors["conv"]} | {
        OUTSIDE: "#BBBBBB",
        "fold": colors["fold"],
    }
    assert split_colors["outside any layer"] == drawn[OUTSIDE]
    assert all(split_colors[layer] == drawn[layer] for layer in ("conv", "nested_rnn", "fold"))
    assert len(set(drawn.values())) == 4


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_each_op_is_a_bar_from_its_start_to_its_end_thinner_inside_another(lang):
    step = timeline(("outer_lstm", 0.5, 4, 0), ("outer_lstm", 1.0, 1.5, 1), ("conv", 0, 0.5, 0))
    figure = charts.profile.timeline_figure({"fused": step}, {"conv": "#111111"}, lang)
    bars = {(trace.legendgroup, trace.width): trace for trace in figure.data}
    outer, inner = bars[("outer_lstm", 0.8)], bars[("outer_lstm", 0.8 * 0.7)]
    assert list(outer.base) == pytest.approx([0.5]) and list(outer.x) == pytest.approx([4])
    assert list(inner.base) == pytest.approx([1.0]) and list(inner.x) == pytest.approx([1.5])
    assert outer.orientation == "h" and figure.layout.barmode == "overlay"
    assert list(outer.y) == ["CPU tf_Compute/1302…"]  # the long thread id cut
    assert [trace.showlegend for trace in figure.data].count(True) == 2  # once per layer
    assert figure.layout.title.text == t("chart.timeline.title", lang)
    title = t("chart.timeline.row", lang, variant="fused", ops=3, shown=3, ms=4.5)
    assert [note.text for note in figure.layout.annotations] == [title]
    assert figure.layout.xaxis.title.text == t("chart.timeline.x", lang)
    assert list(outer.customdata[0][:2]) == ["outer_lstm/op0", "MatMul"]
    assert outer.customdata[0][2] == pytest.approx(4000)  # µs on hover


def test_a_timeline_past_its_cap_draws_the_longest_and_says_so():
    ops = [("conv", float(index), 0.1 * (index + 1), 0) for index in range(10)]
    step = timeline(*ops)
    figure = charts.profile.timeline_figure({"nested": step}, {}, "en", cap=4)
    drawn = sorted(length for trace in figure.data for length in trace.x)
    assert drawn == pytest.approx([0.7, 0.8, 0.9, 1.0])
    title = t("chart.timeline.row_capped", "en", variant="nested", ops=10, shown=4, ms=10.0)
    assert (
        figure.layout.annotations[0].text == title == "nested: 10 ops in 10 ms, the 4 longest drawn"
    )
    assert len(charts.profile.timeline_frame({"nested": step})) == 10  # the CSV holds every op


def result(variant: str, task="training", peak=3 * 2**20, kind="cpu_rss_growth"):
    config = RunConfig(variant=variant, batch_size=4, time_steps=10, task=task, optimizer="adam")
    return SimpleNamespace(config=config, peak_memory_bytes=peak, peak_memory_kind=kind)


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_the_memory_figure_stacks_the_parts_beside_the_measured_peak(lang):
    results = [result("nested"), result("folded", peak=2**20), result("fused", task="inference")]
    frame = charts.profile.memory_frame(results)
    assert list(dict.fromkeys(frame["variant"])) == ["nested", "folded"]  # no forward pass
    figure = charts.profile.memory_figure(frame, lang)
    parts = memory_parts(results[0].config)
    bars = {trace.name: trace for trace in figure.data if trace.type == "bar"}
    for part in MEMORY_PARTS:
        bar = bars[t(f"chart.memory.part.{part}", lang)]
        assert list(bar.x[0]) == ["nested", "folded"]
        assert set(bar.x[1]) == {t("chart.memory.estimate", lang)}
        assert list(bar.y) == pytest.approx([getattr(parts, part) / 2**20] * 2)
    measured = bars[t("chart.memory.measured.cpu_rss_growth", lang)]
    assert list(measured.y) == pytest.approx([3, 1])
    assert set(measured.x[1]) == {t("chart.memory.measured", lang)}
    totals = next(trace for trace in figure.data if trace.type == "scatter")
    assert list(totals.y) == pytest.approx([parts.total / 2**20] * 2)
    assert figure.layout.barmode == "relative"
    assert figure.layout.title.text == t("chart.memory.title", lang)
    assert figure.layout.yaxis.title.text == t("chart.memory.y", lang)
    assert sum(frame.loc[frame["variant"] == "nested", "bytes"].iloc[:5]) == parts.total


def test_a_forward_pass_only_has_no_memory_rows():
    assert charts.profile.memory_frame([result("fused", task="inference")]).empty


def test_a_rows_name_is_its_plane_and_thread_with_the_id_cut():
    assert charts.profile.line_label("/host:CPU", "tf_Compute/-3642686382562395042") == (
        "CPU tf_Compute/-3642…"
    )
    assert charts.profile.line_label("/device:GPU:0", "Stream #13(MemcpyH2D)") == (
        "GPU:0 Stream #13(MemcpyH2D)"
    )
    assert charts.profile.line_label("/host:CPU", "python") == "CPU python"


def test_every_layer_of_a_profile_of_all_variants_has_its_own_colour():
    layers = ["conv", "pool", "permute", "nested_rnn", "summarise", "outer_lstm", "fold"]
    layers += ["inner_lstm", "unfold", "inner_rnn", "fused_lstm"]  # every variant's, today
    colors = charts.profile.layer_colors([pd.DataFrame({"layer": [*layers, OUTSIDE]})])
    assert len(set(colors.values())) == len(layers) + 1


def test_memory_of_several_backends_is_one_group_per_profile_in_its_backend_s_pattern():
    def on(backend, kind="cpu_rss_growth"):
        found = result("folded", kind=kind)
        return SimpleNamespace(**{**vars(found), "config": found.config.replace(backend=backend)})

    results = [on("tensorflow"), on("jax", kind=""), on("torch")]  # JAX measured nothing
    labels = ["folded · tensorflow", "folded · jax", "folded · torch"]
    frame = charts.profile.memory_frame(results, labels)
    assert list(dict.fromkeys(frame["label"])) == labels
    measured = frame[frame["source"] == "measured"]
    assert list(measured["backend"]) == ["tensorflow", "torch"]  # no bar for what was not
    figure = charts.profile.memory_figure(frame, "en")
    bars = {trace.name: trace for trace in figure.data if trace.type == "bar"}
    peak = bars[t("chart.memory.measured.cpu_rss_growth", "en")]
    assert list(peak.x[0]) == ["folded · tensorflow", "folded · torch"]
    assert list(peak.marker.pattern.shape) == ["", "x"]  # the backends' patterns
    assert set(peak.marker.color) == {variant_color("folded")}  # colour is the variant's
    parts = bars[t("chart.memory.part.parameters", "en")]
    assert list(parts.x[0]) == labels  # the estimate for every profile, JAX's too
    single = charts.profile.memory_figure(charts.profile.memory_frame(results[:1]), "en")
    assert single.data[len(MEMORY_PARTS)].marker.pattern.shape == "/"  # one backend: hatched

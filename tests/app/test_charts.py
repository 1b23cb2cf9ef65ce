"""The app's figures and message catalogue, without Streamlit: plain records and frames in,
plotly figures out, every axis titled with its unit, every message in both languages."""

from __future__ import annotations

import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
from factories import make_compare, make_result

from hierlstm import charts
from hierlstm.config import RunConfig
from hierlstm.i18n import LANGUAGES, MESSAGES, t
from hierlstm.model.trace import trace_shapes
from hierlstm.profiling import OUTSIDE

ROOT = Path(__file__).resolve().parents[2]
APP_SOURCES = [
    ROOT / "app.py",
    ROOT / "streamlit_app.py",
    *sorted((ROOT / "app_pages").glob("*.py")),
    *sorted((ROOT / "hierlstm" / "app").rglob("*.py")),
]


def bench_frame(pairs=(("nested", None), ("folded", None), ("shared_cell", None))):
    """What CompareResult.to_frame() gives for (variant, backend or None) pairs: row i's median
    10 * (i + 1) ms, the first the baseline, every other figure from the median; shared_cell
    failed (no figures)."""
    rows = []
    for index, (variant, backend) in enumerate(pairs):
        failed = variant == "shared_cell"
        median = math.nan if failed else 0.010 * (index + 1)
        rows.append(
            {"variant": variant, "backend": backend, "status": "failed" if failed else "ok"}
            | {"median_s": median, "p10_s": median * 0.9, "p90_s": median * 1.2}
            | {"first_call_s": median * 20, "samples_per_s": 2 / median, "gflops_per_s": 1 / median}
            | {"speedup_vs_baseline": 0.010 / median, "speedup_p10": 0.009 / median}
            | {"speedup_p90": 0.011 / median}
        )
    return pd.DataFrame(rows).dropna(axis="columns", how="all")  # backend None: no column


def sweep_frame(lines=(("nested", None, 0.001, 0.0010), ("folded", None, 0.010, 0.0001))):
    """(variant, backend or None, fixed s, s per step) lines over time steps. By default nested
    grows 10x faster and starts cheaper: they cross where 0.001 + 0.0010 T = 0.010 + 0.0001 T."""
    rows = [
        {"variant": variant, "backend": backend, "axis": "time_steps", "value": value}
        | {"status": "ok", "median_s": fixed + per_step * value}
        for variant, backend, fixed, per_step in lines
        for value in (2, 5, 20, 50)
    ]
    frame = pd.DataFrame(rows).dropna(axis="columns")  # no backend column, as before backends
    return frame.assign(p10_s=frame["median_s"] * 0.9, p90_s=frame["median_s"] * 1.1)


def axis_titles(figure: go.Figure) -> tuple[str, str]:
    layout = figure.layout
    return layout.xaxis.title.text or "", layout.yaxis.title.text or ""


def test_axis_flow_draws_every_axis_and_the_fold():
    config = RunConfig(variant="folded", batch_size=4, time_steps=10)
    figure = charts.axis_flow.axis_flow_figure(trace_shapes(config))
    names = [trace.name for trace in figure.data]
    assert names == ["batch", "time", "height", "channels", "units"]
    steps = list(figure.layout.xaxis.ticktext)
    assert steps == "input conv pool permute fold inner_lstm unfold outer_lstm".split()
    batch, time, height = figure.data[0], figure.data[1], figure.data[2]
    fold = steps.index("fold")
    # Permute swaps height and time; the fold puts batch and time side by side in one position.
    assert (height.y[2], height.y[3]) == (1, 2) and (time.y[2], time.y[3]) == (2, 1)
    assert round(batch.y[fold]) == round(time.y[fold]) == 0 and batch.y[fold] != time.y[fold]
    assert "40" in time.text[fold]  # batch x time = 4 x 10
    assert height.x[steps.index("inner_lstm")] is None  # the LSTM consumes the height
    assert "time 10" in time.text[0]


def test_axis_flow_speaks_chinese():
    steps = trace_shapes(RunConfig(variant="nested", batch_size=2, time_steps=3))
    figure = charts.axis_flow.axis_flow_figure(steps, "zh")
    assert [trace.name for trace in figure.data][:2] == ["批量", "时间"]
    assert figure.layout.title.text == t("chart.flow.title", "zh")


def test_latency_bars_are_medians_with_p10_p90_and_skip_failures():
    figure = charts.bars.latency_figure(bench_frame())
    (bar,) = figure.data
    assert list(bar.x) == ["nested", "folded"]
    assert np.allclose(bar.y, [10.0, 20.0])
    assert np.allclose(bar.error_y.array, [2.0, 4.0])
    assert np.allclose(bar.error_y.arrayminus, [1.0, 2.0])
    assert bar.marker.color[0] == charts.style.variant_color("nested")


def test_bar_numbers_have_three_digits_and_no_exponent():
    labels = [charts.style.bar_label(value) for value in (0.02751, 7.989, 119.4, 1000.0, 2466.6)]
    assert labels == ["0.0275", "7.99", "119", "1,000", "2,467"]


def test_speedup_first_call_throughput_gflops():
    frame = bench_frame()
    speedup = charts.bars.speedup_figure(frame, "nested")
    assert np.allclose(speedup.data[0].y, [1.0, 0.5])
    assert "nested" in speedup.layout.title.text
    first = charts.bars.first_call_figure(frame)
    assert [trace.name for trace in first.data] == ["first call", "steady-state median"]
    assert first.layout.yaxis.type == "log"
    assert np.allclose(charts.bars.throughput_figure(frame).data[0].y, [200.0, 100.0])
    assert np.allclose(charts.bars.gflops_figure(frame).data[0].y, [100.0, 50.0])


def test_every_failed_frame_gives_an_empty_figure_not_an_error():
    frame = bench_frame().assign(status="failed")
    figure = charts.bars.latency_figure(frame)
    assert figure.data == () and figure.layout.annotations


def test_layer_breakdown_in_model_order():
    frame = pd.DataFrame(
        {
            "layer": ["conv", "inner_lstm", "outer_lstm"],
            "type": ["Conv2D", "LSTM", "LSTM"],
            "median_s": [0.001, 0.004, 0.002],
            "p10_s": [0.0009, 0.0038, 0.0019],
            "p90_s": [0.0012, 0.0050, 0.0024],
            "share": [1 / 7, 4 / 7, 2 / 7],
        }
    )
    frame.attrs.update(model_median_s=0.006, call_overhead_s=0.0005)
    figure = charts.bars.layer_breakdown_figure(frame, "folded")
    assert list(figure.data[0].y) == ["conv · 14%", "inner_lstm · 57%", "outer_lstm · 29%"]
    assert np.allclose(figure.data[0].x, [1.0, 4.0, 2.0])
    assert "folded" in figure.layout.title.text


def test_crossover_found_on_log_log_axes():
    crossings = charts.scaling.crossovers(sweep_frame())
    assert len(crossings) == 1
    row = crossings.iloc[0]
    assert (row["first"], row["second"]) == ("nested", "folded")  # nested faster below
    assert 5 < row["value"] < 20  # log-interpolated between the measured 5 and 20
    figure = charts.scaling.scaling_figure(sweep_frame(), "time_steps")
    assert figure.layout.xaxis.type == figure.layout.yaxis.type == "log"
    assert figure.data[-1].name == "crossover"


def test_cost_per_step_fit_recovers_the_slopes():
    fit = charts.scaling.cost_per_step(sweep_frame()).set_index("variant")
    assert fit.loc["nested", "slope_s"] == pytest.approx(0.0010)
    assert fit.loc["folded", "slope_s"] == pytest.approx(0.0001)
    assert fit.loc["folded", "intercept_s"] == pytest.approx(0.010)
    assert fit.loc["nested", "r2"] == pytest.approx(1.0)
    figure = charts.scaling.cost_per_step_figure(fit.reset_index(), "time_steps")
    assert np.allclose(figure.data[0].y, [1.0, 0.1])


def test_chain_lengths_follow_the_registry():
    chains = charts.scaling.chain_frame(["nested", "folded"], pooled_height=12, times=[10, 50])
    lengths = {(r.variant, r.time_steps): r.chain for r in chains.itertuples()}
    assert lengths == {
        ("nested", 10): 130,
        ("nested", 50): 650,
        ("folded", 10): 22,
        ("folded", 50): 62,
    }
    assert len(charts.scaling.chain_figure(chains).data) == 2


def test_gradient_and_runs_figures():
    figure = charts.bars.gradient_figure(["kernel", "bias"], [1, 2], [3, 4], [4, 6])
    assert [trace.name for trace in figure.data] == ["from path a", "from path b", "from both"]
    rows = bench_frame().iloc[:2]
    runs = charts.bars.runs_figure(rows, ["run one", "run two"])
    assert list(runs.data[0].x) == ["run one", "run two"]


def all_figures(lang: str) -> list[go.Figure]:
    frame = bench_frame()
    config = RunConfig(variant="folded", batch_size=2, time_steps=3)
    fit = charts.scaling.cost_per_step(sweep_frame())
    breakdown = pd.DataFrame(
        {"layer": ["conv"], "median_s": [0.001], "p10_s": [0.001], "p90_s": [0.001], "share": [1.0]}
    )
    return [
        charts.axis_flow.axis_flow_figure(trace_shapes(config), lang),
        charts.bars.latency_figure(frame, lang),
        charts.bars.speedup_figure(frame, "nested", lang),
        charts.bars.first_call_figure(frame, lang),
        charts.bars.throughput_figure(frame, lang),
        charts.bars.gflops_figure(frame, lang),
        charts.bars.layer_breakdown_figure(breakdown, "folded", lang),
        charts.scaling.scaling_figure(sweep_frame(), "time_steps", lang),
        charts.scaling.cost_per_step_figure(fit, "time_steps", lang),
        charts.scaling.chain_figure(charts.scaling.chain_frame(["nested"], 12, [1, 2]), lang),
        charts.bars.gradient_figure(["kernel"], [1], [1], [2], lang),
        charts.profile.layer_split_figure(
            {"folded": charts.profile.split_frame(profiled_layers(), breakdown)}, lang
        ),
        charts.profile.memory_figure(charts.profile.memory_frame([profiled_step()]), lang),
    ]


def profiled_step():
    """What the memory figure reads of a training step's `ProfileResult`."""
    config = RunConfig(variant="folded", batch_size=2, time_steps=3, task="training")
    return SimpleNamespace(
        config=config, peak_memory_bytes=2**20, peak_memory_kind="cpu_rss_growth"
    )


def profiled_layers(conv=0.001, lstm=0.003, outside=0.0) -> pd.DataFrame:
    """A profile's layers frame (`ProfileResult.layers`): conv, inner_lstm, then outside."""
    times = [conv, lstm, outside]
    return pd.DataFrame(
        {
            "layer": ["conv", "inner_lstm", OUTSIDE],
            "time_s": times,
            "share": [value / sum(times) for value in times],
        }
    )


def test_the_profile_figure_stacks_each_split_to_100_percent_one_colour_per_layer():
    separate = pd.DataFrame(
        {"layer": ["conv", "inner_lstm"], "median_s": [0.002, 0.002], "share": [0.5, 0.5]}
    )
    splits = {
        "folded": charts.profile.split_frame(profiled_layers(outside=0.001), separate),
        "nested": charts.profile.split_frame(profiled_layers(lstm=0.009), None),  # split failed
    }
    figure = charts.profile.layer_split_figure(splits, "en")
    assert [bar.name for bar in figure.data] == ["conv", "inner_lstm", "outside any layer"]
    labels = ["folded · profiler", "folded · separate calls", "nested · profiler"]
    for bar in figure.data:
        assert list(bar.y) == labels
    assert [bar.x[0] for bar in figure.data] == pytest.approx([20, 60, 20])  # shares in %
    assert [bar.x[1] for bar in figure.data] == pytest.approx([50, 50, 0])
    assert [bar.x[2] for bar in figure.data] == pytest.approx([10, 90, 0])
    assert list(figure.data[1].customdata) == pytest.approx([3, 2, 9])  # ms per step, on hover
    assert figure.layout.barmode == "stack"
    assert figure.data[2].marker.color == "#BBBBBB"  # outside any layer: grey
    assert len({bar.marker.color for bar in figure.data}) == 3
    table = charts.profile.split_frames(splits)
    assert list(table.columns) == ["variant", "method", "layer", "time_s", "share"]
    assert len(table) == 3 + 2 + 3
    chinese = charts.profile.layer_split_figure(splits, "zh")
    assert chinese.data[0].y[1] == "folded · 逐层单独调用"
    assert chinese.data[2].name == "不属于任何层"


@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_every_figure_has_a_title_and_axis_titles_with_units(lang):
    for figure in all_figures(lang):
        x_title, y_title = axis_titles(figure)
        assert figure.layout.title.text
        assert x_title and y_title
        # The value axis names its unit in brackets: ms, 1/s, GFLOP/s, count, axis index...
        value_title = x_title if figure.data and figure.data[0].orientation == "h" else y_title
        assert re.search(r"[(（].+[)）]", value_title), value_title


def test_figures_leave_text_colours_to_the_theme():
    for figure in all_figures("en"):
        # No fixed background or text colour: Streamlit's template (light or dark) sets them.
        assert figure.layout.paper_bgcolor is None and figure.layout.plot_bgcolor is None
        assert figure.layout.font.color is None


# --- the message catalogue -------------------------------------------------------------------


def test_chinese_messages_are_chinese():
    chinese = re.compile(r"[\u4e00-\u9fff]")
    code_only = {key for key, entry in MESSAGES.items() if entry["en"] == entry["zh"]}
    assert len(code_only) < 10, code_only  # names that are code (XLA, LSTM, auto), not prose
    assert all(chinese.search(MESSAGES[key]["zh"]) for key in MESSAGES if key not in code_only)


def test_every_message_key_the_app_uses_is_in_the_catalogue():
    pattern = re.compile(r"""\b(?:_|text|t)\(\s*["']([a-z_]+(?:\.[a-z_/]+)+)["']""")
    used = set()
    for path in APP_SOURCES:
        used.update(pattern.findall(path.read_text(encoding="utf-8")))
    assert len(used) > 100
    assert sorted(used - set(MESSAGES)) == []


def test_unknown_key_shows_itself_and_formatting_works():
    assert t("no.such.key", "zh") == "no.such.key"
    assert t("bench.failed", "zh", variant="folded", error="x") == "folded 运行失败：x"


def replica_frame() -> pd.DataFrame:
    """Two variants on 1 and 2 replicas; folded's 2-replica point failed."""
    rows = [
        ("nested", 1, "ok", 300.0, 1.0, 1.0, 1.0),
        ("nested", 2, "ok", 450.0, 0.75, 0.7, 0.8),
        ("folded", 1, "ok", 500.0, 1.0, 1.0, 1.0),
        ("folded", 2, "failed", math.nan, math.nan, math.nan, math.nan),
    ]
    columns = ["variant", "replicas", "status", "samples_per_s", "scaling_efficiency"]
    return pd.DataFrame(rows, columns=[*columns, "efficiency_p10", "efficiency_p90"])


def test_replica_figures_draw_measured_points_and_the_ideal():
    throughput = charts.scaling.replica_throughput_figure(replica_frame())
    lines = {trace.name: (list(trace.x), list(trace.y)) for trace in throughput.data}
    assert lines["nested"] == ([1, 2], [300.0, 450.0])
    assert lines["nested, ideal (n × one replica)"] == ([1, 2], [300.0, 600.0])
    assert lines["folded"] == ([1], [500.0])  # the failed point is left out
    efficiency = charts.scaling.replica_efficiency_figure(replica_frame(), "zh")
    nested = next(trace for trace in efficiency.data if trace.name == "nested")
    assert list(nested.y) == [1.0, 0.75]
    assert list(nested.error_y.arrayminus) == pytest.approx([0.0, 0.05])
    assert efficiency.layout.title.text == t("chart.replicas.efficiency.title", "zh")
    empty = charts.scaling.replica_efficiency_figure(replica_frame().assign(status="failed"))
    assert not empty.data and empty.layout.annotations[0].text == "—"


def test_training_figures_stack_the_phases_and_set_memory_beside_its_estimate():
    from factories import make_compare, make_training_result

    from hierlstm.records import phase_frame

    results = [
        make_training_result(config_changes={"variant": "nested"}),
        make_training_result(),
    ]
    phases = phase_frame(results)
    figure = charts.training.phases_figure(phases, "zh")
    bars = [trace for trace in figure.data if isinstance(trace, go.Bar)]
    (step,) = [trace for trace in figure.data if isinstance(trace, go.Scatter)]
    assert figure.layout.barmode == "stack" and [bar.name for bar in bars] == [
        "前向",
        "反向",
        "更新",
    ]
    for index, result in enumerate(results):
        forward, backward, update = (bar.y[index] for bar in bars)
        phase = {name: stats.median * 1e3 for name, stats in result.phases.items()}
        assert forward == pytest.approx(phase["forward"])
        assert backward == pytest.approx(phase["forward_backward"] - phase["forward"])
        assert forward + backward + update == pytest.approx(result.phase_sum_s * 1e3)
        assert step.y[index] == pytest.approx(result.step.median * 1e3)
    frame = make_compare(results, [1.0, 2.0]).to_frame()
    memory = charts.training.training_memory_figure(frame)
    measured, estimated = memory.data
    assert list(measured.y) == pytest.approx([r.peak_memory_bytes / 2**20 for r in results])
    assert list(estimated.y) == pytest.approx([r.kept_activation_bytes / 2**20 for r in results])
    assert "cpu_rss_growth" in measured.name
    assert charts.training.phases_figure(phase_frame([]), "en").layout.title.text


# --- variant x backend ----------------------------------------------------------------------

PAIRS = [(v, b) for v in ("nested", "folded") for b in ("tensorflow", "jax", "torch")]
PATTERNS = {"tensorflow": "", "jax": "/", "torch": "x"}


def _traces_by_name(figure: go.Figure) -> dict[str, go.Bar]:
    return {trace.name: trace for trace in figure.data}


@pytest.mark.parametrize(
    ("build", "column", "scale"),
    [
        (lambda frame: charts.bars.latency_figure(frame), "median_s", 1e3),
        (lambda frame: charts.bars.speedup_figure(frame, "nested"), "speedup_vs_baseline", 1),
        (lambda frame: charts.bars.throughput_figure(frame), "samples_per_s", 1),
        (lambda frame: charts.bars.gflops_figure(frame), "gflops_per_s", 1),
        (
            lambda frame: charts.bars.runs_figure(frame, [f"{v} · {b} · run" for v, b in PAIRS]),
            "median_s",
            1e3,
        ),
    ],
    ids=["latency", "speedup", "throughput", "gflops", "runs"],
)
def test_bars_of_several_backends_colour_by_variant_and_pattern_by_backend(build, column, scale):
    frame = bench_frame(PAIRS)
    figure = build(frame)
    traces = _traces_by_name(figure)
    assert list(traces) == [f"{v} · {b}" for v, b in PAIRS]  # the legend says both
    assert figure.layout.showlegend is not False
    for variant, backend in PAIRS:
        trace = traces[f"{variant} · {backend}"]
        assert list(trace.marker.color) == [charts.style.variant_color(variant)]
        assert trace.marker.pattern.shape == PATTERNS[backend]
        assert len(trace.x) == 1 and backend in trace.x[0] and variant in trace.x[0]
    assert len({charts.style.variant_color(v) for v in ("nested", "folded")}) == 2
    # every bar in the rows' order, each value its row's
    assert list(figure.layout.xaxis.categoryarray) == [trace.x[0] for trace in figure.data]
    expected = frame[column].to_numpy() * scale
    assert np.allclose([trace.y[0] for trace in figure.data], expected)


def test_bars_of_one_backend_are_one_trace_without_patterns():
    frame = bench_frame(PAIRS)
    one = frame[frame["backend"] == "jax"]
    figure = charts.bars.latency_figure(one)
    assert len(figure.data) == 1 and list(figure.data[0].x) == ["nested", "folded"]
    assert not figure.data[0].marker.pattern.shape
    assert figure.layout.showlegend is False


def test_first_call_names_the_backend_of_each_bar():
    figure = charts.bars.first_call_figure(bench_frame(PAIRS))
    assert list(figure.data[0].x) == [f"{v} · {b}" for v, b in PAIRS]
    assert list(figure.data[0].marker.color) == [charts.style.variant_color(v) for v, _ in PAIRS]


def backends_sweep() -> pd.DataFrame:
    """Each (variant, backend) over time steps: (index + 1) ms per step, nothing fixed."""
    return sweep_frame([(v, b, 0.0, 0.001 * (i + 1)) for i, (v, b) in enumerate(PAIRS)])


def test_sweeps_of_several_backends_are_one_curve_each_dashed_by_backend():
    figure = charts.scaling.scaling_figure(backends_sweep(), "time_steps")
    dashes = {"tensorflow": "solid", "jax": "dash", "torch": "dot"}
    curves = {trace.name: trace for trace in figure.data}
    assert list(curves) == [f"{v} · {b}" for v, b in PAIRS]
    for variant, backend in PAIRS:
        line = curves[f"{variant} · {backend}"].line
        assert line.color == charts.style.variant_color(variant) and line.dash == dashes[backend]
    fit = charts.scaling.cost_per_step(backends_sweep())
    assert list(zip(fit["variant"], fit["backend"], strict=True)) == PAIRS
    # median = (i + 1) ms x value exactly: the slope is (i + 1) ms per step, no intercept
    assert np.allclose(fit["slope_s"], [0.001 * (i + 1) for i in range(len(PAIRS))])
    assert np.allclose(fit["intercept_s"], 0, atol=1e-12)
    bars = charts.scaling.cost_per_step_figure(fit, "time_steps").data[0]
    assert list(bars.marker.pattern.shape) == [PATTERNS[b] for _, b in PAIRS]
    assert list(bars.marker.color) == [charts.style.variant_color(v) for v, _ in PAIRS]
    assert charts.scaling.crossovers(backends_sweep()).empty  # parallel lines never cross


def test_a_comparison_s_figures_take_the_record_itself():
    nested = make_result(config_changes={"variant": "nested"}, step_changes={"median": 0.025})
    compared = make_compare([nested, make_result()], [1.0, 2.0])
    latency = charts.latency_figure(compared)
    assert list(latency.data[0].x) == ["nested", "folded"]
    assert list(latency.data[0].y) == pytest.approx([25.0, 12.5])
    speedup = charts.speedup_figure(compared)
    assert speedup.layout.title.text == t("chart.speedup.title", "en", baseline="nested")
    assert list(speedup.data[0].y) == [1.0, 2.0]

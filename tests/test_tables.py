"""The records a notebook shows as the app's tables, as pure functions (no kernel, no
TensorFlow): a comparison, a sweep, a profile and a learning curve each give HTML whose tables
hold their rows under the app's headers, in English by default and in Chinese when asked, and a
readable text form (repr, IPython's pretty printer) of the same tables."""

import math

import pandas as pd
import pytest
from factories import html_tables, make_compare, make_failed_result, make_profile_result
from factories import make_result as result_of

from hierlstm.config import RunConfig
from hierlstm.i18n import t
from hierlstm.inside.learning import Curve, Learning, Point
from hierlstm.tables import Table, named
from hierlstm.timing.points import SweepFrame, sweep_points

CONFIG = RunConfig(variant="folded", batch_size=2, time_steps=4)


def compared():
    nested = result_of(config_changes={"variant": "nested"}, step_changes={"median": 0.025})
    failed = make_failed_result()
    return make_compare([nested, result_of(), failed], [1.0, (2.0, 1.8, 2.2), math.nan])


def test_a_table_is_html_and_text_with_its_notes_and_no_empty_grid():
    table = Table("Title", named([{"layer": "conv"}], "yours.col.", "en"), ("a **bold** `x`",))
    html = table._repr_html_()
    assert html_tables(html) == [[["layer"], ["conv"]]]
    assert "<strong>bold</strong> <code>x</code>" in html
    assert repr(table).splitlines() == ["Title", "=====", "layer", " conv", "a bold x"]
    empty = Table("标题", pd.DataFrame(), ("note",))
    assert html_tables(empty._repr_html_()) == [] and repr(empty).splitlines()[1] == "===="


def test_a_comparison_shows_a_row_per_config_with_the_benchmark_pages_words():
    comparison = compared()
    (table,) = html_tables(comparison._repr_html_())
    header, *rows = table
    assert header[:5] == ["variant", "backend", "status", "median_s", "p10_s"]
    assert [row[0] for row in rows] == ["nested", "folded", "folded"]
    speedup = header.index("speedup_vs_baseline")
    assert [row[speedup] for row in rows] == ["1", "2", ""]
    assert rows[2][2] == "failed" and "OOM" in rows[2][header.index("error")]
    assert "Speed-up against nested" in comparison._repr_html_()
    (chinese,) = html_tables(comparison.show("zh")._repr_html_())
    assert chinese[0][:4] == ["变体", t("column.backend", "zh"), "状态", "中位数（秒）"]
    text = repr(comparison)
    assert text.startswith(t("bench.compared", "en")) and "nested" in text and "0.025" in text


def test_a_sweep_is_its_frame_shown_as_the_scaling_pages_table():
    def measure(point, _progress):
        return result_of(config_changes={"time_steps": point.time_steps})

    sweep = sweep_points(CONFIG, "time_steps", [4, 8, 0], measure)
    assert isinstance(sweep, SweepFrame) and len(sweep.columns) > 50  # every column is kept
    (table,) = html_tables(sweep._repr_html_())
    header, *rows = table
    assert header[:4] == ["variant", "backend", "time steps", "status"]
    assert [(row[2], row[3]) for row in rows] == [("4", "ok"), ("8", "ok"), ("0", "failed")]
    assert "invalid setting" in rows[2][-1]
    (chinese,) = html_tables(sweep.show("zh")._repr_html_())
    assert "时间步数" in chinese[0] and "沿时间步数扫描的每个点" in sweep.show("zh")._repr_html_()
    ok = sweep[sweep["status"] == "ok"]
    assert type(ok) is pd.DataFrame and len(ok) == 2  # what is made from it is a plain frame
    assert repr(sweep).startswith("Every point of the sweep over time steps")


def test_a_profile_shows_its_op_types_threads_and_kernels():
    profile = make_profile_result()
    ops, lines, kernels = html_tables(profile._repr_html_())
    assert ops == [
        ["op type", "ms per step", "ops per step", "share"],
        ["_MklMatMul", "0.3", "32", "0.7481"],
        ["BiasAdd", "0.101", "16", "0.2519"],
    ]
    assert lines[1] == ["/host:CPU python", "0", "1"]
    assert kernels[1][:3] == ["RNN_blockPersist_fp_LSTM", "CudnnRNNV3", "outer_lstm"]
    html = profile.show("zh")._repr_html_()
    assert html_tables(html)[0][0][0] == "算子类型" and "每步算子" in html
    no_lines = make_profile_result(lines=pd.DataFrame(), kernels=pd.DataFrame())
    assert len(html_tables(no_lines._repr_html_())) == 1


@pytest.mark.parametrize("stopped", [False, True])
def test_a_learning_curve_shows_a_row_per_measurement_and_how_it_ended(stopped):
    points = tuple(Point(step, 1.5 - step / 10, step / 20, 1.6, 0.25) for step in (0, 2, 4))
    curve = Curve(CONFIG, Learning(steps=8, every=2), points, 0.4, {}, {}, stopped=stopped)
    html = curve._repr_html_()
    ((header, *rows),) = html_tables(html)
    assert header == ["step", "train loss", "train accuracy", "held-out loss", "held-out accuracy"]
    assert rows == [
        ["0", "1.5", "0.0%", "1.6", "25.0%"],
        ["2", "1.3", "10.0%", "1.6", "25.0%"],
        ["4", "1.1", "20.0%", "1.6", "25.0%"],
    ]
    assert "Held-out accuracy 25% after 4 steps, against 40% by chance" in html
    assert ("Stopped at step 4 of 8" in html) is stopped
    assert "留出准确率" in curve.show("zh")._repr_html_()


def test_ipython_prints_a_record_as_its_tables_not_as_a_list_or_a_frame():
    from IPython.lib.pretty import pretty

    def measure(point, _progress):
        return result_of()

    sweep = sweep_points(CONFIG, "batch_size", [2], measure)
    assert pretty(sweep) == repr(sweep) and "batch size" in repr(sweep)
    comparison = compared()
    assert pretty(comparison) == repr(comparison)

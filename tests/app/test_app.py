"""The app's controls, links and runs through AppTest, on tiny sizes; every page drawn in both
languages is tests/app/test_every_page.py's."""

from __future__ import annotations

import re

import apptests
import pytest
from apptests import FIRST_PAGE, clean, drawn, opened, run, shown_table
from factories import make_result
from streamlit.testing.v1 import AppTest

from hierlstm.app.state import DEFAULTS
from hierlstm.config import Timing
from hierlstm.i18n import t
from hierlstm.results.store import ResultStore

# Variants are named in every test, so a variant another engineer is adding cannot break these.
TINY = {**apptests.TINY, "variants": "nested,folded"}
pytestmark = pytest.mark.usefixtures("database")


def _open(page: str = FIRST_PAGE, query: dict | None = None) -> AppTest:
    at = opened(page, query)
    clean(at)
    return at


def _values(at: AppTest, *keys: str) -> list:
    """The values of the widgets drawn under `keys`."""
    return [at.get_by_key(key).value for key in keys]


def _plotly_charts(at: AppTest) -> int:
    return len(at.get("plotly_chart"))


def _trace_table(at: AppTest, variant: str):
    return shown_table(at, f"trace-table-{variant}")


def test_the_default_controls_keep_the_link_clean():
    from hierlstm.app.state import DEFAULT_VARIANTS

    app = _open()
    assert app.multiselect(key="variants").value == list(DEFAULT_VARIANTS)
    assert app.query_params == {}  # defaults keep the link clean
    assert _values(app, "batch_size", "time_steps") == [8, 50]
    sizes = ("height", "filters", "kernel_size", "pool_height", "inner_units", "outer_units")
    assert all(value > 0 for value in _values(app, *sizes))
    assert _values(app, "precision", "lstm_kernel", "device") == ["float32", "auto", "auto"]
    assert app.checkbox(key="xla").value is False


def test_only_the_open_tab_is_drawn_and_opening_another_draws_it():
    app = _open(query={"variants": "nested,folded"})
    assert app.session_state["trace-tab"] == "nested"  # the first tab is open at first
    assert drawn(app, "trace-table-nested") and drawn(app, "flow-nested")
    assert not drawn(app, "trace-table-folded") and not drawn(app, "flow-folded")
    app.session_state["trace-tab"] = "folded"  # what a click on the tab sets, then a rerun
    app.run()
    clean(app)
    assert drawn(app, "trace-table-folded") and drawn(app, "flow-folded")
    assert not drawn(app, "trace-table-nested") and _plotly_charts(app) == 1
    assert "(8, 50, 12, 16)" in _trace_table(app, "folded").iloc[:, 3].to_list()  # permute
    app.multiselect(key="variants").set_value(["shared_cell", "nested"])
    run(app)  # the open tab's variant is no longer selected: the first tab opens
    clean(app)
    assert [tab.label for tab in app.tabs] == ["shared_cell", "nested"]
    assert drawn(app, "trace-table-shared_cell") and _plotly_charts(app) == 1


@pytest.mark.parametrize(
    ("page", "variants", "key", "source"),
    [
        (FIRST_PAGE, "folded", "source-folded", "def build_folded"),
        ("app_pages/weight_sharing.py", "nested,folded", "sharing-source", "def build_pair"),
    ],
)
def test_a_source_is_drawn_only_when_its_expander_opens(page, variants, key, source):
    app = _open(page, {**TINY, "variants": variants})
    if page == FIRST_PAGE:  # the intro's detail, then the source
        labels = [expander.label for expander in app.main.expander]
        assert labels == ["More", "Source of folded, as it runs"]
    assert app.code == []  # not drawn (nor its highlighter loaded) until asked for
    app.session_state[key] = True  # what opening the expander sets, then a rerun
    app.run()
    clean(app)
    assert any(source in block.value for block in app.code)


def test_url_parameters_set_the_controls():
    query = {
        "variants": "folded,shared_cell",
        "batch_size": "3",
        "time_steps": "7",
        "precision": "mixed_bfloat16",
        "xla": "true",
        "lstm_kernel": "generic",
        "device": "cpu",
        "height": "30",
        "pool_height": "5",
        "repeats": "4",
        "lang": "zh",
    }
    app = _open(query=query)
    assert app.multiselect(key="variants").value == ["folded", "shared_cell"]
    numbers = ("batch_size", "time_steps", "height", "pool_height")
    assert _values(app, *numbers) == [3, 7, 30, 5]
    # Repeats is not the Shape trace's: not shown, kept for the pages that show it and the link
    assert not drawn(app, "repeats")
    assert app.session_state["repeats"] == 4 and app.query_params["repeats"] == "4"
    chosen = _values(app, "precision", "lstm_kernel", "device", "xla", "lang")
    assert chosen == ["mixed_bfloat16", "generic", "cpu", True, "zh"]
    assert app.title[0].value == "模型如何变换一个张量"
    permute = _trace_table(app, "folded").iloc[3]
    assert "(3, 7, 6, 16)" in permute.to_list()  # rows = 30 // 5
    assert app.query_params["time_steps"] == "7"  # written back


def test_bad_url_values_warn_once_and_keep_defaults():
    app = _open(query={"batch_size": "0", "variants": "folded,bogus", "precision": "fp8", "x": "1"})
    warnings = [warning.value for warning in app.warning]
    assert len(warnings) == 3, warnings  # batch_size, variants, precision; unknown ignored
    assert all("\n" not in warning for warning in warnings)
    assert app.number_input(key="batch_size").value == 8
    assert app.multiselect(key="variants").value == ["folded"]
    assert app.selectbox(key="precision").value == "float32"


def test_controls_change_the_trace_and_the_link_without_timing(database):
    app = _open(query={"variants": "folded"})
    app.multiselect(key="variants").set_value(["shared_cell", "nested"])
    app.number_input(key="time_steps").set_value(9)
    app.number_input(key="batch_size").set_value(3)
    app.number_input(key="inner_units").set_value(20)
    app.number_input(key="filters").set_value(4)
    app.selectbox(key="precision").set_value("mixed_float16")
    app.checkbox(key="xla").check()
    app.selectbox(key="lstm_kernel").set_value("generic")
    app.selectbox(key="device").set_value("cpu")
    run(app)
    clean(app)
    assert [tab.label for tab in app.tabs] == ["shared_cell", "nested"]
    shapes = _trace_table(app, "shared_cell").iloc[:, 3].to_list()  # the concrete shapes
    assert "(27, 20)" in shapes  # inner units, over batch x time = 3 x 9
    assert "(3, 36, 9, 4)" in shapes  # filters
    controls = app.session_state["_hierlstm"].controls
    assert controls.config.precision == "mixed_float16"
    assert controls.config.xla is True and controls.config.lstm_kernel == "generic"
    assert controls.config.device == "cpu"
    assert controls.timing == Timing(DEFAULTS["warmup"], DEFAULTS["repeats"])  # not the page's
    assert app.query_params["variants"] == "shared_cell,nested"
    assert app.query_params["precision"] == "mixed_float16"
    assert app.query_params["time_steps"] == "9" and app.query_params["batch_size"] == "3"
    assert ResultStore(database).count() == 0  # nothing was timed


def test_invalid_geometry_is_one_line_and_keeps_the_last_valid():
    app = _open(query={"variants": "folded"})
    app.number_input(key="pool_height").set_value(40)  # more than the height, 36
    run(app)
    assert not app.exception
    assert len(app.error) == 1 and "pool_height" in app.error[0].value
    assert app.session_state["_hierlstm"].controls.config.pool_height == 3


def test_each_ended_script_run_logs_one_line_with_its_page(caplog):
    """The line the browser benchmarks wait for in the server's log (`runs.RUN_ENDED`): one per
    run that ended, by its last line (Shape trace), by the page's st.stop() (Benchmark before a
    run) or after a run's rerun that draws its result (that rerun's end, not the run's)."""

    def ended() -> list[str]:
        found = [r.getMessage() for r in caplog.records if r.name == "hierlstm.app.runs"]
        caplog.clear()
        return [re.sub(r"session=.+$", "session=ID", message) for message in found]

    with caplog.at_level("INFO", logger="hierlstm.app.runs"):
        app = _open(query=TINY)
        assert ended() == ["script run ended: page=shape_trace session=ID"]
        app.switch_page("app_pages/benchmark.py").run()
        assert ended() == ["script run ended: page=benchmark session=ID"]
        run(app)
        assert ended() == ["script run ended: page=benchmark session=ID"]


def test_a_training_run_draws_its_phases_and_memory_and_stores_the_rows(database, no_estimate):
    app = _open("app_pages/benchmark.py", {**TINY, "task": "training", "optimizer": "adam"})
    assert app.selectbox(key="task").value == "training"
    assert app.selectbox(key="optimizer").value == "adam"
    run(app)
    clean(app)
    # latency (per step), speed-up, phases, memory, first call, throughput, GFLOP/s, layers
    assert _plotly_charts(app) == 8
    assert "trains fastest" in app.success[0].value
    assert any("Phases' sum against the whole step" in c.value for c in app.caption)
    rows = ResultStore(database).rows()
    assert len(rows) == 2 and set(rows["task"]) == {"training"}
    assert set(rows["optimizer"]) == {"adam"}
    for column in ("forward_median_s", "forward_backward_median_s", "update_median_s"):
        assert (rows[column] > 0).all(), column
    assert (rows["kept_activation_bytes"] > 0).all()
    table = shown_table(app, "bench-table")
    assert set(table["task"]) == {"training"} and table["phase_sum_s"].gt(0).all()
    # The outcome drawn again in Chinese.
    app.selectbox(key="lang").set_value("zh").run()
    clean(app)
    values = {"ms": 0, "device": "", "batch": 0, "time": 0}
    summary = t("bench.summary.fastest.training", "zh", variant="folded", **values)
    assert summary.split("**folded**")[1].split("0")[0] in app.success[0].value
    for key in ("bench-phases", "bench-train-memory", "bench-layers", "bench-table"):
        assert drawn(app, key), key
    # The stored rows can be told apart by task on the Results page, in either language.
    app.switch_page("app_pages/results.py").run()
    clean(app)
    labels = app.multiselect(key="results_compare").options
    assert len(labels) == 2 and all(t("task.training", "zh") in label for label in labels)
    app.selectbox(key="lang").set_value("en").run()
    app.multiselect(key="results_task").select("training").run()
    assert len(shown_table(app, "results-table")) == 2


def test_the_replica_sweep_refuses_a_training_step_in_one_line(database):
    app = _open("app_pages/scaling.py", {**TINY, "task": "training"})
    app.radio(key="sweep_axis").set_value("replicas").run()
    run(app)
    assert not app.exception
    assert [error.value for error in app.error] == [
        "The replica sweep times forward passes under tf.distribute; a training step runs on "
        "one device here. Set Measure to forward pass to sweep replicas."
    ]
    assert ResultStore(database).count() == 0


def _out_of_memory():
    import tensorflow as tf

    return tf.errors.ResourceExhaustedError(None, None, "OOM when allocating tensor\nmore")


@pytest.mark.parametrize(
    ("raised", "line", "logged"),
    [  # a bug of ours is not "The run failed": its line says so, and its traceback is logged
        (
            lambda: RuntimeError("the device went away\nwith a second line"),
            "hierlstm hit an internal error, logged on the server: the device went away",
            RuntimeError,
        ),
        (
            _out_of_memory,
            "The run failed: out of memory (try a smaller batch_size or time_steps): "
            "OOM when allocating tensor",
            None,
        ),
    ],
    ids=["bug", "out-of-memory"],
)
def test_a_run_that_raises_is_one_line_and_leaves_the_app_usable(
    raised, line, logged, database, monkeypatch, caplog
):
    from hierlstm.admission import runlock
    from hierlstm.timing import harness

    real_compare = harness.compare

    def raising(*args, **kwargs):
        raise raised()

    monkeypatch.setattr(harness, "compare", raising)
    app = _open("app_pages/benchmark.py", TINY)
    assert _plotly_charts(app) == 0
    with caplog.at_level("ERROR", logger="hierlstm.app"):
        run(app)
    assert not app.exception
    assert [error.value for error in app.error] == [line]
    records = [r.exc_info[0] for r in caplog.records if r.name == "hierlstm.app"]
    assert records == ([logged] if logged else [])
    assert runlock.is_free("CPU") and ResultStore(database).count() == 0
    monkeypatch.setattr(harness, "compare", real_compare)
    run(app)  # the next run works: its charts, table and kernels drawn, its results stored
    clean(app)
    assert _plotly_charts(app) == 6  # latency, speed-up, first call, throughput, GFLOP/s, layers
    assert "fastest" in app.success[0].value and ResultStore(database).count() == 2
    assert shown_table(app, "bench-table").shape[0] == 2
    kernels = shown_table(app, "bench-kernels")
    assert set(kernels.iloc[:, 3]) == {"generic"}  # no GPU here: every LSTM ran generic
    assert app.button(key="run").disabled is False  # enabled again after the run
    assert runlock.is_free("CPU")


def test_a_long_run_asks_first_and_runs_only_when_confirmed(database, monkeypatch):
    monkeypatch.setenv("HIERLSTM_CONFIRM_SECONDS", "1")
    long_run = {**TINY, "batch_size": "16", "time_steps": "100", "repeats": "20"}
    app = _open("app_pages/benchmark.py", long_run)
    run(app)
    assert not app.exception and not app.error
    question = app.get_by_key("benchmark-confirm").warning[0].value
    assert (
        question.startswith("This run is estimated at about")
        and "over this server's 1 s" in question
    )
    assert ResultStore(database).count() == 0  # nothing ran
    app.button(key="benchmark-confirm-no").click().run()
    assert not app.warning and ResultStore(database).count() == 0
    run(app)
    app.button(key="benchmark-confirm-yes").click().run()
    clean(app)
    assert ResultStore(database).count() == 2 and _plotly_charts(app) == 6
    assert not any("estimated at about" in warning.value for warning in app.warning)


def test_over_budget_run_is_refused(database, monkeypatch):
    monkeypatch.setenv("HIERLSTM_MEMORY_BUDGET_MB", "1")
    app = _open("app_pages/benchmark.py", {"batch_size": "64", "time_steps": "500"})
    run(app)
    assert not app.exception
    assert len(app.error) == 1 and app.error[0].value.startswith("Not run:")
    assert ResultStore(database).count() == 0
    # The request spent: Run enabled at once, and the next rerun does not try again.
    assert app.session_state["_hierlstm"].run_request is None
    assert app.button(key="run").disabled is False
    app.run()
    assert app.button(key="run").disabled is False
    assert [error.value for error in app.error] == [app.error[0].value]  # the same line, once


def _cpu_devices() -> int:
    import tensorflow as tf

    return len(tf.config.list_logical_devices("CPU"))


def test_the_strategy_is_a_control_the_url_and_the_banner_show():
    app = _open(query={**TINY, "strategy": "mirrored", "devices": "cpu:0"})
    assert app.selectbox(key="strategy").value == "mirrored"
    assert app.multiselect(key="devices").value == ["cpu:0"]
    assert "cpu:0" in app.multiselect(key="devices").options  # every visible device listed
    banner = app.get_by_key("banner").markdown[0].value
    assert "**Strategy** mirrored over /CPU:0" in banner and "1 replica(s) × 2 sample(s)" in banner
    assert not app.info  # one replica: the trace is the whole batch's
    app.selectbox(key="strategy").set_value("none")
    run(app)
    clean(app)
    assert "**Strategy** none (one device)" in app.get_by_key("banner").markdown[0].value
    assert "strategy" not in app.query_params


def test_replica_sweep_on_the_scaling_page(database):
    app = _open("app_pages/scaling.py", TINY)
    app.radio(key="sweep_axis").set_value("replicas").run()
    assert app.text_input(key="sweep_values_replicas").value == "1, 2"
    run(app)
    assert not app.exception
    assert _plotly_charts(app) == 3  # throughput, efficiency, chain
    errors = [error.value for error in app.error]
    stored = ResultStore(database).count()
    if _cpu_devices() >= 2:
        assert errors == [] and stored == 4  # 2 variants x 2 replica counts
    else:  # this test process has one CPU device: 2 replicas fail, saying how to get two
        assert len(errors) == 2 and stored == 2
        assert all("2 replicas need 2 devices" in error for error in errors)
    table = shown_table(app, "scaling-table")
    assert set(table["replicas"]) == {1, 2}
    assert (table[table["replicas"] == 1]["scaling_efficiency"] == 1.0).all()


def test_bad_sweep_values_are_one_line():
    app = _open("app_pages/scaling.py", TINY)
    app.text_input(key="sweep_values_time_steps").set_value("4, x").run()
    assert not app.exception
    assert len(app.error) == 1 and "2 to 12" in app.error[0].value


def test_weight_sharing_checks_and_timing():
    app = _open("app_pages/weight_sharing.py", TINY)
    checks = shown_table(app, "sharing-checks")
    assert all(cell.startswith("✓") for cell in checks.iloc[:, 1:].to_numpy().ravel())
    run(app)
    clean(app)
    timing = shown_table(app, "sharing-timing-table")
    assert len(timing) == 2 and (timing["median_s"] > 0).all()


def test_results_filter_export_and_import(database):
    store = ResultStore(database)
    store.add(make_result(config_changes={"variant": "nested"}))
    store.add(make_result())
    exported = store.export_json()
    app = _open("app_pages/results.py")
    assert _plotly_charts(app) == 1  # the stored runs compared
    assert len(shown_table(app, "results-table")) == 2
    app.multiselect(key="results_variant").set_value(["nested"]).run()
    assert shown_table(app, "results-table")["variant"].to_list() == ["nested"]
    # The same export again: every row is already stored, so all are skipped.
    uploader = app.file_uploader(key="results_import")
    uploader.upload("runs.json", exported.encode(), "application/json")
    app.button(key="results_import_button").click().run()
    clean(app)
    assert "2 already stored" in app.success[0].value
    uploader = app.file_uploader(key="results_import")
    uploader.upload("bad.json", b"{}", "application/json")
    app.button(key="results_import_button").click().run()
    assert not app.exception
    assert len(app.error) == 1 and app.error[0].value.startswith("import rejected")


def test_lesson_reproduces_the_time_distributed_bug():
    app = _open("app_pages/lesson.py", TINY)
    app.button(key="lesson_pitfall").click().run()
    clean(app)
    verdicts = shown_table(app, "lesson-pitfall").iloc[:, 3].to_list()
    assert verdicts == ["✗", "✗", "✓"]  # batch < time, batch > time, batch == time

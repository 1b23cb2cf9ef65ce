"""A server that is not warm yet: every page draws its frame and nothing that needs TensorFlow,
and fills in once warm (a Run pressed meanwhile runs then, a link's device is checked then); and
the warm-up's own steps, modes, failures and cost-per-step measurement."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import threading

import pytest
from apptests import APP, FIRST_PAGE, TINY, clean, opened
from factories import PAGES, python
from streamlit.testing.v1 import AppTest

from hierlstm.admission import runlock
from hierlstm.admission.estimate import StepCost, calibration_key
from hierlstm.app import runs
from hierlstm.app.server import waiting, warmup
from hierlstm.app.state import DEFAULT_VARIANTS
from hierlstm.config import QUICK_TIMING, RunConfig, SettingError
from hierlstm.registry import VARIANTS
from hierlstm.results.store import ResultStore


@pytest.fixture
def cold(monkeypatch, tmp_path):
    """This process's warm-up replaced by one held at its first step until `release()`; a
    cold page waits for it in its run only 0.3 s, then polls (AppTest shows a run's end)."""
    monkeypatch.setenv("HIERLSTM_DB", str(tmp_path / "results.sqlite3"))
    monkeypatch.setattr(waiting, "WAIT_S", 0.3)
    gate = threading.Event()
    held = warmup.Warmup([warmup.Step("warmup.tensorflow", gate.wait)])
    monkeypatch.setattr(warmup, "_server", held)
    held.start()
    assert held.charts_drawable.wait(timeout=30)  # loaded long ago in this process

    def release():
        gate.set()
        assert held.wait(timeout=30)

    yield release
    gate.set()


def _frame(query: dict | None = None, page: str | None = None) -> AppTest:
    at = opened(page or FIRST_PAGE, query)
    clean(at)
    return at


def _placeholder(at: AppTest) -> str:
    texts = [element.proto.text for element in at.get("progress")]
    return next(text for text in texts if "warming up" in text)


def test_the_frame_is_drawn_before_the_warm_up_finishes(cold):
    at = _frame()
    assert [title.value for title in at.title] == [PAGES["app_pages/shape_trace.py"]]
    assert "Update trace" in at.markdown[1].value  # the page's explanation
    assert "**Starting**" in at.get_by_key("banner").markdown[0].value
    assert "importing TensorFlow" in _placeholder(at)
    assert at.multiselect(key="variants").value == list(DEFAULT_VARIANTS)
    assert at.number_input(key="batch_size").value == 8
    assert at.selectbox(key="device").disabled and at.multiselect(key="devices").disabled
    assert at.button(key="run").disabled is False
    assert at.get("metric") == []  # nothing traced yet
    # The one chart is the first variant's axis flow, its shapes predicted without TensorFlow
    # (that they equal the trace's is tests/model/test_trace.py's).
    [chart] = at.get("plotly_chart")
    assert chart.proto.id == at.get_by_key("warmup-first-figure-chart").proto.id
    ticks = json.loads(chart.proto.spec)["layout"]["xaxis"]["ticktext"]
    assert ticks == list(VARIANTS[DEFAULT_VARIANTS[0]].layers)
    assert warmup.server_warmup().first_visitor.figure_drawn.is_set()  # the import may start

    cold()
    at.run()
    assert not at.exception and not at.error
    assert [title.value for title in at.title] == [PAGES["app_pages/shape_trace.py"]]
    assert "TensorFlow" in at.get_by_key("banner").markdown[0].value
    assert not at.selectbox(key="device").disabled
    assert [tab.label for tab in at.tabs] == list(DEFAULT_VARIANTS)
    assert len(at.get("plotly_chart")) == 1  # the open tab's (the tabs are lazy)
    assert not [p for p in at.get("progress") if "warming up" in p.proto.text]


def test_no_chart_is_drawn_before_the_libraries_are_loaded(monkeypatch, tmp_path):
    """plotly would find numpy and pandas half-imported by the warm-up."""
    monkeypatch.setenv("HIERLSTM_DB", str(tmp_path / "results.sqlite3"))
    monkeypatch.setattr(waiting, "WAIT_S", 0.3)
    libraries, tensorflow = threading.Event(), threading.Event()
    held = warmup.Warmup(
        [warmup.Step("warmup.tensorflow", tensorflow.wait)], libraries=libraries.wait
    )
    monkeypatch.setattr(warmup, "_server", held)
    try:
        at = _frame(page="app_pages/benchmark.py")  # a page with no figure to predict
        assert "importing numpy and pandas" in _placeholder(at)
        assert at.get("plotly_chart") == []
        libraries.set()
        assert held.charts_drawable.wait(timeout=30)
        at.run()
        assert not at.exception
        assert "importing TensorFlow" in _placeholder(at)
        assert [chart.proto.id for chart in at.get("plotly_chart")] == [
            at.get_by_key("warmup-chart").proto.id
        ]
    finally:
        libraries.set()
        tensorflow.set()
    assert held.wait(timeout=30)


def test_streamlit_s_first_element_check_is_made_before_tensorflow(monkeypatch):
    """Its inspect.stack() cost the first visitor's frame 0.4 s beside TensorFlow's import."""
    from streamlit import delta_generator

    monkeypatch.setattr(delta_generator, "_use_warning_has_been_displayed", False)
    warmup._load_libraries()
    assert delta_generator._use_warning_has_been_displayed is True


def test_a_failure_to_load_the_libraries_is_logged_and_only_costs_the_chart(caplog):
    def broken():
        raise ImportError("no pandas here")

    held = warmup.Warmup([warmup.Step("warmup.tensorflow", lambda: None)], libraries=broken)
    held.start()
    assert held.wait(timeout=30)
    assert not held.charts_drawable.is_set() and held.status().failed == ""
    assert "loading the libraries failed" in caplog.text and "no pandas here" in caplog.text


def test_a_cold_page_waits_in_its_run_and_fills_in_when_the_warm_up_is_ready(cold, monkeypatch):
    monkeypatch.setattr(waiting, "WAIT_S", 60.0)
    finished = []  # the warm-up finishes while the page's run waits
    threading.Timer(1.0, lambda: finished.append(True) or cold()).start()
    at = _frame({"variants": "folded"})
    assert finished  # the page came back after the warm-up, not before
    assert [title.value for title in at.title] == [PAGES["app_pages/shape_trace.py"]]
    assert "TensorFlow" in at.get_by_key("banner").markdown[0].value  # the warm rerun's
    assert len(at.get("plotly_chart")) == 1
    assert not [p for p in at.get("progress") if "warming up" in p.proto.text]


# Run in a fresh interpreter: this one imported TensorFlow long ago. The warm-up is held before
# its first step, so nothing but the frame itself could import TensorFlow.
_COLD_FRAME = """
import json, sys
import streamlit.commands.page_config as page_config
from streamlit.testing.v1 import AppTest
from hierlstm.app.server import waiting
waiting.WAIT_S = 0.2
# Streamlit reads an image page icon with numpy and PIL (image_to_url imports both): a cold
# frame would wait for them beside TensorFlow's import, so it sets the icon once warm.
icons, read = [], page_config.image_to_url
page_config.image_to_url = lambda *args, **kwargs: icons.append(args) or read(*args, **kwargs)
for query in ({}, {"batch_size": "2", "time_steps": "4", "device": "cpu", "devices": "cpu:0"}):
    at = AppTest.from_file(sys.argv[1], default_timeout=60)
    at.query_params = query
    at.run()
    for page, title in json.loads(sys.argv[2]).items():
        at.switch_page(page).run()
        assert not at.exception, [e.value for e in at.exception]
        assert [t.value for t in at.title] == [title], page
        assert any("warming up" in p.proto.text for p in at.get("progress")), page
        assert at.session_state["time_steps"] == int(query.get("time_steps", 50))
print(" ".join(sorted(sys.modules)))
print("icon read:", len(icons), file=sys.stderr)
"""


def test_every_page_s_cold_frame_draws_from_its_link_without_importing_tensorflow(tmp_path):
    """Two threads importing TensorFlow at once fail (a module-lock deadlock), and the frame
    would wait for the warm-up's import anyway."""
    env = {**os.environ, "HIERLSTM_WARMUP": "full", "HIERLSTM_WARMUP_AFTER": str(tmp_path / "x")}
    env.pop("HIERLSTM_MEMORY_BUDGET_MB", None)  # the budget is one of the things it reads
    completed = python("-c", _COLD_FRAME, APP, json.dumps(PAGES), timeout=300, env=env)
    assert completed.returncode == 0, completed.stderr[-3000:]
    loaded = set(completed.stdout.split())
    assert "streamlit" in loaded and "hierlstm.app.server.warmup" in loaded  # the frame did run
    assert not {"tensorflow", "keras"} & loaded, sorted(m for m in loaded if "tensorflow" in m)[:5]
    assert "icon read: 0" in completed.stderr  # see _COLD_FRAME


def test_a_run_pressed_while_cold_runs_once_the_server_is_warm(cold, tmp_path):
    at = _frame({**TINY, "variants": "nested,folded"}, "app_pages/benchmark.py")
    at.button(key="run").click().run()
    assert not at.exception
    assert ResultStore(tmp_path / "results.sqlite3").count() == 0  # nothing timed while cold
    assert at.button(key="run").disabled  # it is asked for, and waits
    cold()
    at.run()
    assert not at.exception and not at.error
    assert ResultStore(tmp_path / "results.sqlite3").count() == 2  # nested and folded
    assert len(at.get("plotly_chart")) >= 5


def test_a_link_s_device_is_checked_once_the_devices_are_known(cold):
    at = _frame({"device": "gpu:3", "batch_size": "4"})
    assert at.warning == []  # not known yet: taken as it is, shown disabled
    assert at.selectbox(key="device").value == "gpu:3"
    cold()
    at.run()
    warnings = [warning.value for warning in at.warning]
    assert len(warnings) == 1 and "device" in warnings[0] and "gpu:3" in warnings[0], warnings
    assert at.selectbox(key="device").value == "auto"  # back to the default
    assert at.number_input(key="batch_size").value == 4  # the rest of the link kept
    assert not at.exception


def test_a_failing_step_is_logged_shown_and_does_not_hold_the_pages(monkeypatch, caplog):
    def broken():
        raise KeyError("no such thing")

    failing = warmup.Warmup([warmup.Step("warmup.modules", broken)])
    monkeypatch.setattr(warmup, "_server", failing)
    failing.start()
    assert failing.wait(timeout=30)
    status = failing.status()
    assert status.ready and status.failed == "KeyError: 'no such thing'"
    assert "warm-up step warmup.modules failed" in caplog.text and "Traceback" in caplog.text
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.query_params = {"variants": "folded"}
    at.run()
    assert not at.exception
    assert [error.value for error in at.error] == [
        "The server's warm-up failed (an error of ours, logged on the server): "
        "KeyError: 'no such thing'"
    ]
    assert len(at.get("plotly_chart")) == 1  # the page itself still runs


def test_modes_choose_the_steps():
    keys = {mode: [step.key for step in warmup.steps_for(mode)] for mode in warmup.MODES}
    assert keys["off"] == ["warmup.tensorflow", "warmup.devices", "warmup.modules"]
    assert keys["trace"] == [*keys["off"], "warmup.trace"]
    later = ["warmup.trace_tabs", "warmup.sharing", "warmup.yours", "warmup.calibrate"]
    assert keys["full"] == [*keys["trace"], *later]
    needed = [step.needed for step in warmup.steps_for("full")]
    assert needed == [True] * 4 + [False] * 4  # pages don't wait for the last four


def test_the_modules_step_freezes_what_is_loaded_out_of_the_collector_s_walks():
    """Streamlit's full gc.collect() after every script run walks only what came after."""
    import gc

    gc.unfreeze()  # as before any freeze (this session's conftest froze what it imported)
    loaded = len(gc.get_objects())
    assert gc.get_freeze_count() == 0 and loaded > 100_000  # TensorFlow's, Streamlit's...
    warmup._load_modules()
    assert gc.get_freeze_count() > 0.9 * loaded
    assert len(gc.get_objects()) < 0.01 * loaded


def test_full_traces_the_open_tab_first_and_the_other_tabs_when_quiet(monkeypatch):
    from hierlstm.app.pages import shape_trace

    traced = []
    monkeypatch.setattr(shape_trace, "_trace", lambda configs: traced.append(list(configs)))
    monkeypatch.setattr(warmup, "QUIET_S", 0.0)
    steps = {step.key: step for step in warmup.steps_for("full")}
    steps["warmup.trace"].run()
    steps["warmup.trace_tabs"].run()
    first, *rest = [RunConfig(variant=name) for name in DEFAULT_VARIANTS]
    assert traced == [[first], rest]
    warmup.steps_for("trace")[-1].run()
    assert traced[-1] == [first, *rest]  # what "trace" mode traces before the pages
    with pytest.raises(SettingError, match="HIERLSTM_WARMUP must be one of full, trace, off"):
        warmup.steps_for("fast")


def test_ready_comes_before_the_cost_measurement():
    gate = threading.Event()
    slow = warmup.Warmup([warmup.Step("a", lambda: None), warmup.Step("b", gate.wait, False)])
    slow.start()
    assert slow.wait(timeout=10) and slow.status().step == "b"
    gate.set()


@pytest.fixture
def counted_calibration(monkeypatch):
    """`calibrate` replaced by a fake that records the configs and who held the CPU lock."""
    calls = []

    def fake(config, progress=None):
        calls.append((config, runlock.holder("CPU")[0]))
        return StepCost(config.variant, 1e-4, 1e-3, first_call_s=0.1)

    monkeypatch.setattr(runs, "calibrate", fake)
    monkeypatch.setattr(warmup, "QUIET_S", 0.0)  # no page to wait for here
    runs.step_cost.clear()
    yield calls
    runs.step_cost.clear()


def test_the_cost_per_step_is_measured_under_the_device_lock_into_the_page_cache(
    counted_calibration,
):
    warmup._calibrate_defaults()
    defaults = [calibration_key(RunConfig(variant=name)) for name in DEFAULT_VARIANTS]
    assert counted_calibration == [(config, "warmup") for config in defaults]
    guess = runs.estimate(
        runs.Workload(tuple(RunConfig(variant=name) for name in DEFAULT_VARIANTS), QUICK_TIMING),
        lambda fraction, message: None,
    )
    assert guess.seconds > 0 and guess.unknown == ()
    assert len(counted_calibration) == len(defaults)  # the page's estimate measured nothing


def test_the_cost_per_step_waits_for_no_one(counted_calibration):
    with runlock.hold(["CPU"], name="benchmark", program="app"):
        warmup._calibrate_defaults()  # a timing run holds the device: skipped, not queued
    assert counted_calibration == []


class _Clock:
    """warmup's `time`, advanced only by its own sleeps (no duration measured)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_the_cost_per_step_waits_for_the_pages_to_be_quiet(counted_calibration, monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(warmup, "time", clock)
    calibrate = {step.key: step for step in warmup.steps_for("full")}["warmup.calibrate"]
    gate = warmup.Gate()  # the runner waits for quiet, then takes the gate
    warmup.page_started()  # a visitor's page has just started
    started = clock.now
    warmup.run_step(calibrate, gate)
    assert clock.now - started >= warmup.QUIET_S
    assert len(counted_calibration) == len(DEFAULT_VARIANTS)
    monkeypatch.setattr(warmup, "QUIET_LIMIT_S", 10.0)  # ... but not for ever
    monkeypatch.setattr(warmup, "QUIET_S", 60.0)
    runs.step_cost.clear()
    warmup.page_started()
    started = clock.now
    warmup.run_step(calibrate, gate)
    assert warmup.QUIET_LIMIT_S <= clock.now - started < warmup.QUIET_S
    assert len(counted_calibration) == 2 * len(DEFAULT_VARIANTS)


def test_the_sharing_checks_are_made_into_the_page_cache(monkeypatch, tmp_path):
    from hierlstm.app import caches
    from hierlstm.model import sharing

    monkeypatch.setenv("HIERLSTM_DB", str(tmp_path / "results.sqlite3"))
    monkeypatch.setattr(warmup, "QUIET_S", 0.0)
    made = []
    real = sharing.sharing_report
    monkeypatch.setattr(sharing, "sharing_report", lambda *a: made.append(a) or real(*a))
    caches.sharing_reports.clear()
    from hierlstm.app.pages import weight_sharing

    weight_sharing.warm_up()
    assert len(made) == 2  # the two forms, at the default sizes
    at = _frame(page="app_pages/weight_sharing.py")
    block = at.get_by_key("sharing-checks")
    checks = (block.dataframe or block.table)[0].value
    assert checks.shape[0] == 6 and checks.iloc[:, 1].str.startswith("✓").all()
    assert len(made) == 2  # the page read them from the cache
    caches.sharing_reports.clear()


def test_tensorflow_s_import_waits_for_the_first_visitor_s_figure(monkeypatch):
    monkeypatch.setattr(warmup, "FIRST_FIGURE_SETTLE_S", 0.0)
    imported = threading.Event()
    held = warmup.Warmup([warmup.Step("warmup.tensorflow", imported.set)], libraries=lambda: None)
    held.first_visitor.arrived()  # a browser asked for the app before the import began
    held.start()
    assert not imported.wait(timeout=0.5)
    assert held.status().step == "warmup.first_visitor"
    held.first_visitor.figure_drawn.set()
    assert held.wait(timeout=30) and imported.is_set()


def test_after_the_figure_the_import_leaves_the_browser_time_to_draw_it(monkeypatch):
    monkeypatch.setattr(warmup, "FIRST_FIGURE_SETTLE_S", 60.0)
    monkeypatch.setattr(warmup, "FIRST_VISITOR_LIMIT_S", 0.5)  # the settling ends there
    visitor = warmup.FirstVisitor()
    assert visitor.make_way() == 0.0  # no one has come: nothing to wait for
    visitor.arrived()
    visitor.figure_drawn.set()
    assert visitor.make_way() >= 0.45


def test_a_visitor_who_never_draws_holds_the_import_only_so_long(monkeypatch):
    monkeypatch.setattr(warmup, "FIRST_VISITOR_LIMIT_S", 0.2)
    held = warmup.Warmup([warmup.Step("warmup.tensorflow", lambda: None)], libraries=lambda: None)
    held.first_visitor.arrived()
    held.start()
    assert held.wait(timeout=30) and held.status().done == 1
    assert not held.first_visitor.figure_drawn.is_set()


@pytest.mark.parametrize(
    ("path", "arrived"),
    [("/", True), ("/inside", True), ("/static/js/index.js", True), ("/_stcore/health", False)],
)
def test_a_browser_loading_the_app_is_a_visitor_and_the_health_check_is_not(
    monkeypatch, path, arrived
):
    fresh = warmup.Warmup([])
    monkeypatch.setattr(warmup, "_server", fresh)
    served = []

    async def app(scope, _receive, _send):
        served.append(scope["path"])

    asyncio.run(warmup.ArrivalMiddleware(app)({"type": "http", "path": path}, None, None))
    assert served == [path]
    assert (fresh.first_visitor.arrived_at is not None) is arrived


def test_warmup_after_holds_it_until_the_file_exists(monkeypatch, tmp_path):
    gate = tmp_path / "go"
    monkeypatch.setenv("HIERLSTM_WARMUP_AFTER", str(gate))
    held = warmup.Warmup([warmup.Step("a", lambda: None)])
    held.start()
    assert not held.wait(timeout=0.5) and held.status().done == 0
    assert held.status().step == "warmup.held"
    gate.touch()
    assert held.wait(timeout=60) and held.status().done == 1


def test_the_warm_up_confirms_the_predicted_shapes_against_keras(monkeypatch, caplog):
    from hierlstm.app.pages import shape_trace
    from hierlstm.model import shapes

    config = RunConfig(variant="folded", batch_size=2, time_steps=3)
    with caplog.at_level(logging.ERROR, logger="hierlstm.app.server.warmup"):
        shape_trace._trace([config])
        assert caplog.records == []
        wrong = shapes.predicted_steps(config.replace(time_steps=4))
        monkeypatch.setattr(shapes, "predicted_steps", lambda _config: wrong)
        shape_trace._trace([config])
    assert "the predicted shapes of folded are not Keras's: step 0: predicted" in caplog.text

"""Every page in both languages: before a run (with a slow precision, on this CPU and on a GPU
TensorFlow sees: the GPU list is the one seam replaced), after a tiny run, and after a failed
one. Each page's title, Run button and key elements are looked for, and no error drawn."""

from __future__ import annotations

from pathlib import Path

import pytest
from apptests import TINY, clean, drawn, opened, run, runtimes_drawn
from factories import SHORT_RUNS, make_failed_result, make_result, make_training_result
from streamlit.testing.v1 import AppTest

from hierlstm.app import devices as app_devices
from hierlstm.app.pages import PAGES
from hierlstm.app.sidebar import EVERY_SETTING
from hierlstm.hardware import GpuInfo, devices
from hierlstm.i18n import LANGUAGES, t
from hierlstm.results.store import ResultStore

# What each page draws before a run, and after a tiny one (element keys).
BEFORE = {
    "shape_trace": ("trace-tab", "trace-table-nested", "flow-nested", "source-nested"),
    "benchmark": ("breakdown_variant",),
    "profile": ("profile_steps",),
    "scaling": ("sweep_axis", "sweep_values_time_steps", "scaling-chain"),
    "weight_sharing": ("sharing-checks", "sharing-gradients-shared_cell", "sharing-source"),
    "results": ("results-table", "results-export-csv", "results-export-json", "results_import"),
    "yours": ("yours_source", "yours_example", "yours-trace", "yours-audit", "yours-download"),
    "inside": (
        *("inside-input", "inside-conv", "inside-pool", "inside-permute", "inside-inner"),
        *("inside-summary", "inside-outer", "inside-compare", "inside_t", "inside_s"),
        *("inside_whatif", "inside_whatif_preset", "inside-map", "inside-learning"),
    ),
    "lesson": ("lesson-shapes", "lesson-forget", "lesson-chain", "lesson_pitfall"),
}
AFTER = {
    "shape_trace": BEFORE["shape_trace"],
    "benchmark": (
        *("bench-latency", "bench-speedup", "bench-first-call", "bench-throughput"),
        *("bench-gflops", "bench-layers", "bench-kernels", "bench-table", "bench-download"),
    ),
    "profile": (
        *("profile-layers", "profile-ops-nested", "profile-lines-folded", "profile-zip-nested"),
        *("profile-timeline", "profile-trace-json"),
    ),
    "scaling": ("scaling-latency", "scaling-cost", "scaling-table", "scaling-chain"),
    "weight_sharing": ("sharing-checks", "sharing-timing", "sharing-timing-table"),
    "results": ("results-compare", "results-table", "results_compare"),
    "yours": (*BEFORE["yours"], "yours-timing"),
    "inside": (*BEFORE["inside"], "inside_params"),
    "lesson": ("lesson-kernels", "lesson-precision", "lesson-variants", "lesson-training"),
}
PAGE_NAMES = [page.name for page in PAGES]
STORED = {"benchmark": 2, "scaling": 4}  # the rows a tiny run stores (nested, folded)
T4 = GpuInfo(index=0, name="Tesla T4", compute_capability=(7, 5))  # no fast bfloat16


def _page(name: str):
    return next(page for page in PAGES if page.name == name)


def _open(name: str, query: dict) -> AppTest:
    return opened(_page(name).script, {"variants": "nested,folded", **TINY, **query})


def _missing(at: AppTest, keys) -> list[str]:
    return [key for key in keys if not drawn(at, key)]


def _is_the_page(at: AppTest, name: str, lang: str) -> None:
    """Its title, its Run button where it reads a setting (none where it reads none), and the
    sidebar's settings: those it reads, no other."""
    page = _page(name)
    assert [title.value for title in at.title] == [t(f"{page.heading}.title", lang)]
    if page.settings:
        assert at.button(key="run").label == t(page.action.label, lang)
        assert at.button(key="run").disabled is False
    else:
        assert not drawn(at, "run")
    assert [name for name in EVERY_SETTING if drawn(at, name)] == list(page.settings)
    assert at.get_by_key("banner") is not None
    assert at.selectbox(key="lang").value == lang


def _switch_language(at: AppTest, lang: str) -> None:
    at.selectbox(key="lang").set_value(lang).run()
    assert at.query_params.get("lang", "en") == lang  # the link carries it


def _seed(database: Path) -> None:
    """What the Results page shows: a stored run, a failed one and a training step."""
    store = ResultStore(database)
    for result in (make_result(), make_failed_result(), make_training_result()):
        store.add(result)


@pytest.mark.parametrize("name", PAGE_NAMES)
def test_every_page_after_a_run(name, database):
    """One run (the slow part), its outcome drawn in each language."""
    if name == "results":
        _seed(database)
    first, second = LANGUAGES
    at = _open(name, {"lang": second})
    clean(at)
    assert _missing(at, BEFORE[name]) == []
    if name in SHORT_RUNS:
        key, value = SHORT_RUNS[name]
        at.get_by_key(key).set_value(value)
    if name == "yours":  # a small example: the default's rewrite and exports cost 3x as much
        at.selectbox(key="yours_example").set_value("shared_cell").run()
    run(at) if _page(name).settings else at.run()
    for lang in (second, first):  # the outcome, drawn in the run's language, then the other
        if lang != second:
            _switch_language(at, lang)
        clean(at)
        _is_the_page(at, name, lang)
        assert _missing(at, AFTER[name]) == []
    if name in STORED:
        assert ResultStore(database).count() == STORED[name]
    if name == "lesson":  # drawn in English now
        _lesson_measured_its_numbers(at, database)
    if name == "yours":
        _yours_stored_its_run(at, database)


def _lesson_measured_its_numbers(at: AppTest, database: Path) -> None:
    """The Lesson's run, stored and drawn (checked here, so that the suite runs it once)."""
    from hierlstm.registry import VARIANTS

    # every registered variant at float32 (time_distributed too: 4 steps is within its trace
    # budget), folded at both reduced precisions, and a training step of nested, folded and
    # fused (section 10), each stored
    assert ResultStore(database).count() == len(VARIANTS) + 2 + 3
    block = at.get_by_key("lesson-kernels")
    kernels = (block.dataframe or block.table)[0].value
    assert set(kernels.iloc[:, 0]) >= {"nested", "folded", "shared_cell"}
    assert len(kernels) == len(set(map(tuple, kernels.iloc[:, :2].to_numpy())))  # one row per LSTM
    assert len(at.get("plotly_chart")) == 5  # forget gate, chain, precisions, variants, training
    metrics = {metric.label: metric.value for metric in at.metric}
    assert metrics["nested: training step"].endswith("ms")
    assert metrics["folded: step / forward"].endswith("×")
    assert metrics["nested: activations kept for backward (est.)"].endswith("MiB")
    assert any("training step is" in markdown.value for markdown in at.markdown)


def _yours_stored_its_run(at: AppTest, database: Path) -> None:
    """The example's timed run (checked here, so that the suite runs it once): stored
    with the model's name and its file's hash, and the original exported and timed on each
    installed runtime beside TensorFlow."""
    from hierlstm.app.pages import yours
    from hierlstm.yours import load

    example = at.selectbox(key="yours_example").value
    (stored,) = ResultStore(database).audits().to_dict(orient="records")
    path = yours.example_path(example)
    assert (stored["model_name"], stored["file_sha256"]) == (example, load.file_hash(path))
    assert stored["check_matches"] == 1 and stored["rounds"] == int(TINY["repeats"])
    runtimes_drawn(at, at.query_params.get("lang", "en"))  # or, without the extra, how to add it


@pytest.fixture
def machine(request, monkeypatch):
    """This CPU, or a T4 that TensorFlow sees (the device report is cached per server, so it
    is cleared around the test); and the precision that is slow there."""

    def clear():
        app_devices.cached_device_report.clear()
        app_devices.gpu_problems.clear()

    if request.param == "gpu":
        monkeypatch.setattr(devices, "list_gpus", lambda: (T4,))
    clear()
    yield request.param
    clear()


@pytest.mark.parametrize("machine", ["cpu", "gpu"], indirect=True)
@pytest.mark.parametrize("name", PAGE_NAMES)
def test_every_page_with_a_slow_precision_on_a_cpu_and_a_gpu(name, machine, database):
    """Opened once, drawn in each language in turn (a switch reruns the page)."""
    precision = {"cpu": "mixed_float16", "gpu": "mixed_bfloat16"}[machine]
    first = next(iter(LANGUAGES))
    at = _open(name, {"lang": first, "precision": precision})
    for lang in LANGUAGES:
        if lang != first:
            _switch_language(at, lang)
        _slow_precision_drawn(at, name, lang, machine, precision)


def _slow_precision_drawn(at: AppTest, name: str, lang: str, machine: str, precision: str):
    clean(at)
    _is_the_page(at, name, lang)
    assert _missing(at, BEFORE[name]) == []
    banner = at.get_by_key("banner").markdown[0].value
    settings = _page(name).settings
    devices = at.selectbox(key="device").options if "device" in settings else []
    if machine == "gpu":
        assert "GPU:0 Tesla T4" in banner and ("gpu:0" in devices or "device" not in settings)
        english = "mixed_bfloat16 runs on GPU:0 (Tesla T4, compute capability 7.5)"
    else:
        assert "CPU (" in banner and "gpu:0" not in devices
        english = "float16 on a CPU is emulated"
    slow = english if lang == "en" else t(f"precision.slow.{machine}", lang, precision=precision)
    warnings = [c.value for c in at.sidebar.caption if c.value.startswith("⚠️ ")]
    if "precision" in settings:
        assert len(warnings) == 1 and slow in warnings[0], warnings
    else:  # the page runs at float32 whatever the link says: nothing to warn of
        assert warnings == [], warnings
    if name == "lesson":  # section 7: what is slow here, in the session's language
        notes = [c.value for c in at.main.caption if slow in c.value]
        assert len(notes) == 1, [c.value for c in at.main.caption]
    if name == "results":  # nothing stored yet
        assert [info.value for info in at.info] == [t("results.empty", lang)]


FAILED = {"benchmark": "bench.failed", "profile": "profile.failed", "scaling": "scaling.failed"}


@pytest.mark.parametrize("name", list(FAILED))
def test_a_failed_run_is_one_line_per_failure_in_both_languages(name, database):
    """vectorized_map cannot be compiled with XLA: the page asks first (its cost cannot be
    estimated), and once confirmed every run fails, each failure one line and stored."""
    at = _open(name, {"lang": "zh", "variants": "vectorized_map", "xla": "true"})
    clean(at)
    if name in SHORT_RUNS:
        key, value = SHORT_RUNS[name]
        at.get_by_key(key).set_value(value)
    run(at)
    clean(at)
    question = at.get_by_key(f"{name}-confirm").warning[0].value
    assert question.startswith(t("run.confirm.unknown", "zh", reasons="", runs=1)[:6])
    assert "vectorized_map" in question and "no kernel for the If op" in question
    assert ResultStore(database).count() == 0  # nothing ran: unknown is not 0 s
    at.button(key=f"{name}-confirm-yes").click().run()
    for lang in ("zh", "en"):
        if lang == "en":
            _switch_language(at, lang)
        assert not at.exception, [e.value for e in at.exception]
        _is_the_page(at, name, lang)
        head = t(FAILED[name], lang, variant="vectorized_map", value=2, error="{}").split("{}")[0]
        errors = [error.value for error in at.error]
        assert errors and errors[0].startswith(head), errors
        assert all("no kernel for the If op" in error for error in errors), errors
    stored = ResultStore(database).rows()  # a profile's failure is not a row
    assert list(stored["status"]) == ["failed"] * {"benchmark": 1, "scaling": 2}.get(name, 0)
    assert all("no kernel for the If op" in error for error in stored["error"])


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_a_page_that_runs_keeps_its_run_under_its_own_name(page):
    """The frame starts a page's plan in the run slot named after the page; the page draws its
    outcome from the slot its module names."""
    module = page.module()
    assert callable(module.draw)
    if hasattr(module, "plan"):
        assert module.KEY == page.name
        assert page.settings, "a page that runs has a Run button, so it reads some setting"

"""The Profile page in English and Chinese: a forward pass (its splits, timeline and captures,
each profile stored), a training step's memory on this CPU and under a GPU allocator's stand-in,
one run on TensorFlow, JAX and torch (the last two in real worker processes, each profile
labelled and stored with its backend, what each lacks said in one line), and a profile its
worker refuses."""

from __future__ import annotations

import base64
import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from apptests import TINY, clean, figure, opened
from streamlit.testing.v1 import AppTest

from hierlstm import charts
from hierlstm.app import display
from hierlstm.i18n import t
from hierlstm.profiling import OUTSIDE, UNATTRIBUTED, profiler, torch_step_timeline
from hierlstm.profiling.xspace import self_times
from hierlstm.results.store import ResultStore
from hierlstm.timing.memory import GpuAllocatorPeak

TABLES = ("profile-ops", "profile-lines")


# every test here on its own results file, its runs started without an estimate
pytestmark = pytest.mark.usefixtures("database", "no_estimate")


def profiled(query: dict, check=None) -> AppTest:
    """The Profile page run on `query`'s settings, 2 steps; `check` (default `clean`) after."""
    check = check or clean
    at = opened("app_pages/profile.py", {**TINY, **query}, timeout=180)
    at.number_input(key="profile_steps").set_value(2)
    at.button(key="run").click().run()
    check(at)
    return at


def values(array) -> list:
    """A figure's array as a list: plotly writes numpy arrays as typed arrays (base64)."""
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"]).tolist()
    return list(array)


def switch(at: AppTest, lang: str) -> None:
    at.selectbox(key="lang").set_value(lang).run()
    clean(at)


def check_headers(at: AppTest, variants, lang: str) -> None:
    for variant in variants:
        for key in TABLES:
            columns = list(at.get_by_key(f"{key}-{variant}").dataframe[0].value.columns)
            expected = {
                "profile-ops": ("type", "time_ms", "ops", "share"),
                "profile-lines": ("line", "op_ms", "busy_ms"),
            }[key]
            assert columns == [t(f"profile.column.{name}", lang) for name in expected]


def row_title(lang: str, label: str, timeline) -> str:
    """A timeline row's title: every op of the step drawn."""
    count = len(timeline.events)
    return t(
        "chart.timeline.row", lang, variant=label, ops=count, shown=count, ms=timeline.step_s * 1e3
    )


def check_timeline(at: AppTest, variants, lang: str) -> None:
    drawn = figure(at, "profile-timeline")
    assert drawn["layout"]["title"]["text"] == t("chart.timeline.title", lang)
    timelines = {p.variant: p.result.timeline for p in at.session_state["profile"].result.profiles}
    assert list(timelines) == list(variants)
    bars = sum(len(values(trace["x"])) for trace in drawn["data"])
    assert bars == sum(
        min(len(tl.events), charts.profile.MAX_TIMELINE_BARS) for tl in timelines.values()
    )
    titles = [note["text"] for note in drawn["layout"]["annotations"]]
    assert all(row_title(lang, variant, tl) in titles for variant, tl in timelines.items())
    assert at.get_by_key("profile-trace-json").label == t("profile.timeline.download", lang)
    assert t("profile.timeline.caption", lang) in [c.value for c in at.caption]


def test_a_forward_pass_draws_its_splits_and_timeline_and_stores_each_profile(database):
    """Both splits of every variant in one figure, each method's bar 100 %; the profiles stored
    (not as benchmark rows), each capture offered; where memory by part is said."""
    at = profiled({"lang": "en", "variants": "nested,folded"})
    split = figure(at, "profile-layers")
    bars = {bar["name"]: bar for bar in split["data"]}
    assert {"conv", "pool", "permute", "nested_rnn", "inner_lstm", "outer_lstm"} <= set(bars)
    labels = [
        f"{v} · {method}" for v in ("nested", "folded") for method in ("profiler", "separate calls")
    ]
    assert split["data"][0]["y"] == labels
    for index in range(len(labels)):
        assert sum(bar["x"][index] for bar in split["data"]) == pytest.approx(100, abs=1e-6)
    store = ResultStore(database)
    profiles = store.profiles()
    assert sorted(profiles["variant"]) == ["folded", "nested"] and set(profiles["steps"]) == {2}
    assert store.count() == 0
    for profile in at.session_state["profile"].result.profiles:  # each download button's zip
        names = zipfile.ZipFile(io.BytesIO(profile.archive)).namelist()
        assert any(name.endswith(".xplane.pb") for name in names), names
        ops = at.get_by_key(f"profile-ops-{profile.key}").dataframe[0].value
        assert ops[t("profile.column.type", "en")].str.contains("MatMul").any()
        assert not at.get_by_key(f"profile-lines-{profile.key}").dataframe[0].value.empty
        zipped = at.get_by_key(f"profile-zip-{profile.key}")
        assert zipped.label == t("profile.download", "en", variant=profile.label)
    assert t("profile.kernels.none", "en") in [c.value for c in at.caption]
    assert at.button(key="run").disabled is False
    for lang in ("en", "zh"):
        if lang == "zh":
            switch(at, "zh")  # the outcome drawn again in the other language
        check_timeline(at, ["nested", "folded"], lang)
        check_headers(at, ["nested", "folded"], lang)
        assert [info.value for info in at.info] == [t("profile.memory.inference", lang)]


def memory_bars(at: AppTest) -> dict[tuple[str, str], float]:
    """(variant, bar name) -> MiB, from the drawn memory figure."""
    found = {}
    for trace in figure(at, "profile-memory")["data"]:
        if trace["type"] != "bar":
            continue
        for variant, value in zip(trace["x"][0], values(trace["y"]), strict=True):
            found[(variant, trace["name"])] = value
    return found


def test_a_training_step_on_a_cpu_shows_the_estimate_and_what_is_measured_instead():
    at = profiled({"lang": "zh", "variants": "folded", "task": "training"})
    variants = ["folded"]
    profiles = at.session_state["profile"].result.profiles
    peaks = {p.variant: p.result.peak_memory_bytes / 2**20 for p in profiles}
    for lang in ("zh", "en"):
        if lang == "en":
            switch(at, "en")
        check_timeline(at, variants, lang)
        # each profile's measured bar is its run's peak; the parts are test_profile_charts'
        bars, measured = memory_bars(at), t("chart.memory.measured.cpu_rss_growth", lang)
        assert {v: bars[(v, measured)] for v in variants} == pytest.approx(peaks)
        assert t("profile.memory.cpu", lang, repeats=2) in [info.value for info in at.info]
        assert t("profile.memory.gpu", lang, repeats=2) not in [c.value for c in at.caption]


class Allocator:
    """A GPU allocator's stand-in: 5 MiB in use between steps, 9 MiB more during one."""

    def __init__(self):
        self.peak = 0

    def memory_info(self, device):
        self.peak = 14 * 2**20  # what the step reached since the reset
        return {"current": 5 * 2**20, "peak": self.peak}

    def reset(self, device):
        self.peak = 5 * 2**20


def test_a_training_step_on_a_gpu_shows_the_allocator_peak_in_both_languages(monkeypatch):
    allocator = Allocator()
    monkeypatch.setattr(
        profiler,
        "memory_probe",
        lambda device: GpuAllocatorPeak("GPU:0", allocator.memory_info, allocator.reset),
    )
    at = profiled({"lang": "zh", "variants": "folded", "task": "training", "optimizer": "adam"})
    for lang in ("zh", "en"):
        if lang == "en":
            switch(at, "en")
        assert (
            memory_bars(at)[("folded", t("chart.memory.measured.gpu_allocator_peak", lang))] == 14
        )
        assert t("profile.memory.gpu", lang, repeats=2) in [c.value for c in at.caption]
        assert t("profile.memory.cpu", lang, repeats=2) not in [i.value for i in at.info]


# --- every backend's profile ------------------------------------------------------------------
BACKENDS = ("tensorflow", "jax", "torch")
LABELS = {backend: f"folded · {backend}" for backend in BACKENDS}


def test_a_run_on_three_backends_profiles_each_in_its_process_and_says_what_each_lacks(database):
    """One run (folded on TensorFlow here, on JAX and torch in the process's shared worker
    pool), then the page drawn in both languages from the same outcome."""
    at = profiled({"lang": "en", "variants": "folded", "backend": ",".join(BACKENDS)})
    profiles = at.session_state["profile"].result.profiles
    assert [(p.variant, p.backend, p.label) for p in profiles] == [
        ("folded", backend, LABELS[backend]) for backend in BACKENDS
    ]
    found = {p.backend: p for p in profiles}
    # a stored row per backend, with its backend, each the row the profile says it stored
    rows = ResultStore(database).profiles().set_index("id")
    assert sorted(rows["backend"]) == sorted(BACKENDS) and set(rows["variant"]) == {"folded"}
    assert {rows.loc[p.stored_id, "backend"]: p.backend for p in profiles} == {
        b: b for b in BACKENDS
    }
    check_numbers(found)
    check_captures(found)
    for lang in ("en", "zh"):
        if lang == "zh":
            switch(at, "zh")  # the outcome drawn again in the other language
        check_backend_page(at, found, lang)


def check_numbers(found) -> None:
    """Each profile's numbers against another reading of the same capture."""
    for backend, profile in found.items():
        result = profile.result
        assert result.profiled_step_s > 0 and result.harness_median_s > 0, backend
        assert result.config.backend == backend
        op_types = float(result.op_types["time_s"].sum())
        assert op_types > 0
        if backend == "torch":  # key_averages' self CPU time beside the Chrome trace's
            assert result.layers.empty and result.op_s == pytest.approx(op_types)
            trace = json.loads(Path(result.trace).read_text())
            steps = [torch_step_timeline(trace, step).events for step in range(result.steps)]
            timed = [list(zip(e["start_s"], e["duration_s"], strict=True)) for e in steps]
            traced = [sum(self_times(events)) for events in timed]
            assert result.op_s == pytest.approx(sum(traced) / result.steps, rel=2e-3)
            events = result.timeline.events
            assert set(events["layer"]) == {UNATTRIBUTED}
            top = result.op_types.iloc[0]  # its ops per step in the averages and in the trace
            assert (events["name"] == top["type"]).sum() == pytest.approx(top["ops"])
        else:  # per layer and per op type: two groupings of the same self times
            assert result.op_s == pytest.approx(op_types, rel=1e-9)
            assert OUTSIDE in set(result.layers["layer"])
            layers = set(result.timeline.events["layer"]) - {OUTSIDE}
            assert {"conv", "inner_lstm", "outer_lstm"} <= layers, backend
    jax = found["jax"].result  # the last step's ops, one by one, are the ops counted per step
    assert len(jax.timeline.events) == pytest.approx(jax.op_types["ops"].sum())
    assert found["jax"].result.timeline.events["line"].str.startswith("/host:CPU").all()


def check_captures(found) -> None:
    """Each download's archive holds its backend's capture file."""
    for backend, profile in found.items():
        names = zipfile.ZipFile(io.BytesIO(profile.archive)).namelist()
        if backend == "torch":
            assert names == ["torch_trace.json"]
        else:
            assert any(name.endswith(".xplane.pb") for name in names), (backend, names)
        assert os.path.isdir(profile.result.logdir)


def check_backend_page(at: AppTest, found, lang: str) -> None:
    captions = [c.value for c in at.caption]
    # the split: TensorFlow's two bars, JAX's profiler bar, none for torch; one line each
    split = figure(at, "profile-layers")
    method = {m: t(f"profile.method.{m}", lang) for m in ("profiler", "separate")}
    bars = [
        f"{LABELS['tensorflow']} · {method['profiler']}",
        f"{LABELS['tensorflow']} · {method['separate']}",
        f"{LABELS['jax']} · {method['profiler']}",
    ]
    assert all(list(trace["y"]) == bars for trace in split["data"])
    assert all(trace["marker"]["pattern"]["shape"] == ["", "", "/"] for trace in split["data"])
    assert t("profile.gap.split.torch", lang, label=LABELS["torch"]) in captions
    assert t("profile.gap.split.separate", lang, label=LABELS["jax"]) in captions
    # the step in time: one row of subplots per backend, torch's said to be one colour
    timelines = {p.label: p.result.timeline for p in found.values()}
    drawn = figure(at, "profile-timeline")["layout"]
    titles = [note["text"] for note in drawn["annotations"]]
    lengths = [timeline.step_s for timeline in timelines.values()]
    own_axes = max(lengths) > 10 * min(lengths)  # torch's eager step beside JAX's compiled one
    assert ("matches" not in drawn["xaxis"]) == own_axes
    assert (t("profile.timeline.own_axes", lang, ratio=10) in captions) == own_axes
    assert all(row_title(lang, label, tl) in titles for label, tl in timelines.items())
    assert t("profile.gap.timeline.torch", lang, label=LABELS["torch"]) in captions
    assert [info.value for info in at.info] == [t("profile.memory.inference", lang)]
    # the metrics, a tab per profile, each with its backend's summary and tables
    metrics = {m.label: m for m in at.metric}
    assert [tab.label for tab in at.tabs] == list(LABELS.values())
    markdown = [m.value for m in at.markdown]
    for backend, profile in found.items():
        result = profile.result
        metric = metrics[t("profile.metric.step", lang, variant=profile.label)]
        assert metric.value == display.format_ms(result.profiled_step_s)
        op_total = float(result.op_types["time_s"].sum())  # the op table's, every row
        key = {"tensorflow": "profile.summary"}.get(backend, f"profile.summary.{backend}")
        summary = t(
            key,
            lang,
            op=result.op_s * 1e3,
            share=result.op_s / result.profiled_step_s,
            outside=result.outside_s * 1e3,
            device=result.device,
        )
        assert summary in markdown and f"**{op_total * 1e3:.3g} ms**" in summary
        ops = at.get_by_key(f"profile-ops-{profile.key}").dataframe[0].value
        shown = ops[t("profile.column.time_ms", lang)].to_numpy()
        assert shown == pytest.approx(result.op_types["time_s"].head(12).to_numpy() * 1e3)
        zipped = at.get_by_key(f"profile-zip-{profile.key}")
        name = "profile.download.torch" if backend == "torch" else "profile.download"
        assert zipped.label == t(name, lang, variant=profile.label)
    assert t("profile.gap.lines.torch", lang, label=LABELS["torch"]) in captions
    assert t("profile.gap.kernels.torch", lang, label=LABELS["torch"]) in captions
    assert t("profile.kernels.none", lang) in captions  # TensorFlow's and JAX's, on a CPU


def test_a_profile_its_worker_refuses_is_one_line_and_the_others_are_drawn(database):
    """torch refuses xla in its worker (a run's failure, answered by the real process): one
    error line for that profile; JAX's, compiled by XLA as always, drawn and stored."""
    at = profiled(
        {"lang": "zh", "variants": "folded", "backend": "jax,torch", "xla": "true"},
        check=lambda at: not at.exception or pytest.fail(str([e.value for e in at.exception])),
    )
    torch = at.session_state["profile"].result.profiles[1]
    assert torch.result is None and torch.backend == "torch" and "xla" in torch.error
    for lang in ("zh", "en"):
        if lang == "en":
            at.selectbox(key="lang").set_value("en").run()
            assert not at.exception
        failed = t("profile.failed", lang, variant="folded · torch", error=torch.error)
        assert [e.value for e in at.error] == [failed]
        assert [tab.label for tab in at.tabs] == ["folded · jax"]
        assert at.get_by_key("profile-ops-folded-jax") is not None
        titles = [n["text"] for n in figure(at, "profile-timeline")["layout"]["annotations"]]
        assert len(titles) == 1 and titles[0].startswith("folded · jax")
    assert list(ResultStore(database).profiles()["backend"]) == ["jax"]

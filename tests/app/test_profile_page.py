"""The Profile page's timeline, Chrome-trace download, memory by part and table headers, in
English and Chinese: a forward pass (memory: what to set instead), a training step on this CPU
(what cannot be measured, and the RSS growth beside the estimate), and a training step whose
probe is a GPU allocator's (a stand-in: no GPU here)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from hierlstm.app import profile_charts
from hierlstm.i18n import t
from hierlstm.model.cost import MEMORY_PARTS, memory_parts
from hierlstm.profiling import profiler
from hierlstm.timing.memory import GpuAllocatorPeak

APP = Path(__file__).resolve().parents[2] / "streamlit_app.py"
TINY = {"batch_size": "2", "time_steps": "4", "repeats": "2", "warmup": "1"}
TABLES = ("profile-ops", "profile-lines")


pytestmark = pytest.mark.usefixtures("database")  # every test here on its own results file


def profiled(query: dict) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=180)
    at.query_params = {**TINY, **query}
    at.run()
    at.switch_page("app_pages/profile.py").run()
    at.number_input(key="profile_steps").set_value(2)
    at.button(key="run").click().run()
    clean(at)
    if at.warning:  # a training step's estimate can pass the time asked about: confirmed
        at.button(key="profile-confirm-yes").click().run()
        clean(at)
    return at


def clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def figure(at: AppTest, key: str) -> dict:
    return json.loads(at.get_by_key(key).proto.spec)


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


def check_timeline(at: AppTest, variants, lang: str) -> None:
    drawn = figure(at, "profile-timeline")
    assert drawn["layout"]["title"]["text"] == t("chart.timeline.title", lang)
    timelines = {p.variant: p.result.timeline for p in at.session_state["profile"].result.profiles}
    assert list(timelines) == list(variants)
    bars = sum(len(values(trace["x"])) for trace in drawn["data"])
    assert bars == sum(
        min(len(tl.events), profile_charts.MAX_TIMELINE_BARS) for tl in timelines.values()
    )
    titles = [note["text"] for note in drawn["layout"]["annotations"]]
    for variant, timeline in timelines.items():
        title = t(
            "chart.timeline.row",
            lang,
            variant=variant,
            ops=len(timeline.events),
            shown=len(timeline.events),
            ms=timeline.step_s * 1e3,
        )
        assert title in titles
    assert at.get_by_key("profile-trace-json").label == t("profile.timeline.download", lang)
    assert t("profile.timeline.caption", lang) in [c.value for c in at.caption]


def test_a_forward_pass_draws_its_timeline_and_says_where_memory_by_part_is():
    at = profiled({"lang": "en", "variants": "nested,folded"})
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


def check_memory(at: AppTest, variants, lang: str, kind: str) -> None:
    bars = memory_bars(at)
    results = {p.variant: p.result for p in at.session_state["profile"].result.profiles}
    for variant in variants:
        parts = memory_parts(results[variant].config)
        for part in MEMORY_PARTS:
            name = t(f"chart.memory.part.{part}", lang)
            assert bars[(variant, name)] == pytest.approx(getattr(parts, part) / 2**20)
        measured = bars[(variant, t(f"chart.memory.measured.{kind}", lang))]
        assert measured == pytest.approx(results[variant].peak_memory_bytes / 2**20)
    table = figure(at, "profile-memory")["layout"]["title"]["text"]
    assert table == t("chart.memory.title", lang)


def test_a_training_step_on_a_cpu_shows_the_estimate_and_what_is_measured_instead():
    at = profiled({"lang": "zh", "variants": "nested,folded,fused", "task": "training"})
    variants = ["nested", "folded", "fused"]
    for lang in ("zh", "en"):
        if lang == "en":
            switch(at, "en")
        check_timeline(at, variants, lang)
        check_memory(at, variants, lang, "cpu_rss_growth")
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
        check_memory(at, ["folded"], lang, "gpu_allocator_peak")
        assert (
            memory_bars(at)[("folded", t("chart.memory.measured.gpu_allocator_peak", lang))] == 14
        )
        assert t("profile.memory.gpu", lang, repeats=2) in [c.value for c in at.caption]
        assert t("profile.memory.cpu", lang, repeats=2) not in [i.value for i in at.info]

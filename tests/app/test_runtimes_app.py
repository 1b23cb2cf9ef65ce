"""The inference runtimes in the app, through AppTest: chosen in the sidebar's Backend choice (read
from the registry), run on the Benchmark page in their own workers, drawn with their patterns,
stored with their versions, in English and Chinese; a missing runtime is one line naming its
install."""

from __future__ import annotations

from pathlib import Path

import pytest
from apptests import TINY, figure, opened

from hierlstm.app import sidebar
from hierlstm.i18n import t
from hierlstm.registry import RUNTIMES
from hierlstm.results.store import ResultStore


def test_both_runtimes_run_on_the_benchmark_page_and_are_stored(database):
    for name in RUNTIMES:
        pytest.importorskip(name)
    query = {**TINY, "lang": "en", "variants": "folded", "backend": ",".join(RUNTIMES)}
    at = opened("app_pages/benchmark.py", query, timeout=180)
    assert not at.exception and not at.error
    assert set(RUNTIMES) <= set(at.multiselect(key="backends").options)
    at.button(key="run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    results = at.session_state["benchmark"].result.compared.results
    assert [(r.config.backend, r.status) for r in results] == [(n, "ok") for n in RUNTIMES]
    for lang in ("en", "zh"):
        at.selectbox(key="lang").set_value(lang).run()
        assert not at.exception and not at.error
        latency = figure(at, "bench-latency")
        assert [trace["name"] for trace in latency["data"]] == [f"folded · {n}" for n in RUNTIMES]
        patterns = [trace["marker"]["pattern"]["shape"] for trace in latency["data"]]
        assert patterns == [".", "+"]
        kernels = at.get_by_key("bench-kernels").table[0].value
        assert set(kernels.iloc[:, 4]) == {t("kernel.why.runtime", lang)}
    stored = ResultStore(database).rows()
    for name in RUNTIMES:
        assert list(stored.loc[stored["backend"] == name, f"{name}_version"]) != [""]


def test_a_missing_runtime_is_left_out_with_how_to_install_it(database, monkeypatch):
    monkeypatch.setattr(sidebar, "backend_missing", lambda name: "x" if name in RUNTIMES else None)
    query = {**TINY, "lang": "zh", "variants": "folded", "backend": "tensorflow,openvino"}
    at = opened("app_pages/benchmark.py", query)
    assert not at.exception and not at.error
    words = {"backend": "openvino", "switch": "RUNTIMES", "extra": "runtimes"}
    warnings = [c.value for c in at.sidebar.caption if c.value.startswith("⚠️")]
    assert warnings == ["⚠️ " + t("control.backends.missing", "zh", **words)]
    assert [c.backend for c in at.session_state["_hierlstm"].controls.configs] == ["tensorflow"]


def test_both_runtimes_profile_per_node_and_per_layer_on_the_profile_page(database, no_estimate):
    """ONNX Runtime's profiler and OpenVINO's performance counters, each in its worker: the
    fused LSTM ops lead the op types, the nodes land in the model's layers, and the page says in
    both languages what a runtime's profile lacks."""
    for name in RUNTIMES:
        pytest.importorskip(name)
    query = {**TINY, "lang": "en", "variants": "folded", "backend": ",".join(RUNTIMES)}
    at = opened("app_pages/profile.py", query, timeout=180)
    at.number_input(key="profile_steps").set_value(2)
    at.button(key="run").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    profiles = {p.backend: p.result for p in at.session_state["profile"].result.profiles}
    assert list(profiles) == list(RUNTIMES)
    lstm = {"onnxruntime": "LSTM", "openvino": "LSTMSequence"}  # each runtime's fused op
    for name, result in profiles.items():
        assert result.op_s == pytest.approx(float(result.op_types["time_s"].sum()), rel=1e-9)
        kinds = result.op_types.set_index("type")
        assert kinds.loc[lstm[name], "ops"] == 2, name  # one per LSTM layer, every step
        layers = result.layers.set_index("layer")
        # ONNX Runtime keeps the file's node names; OpenVINO may fold the outer LSTM's own
        # nodes away, and its unscoped LSTMSequence then goes to the layer before it (unfold)
        named = {"conv", "inner_lstm", "outer_lstm"} if name == "onnxruntime" else {"conv"}
        assert named <= set(layers.index), (name, list(layers.index))
        assert layers["ops"].sum() == result.op_types["ops"].sum()
        assert Path(result.trace).is_file() and result.steps == 2
    for lang in ("en", "zh"):
        at.selectbox(key="lang").set_value(lang).run()
        assert not at.exception and not at.error
        captions = [caption.value for caption in at.caption]
        for name in RUNTIMES:  # one line per backend, naming its profile
            line = t("profile.gap.lines.runtime", lang, label=f"folded · {name}")
            assert line in captions
    stored = ResultStore(database).profiles()
    assert sorted(stored["backend"]) == sorted(RUNTIMES)

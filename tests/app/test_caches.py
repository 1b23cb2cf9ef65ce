"""The pages' cached compute: cache misses from many sessions are computed one at a time; the
stored rows are read again only when a row was added."""

import threading
import time

from hierlstm.app import caches
from hierlstm.config import RunConfig
from hierlstm.model import trace as trace_module


def test_two_sessions_cache_misses_are_computed_one_after_the_other(monkeypatch):
    computing, most = [], []

    def slow_trace(config, model, replicas):
        computing.append(config.variant)
        most.append(len(computing))
        time.sleep(0.2)  # long enough for the others to start their own
        computing.remove(config.variant)
        return [config.variant]

    monkeypatch.setattr(trace_module, "trace_shapes", slow_trace)
    caches._cached_trace.clear()
    found = {}

    def trace(variant):
        found[variant] = caches.trace(RunConfig(variant=variant))

    # Three models, not one: each model's own lock would serialise traces of one variant anyway.
    variants = ("folded", "fused", "shared_cell")
    threads = [threading.Thread(target=trace, args=(variant,)) for variant in variants]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    caches._cached_trace.clear()
    assert found == {variant: (variant,) for variant in variants} and max(most) == 1


def test_a_setting_that_changes_no_shape_costs_no_tracing(monkeypatch):
    """What the trace shows is the forward model's shapes: XLA, the device, the LSTM kernel,
    the task, the optimizer and the backend change none of them, so they share its entry."""
    traced = []
    monkeypatch.setattr(
        trace_module, "trace_shapes", lambda config, model, replicas: traced.append(config) or ()
    )
    caches._cached_trace.clear()
    base = RunConfig(variant="folded", batch_size=2, time_steps=3)
    for change in ({}, {"xla": True}, {"device": "cpu"}, {"lstm_kernel": "generic"},
                   {"task": "training", "optimizer": "adam"}, {"backend": "jax"}):  # fmt: skip
        caches.trace(base.replace(**change))
    caches.trace(base.replace(time_steps=4))  # a shape does change
    caches._cached_trace.clear()
    assert [config.time_steps for config in traced] == [3, 4]


def test_the_lessons_forget_gate_is_computed_once_per_geometry(monkeypatch):
    """The oracle's figure reads the layers' sizes alone: a batch, a time length, a variant, a
    precision or XLA chosen on the Lesson shares its entry; another size does not."""
    from hierlstm.inside import whatif

    computed = []
    monkeypatch.setattr(
        whatif, "summary_memory", lambda params, x, config: computed.append(config) or {}
    )
    caches._forget_memory.clear()
    base = RunConfig(variant="folded", batch_size=2, time_steps=3)
    for change in ({}, {"batch_size": 5}, {"time_steps": 9}, {"variant": "nested"},
                   {"precision": "mixed_float16"}, {"xla": True}):  # fmt: skip
        caches.forget_memory(base.replace(**change), seed=0)
    caches.forget_memory(base.replace(inner_units=20), seed=0)  # a size does change
    caches._forget_memory.clear()
    assert [config.inner_units for config in computed] == [48, 20]
    assert {(config.time_steps, config.batch_size) for config in computed} == {(8, 1)}


def test_the_stored_values_are_read_again_only_when_a_row_was_added(monkeypatch, tmp_path):
    from hierlstm.backends.protocol import failed
    from hierlstm.results.store import ResultStore

    store = ResultStore(tmp_path / "results.sqlite3")
    reads, real = [], ResultStore.distinct

    def counted(self, column):
        reads.append(column)
        return real(self, column)

    monkeypatch.setattr(ResultStore, "distinct", counted)
    store.add(failed(RunConfig(variant="folded"), "one line"))
    columns = ("variant", "status")
    assert caches.stored_values(store, columns) == {"variant": ["folded"], "status": ["failed"]}
    assert caches.stored_values(store, columns)["variant"] == ["folded"]
    assert reads == ["variant", "status"]
    store.add(failed(RunConfig(variant="nested"), "one line"))
    assert caches.stored_values(store, columns)["variant"] == ["folded", "nested"]
    assert reads == ["variant", "status"] * 2

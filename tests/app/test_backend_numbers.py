"""The Lesson's backend numbers: this host's latest comparison of backends at one setting, as
ratios to TensorFlow; and the variant x backend choice."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from factories import make_result

from hierlstm.app import backend_numbers, state
from hierlstm.results.schema import CONTEXT_COLUMNS


def _row(variant, backend, median, created, host="here", **config):
    result = make_result(config_changes={"variant": variant, "backend": backend, **config})
    step = dataclasses.replace(result.step, median=median, p10=median * 0.9, p90=median * 1.1)
    result = dataclasses.replace(result, step=step)
    return {"id": f"{variant}-{backend}-{created}", "created_at": created, "host": host} | (
        result.to_row()
    )


def _rows(*rows) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows))
    assert set(CONTEXT_COLUMNS) <= set(frame.columns)
    return frame


def test_the_latest_comparison_on_this_host_with_ratios_to_tensorflow():
    rows = _rows(
        _row("folded", "tensorflow", 0.010, "2026-01-01T10:00:00"),  # older, same settings
        _row("folded", "tensorflow", 0.020, "2026-01-02T10:00:00"),
        _row("folded", "jax", 0.030, "2026-01-02T10:00:01"),
        _row("folded", "torch", 0.080, "2026-01-02T10:00:02"),
        _row("nested", "tensorflow", 0.050, "2026-01-02T10:00:00"),
        _row("nested", "torch", 0.100, "2026-01-02T10:00:02"),
        _row("folded", "jax", 0.001, "2026-01-03T10:00:00", host="elsewhere"),  # not this host
        _row("folded", "jax", 0.002, "2026-01-01T09:00:00", batch_size=8),  # other settings
    )
    frame = backend_numbers.latest_comparison(rows, host="here")
    assert list(zip(frame["variant"], frame["backend"], strict=True)) == [  # registry order
        ("nested", "tensorflow"),
        ("nested", "torch"),
        ("folded", "tensorflow"),
        ("folded", "jax"),
        ("folded", "torch"),
    ]
    assert np.allclose(frame["median_s"], [0.050, 0.100, 0.020, 0.030, 0.080])
    assert np.allclose(frame["vs_tensorflow"], [1.0, 2.0, 1.0, 1.5, 4.0])
    assert frame.attrs["settings"]["batch_size"] == 2 and frame.attrs["host"] == "here"


def test_nothing_when_only_tensorflow_ran_here_or_a_backend_ran_alone():
    only_tf = _rows(_row("folded", "tensorflow", 0.01, "2026-01-01T10:00:00"))
    assert backend_numbers.latest_comparison(only_tf, host="here").empty
    elsewhere = _rows(
        _row("folded", "tensorflow", 0.01, "2026-01-01T10:00:00", host="other"),
        _row("folded", "jax", 0.01, "2026-01-01T10:00:00", host="other"),
    )
    assert backend_numbers.latest_comparison(elsewhere, host="here").empty
    alone = _rows(_row("folded", "jax", 0.01, "2026-01-01T10:00:00"))
    assert backend_numbers.latest_comparison(alone, host="here").empty
    assert backend_numbers.stored_comparison(None).empty


def test_the_lesson_reads_only_the_rows_it_compares_and_finds_the_same(tmp_path):
    """`comparison_rows` asks the store for this host's completed runs of its newest other
    backend's settings: the comparison made from them is the one made from every stored row."""
    from factories import make_failed_result

    from hierlstm.results.store import ResultStore

    store = ResultStore(tmp_path / "results.sqlite3")
    assert backend_numbers.comparison_rows(store).empty
    for created, (variant, backend, batch) in enumerate(
        [
            ("folded", "tensorflow", 2),
            ("folded", "jax", 2),
            ("folded", "jax", 8),  # other settings, older
            ("nested", "tensorflow", 2),
            ("nested", "torch", 2),
            ("folded", "tensorflow", 8),  # newer, but TensorFlow: not what is compared
        ]
    ):
        change = {"variant": variant, "backend": backend, "batch_size": batch}
        store.add(make_result(config_changes=change), created_at=f"2026-12-01T10:00:0{created}")
    store.add(make_failed_result(), created_at="2026-12-02")
    read = backend_numbers.comparison_rows(store)
    assert len(read) == 4 and set(read["batch_size"]) == {2} and set(read["status"]) == {"ok"}
    found = backend_numbers.latest_comparison(read)
    assert found.equals(backend_numbers.latest_comparison(store.rows()))
    assert list(found["backend"]) == ["tensorflow", "torch", "tensorflow", "jax"]


def test_the_choice_is_every_variant_on_every_chosen_backend_it_has():
    choice = state.choose(["nested", "fused"], ["torch", "tensorflow"])
    assert choice.backends == ("tensorflow", "torch")  # BACKENDS order
    assert choice.pairs == (("nested", "tensorflow"), ("nested", "torch"), ("fused", "tensorflow"))
    assert choice.left_out == {"fused": ("tensorflow",)} and not choice.fallback
    none = state.choose(["fused", "vectorized_map"], ["jax"])
    assert none.fallback and none.pairs == (
        ("fused", "tensorflow"),
        ("vectorized_map", "tensorflow"),
    )
    assert state.choose(["folded"], []).pairs == (("folded", "tensorflow"),)

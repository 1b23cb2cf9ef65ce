"""vs_pytorch's verdicts and tables from made-up rounds: the share of the matmul ruler, the 0.8
target, the fastest (variant, backend), and the option that picks the backends. Nothing is timed
(a benchmark runs under `make bench`; test_smoke_fresh.py starts this one)."""

from __future__ import annotations

import argparse

import pytest

from benchmarks.model.backends import backend_configs
from benchmarks.model.vs_pytorch import (
    PEER,
    RULER,
    RULER_FLOPS,
    Rounds,
    backend_names,
    fastest_row,
    forward_row,
    paired,
    ruler_row,
    share_of_ruler,
    target_cell,
    ways_row,
)
from hierlstm.config import RunConfig


def test_a_call_of_half_the_rulers_flops_in_its_time_reaches_half_its_flops_per_second():
    assert share_of_ruler(RULER_FLOPS / 2, 1.0, 1.0) == pytest.approx(0.5)
    assert share_of_ruler(300, 2.0, 1.0, ruler_flops=100) == pytest.approx(1.5)


def test_the_share_of_the_ruler_is_one_per_round_from_rounds_side_by_side():
    shares = share_of_ruler(100, [1.0, 2.0], [1.0, 4.0], ruler_flops=100)
    assert shares == pytest.approx([1.0, 2.0])


def test_the_target_is_met_at_most_0_8_of_pytorchs_time():
    assert target_cell(0.8).startswith("met")
    assert target_cell(0.79).startswith("met")
    assert target_cell(0.81).startswith("missed")
    assert target_cell(0.5, target=0.4).startswith("missed")


def test_paired_ratios_divide_within_a_round():
    samples = {"a": [1.0, 2.0, 3.0], "b": [2.0, 4.0, 6.0]}
    assert paired(samples, "a", "b") == pytest.approx((0.5, 0.5, 0.5))


def made_up(**seconds) -> dict[str, list[float]]:
    """Five rounds of each timer at its given seconds (the peer at 1.0, the ruler at 0.5)."""
    return {name: [value] * 5 for name, value in {PEER: 1.0, RULER: 0.5, **seconds}.items()}


def forward_rounds() -> Rounds:
    samples = made_up(folded=0.9, fused=0.7, **{"folded [jax]": 0.6, "nested [torch]": 3.0})
    contenders = {
        "tensorflow": {"folded": "folded", "fused": "fused"},
        "jax": {"folded": "folded [jax]"},
        "torch": {"nested": "nested [torch]"},
    }
    return Rounds("8x50", RULER_FLOPS // 4, samples, ["folded", "fused"], contenders, {})


def test_the_forward_row_names_hierlstms_fastest_and_its_verdict():
    row = forward_row(forward_rounds())
    assert row[:4] == ["8x50", "900.00", "700.00", "1000.00"]
    assert row[4:6] == ["fused", "0.70 (0.70-0.70)"]
    assert row[6].startswith("met")


def test_the_fastest_row_races_every_backend_and_names_each_ones_fastest():
    row = fastest_row(forward_rounds())
    assert row[1:4] == ["folded [jax]", "600.00", "0.60 (0.60-0.60)"]
    assert row[4].startswith("met")
    assert row[5:] == ["fused: 0.70", "folded: 0.60", "nested: 3.00"]


def test_a_backend_none_of_whose_contenders_ran_fails_in_the_fastest_row():
    rounds = forward_rounds()
    rounds.contenders["torch"] = {}
    assert fastest_row(rounds)[-1] == "fails"


def test_the_ruler_row_gives_tensorflows_fastest_share_of_the_matmul():
    # fused: a quarter of the ruler's FLOPs in 0.7 s, the ruler's in 0.5 s: 0.25 * 0.5 / 0.7
    row = ruler_row(forward_rounds(), target=0.6)
    assert row[1] == "fused"
    assert row[4] == f"{0.25 * 0.5 / 0.7:.0%}"
    assert row[5].startswith("missed")
    assert ruler_row(forward_rounds(), target=0.1)[5].startswith("met")


def test_the_three_ways_row_gives_each_kind_its_fastest_and_verdict():
    samples = made_up(folded=0.9, **{"folded user": 0.7, "folded + XLA": 1.2})
    samples["folded + XLA user"] = [0.75] * 5  # no fit step: it failed to run
    rounds = Rounds("8x50", 1, samples, ["folded", "folded + XLA"], {}, {})
    row = ways_row(rounds)
    assert row[1:4] == ["900.0 / 1200.0", "folded: 0.90 (0.90-0.90)", row[3]]
    assert row[3].startswith("missed")
    assert row[4:7] == ["700.0 / 750.0", "folded: 0.70 (0.70-0.70)", row[6]]
    assert row[6].startswith("met")
    assert row[7:] == ["fails", "-", "-"]


def test_the_backends_must_be_keras_ones_and_include_tensorflow():
    assert backend_names("tensorflow,jax") == ("tensorflow", "jax")
    for wrong in ("tensorflow,mxnet", "jax,torch"):
        with pytest.raises(argparse.ArgumentTypeError):
            backend_names(wrong)


@pytest.mark.parametrize(("steps", "present"), [(50, True), (51, False)])
def test_time_distributed_is_left_out_past_50_steps(steps, present):
    base = RunConfig(batch_size=1, time_steps=steps)
    configs = backend_configs(base, ["folded", "time_distributed"], ["jax", "torch"])
    assert [config.backend for config in configs[:2]] == ["jax", "torch"]
    assert any(config.variant == "time_distributed" for config in configs) is present

"""`runs.decide`: whether a run starts or asks first; `runs.known_estimate`: what a run in line
knows of its own length."""

import pytest

from hierlstm.app.runs import ASK, RUN, Estimate, decide


@pytest.mark.parametrize(
    ("guess", "limit", "expected"),
    [
        (None, 1.0, RUN),  # nothing to estimate, or the user has said yes
        (Estimate(0.5), 1.0, RUN),
        (Estimate(1.0), 1.0, RUN),  # at the limit is not over it
        (Estimate(1.5), 1.0, ASK),
        (Estimate(0.0, ("vectorized_map: no kernel",)), 1000.0, ASK),  # unknown is not 0 s
        (Estimate(5.0, ("folded: no kernel",)), 10.0, ASK),
    ],
)
def test_decide_runs_or_asks(guess, limit, expected):
    assert decide(guess, limit) == expected


def test_a_run_in_line_knows_its_estimate_only_from_costs_already_measured(monkeypatch):
    """`known_estimate`: what the waiting message says of the run's own length, with no device
    (a run in line may not measure a cost)."""
    from hierlstm.admission.estimate import StepCost, calibration_key, run_seconds
    from hierlstm.app import runs
    from hierlstm.config import RunConfig, Timing

    configs = (RunConfig(variant="nested"), RunConfig(variant="folded", backend="jax"))
    workload = runs.Workload(configs, Timing(warmup=1, repeats=3))
    monkeypatch.setattr(runs, "_KNOWN_COSTS", {})
    assert runs.known_estimate(workload) is None and runs.known_estimate(None) is None
    costs = {}
    for config in configs:  # a JAX run's estimate uses TensorFlow's cost, as `estimate` does
        key = calibration_key(config.replace(backend="tensorflow"))
        costs[config] = runs._KNOWN_COSTS[key] = StepCost(config.variant, 1e-4, 1e-3, 0.1)
        if config.variant == "nested":
            assert runs.known_estimate(workload) is None  # folded's is not known yet
    expected = sum(run_seconds(c, costs[c], workload.timing) for c in configs)
    assert runs.known_estimate(workload) == pytest.approx(expected) and expected > 0

"""`runs.decide`: whether a run starts or asks first."""

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

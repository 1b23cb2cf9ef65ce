"""These tests pin Keras 3.15's TimeDistributed bug. When one fails, Keras has fixed it: update
hierlstm.model.pitfalls, the time_distributed variant's note, and the lesson."""

import pytest

from hierlstm.model.pitfalls import time_distributed_unknown_length


@pytest.mark.parametrize("via", ["tf.function", "model.predict"])
def test_batch_smaller_than_time_silently_returns_batch_by_batch(via):
    outcome = time_distributed_unknown_length(2, 5, via=via)
    assert outcome.expected_shape == (2, 5, 60)
    assert outcome.actual_shape == (2, 2, 60)
    assert outcome.broken and outcome.error == ""


@pytest.mark.parametrize("via", ["tf.function", "model.predict"])
def test_batch_larger_than_time_fails_with_an_index_error(via):
    outcome = time_distributed_unknown_length(5, 2, via=via)
    assert outcome.actual_shape is None
    assert "out of bounds" in outcome.error
    assert "\n" not in outcome.error


def test_batch_equal_to_time_happens_to_be_right():
    outcome = time_distributed_unknown_length(3, 3)
    assert outcome.actual_shape == (3, 3, 60) and not outcome.broken

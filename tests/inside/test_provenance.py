"""Provenance: the input cells that reach the permuted tensor's (t, s) through the conv and the
pooling, counted at the edges and in the middle, and checked on the oracle: changing every other
input cell leaves that cell's values as they were."""

import numpy as np
import pytest

from hierlstm.config import RunConfig
from hierlstm.inside.provenance import receptive_field
from hierlstm.model.params import init_params
from hierlstm.model.reference import conv2d_same, max_pool_rows

HEIGHT, TIME = 9, 5  # three pooled rows


@pytest.mark.parametrize(
    ("time_step", "row", "rows", "times"),
    [
        (0, 0, range(0, 4), range(0, 2)),
        (2, 1, range(2, 7), range(1, 4)),
        (4, 2, range(5, 9), range(3, 5)),
    ],
)
def test_a_cell_sees_its_pooled_rows_and_the_kernels_reach(time_step, row, rows, times):
    field = receptive_field(time_step, row, height=HEIGHT, time_steps=TIME)
    expected = np.zeros((HEIGHT, TIME), bool)
    expected[rows.start : rows.stop, times.start : times.stop] = True
    assert np.array_equal(field, expected)


def test_no_input_cell_outside_the_field_changes_the_cell():
    config = RunConfig(height=HEIGHT, time_steps=TIME, filters=4)
    params = init_params(config, seed=1)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, HEIGHT, TIME, 1))
    field = receptive_field(2, 1, height=HEIGHT, time_steps=TIME)
    changed = np.where(field[None, :, :, None], x, rng.standard_normal(x.shape) * 5)

    def permuted(inputs):  # (1, R, T, C) -> the cell (t=2, s=1) over channels
        pooled = max_pool_rows(conv2d_same(inputs, params["conv_kernel"], params["conv_bias"]), 3)
        return pooled[0, 1, 2]

    assert np.array_equal(permuted(changed), permuted(x))
    assert not np.array_equal(permuted(x * 2), permuted(x))  # the cell does follow its field


def test_a_cell_outside_the_tensor_is_refused_in_one_sentence():
    with pytest.raises(ValueError, match=r"within 5 time steps and 3 pooled rows; got \(5, 0\)"):
        receptive_field(5, 0, height=HEIGHT, time_steps=TIME)

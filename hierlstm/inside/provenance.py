"""Provenance: which input cells reach a cell of the permuted tensor through the conv (k x k,
'same' padding) and the max pooling over `pool_height` rows. Pure arithmetic, no TensorFlow.

The permuted tensor's cell (t, s) is pooled row s at time t: the maximum of conv rows
s * pool_height ... s * pool_height + pool_height - 1 at time t, each of which sees the input
rows and time steps within the kernel's reach (cut at the edges, where the padding is zeros)."""

from __future__ import annotations

import numpy as np


def pooled_rows(row: int, pool_height: int) -> range:
    """The conv rows that pooled row `row` is the maximum of."""
    return range(row * pool_height, (row + 1) * pool_height)


def receptive_field(
    time_step: int,
    row: int,
    *,
    height: int,
    time_steps: int,
    pool_height: int = 3,
    kernel_size: int = 3,
) -> np.ndarray:
    """(height, time_steps) bool: the input cells that reach the permuted tensor's cell
    (`time_step`, `row`), i.e. the inner LSTM's input at outer step t, inner step s."""
    rows = height // pool_height
    if not (0 <= time_step < time_steps and 0 <= row < rows):
        raise ValueError(
            f"(t, s) must be within {time_steps} time steps and {rows} pooled rows; "
            f"got ({time_step}, {row})."
        )
    before = (kernel_size - 1) // 2  # Keras pads the extra row of an even kernel after
    after = kernel_size - 1 - before
    conv = pooled_rows(row, pool_height)
    field = np.zeros((height, time_steps), bool)
    field[
        max(0, conv.start - before) : min(height, conv.stop + after),
        max(0, time_step - before) : min(time_steps, time_step + after + 1),
    ] = True
    return field

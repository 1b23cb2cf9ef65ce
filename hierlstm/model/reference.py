"""The whole model in plain numpy, from the equations: the independent oracle every variant is
checked against. It shares nothing with the Keras code but the parameter names, and computes in
float64 so its own rounding is negligible beside a float32 model's."""

from __future__ import annotations

import numpy as np

from hierlstm.model.loss import mean_squared_error
from hierlstm.model.params import Params


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def conv2d_same(x, kernel, bias):
    """(B, H, T, 1) * (k, k, 1, C) -> (B, H, T, C), stride 1, zero 'same' padding as Keras pads
    (the extra row/column of an even kernel goes after)."""
    k = kernel.shape[0]
    before, after = (k - 1) // 2, k - 1 - (k - 1) // 2
    padded = np.pad(x, ((0, 0), (before, after), (before, after), (0, 0)))
    batch, height, time, _ = x.shape
    out = np.zeros((batch, height, time, kernel.shape[-1]))
    for dy in range(k):
        for dx in range(k):
            window = padded[:, dy : dy + height, dx : dx + time, :]  # (B, H, T, 1)
            out += window @ kernel[dy, dx]  # (B, H, T, 1) @ (1, C) -> (B, H, T, C)
    return out + bias


def max_pool_rows(x, pool_height):
    """(B, H, T, C) -> (B, H // p, T, C): max over non-overlapping groups of p rows (rows left
    over at the bottom are dropped, as 'valid' pooling drops them)."""
    batch, height, time, channels = x.shape
    rows = height // pool_height
    grouped = x[:, : rows * pool_height].reshape(batch, rows, pool_height, time, channels)
    return grouped.max(axis=2)


def lstm(sequences, kernel, recurrent_kernel, bias):
    """(N, S, D) -> (N, S, U): the LSTM equations, gates in Keras order i, f, c, o."""
    count, steps, _ = sequences.shape
    units = recurrent_kernel.shape[0]
    hidden = np.zeros((count, units))
    cell = np.zeros((count, units))
    outputs = np.empty((count, steps, units))
    for step in range(steps):
        z = sequences[:, step] @ kernel + hidden @ recurrent_kernel + bias  # (N, 4U)
        input_gate = _sigmoid(z[:, :units])
        forget_gate = _sigmoid(z[:, units : 2 * units])
        candidate = np.tanh(z[:, 2 * units : 3 * units])
        output_gate = _sigmoid(z[:, 3 * units :])
        cell = forget_gate * cell + input_gate * candidate
        hidden = output_gate * np.tanh(cell)
        outputs[:, step] = hidden
    return outputs


def reference_forward(params: Params, x, *, pool_height: int = 3) -> np.ndarray:
    """(B, H, T, 1) -> (B, T, outer_units) in float64, from `params` and the pool height (the
    one geometry setting the parameter shapes do not carry)."""
    p = {name: np.asarray(value, dtype=np.float64) for name, value in params.items()}
    x = np.asarray(x, dtype=np.float64)
    batch, _, time, _ = x.shape
    features = conv2d_same(x, p["conv_kernel"], p["conv_bias"])  # (B, H, T, C)
    features = max_pool_rows(features, pool_height)  # (B, R, T, C)
    features = features.transpose(0, 2, 1, 3)  # (B, T, R, C)
    rows, channels = features.shape[2], features.shape[3]
    folded = features.reshape(batch * time, rows, channels)  # (B*T, R, C)
    inner = lstm(folded, p["inner_kernel"], p["inner_recurrent_kernel"], p["inner_bias"])
    summaries = inner[:, -1].reshape(batch, time, -1)  # last hidden state: (B, T, inner)
    return lstm(summaries, p["outer_kernel"], p["outer_recurrent_kernel"], p["outer_bias"])


def reference_loss(params: Params, x, target, *, pool_height: int = 3) -> float:
    """The training loss (`hierlstm.model.loss`) of `reference_forward`, in float64: x
    (B, H, T, 1), target (B, T, outer_units)."""
    outputs = reference_forward(params, x, pool_height=pool_height)
    return float(mean_squared_error(outputs, np.asarray(target, dtype=np.float64)))

"""The whole model in plain numpy, from the equations: the independent oracle every variant is
checked against. It shares nothing with the Keras code but the parameter names, and computes in
float64 so its own rounding is negligible beside a float32 model's."""

from __future__ import annotations

from collections.abc import Callable

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


GATES = ("i", "f", "g", "o")  # input, forget, candidate (Keras's "c" block), output
LSTM_VALUES = (*GATES, "c", "h")
# Every layer's values `reference_layers` gives, in the order the tensor flows.
LAYERS = (
    "conv",
    "pool",
    "permute",
    *(f"inner_{name}" for name in LSTM_VALUES),
    "summary",
    *(f"outer_{name}" for name in LSTM_VALUES),
)

# An edit of a value where it is computed, (name, step, value) -> value: an intervention
# (`hierlstm.inside.whatif`). What it returns is what every later equation reads.
Edit = Callable[[str, int | None, np.ndarray], np.ndarray]


def _unchanged(_name, _step, value):
    return value


def lstm_steps(
    sequences, kernel, recurrent_kernel, bias, edit: Edit | None = None
) -> dict[str, np.ndarray]:
    """(N, S, D) -> {gate or state: (N, S, U)}: the LSTM equations at every step, gates in Keras
    order i, f, g (the candidate), o, then the cell state c and the hidden state h. `edit`, when
    given, is called on each of them, (N, U), at each step, as it is computed."""
    edit = edit or _unchanged
    count, steps, _ = sequences.shape
    units = recurrent_kernel.shape[0]
    hidden = np.zeros((count, units))
    cell = np.zeros((count, units))
    values = {name: np.empty((count, steps, units)) for name in LSTM_VALUES}
    for step in range(steps):
        z = sequences[:, step] @ kernel + hidden @ recurrent_kernel + bias  # (N, 4U)
        input_gate = edit("i", step, _sigmoid(z[:, :units]))
        forget_gate = edit("f", step, _sigmoid(z[:, units : 2 * units]))
        candidate = edit("g", step, np.tanh(z[:, 2 * units : 3 * units]))
        output_gate = edit("o", step, _sigmoid(z[:, 3 * units :]))
        cell = edit("c", step, forget_gate * cell + input_gate * candidate)
        hidden = edit("h", step, output_gate * np.tanh(cell))
        for name, value in zip(
            values, (input_gate, forget_gate, candidate, output_gate, cell, hidden), strict=True
        ):
            values[name][:, step] = value
    return values


def lstm(sequences, kernel, recurrent_kernel, bias):
    """(N, S, D) -> (N, S, U): every step's hidden state."""
    return lstm_steps(sequences, kernel, recurrent_kernel, bias)["h"]


def reference_layers(
    params: Params, x, *, pool_height: int = 3, edit: Edit | None = None
) -> dict[str, np.ndarray]:
    """(B, H, T, 1) -> every layer's values in float64, from `params` and the pool height (the
    one geometry setting the parameter shapes do not carry): conv (B, H, T, C), pool (B, R, T, C),
    permute (B, T, R, C), the inner LSTM's inner_i, _f, _g, _o, _c, _h (B, T, R, inner),
    summary (B, T, inner), the outer LSTM's outer_i ... outer_h (B, T, outer). `edit`, when
    given, is called on the conv's output ("conv", None, value) and on every gate and state as
    it is computed ("inner_f", s, (B*T, inner) or "outer_h", t, (B, outer))."""
    edit = edit or _unchanged
    p = {name: np.asarray(value, dtype=np.float64) for name, value in params.items()}
    x = np.asarray(x, dtype=np.float64)
    batch, _, time, _ = x.shape
    values = {"conv": edit("conv", None, conv2d_same(x, p["conv_kernel"], p["conv_bias"]))}
    values["pool"] = max_pool_rows(values["conv"], pool_height)  # (B, R, T, C)
    values["permute"] = values["pool"].transpose(0, 2, 1, 3)  # (B, T, R, C)
    rows, channels = values["permute"].shape[2:]
    folded = values["permute"].reshape(batch * time, rows, channels)  # (B*T, R, C)
    inner = lstm_steps(
        folded,
        p["inner_kernel"],
        p["inner_recurrent_kernel"],
        p["inner_bias"],
        lambda name, step, value: edit(f"inner_{name}", step, value),
    )
    for name, value in inner.items():  # (B*T, R, inner) -> (B, T, R, inner)
        values[f"inner_{name}"] = value.reshape(batch, time, rows, -1)
    values["summary"] = values["inner_h"][:, :, -1]  # last hidden state: (B, T, inner)
    outer = lstm_steps(
        values["summary"],
        p["outer_kernel"],
        p["outer_recurrent_kernel"],
        p["outer_bias"],
        lambda name, step, value: edit(f"outer_{name}", step, value),
    )
    values.update({f"outer_{name}": value for name, value in outer.items()})  # (B, T, outer)
    return values


def reference_forward(params: Params, x, *, pool_height: int = 3) -> np.ndarray:
    """(B, H, T, 1) -> (B, T, outer_units) in float64: `reference_layers`'s last."""
    return reference_layers(params, x, pool_height=pool_height)["outer_h"]


def reference_loss(params: Params, x, target, *, pool_height: int = 3) -> float:
    """The training loss (`hierlstm.model.loss`) of `reference_forward`, in float64: x
    (B, H, T, 1), target (B, T, outer_units)."""
    outputs = reference_forward(params, x, pool_height=pool_height)
    return float(mean_squared_error(outputs, np.asarray(target, dtype=np.float64)))

"""The interventions of `whatif` in TensorFlow: the `folded` model built from the parameters, its
own conv, pooling and permute layers called one by one, and its two LSTM cells stepped in an
explicit loop with their own weights and activations, every gate and state computed where an
intervention may replace it (`tf.where` on the masks `whatif.placed` makes). It agrees with the
oracle under the same interventions (`whatif.oracle_values`) within 1e-5 in float32. The
untouched run is this same loop with no interventions, so an intervention from t0 leaves every
value before t0 exactly as the untouched run computed it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
import tensorflow as tf

from hierlstm.config import RunConfig
from hierlstm.inside.whatif import (
    Change,
    Edits,
    Intervention,
    change_of,
    difference_of,
    oracle_values,
    placed,
)
from hierlstm.model.builders import build_model
from hierlstm.model.params import Params, find_layer
from hierlstm.model.reference import LSTM_VALUES


def _tensorflow_edit(edits: Edits):
    def edit(point, step, value):
        for mask, replacement in edits.get((point, step), ()):
            value = tf.where(mask, tf.cast(replacement, value.dtype), value)
        return value

    return edit


def _steps(cell, sequences, edit, lstm: str) -> dict[str, tf.Tensor]:
    """(N, S, D) -> {gate or state: (N, S, U)}: `cell`'s equations from zero states, its
    weights and activations, `edit` called on each gate and state as it is computed."""
    count, steps = sequences.shape[0], sequences.shape[1]
    kernel, recurrent = (
        tf.convert_to_tensor(cell.kernel),
        tf.convert_to_tensor(cell.recurrent_kernel),
    )
    bias = tf.convert_to_tensor(cell.bias)
    hidden = tf.zeros((count, cell.units))
    state = tf.zeros((count, cell.units))
    values = {name: [] for name in LSTM_VALUES}
    activations = (cell.recurrent_activation, cell.recurrent_activation, cell.activation)
    activations += (cell.recurrent_activation,)  # i, f, g, o: Keras's order
    for step in range(steps):
        z = tf.matmul(sequences[:, step], kernel) + tf.matmul(hidden, recurrent) + bias  # (N, 4U)
        gates = [
            edit(f"{lstm}_{name}", step, activation(part))
            for name, activation, part in zip(
                "ifgo", activations, tf.split(z, 4, axis=-1), strict=True
            )
        ]
        input_gate, forget_gate, candidate, output_gate = gates
        state = edit(f"{lstm}_c", step, forget_gate * state + input_gate * candidate)
        hidden = edit(f"{lstm}_h", step, output_gate * cell.activation(state))
        for name, value in zip(LSTM_VALUES, (*gates, state, hidden), strict=True):
            values[name].append(value)
    return {name: tf.stack(steps_of, axis=1) for name, steps_of in values.items()}


def intervened_values(
    config: RunConfig,
    params: Params,
    x: np.ndarray,
    interventions: Sequence[Intervention] = (),
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """x (B, H, T, 1) -> every layer's values under `interventions` as float64 numpy arrays,
    keyed and shaped as `whatif.oracle_values`: input (B, H, T, 1), conv ... outer_h (B, T,
    outer). `seed` makes a switched-to sound. Built and run in float32."""
    config = config.replace(variant="folded", precision="float32", xla=False)
    model = build_model(config, params)
    edit = _tensorflow_edit(placed(interventions, config, x.shape[0], seed))
    inputs = edit("input", None, tf.convert_to_tensor(x, tf.float32))  # (B, H, T, 1)
    values = {"input": inputs, "conv": edit("conv", None, find_layer(model, "conv")(inputs))}
    values["pool"] = find_layer(model, "pool")(values["conv"])  # (B, R, T, C)
    values["permute"] = find_layer(model, "permute")(values["pool"])  # (B, T, R, C)
    batch, time, rows, channels = values["permute"].shape
    folded = tf.reshape(values["permute"], (batch * time, rows, channels))  # (B*T, R, C)
    inner = _steps(find_layer(model, "inner_lstm").cell, folded, edit, "inner")
    for name, value in inner.items():  # (B*T, R, inner) -> (B, T, R, inner)
        values[f"inner_{name}"] = tf.reshape(value, (batch, time, rows, -1))
    values["summary"] = values["inner_h"][:, :, -1]  # (B, T, inner)
    outer = _steps(find_layer(model, "outer_lstm").cell, values["summary"], edit, "outer")
    values.update({f"outer_{name}": value for name, value in outer.items()})  # (B, T, outer)
    return {name: np.asarray(value.numpy(), np.float64) for name, value in values.items()}


@dataclasses.dataclass(frozen=True)
class WhatIf:
    """A run under interventions beside the untouched run, both from this module's loop
    ({view: values with their batch axis}), what changed, and the largest |TensorFlow - oracle|
    under the interventions."""

    interventions: tuple[Intervention, ...]
    before: dict
    after: dict
    change: Change
    oracle_difference: float


def what_if(
    config: RunConfig,
    params: Params,
    x: np.ndarray,
    interventions: Sequence[Intervention],
    seed: int = 0,
    values: Callable[[tuple], dict] | None = None,
) -> WhatIf:
    """x (B, H, T, 1) untouched and under `interventions`, compared, and checked against the
    oracle; `values(interventions)` computes a run (default `intervened_values` on x: the page
    passes its cache, keyed by the interventions)."""
    interventions = tuple(interventions)
    values = values or (lambda chosen: intervened_values(config, params, x, chosen, seed))
    before, after = values(()), values(interventions)
    oracle = oracle_values(params, x, interventions, config, seed)
    return WhatIf(
        interventions, before, after, change_of(before, after), difference_of(after, oracle)
    )

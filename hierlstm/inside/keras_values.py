"""Every layer's values for one input, from the Keras model itself: the `folded` variant built
from the parameters, a sub-model reading its named layers' outputs, and each LSTM's cell stepped
over its sequence with its gates computed from the cell's own weights (`cell_steps`). The names
and shapes are `hierlstm.model.reference.reference_layers`'s, so the two compare layer by layer.
They come as `LayerValues`, which a notebook shows as a table, a row per layer."""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

from hierlstm.config import RunConfig
from hierlstm.i18n import DEFAULT_LANGUAGE, t
from hierlstm.model.builders import build_model
from hierlstm.model.params import Params, find_layer
from hierlstm.model.reference import GATES, LAYERS, LSTM_VALUES  # noqa: F401 (LAYERS re-exported)
from hierlstm.model.trace_notes import axes_text
from hierlstm.tables import Shown, Table, named

# Each value's axes, as the Shape trace names them (the inner steps run down the pooled height).
AXES = {
    "conv": ("batch", "height", "time", "channels"),
    "pool": ("batch", "height", "time", "channels"),
    "permute": ("batch", "time", "height", "channels"),
    **{f"inner_{name}": ("batch", "time", "height", "units") for name in LSTM_VALUES},
    "summary": ("batch", "time", "units"),
    **{f"outer_{name}": ("batch", "time", "units") for name in LSTM_VALUES},
    "model_outer_h": ("batch", "time", "units"),
}


class LayerValues(Shown, dict):
    """`layer_values`' answer: {name: float64 array} in `LAYERS`' order, then the outer LSTM
    layer's own output (`model_outer_h`). A notebook shows it as a table, a row per value: its
    axes, shape and range (`show("zh")`: in Chinese); `hierlstm.charts.values_figures` draws
    it."""

    def table(self, lang: str = DEFAULT_LANGUAGE):
        rows = [
            {
                "layer": name,
                "axes": axes_text(AXES.get(name, ()), lang),
                "shape": str(value.shape),
                "min": float(value.min()),
                "mean": float(value.mean()),
                "max": float(value.max()),
            }
            for name, value in self.items()
        ]
        return named(rows, "inside.col.", lang)

    def tables(self, lang: str = DEFAULT_LANGUAGE) -> list[Table]:
        return [Table(t("inside.section.layers", lang), self.table(lang))]


def cell_steps(cell, sequences) -> dict[str, np.ndarray]:
    """(N, S, D) -> {gate or state: (N, S, U)}: a Keras `LSTMCell` called step by step from zero
    states for c and h; its gates (which it does not return) from its kernel, recurrent kernel
    and bias in Keras's order i, f, g, o."""
    count, steps = sequences.shape[0], sequences.shape[1]
    units = cell.units
    hidden = ops.zeros((count, units))
    state = ops.zeros((count, units))
    values = {name: [] for name in LSTM_VALUES}
    for step in range(steps):
        inputs = sequences[:, step]  # (N, D)
        z = ops.matmul(inputs, cell.kernel) + ops.matmul(hidden, cell.recurrent_kernel)
        z = z + cell.bias  # (N, 4U)
        gates = ops.split(z, 4, axis=-1)
        activations = (ops.sigmoid, ops.sigmoid, ops.tanh, ops.sigmoid)
        for name, gate, activation in zip(GATES, gates, activations, strict=True):
            values[name].append(activation(gate))
        hidden, (hidden, state) = cell(inputs, [hidden, state])
        values["c"].append(state)
        values["h"].append(hidden)
    return {
        name: np.stack([ops.convert_to_numpy(value) for value in steps_of], axis=1)
        for name, steps_of in values.items()
    }


def layer_values(config: RunConfig, params: Params, x: np.ndarray) -> LayerValues:
    """Every layer's values of `config`'s model (built as `folded`, in float32) on `x`.

    Args:
        config: the geometry (height, filters, pool height, units); batch and time come from x.
        params: the parameters (`hierlstm.init_params`, or a learning run's `Curve.params`).
        x: (batch, height, time, 1) float32, e.g. `hierlstm.inside.sound_input(...)[None, :, :,
            None]`.

    Returns:
        `LayerValues`: float64 arrays keyed and shaped as `reference_layers`: conv (batch,
        height, time, channels) ... outer_h (batch, time, outer units).
    """
    config = config.replace(variant="folded", precision="float32", xla=False)
    model = build_model(config, params)
    names = ("conv", "pool", "permute", "unfold", "outer_lstm")
    probe = keras.Model(model.input, [find_layer(model, name).output for name in names])
    conv, pool, permute, summary, outer_h = probe(ops.convert_to_tensor(x, "float32"))
    batch, time, rows, channels = permute.shape
    folded = ops.reshape(permute, (batch * time, rows, channels))  # (B*T, R, C)
    values = {"conv": conv, "pool": pool, "permute": permute, "summary": summary}
    inner = cell_steps(find_layer(model, "inner_lstm").cell, folded)
    for name, value in inner.items():  # (B*T, R, inner) -> (B, T, R, inner)
        values[f"inner_{name}"] = value.reshape(batch, time, rows, -1)
    outer = cell_steps(find_layer(model, "outer_lstm").cell, summary)
    values.update({f"outer_{name}": value for name, value in outer.items()})
    values["model_outer_h"] = outer_h  # the layer's own output, beside the stepped cell's
    return LayerValues(
        {
            name: np.asarray(ops.convert_to_numpy(values[name]), np.float64)
            for name in (*LAYERS, "model_outer_h")
        }
    )

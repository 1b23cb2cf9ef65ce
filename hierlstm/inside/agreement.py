"""The variants agree on values: one variant built from the parameters at a precision, run on
one input, and the absolute difference from the numpy oracle at each layer output it has (every
Keras variant has the conv and the pooling; the summary where it is a layer of its own; the
output always). In float32 the differences are about 1e-7; in 16 bits they show where precision
is lost."""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

from hierlstm.config import RunConfig
from hierlstm.model.builders import build_model
from hierlstm.model.params import Params

# layer output -> (the layers that give it in some variant, the oracle's name for it)
OUTPUTS = {
    "conv": (("conv",), "conv"),  # (B, H, T, C)
    "pool": (("pool",), "pool"),  # (B, R, T, C)
    "summary": (("unfold", "summarise"), "summary"),  # (B, T, inner)
    "output": ((), "outer_h"),  # (B, T, outer): the model's own output
}


def _layer_outputs(model) -> dict[str, object]:
    names = {layer.name: layer for layer in model.layers}
    found = {}
    for output, (layers, _oracle) in OUTPUTS.items():
        layer = next((names[name] for name in layers if name in names), None)
        if layer is not None:
            found[output] = layer.output
    found["output"] = model.output
    return found


def variant_differences(
    config: RunConfig, params: Params, x: np.ndarray, oracle: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """`config.variant` at `config.precision` on x (B, H, T, 1): {layer output: |variant -
    oracle|} in float64, each the oracle's shape (`reference_layers`'s `oracle`), for the layer
    outputs this variant has (`OUTPUTS`)."""
    model = build_model(config, params)
    outputs = _layer_outputs(model)
    probe = keras.Model(model.input, list(outputs.values()))
    values = probe(ops.convert_to_tensor(x, "float32"))
    return {
        name: np.abs(
            np.asarray(ops.convert_to_numpy(ops.cast(value, "float32")), np.float64)
            - oracle[OUTPUTS[name][1]]
        )
        for name, value in zip(outputs, values, strict=True)
    }

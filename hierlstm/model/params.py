"""The variant-independent parameters: create them, load them into a model, read them back. Gate
order inside the LSTM matrices is Keras's: i, f, c, o."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from hierlstm.config import RunConfig

Params = Mapping[str, np.ndarray]

# Parameter name -> (layer role, variable attribute). A role is found by layer name in the model:
# "conv" is the Conv2D layer, "inner"/"outer" the layer or cell that holds that LSTM's weights.
PARAM_SLOTS = {
    "conv_kernel": ("conv", "kernel"),
    "conv_bias": ("conv", "bias"),
    "inner_kernel": ("inner", "kernel"),
    "inner_recurrent_kernel": ("inner", "recurrent_kernel"),
    "inner_bias": ("inner", "bias"),
    "outer_kernel": ("outer", "kernel"),
    "outer_recurrent_kernel": ("outer", "recurrent_kernel"),
    "outer_bias": ("outer", "bias"),
}


def param_shapes(config: RunConfig) -> dict[str, tuple[int, ...]]:
    """The shape of every parameter for `config`'s geometry."""
    k, filters = config.kernel_size, config.filters
    inner, outer = config.inner_units, config.outer_units
    return {
        "conv_kernel": (k, k, 1, filters),
        "conv_bias": (filters,),
        "inner_kernel": (filters, 4 * inner),
        "inner_recurrent_kernel": (inner, 4 * inner),
        "inner_bias": (4 * inner,),
        "outer_kernel": (inner, 4 * outer),
        "outer_recurrent_kernel": (outer, 4 * outer),
        "outer_bias": (4 * outer,),
    }


def init_params(config: RunConfig, seed: int = 0) -> dict[str, np.ndarray]:
    """Random float32 parameters, Glorot-uniform matrices and biases drawn away from zero (the
    forget gate's +1), so a test catches a dropped or misplaced bias."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in param_shapes(config).items():
        if name.endswith("bias"):
            values = rng.uniform(-0.5, 0.5, size=shape)
            if name != "conv_bias":
                units = shape[0] // 4
                values[units : 2 * units] += 1.0  # forget gate
        else:
            fan_in = int(np.prod(shape[:-1]))
            limit = np.sqrt(6.0 / (fan_in + shape[-1]))
            values = rng.uniform(-limit, limit, size=shape)
        params[name] = values.astype(np.float32)
    return params


def find_layer(model, name: str):
    """The layer (or cell) called `name` anywhere inside `model`, wrappers and cells included."""
    for layer in model._flatten_layers(include_self=False, recursive=True):
        if layer.name == name:
            return layer
    raise KeyError(f"model {model.name!r} has no layer named {name!r}")


def _weight_owner(model, role: str):
    """The Conv2D layer or the LSTM cell holding `role`'s weights."""
    if role == "conv":
        return find_layer(model, "conv")
    for name in (f"{role}_cell", f"{role}_lstm"):
        try:
            layer = find_layer(model, name)
        except KeyError:
            continue
        return getattr(layer, "cell", layer)
    raise KeyError(f"model {model.name!r} has no {role} LSTM (looked for {role}_cell, {role}_lstm)")


def param_variables(model) -> dict:
    """Parameter name -> the model's variable holding it."""
    return {
        name: getattr(_weight_owner(model, role), attribute)
        for name, (role, attribute) in PARAM_SLOTS.items()
    }


def load_params(model, params: Params) -> None:
    """Assigns `params` to `model`'s variables, checking every name and shape (`assign` takes a
    numpy array on every Keras backend)."""
    variables = param_variables(model)
    missing = set(variables) - set(params)
    if missing:
        raise ValueError(f"params lack {', '.join(sorted(missing))}.")
    for name, variable in variables.items():
        value = np.asarray(params[name], dtype=np.float32)
        if tuple(value.shape) != tuple(variable.shape):
            raise ValueError(
                f"{name} has shape {tuple(value.shape)} but the model expects "
                f"{tuple(variable.shape)}."
            )
        variable.assign(value)


def read_params(model) -> dict[str, np.ndarray]:
    """The model's parameters as float32 numpy arrays, keyed as `init_params` keys them, on any
    Keras backend (a JAX array, a torch tensor on any device, a TensorFlow variable)."""
    from keras import ops  # here: init_params and the shapes need no Keras

    return {
        name: np.asarray(ops.convert_to_numpy(variable), dtype=np.float32)
        for name, variable in param_variables(model).items()
    }

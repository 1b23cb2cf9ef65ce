"""The parts every variant shares, in Keras layers only.

input   (B, H, T, 1)
conv    (B, H, T, C)        Conv2D(filters, k x k, padding same)
pool    (B, R, T, C)        MaxPooling2D((pool_height, 1)), pooled height R = H // pool_height
permute (B, T, R, C)        every time step holds an R-step sub-sequence
...     (B, T, inner)       the summariser: what the variants differ in
outer_lstm (B, T, outer)
"""

from __future__ import annotations

import keras

from hierlstm.config import RunConfig
from hierlstm.model.cudnn import use_cudnn_argument


def trunk(config: RunConfig, time_steps=None):
    """The input and the permuted (B, T, R, C) tensor shared by every variant."""
    policy = config.precision
    inputs = keras.Input(shape=(config.height, time_steps, 1), name="input")  # (B, H, T, 1)
    x = keras.layers.Conv2D(
        config.filters, config.kernel_size, padding="same", name="conv", dtype=policy
    )(inputs)  # (B, H, T, 1) -> (B, H, T, C)
    x = keras.layers.MaxPooling2D((config.pool_height, 1), name="pool", dtype=policy)(
        x
    )  # -> (B, R, T, C)
    x = keras.layers.Permute((2, 1, 3), name="permute", dtype=policy)(x)  # -> (B, T, R, C)
    return inputs, x


def lstm_layer(config: RunConfig, units: int, name: str, **kwargs) -> keras.layers.LSTM:
    """A `keras.layers.LSTM` of `config`: its dtype policy, and the `use_cudnn` argument of this
    process's backend (`hierlstm.model.cudnn.use_cudnn_argument`)."""
    return keras.layers.LSTM(
        units,
        use_cudnn=use_cudnn_argument(config, keras.backend.backend()),
        name=name,
        dtype=config.precision,
        **kwargs,
    )


def outer_lstm(config: RunConfig, summaries):
    """(B, T, inner) -> (B, T, outer): the outer LSTM, every step's output."""
    return lstm_layer(config, config.outer_units, "outer_lstm", return_sequences=True)(summaries)

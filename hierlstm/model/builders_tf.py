"""The builders of the variants that call TensorFlow itself (`tf.vectorized_map`, the fused layer's
loops), so run on TensorFlow only; the contract is `hierlstm.model.builders`'s."""

from __future__ import annotations

import keras

from hierlstm.config import RunConfig
from hierlstm.model.fused import FusedHierarchicalLSTM
from hierlstm.model.layers_tf import VectorizedSummariser
from hierlstm.model.trunk import lstm_layer, outer_lstm, trunk


def build_vectorized_map(config: RunConfig) -> keras.Model:
    """The answer's custom-loop advice: `tf.vectorized_map` over time applying the inner LSTM."""
    inputs, x = trunk(config)
    inner = lstm_layer(config, config.inner_units, "inner_lstm")
    summaries = VectorizedSummariser(inner, name="summarise", dtype=config.precision)(
        x
    )  # (B, T, R, C) -> (B, T, inner)
    return keras.Model(inputs, outer_lstm(config, summaries), name="vectorized_map")


def build_fused(config: RunConfig, layer_class=FusedHierarchicalLSTM) -> keras.Model:
    """The whole model as one hand-written layer shaped for a CPU (see `hierlstm.model.fused`):
    (B, H, T, 1) -> (B, T, outer), same parameters (`conv`, `inner_cell`, `outer_cell`).
    `layer_class` lets benchmarks.model.fused_ablation swap in a subclass with one choice undone."""
    inputs = keras.Input(shape=(config.height, None, 1), name="input")  # (B, H, T, 1)
    outputs = layer_class(
        config.filters,
        config.kernel_size,
        config.pool_height,
        config.inner_units,
        config.outer_units,
        name="fused_lstm",
        dtype=config.precision,
    )(inputs)  # (B, H, T, 1) -> (B, T, outer)
    return keras.Model(inputs, outputs, name="fused")

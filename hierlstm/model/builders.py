"""One builder per variant of `hierlstm.registry.VARIANTS`, and `build_model`.

Builder contract (written once, here): `builder(config) -> keras.Model` mapping
(batch, height, time, 1) float32 to (batch, time, outer_units) in the config's compute dtype.
Every layer is named; the layers holding parameters are called `conv` and `inner_*`/`outer_*`
(see `params.PARAM_SLOTS`), so one parameter set loads into every variant. Every layer gets the
config's dtype policy (never a global one). Builders create layers, nothing else: no weights
are loaded and nothing is run.

The shared trunk (all variants):
    input   (B, H, T, 1)
    conv    (B, H, T, C)        Conv2D(filters, k x k, padding same)
    pool    (B, R, T, C)        MaxPooling2D((pool_height, 1)), R = H // pool_height
    permute (B, T, R, C)        every time step now holds an R-row sub-sequence
then a summariser (B, T, R, C) -> (B, T, inner_units), the part the variants differ in, and
    outer_lstm (B, T, outer_units)
"""

from __future__ import annotations

import sys

import keras

from hierlstm.config import RunConfig
from hierlstm.model.cudnn import use_cudnn_argument
from hierlstm.model.fused import FusedHierarchicalLSTM
from hierlstm.model.layers import FoldTime, NestedCell, UnfoldTime, VectorizedSummariser
from hierlstm.model.params import load_params
from hierlstm.registry import VARIANTS


def _trunk(config: RunConfig, time_steps=None):
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


def _outer_lstm(config: RunConfig, summaries):
    return keras.layers.LSTM(
        config.outer_units,
        return_sequences=True,
        use_cudnn=use_cudnn_argument(config),
        name="outer_lstm",
        dtype=config.precision,
    )(summaries)  # (B, T, inner) -> (B, T, outer)


def build_nested(config: RunConfig) -> keras.Model:
    """The asker's design: `RNN` over time whose custom cell runs the whole inner LSTM, then one
    outer `LSTMCell` step. (B, T, R, C) -> (B, T, outer) in one RNN."""
    inputs, x = _trunk(config)
    cell = NestedCell(
        config.inner_units, config.outer_units, name="nested_cell", dtype=config.precision
    )
    outputs = keras.layers.RNN(
        cell, return_sequences=True, name="nested_rnn", dtype=config.precision
    )(x)  # (B, T, R, C) -> (B, T, outer)
    return keras.Model(inputs, outputs, name="nested")


def build_time_distributed(config: RunConfig) -> keras.Model:
    """The answer's fix, as Keras 3 runs it: `TimeDistributed(LSTM)` then `LSTM`.

    Built for the config's concrete time length: Keras 3 then calls the inner LSTM once per time
    step (T calls in the graph). With an unknown length its `vectorized_map` path maps over the
    batch axis instead of time (see `hierlstm.model.pitfalls`), so this variant never takes that
    path.
    """
    inputs, x = _trunk(config, time_steps=config.time_steps)
    inner = keras.layers.LSTM(
        config.inner_units,
        use_cudnn=use_cudnn_argument(config),
        name="inner_lstm",
        dtype=config.precision,
    )
    summaries = keras.layers.TimeDistributed(inner, name="summarise", dtype=config.precision)(
        x
    )  # (B, T, R, C) -> T calls of (B, R, C) -> (B, inner) -> (B, T, inner)
    return keras.Model(inputs, _outer_lstm(config, summaries), name="time_distributed")


def _folded(config: RunConfig, summariser, name: str) -> keras.Model:
    inputs, x = _trunk(config)
    folded = FoldTime(name="fold", dtype=config.precision)(x)  # (B, T, R, C) -> (B*T, R, C)
    summaries = summariser(folded)  # (B*T, R, C) -> (B*T, inner)
    summaries = UnfoldTime(name="unfold", dtype=config.precision)(
        [summaries, x]
    )  # (B*T, inner) -> (B, T, inner)
    return keras.Model(inputs, _outer_lstm(config, summaries), name=name)


def build_folded(config: RunConfig) -> keras.Model:
    """Explicit fold: one `LSTM` call over all B*T sub-sequences, then unfold, then `LSTM`."""
    inner = keras.layers.LSTM(
        config.inner_units,
        use_cudnn=use_cudnn_argument(config),
        name="inner_lstm",
        dtype=config.precision,
    )
    return _folded(config, inner, "folded")


def build_shared_cell(config: RunConfig) -> keras.Model:
    """The answer's weight-sharing recipe as the summariser: `RNN(LSTMCell)` over the folded
    sub-sequences. Identical maths to `folded`, but an `RNN` around a bare cell never takes
    the cuDNN path."""
    cell = keras.layers.LSTMCell(config.inner_units, name="inner_cell", dtype=config.precision)
    inner = keras.layers.RNN(cell, name="inner_rnn", dtype=config.precision)
    return _folded(config, inner, "shared_cell")


def build_vectorized_map(config: RunConfig) -> keras.Model:
    """The answer's custom-loop advice: `tf.vectorized_map` over time applying the inner LSTM."""
    inputs, x = _trunk(config)
    inner = keras.layers.LSTM(
        config.inner_units,
        use_cudnn=use_cudnn_argument(config),
        name="inner_lstm",
        dtype=config.precision,
    )
    summaries = VectorizedSummariser(inner, name="summarise", dtype=config.precision)(
        x
    )  # (B, T, R, C) -> (B, T, inner)
    return keras.Model(inputs, _outer_lstm(config, summaries), name="vectorized_map")


def build_fused(config: RunConfig, layer_class=FusedHierarchicalLSTM) -> keras.Model:
    """The whole model as one hand-written layer shaped for a CPU (see `hierlstm.model.fused`):
    (B, H, T, 1) -> (B, T, outer), same parameters (`conv`, `inner_cell`, `outer_cell`).
    `layer_class` lets benchmarks/fused_ablation.py swap in a subclass with one choice undone."""
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


def builder_of(name: str):
    """The builder function of the registered variant `name`."""
    return getattr(sys.modules[__name__], VARIANTS[name].builder)


def build_model(config: RunConfig, params=None) -> keras.Model:
    """The model of `config.variant`: (batch, height, time, 1) -> (batch, time, outer_units).

    Loads `params` (see `hierlstm.model.params`) when given; otherwise the weights are Keras's own
    random initialisation.
    """
    model = builder_of(config.variant)(config)
    if params is not None:
        load_params(model, params)
    return model

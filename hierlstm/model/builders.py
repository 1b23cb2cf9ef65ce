"""One builder per variant of `hierlstm.registry.VARIANTS`, and `build_model`.

Builder contract: `builder(config) -> keras.Model`, (batch, height, time, 1) float32 -> (batch,
time, outer_units) in the config's compute dtype. Every layer is named and gets the config's dtype
policy; the parameter layers are `conv`, `inner_*`, `outer_*` (`params.PARAM_SLOTS`), so one
parameter set loads into every variant. Builders create layers only. These use `keras.ops` only and
run on every backend; vectorized_map and fused are TensorFlow's (`builders_tf`, imported when
built). Shared trunk (`trunk`): input (B, H, T, 1) -> conv -> pool -> permute (B, T, R, C) ->
summariser (B, T, inner) -> outer_lstm (B, T, outer)."""

from __future__ import annotations

import keras

from hierlstm.config import RunConfig, SettingError
from hierlstm.model.layers import FoldTime, NestedCell, UnfoldTime
from hierlstm.model.params import load_params
from hierlstm.model.trunk import lstm_layer, outer_lstm, trunk
from hierlstm.registry import BACKEND_RECORDS, PORTABLE, VARIANTS, conversion_refusal

TF_ONLY = ("build_vectorized_map", "build_fused")  # in hierlstm.model.builders_tf


def build_nested(config: RunConfig) -> keras.Model:
    """The asker's design: `RNN` over time whose custom cell runs the whole inner LSTM, then one
    outer `LSTMCell` step. (B, T, R, C) -> (B, T, outer) in one RNN."""
    inputs, x = trunk(config)
    cell = NestedCell(
        config.inner_units, config.outer_units, name="nested_cell", dtype=config.precision
    )
    outputs = keras.layers.RNN(
        cell, return_sequences=True, name="nested_rnn", dtype=config.precision
    )(x)  # (B, T, R, C) -> (B, T, outer)
    return keras.Model(inputs, outputs, name="nested")


def build_time_distributed(config: RunConfig) -> keras.Model:
    """The answer's fix, as Keras 3 runs it: `TimeDistributed(LSTM)` then `LSTM`. Built for the
    config's concrete time length: with an unknown one, Keras maps over the batch axis instead of
    time (`hierlstm.model.pitfalls`)."""
    inputs, x = trunk(config, time_steps=config.time_steps)
    inner = lstm_layer(config, config.inner_units, "inner_lstm")
    summaries = keras.layers.TimeDistributed(inner, name="summarise", dtype=config.precision)(
        x
    )  # (B, T, R, C) -> T calls of (B, R, C) -> (B, inner) -> (B, T, inner)
    return keras.Model(inputs, outer_lstm(config, summaries), name="time_distributed")


def _folded(config: RunConfig, summariser, name: str) -> keras.Model:
    inputs, x = trunk(config)
    folded = FoldTime(name="fold", dtype=config.precision)(x)  # (B, T, R, C) -> (B*T, R, C)
    summaries = summariser(folded)  # (B*T, R, C) -> (B*T, inner)
    summaries = UnfoldTime(name="unfold", dtype=config.precision)(
        [summaries, x]
    )  # (B*T, inner) -> (B, T, inner)
    return keras.Model(inputs, outer_lstm(config, summaries), name=name)


def build_folded(config: RunConfig) -> keras.Model:
    """Explicit fold: one `LSTM` call over all B*T sub-sequences, then unfold, then `LSTM`."""
    return _folded(config, lstm_layer(config, config.inner_units, "inner_lstm"), "folded")


def build_shared_cell(config: RunConfig) -> keras.Model:
    """The answer's weight-sharing recipe as the summariser: `RNN(LSTMCell)` over the folded
    sub-sequences. Identical maths to `folded`, but an `RNN` around a bare cell never takes
    the cuDNN path."""
    cell = keras.layers.LSTMCell(config.inner_units, name="inner_cell", dtype=config.precision)
    inner = keras.layers.RNN(cell, name="inner_rnn", dtype=config.precision)
    return _folded(config, inner, "shared_cell")


def builder_of(name: str):
    """The builder function of the registered variant `name`."""
    builder = VARIANTS[name].builder
    if VARIANTS[name].backends == PORTABLE:
        return globals()[builder]
    from hierlstm.model import builders_tf  # calls TensorFlow itself: imported only when asked

    return getattr(builders_tf, builder)


def backend_refusal(variant: str, backend: str) -> str:
    """One sentence when `variant` has no builder on Keras backend `backend`, else ""."""
    backends = VARIANTS[variant].backends
    if backend in backends:
        return ""
    if BACKEND_RECORDS[backend].exported:  # a runtime runs what tf2onnx converts
        return conversion_refusal(variant)
    return (
        f"variant {variant} runs on the {' and '.join(backends)} backend only (it calls "
        f"TensorFlow itself); this process's Keras backend is {backend}."
    )


def build_model(config: RunConfig, params=None) -> keras.Model:
    """The model of `config.variant`: (batch, height, time, 1) -> (batch, time, outer_units), with
    `params` loaded when given. Raises SettingError for a variant this backend cannot build."""
    if message := backend_refusal(config.variant, keras.backend.backend()):
        raise SettingError(message)
    model = builder_of(config.variant)(config)
    if params is not None:
        load_params(model, params)
    return model


def __getattr__(name: str):
    if name in TF_ONLY:  # `from hierlstm.model.builders import build_fused` still works
        from hierlstm.model import builders_tf

        return getattr(builders_tf, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""The Your model page's built-in examples, built at run time from the project's builders and
small Keras models, and saved as `.keras` files in a cache folder (none is committed): the
question's nested model, the answer's shared-cell recipe, an Embedding before a masked LSTM, a
Bidirectional GRU with reset_after=False, an LSTM with recurrent_dropout, and TimeDistributed over
an unknown time length."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import keras

from hierlstm.config import RunConfig
from hierlstm.model.builders import build_model
from hierlstm.model.trunk import lstm_layer, outer_lstm, trunk

FEATURES = 8  # of the small examples' inputs


def _question() -> keras.Model:
    return build_model(RunConfig(variant="nested"))  # (B, 36, T, 1) -> (B, T, 60)


def _shared_cell() -> keras.Model:
    return build_model(RunConfig(variant="shared_cell"))  # RNN(LSTMCell) over B*T sub-sequences


def _masked() -> keras.Model:
    tokens = keras.Input((None,), dtype="int32", name="tokens")  # (B, T), 0 = padding
    x = keras.layers.Embedding(100, 16, mask_zero=True, name="embedding")(tokens)  # (B, T, 16)
    x = keras.layers.LSTM(32, return_sequences=True, name="masked_lstm")(x)  # (B, T, 32)
    return keras.Model(tokens, keras.layers.Dense(4, name="head")(x), name="masked_lstm")


def _bidirectional_gru() -> keras.Model:
    inputs = keras.Input((None, FEATURES), name="features")  # (B, T, 8)
    gru = keras.layers.GRU(16, reset_after=False, return_sequences=True, name="gru")
    x = keras.layers.Bidirectional(gru, name="bidirectional")(inputs)  # (B, T, 32)
    return keras.Model(inputs, keras.layers.Dense(2, name="head")(x), name="bidirectional_gru")


def _recurrent_dropout() -> keras.Model:
    inputs = keras.Input((None, FEATURES), name="features")  # (B, T, 8)
    x = keras.layers.LSTM(32, recurrent_dropout=0.2, name="dropout_lstm")(inputs)  # (B, 32)
    return keras.Model(inputs, keras.layers.Dense(1, name="head")(x), name="recurrent_dropout")


def _time_distributed_unknown() -> keras.Model:
    """The answer's fix over an unknown time length: (B, 36, None, 1) -> (B, T, 60)."""
    config = RunConfig(variant="time_distributed")
    inputs, x = trunk(config)  # time None: (B, T, R, C)
    inner = keras.layers.TimeDistributed(
        lstm_layer(config, config.inner_units, "inner_lstm"), name="summarise"
    )(x)  # (B, T, R, C) -> (B, T, inner)
    return keras.Model(inputs, outer_lstm(config, inner), name="time_distributed_unknown")


EXAMPLES: dict[str, Callable[[], keras.Model]] = {
    "question": _question,
    "shared_cell": _shared_cell,
    "masked_lstm": _masked,
    "bidirectional_gru": _bidirectional_gru,
    "recurrent_dropout": _recurrent_dropout,
    "time_distributed_unknown": _time_distributed_unknown,
}


def examples_folder() -> Path:
    folder = Path(tempfile.gettempdir()) / f"hierlstm-examples-keras-{keras.__version__}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def example_path(name: str, folder: Path | None = None) -> Path:
    """The example's .keras file, built and saved on first use (atomically: a concurrent reader
    sees the whole file or none)."""
    path = (folder or examples_folder()) / f"{name}.keras"
    if not path.exists():
        partial = path.with_name(f"{name}.{os.getpid()}.partial.keras")
        EXAMPLES[name]().save(partial)
        os.replace(partial, path)
    return path

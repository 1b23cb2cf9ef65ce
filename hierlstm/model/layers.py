"""The custom layers of the portable variants, in Keras layers and `keras.ops` only, so each runs on
every backend (B batch, T time, R rows, C channels, U units). `VectorizedSummariser` is TensorFlow's
(`layers_tf`). Each is registered with Keras, so a saved variant loads wherever hierlstm is
imported (the Your model page's examples are saved variants)."""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="hierlstm")
class FoldTime(keras.layers.Layer):
    """(B, T, R, C) -> (B*T, R, C): every (batch, time) cell becomes one independent sequence."""

    def call(self, inputs):
        rows, channels = inputs.shape[2], inputs.shape[3]
        return ops.reshape(inputs, (-1, rows, channels))  # (B, T, R, C) -> (B*T, R, C)

    def compute_output_shape(self, input_shape):
        batch, time = input_shape[0], input_shape[1]
        folded = None if batch is None or time is None else batch * time
        return (folded, *input_shape[2:])


@keras.saving.register_keras_serializable(package="hierlstm")
class UnfoldTime(keras.layers.Layer):
    """[(B*T, U), reference (B, T, ...)] -> (B, T, U): splits the folded axis back apart,
    taking B and T from the reference tensor at run time."""

    def call(self, inputs):
        summaries, reference = inputs
        shape = ops.shape(reference)  # a symbolic size where the static one is unknown (TF)
        return ops.reshape(summaries, (shape[0], shape[1], summaries.shape[-1]))

    def compute_output_shape(self, input_shapes):
        summaries_shape, reference_shape = input_shapes
        return (reference_shape[0], reference_shape[1], summaries_shape[-1])


@keras.saving.register_keras_serializable(package="hierlstm")
class NestedCell(keras.layers.Layer):
    """The source question's cell: one outer step runs a whole inner LSTM. Step input (B, R, C) ->
    inner LSTM -> (B, inner) -> `LSTMCell(outer)` -> (B, outer), states [h, c] each (B, outer).
    Under `RNN` over T steps the dependent chain is T * R + T long."""

    def __init__(self, inner_units, outer_units, **kwargs):
        super().__init__(**kwargs)
        self.inner_units = inner_units
        self.inner_lstm = keras.layers.RNN(
            keras.layers.LSTMCell(inner_units, name="inner_cell", dtype=self.dtype_policy),
            name="inner_lstm",
            dtype=self.dtype_policy,
        )
        self.outer_cell = keras.layers.LSTMCell(
            outer_units, name="outer_cell", dtype=self.dtype_policy
        )
        self.state_size = self.outer_cell.state_size
        self.output_size = outer_units

    def get_config(self):
        config = super().get_config()
        return {**config, "inner_units": self.inner_units, "outer_units": self.output_size}

    def build(self, input_shape):  # input_shape: (B, R, C), one outer step
        self.inner_lstm.build(input_shape)
        self.outer_cell.build((input_shape[0], self.inner_units))

    def call(self, inputs, states, training=False):
        summary = self.inner_lstm(inputs, training=training)  # (B, R, C) -> (B, inner)
        return self.outer_cell(summary, states, training=training)  # -> (B, outer), [h, c]


def __getattr__(name: str):
    if name == "VectorizedSummariser":  # TensorFlow's own: imported only when asked for
        from hierlstm.model.layers_tf import VectorizedSummariser

        return VectorizedSummariser
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

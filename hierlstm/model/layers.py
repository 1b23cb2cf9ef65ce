"""The custom layers the variants are made of. Each is created once, in a builder, and says in
its docstring what shape it takes and returns (B batch, T time, R rows, C channels, U units)."""

from __future__ import annotations

import keras
import tensorflow as tf


class FoldTime(keras.layers.Layer):
    """(B, T, R, C) -> (B*T, R, C): every (batch, time) cell becomes one independent sequence."""

    def call(self, inputs):
        rows, channels = inputs.shape[2], inputs.shape[3]
        return tf.reshape(inputs, (-1, rows, channels))  # (B, T, R, C) -> (B*T, R, C)

    def compute_output_shape(self, input_shape):
        batch, time = input_shape[0], input_shape[1]
        folded = None if batch is None or time is None else batch * time
        return (folded, *input_shape[2:])


class UnfoldTime(keras.layers.Layer):
    """[(B*T, U), reference (B, T, ...)] -> (B, T, U): splits the folded axis back apart,
    taking B and T from the reference tensor at run time."""

    def call(self, inputs):
        summaries, reference = inputs
        shape = tf.shape(reference)
        return tf.reshape(summaries, (shape[0], shape[1], summaries.shape[-1]))

    def compute_output_shape(self, input_shapes):
        summaries_shape, reference_shape = input_shapes
        return (reference_shape[0], reference_shape[1], summaries_shape[-1])


class NestedCell(keras.layers.Layer):
    """The source question's cell: one outer time step runs a whole inner LSTM.

    Step input (B, R, C) -> inner LSTM over the R rows -> (B, inner_units) -> one
    `LSTMCell(outer_units)` step -> output (B, outer_units), states [h, c] each (B, outer_units).
    Wrapped in `RNN` over T steps, the dependent chain is T * R + T steps long.
    """

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

    def build(self, input_shape):  # input_shape: (B, R, C), one outer step
        self.inner_lstm.build(input_shape)
        self.outer_cell.build((input_shape[0], self.inner_units))

    def call(self, inputs, states, training=False):
        summary = self.inner_lstm(inputs, training=training)  # (B, R, C) -> (B, inner)
        return self.outer_cell(summary, states, training=training)  # -> (B, outer), [h, c]


class VectorizedSummariser(keras.layers.Layer):
    """(B, T, R, C) -> (B, T, inner_units) with `tf.vectorized_map` over the time axis.

    The inner LSTM is written for one time step, (B, R, C) -> (B, inner_units); `vectorized_map`
    (TensorFlow's pfor) turns that per-step program into one program over all T steps.
    """

    def __init__(self, inner_lstm, **kwargs):
        super().__init__(**kwargs)
        self.inner_lstm = inner_lstm

    def build(self, input_shape):  # (B, T, R, C)
        self.inner_lstm.build((input_shape[0], *input_shape[2:]))

    def call(self, inputs):
        by_time = tf.transpose(inputs, (1, 0, 2, 3))  # (B, T, R, C) -> (T, B, R, C)
        summaries = tf.vectorized_map(self.inner_lstm, by_time)  # -> (T, B, inner)
        return tf.transpose(summaries, (1, 0, 2))  # -> (B, T, inner)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[1], self.inner_lstm.units)

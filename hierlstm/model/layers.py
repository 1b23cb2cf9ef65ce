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
    (TensorFlow's pfor) turns that per-step program into one program over all T steps: an LSTM
    whose batch is T*B. TensorFlow cannot differentiate the while-loop pfor converts (its
    gradient asks for shapes pfor leaves unknown: "Cannot convert a partially known TensorShape
    to a Tensor"), so the backward pass is taken on that program written out: the inner LSTM
    run again over the (T*B, R, C) fold, and its gradient. A training step of this variant so
    runs the inner LSTM's forward pass twice.
    """

    def __init__(self, inner_lstm, **kwargs):
        super().__init__(**kwargs)
        self.inner_lstm = inner_lstm

    def build(self, input_shape):  # (B, T, R, C)
        self.inner_lstm.build((input_shape[0], *input_shape[2:]))

    def call(self, inputs):
        by_time = tf.transpose(inputs, (1, 0, 2, 3))  # (B, T, R, C) -> (T, B, R, C)
        summaries = self._summarise(by_time)  # -> (T, B, inner)
        return tf.transpose(summaries, (1, 0, 2))  # -> (B, T, inner)

    def _summarise(self, by_time):
        """(T, B, R, C) -> (T, B, inner) by vectorized_map; its gradient through the fold."""
        inner_lstm, units = self.inner_lstm, self.inner_lstm.units

        @tf.custom_gradient
        def summarise(by_time):
            summaries = tf.vectorized_map(inner_lstm, by_time)  # (T, B, R, C) -> (T, B, inner)

            def backward(upstream, variables=None):  # upstream (T, B, inner)
                rows, channels = by_time.shape[2], by_time.shape[3]
                folded = tf.reshape(by_time, (-1, rows, channels))  # -> (T*B, R, C)
                with tf.GradientTape() as tape:
                    tape.watch(folded)
                    refolded = inner_lstm(folded)  # -> (T*B, inner)
                grads = tape.gradient(
                    refolded,
                    [folded, *(variables or [])],
                    output_gradients=tf.reshape(upstream, (-1, units)),  # -> (T*B, inner)
                )
                return tf.reshape(grads[0], tf.shape(by_time)), grads[1:]

            return summaries, backward

        return summarise(by_time)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[1], self.inner_lstm.units)

"""`VectorizedSummariser`, the vectorized_map variant's layer; TensorFlow only."""

from __future__ import annotations

import keras
import tensorflow as tf


class VectorizedSummariser(keras.layers.Layer):
    """(B, T, R, C) -> (B, T, inner_units): the one-step inner LSTM (B, R, C) -> (B, inner) under
    `tf.vectorized_map` over time, i.e. one LSTM of batch T*B. TensorFlow cannot differentiate the
    while-loop pfor makes, so the gradient reruns the inner LSTM over the (T*B, R, C) fold."""

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

"""Backpropagation through time written out for the `fused` layer's outer LSTM, the way cuDNN
structures it, so a training step of `fused` does not pay for TensorFlow's generic gradient of
a while-loop (B batch, T time, I input size, U units).

TensorFlow's gradient of a `tf.while_loop` replays the loop backwards with every forward op's
gradient inside it: per step the gradient of the [x_t, h] @ [W; U] matmul (two matmuls: one
for the inputs, one accumulating the weights' gradient), the gradients of the TensorArray
reads and writes, and a stack of every intermediate the forward loop pushed. Only one product
is really sequential: the gradient reaching h_{t-1} through the recurrent kernel. So here:

- the forward loop keeps each step's gate activations (i, f, g, o) and cell state in two
  TensorArrays, (T, B, 4U) and (T, B, U);
- the backward loop runs t = T-1 .. 0 carrying (dh, dc) and does one (B, 4U) @ (4U, U) matmul
  per step, writing the gates' pre-activation gradients dZ (T, B, 4U);
- after it, three large matmuls over all T*B rows at once give the input gradient dX = dZ W^T
  and the weight gradients dW = X^T dZ, dU = H_{t-1}^T dZ; the bias gradient is a sum.

Gates follow `hierlstm.model.fused.halved_lstm_step`: the i, f, o pre-activations are halved,
a = 0.5 + 0.5 tanh(z), so da/dz = 2 a (1 - a); the candidate g = tanh(z), dg/dz = 1 - g^2.
The layer uses this only when training (`training=True`); inference runs the plain loop. The
gradient check (`hierlstm.model.gradcheck`) compares it with the float64 oracle like every
variant's.
"""

from __future__ import annotations

import tensorflow as tf


def _gates(preactivations, units: int):
    """(B, 4U) halved pre-activations -> i, f, g, o (B, U) each."""
    z = preactivations
    input_gate = 0.5 + 0.5 * tf.tanh(z[:, :units])
    forget_gate = 0.5 + 0.5 * tf.tanh(z[:, units : 2 * units])
    candidate = tf.tanh(z[:, 2 * units : 3 * units])
    output_gate = 0.5 + 0.5 * tf.tanh(z[:, 3 * units :])
    return input_gate, forget_gate, candidate, output_gate


def outer_lstm_with_bptt(summaries, kernel, recurrent_kernel, bias):
    """The outer LSTM, every step's output: (T, B, I) -> (T, B, U), from halved weights kernel
    (I, 4U), recurrent_kernel (U, 4U), bias (4U,); its gradient is the written-out BPTT above."""

    @tf.custom_gradient
    def lstm(summaries, kernel, recurrent_kernel, bias):
        units = recurrent_kernel.shape[0]
        dtype = summaries.dtype
        time_steps, batch = tf.shape(summaries)[0], tf.shape(summaries)[1]
        stacked_kernel = tf.concat([kernel, recurrent_kernel], 0)  # (I+U, 4U)

        def array(width):  # one (B, width) tensor per time step
            return tf.TensorArray(dtype, size=time_steps, element_shape=(None, width))

        hidden_array, cell_array, gate_array = array(units), array(units), array(4 * units)

        def step(time, hidden, cell, hidden_array, cell_array, gate_array):
            step_input = tf.concat([summaries[time], hidden], 1)  # (B, I+U)
            i, f, g, o = _gates(step_input @ stacked_kernel + bias, units)  # (B, U) each
            cell = f * cell + i * g
            hidden = o * tf.tanh(cell)
            return (
                time + 1,
                hidden,
                cell,
                hidden_array.write(time, hidden),
                cell_array.write(time, cell),
                gate_array.write(time, tf.concat([i, f, g, o], 1)),
            )

        zeros = tf.zeros((batch, units), dtype)  # (B, U)
        _, _, _, hidden_array, cell_array, gate_array = tf.while_loop(
            lambda time, *_: time < time_steps,
            step,
            (0, zeros, zeros, hidden_array, cell_array, gate_array),
            maximum_iterations=time_steps,
        )
        outputs = hidden_array.stack()  # (T, B, U)
        cells = cell_array.stack()  # (T, B, U)
        gates = gate_array.stack()  # (T, B, 4U)

        def backward(upstream):  # upstream (T, B, U): the loss's gradient of every output
            previous_cells = tf.concat([zeros[None], cells[:-1]], 0)  # c_{t-1}: (T, B, U)

            def back_step(reverse, dh_next, dc_next, dz_array):
                time = time_steps - 1 - reverse
                # Gathered, then split: the strided slice gates[time, :, k*U:(k+1)*U] with a
                # loop-variable `time` gave wrong values under XLA (TensorFlow 2.21, CPU).
                i, f, g, o = tf.split(tf.gather(gates, time), 4, axis=1)  # (B, U) each
                cell, previous_cell = tf.gather(cells, time), tf.gather(previous_cells, time)
                dh = tf.gather(upstream, time) + dh_next
                tanh_cell = tf.tanh(cell)
                dc = dc_next + dh * o * (1 - tanh_cell * tanh_cell)
                dz = tf.concat(
                    [
                        dc * g * 2 * i * (1 - i),
                        dc * previous_cell * 2 * f * (1 - f),
                        dc * i * (1 - g * g),
                        dh * tanh_cell * 2 * o * (1 - o),
                    ],
                    1,
                )  # (B, 4U)
                dh_previous = tf.matmul(dz, recurrent_kernel, transpose_b=True)  # (B, U)
                return reverse + 1, dh_previous, dc * f, dz_array.write(reverse, dz)

            dz_array = array(4 * units)
            _, _, _, dz_array = tf.while_loop(
                lambda reverse, *_: reverse < time_steps,
                back_step,
                (0, zeros, zeros, dz_array),
                maximum_iterations=time_steps,
            )
            dz = tf.reshape(tf.reverse(dz_array.stack(), [0]), (-1, 4 * units))  # (T*B, 4U)
            inputs = tf.reshape(summaries, (-1, summaries.shape[-1]))  # (T*B, I)
            previous = tf.concat([zeros[None], outputs[:-1]], 0)  # h_{t-1}: (T, B, U)
            previous = tf.reshape(previous, (-1, units))  # (T*B, U)
            d_summaries = tf.reshape(
                tf.matmul(dz, kernel, transpose_b=True), tf.shape(summaries)
            )  # (T*B, 4U) @ (4U, I) -> (T, B, I)
            # The weights' gradients sum over all T*B rows: in float32 under a 16-bit policy,
            # as the per-step gradient TensorFlow would take adds T float32 terms.
            wide = [tf.cast(value, tf.float32) for value in (inputs, previous, dz)]
            d_kernel = tf.matmul(wide[0], wide[2], transpose_a=True)  # (I, 4U)
            d_recurrent = tf.matmul(wide[1], wide[2], transpose_a=True)  # (U, 4U)
            d_bias = tf.reduce_sum(wide[2], 0)  # (4U,)
            weights = (tf.cast(value, dtype) for value in (d_kernel, d_recurrent, d_bias))
            return d_summaries, *weights

        return outputs, backward

    return lstm(summaries, kernel, recurrent_kernel, bias)

"""The `fused` layer's backward pass written out the way cuDNN structures an LSTM's, since
TensorFlow's generic gradient of a `tf.while_loop` replays every forward op's gradient per step (B
batch, T time, I input, U units, R rows, N = T*B sequences, C channels).

Only the gradient reaching h_{t-1} is sequential, so the forward loop keeps each step's gates (T, B,
4U) and cell (T, B, U); the backward loop does one (B, 4U) @ (4U, U) matmul per step, writing dZ (T,
B, 4U); three large matmuls over all T*B rows then give dX = dZ W^T, dW = X^T dZ and dU = H_{t-1}^T
dZ. The inner LSTM and the XLA path's conv-and-pool are written out likewise. Weight gradients are
summed in float32 under a 16-bit policy. Gates are `halved_gates`': a = 0.5 + 0.5 tanh(z), so da/dz
= 2 a (1 - a). Used only when training."""

from __future__ import annotations

import tensorflow as tf


def materialised(tensor, runtime_one):
    """`tensor` / `runtime_one` (a 1 XLA cannot fold), so XLA computes `tensor` once: it duplicates
    cheap op chains into every consumer but not a divide, and XLA:CPU expands optimization barriers
    away before fusing. Exact: x / 1 == x."""
    return tensor / runtime_one


def in_forward_scope(backward):
    """`backward` run in the forward pass's name scope, as TensorFlow's own gradients are, so a
    profile (`hierlstm.profiling.xspace`) maps its ops to the layer."""
    scope = tf.get_current_name_scope()
    if not scope:
        return backward

    def scoped(*upstream):
        with tf.name_scope(scope + "/"):  # a trailing "/" re-enters the scope as it is
            return backward(*upstream)

    return scoped


def halved_gates(preactivations, units: int):
    """(N, 4U) pre-activations whose i, f, o columns are halved -> i, f, g, o (N, U) each, as
    sigmoid(z) = 0.5 + 0.5 tanh(z / 2)."""
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
            i, f, g, o = halved_gates(step_input @ stacked_kernel + bias, units)  # (B, U) each
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
            d_kernel = _wide_matmul(inputs, dz, dtype)  # (I, 4U)
            d_recurrent = _wide_matmul(previous, dz, dtype)  # (U, 4U)
            d_bias = tf.cast(tf.reduce_sum(tf.cast(dz, tf.float32), 0), dtype)  # (4U,)
            return d_summaries, d_kernel, d_recurrent, d_bias

        return outputs, in_forward_scope(backward)

    return lstm(summaries, kernel, recurrent_kernel, bias)


def _wide_matmul(left, right, dtype):
    """left^T @ right summed in float32 (the weights' gradients add up over every row), cast
    back to the compute dtype."""
    wide = tf.matmul(tf.cast(left, tf.float32), tf.cast(right, tf.float32), transpose_a=True)
    return tf.cast(wide, dtype)


def inner_lstm_with_bptt(sequences, kernel, recurrent_kernel, bias, under_xla=False):
    """The inner LSTM's last hidden state: (R, N, C) -> (N, U), R unrolled steps from a zero state,
    from halved kernel (C, 4U), recurrent_kernel (U, 4U), bias (4U,). Its gradient takes each row's
    share of the weights while that row's dz is fresh. `under_xla`: the cell gradient's row chain
    goes through `materialised`."""

    @tf.custom_gradient
    def lstm(sequences, kernel, recurrent_kernel, bias):
        rows, units, dtype = sequences.shape[0], recurrent_kernel.shape[0], sequences.dtype
        stacked_kernel = tf.concat([kernel, recurrent_kernel], 0)  # (C+U, 4U)
        # the first row starts from a zero state: only the input matmul, no forget gate
        i, f, g, o = halved_gates(sequences[0] @ kernel + bias, units)  # (N, U) each
        cell = i * g
        hidden = o * tf.tanh(cell)
        kept = [(i, f, g, o, cell, sequences[0])]  # per row: gates, cell, the matmul's input
        for row in range(1, rows):
            step_input = tf.concat([sequences[row], hidden], 1)  # (N, C+U)
            i, f, g, o = halved_gates(step_input @ stacked_kernel + bias, units)
            cell = f * cell + i * g
            hidden = o * tf.tanh(cell)
            kept.append((i, f, g, o, cell, step_input))

        def backward(upstream):  # upstream (N, U): the gradient of the last hidden state
            channels = sequences.shape[-1]
            dh, dc = upstream, None
            # 0 * w + 1: one, but not a constant XLA can fold (it does not fold x * 0 for floats)
            runtime_one = tf.cast(recurrent_kernel[0, 0], dtype) * 0 + 1 if under_xla else None
            d_rows, d_stacked, d_bias = [None] * rows, None, None
            for row in reversed(range(rows)):
                i, f, g, o, cell, step_input = kept[row]
                tanh_cell = tf.tanh(cell)
                dc_row = dh * o * (1 - tanh_cell * tanh_cell)
                dc = dc_row if dc is None else dc + dc_row
                d_forget = (
                    dc * kept[row - 1][4] * 2 * f * (1 - f) if row else tf.zeros_like(f)
                )  # the first row has no forget gate
                dz = tf.concat(
                    [
                        dc * g * 2 * i * (1 - i),
                        d_forget,
                        dc * i * (1 - g * g),
                        dh * tanh_cell * 2 * o * (1 - o),
                    ],
                    1,
                )  # (N, 4U)
                bias_share = tf.reduce_sum(tf.cast(dz, tf.float32), 0)  # (4U,)
                d_bias = bias_share if d_bias is None else d_bias + bias_share
                if row:
                    # [x_r, h] @ [W; U]: one matmul back to both, one for both weights' shares,
                    # taken while dz is in cache
                    d_input = tf.matmul(dz, stacked_kernel, transpose_b=True)  # (N, C+U)
                    d_rows[row], dh = d_input[:, :channels], d_input[:, channels:]
                    share = _wide_matmul(step_input, dz, tf.float32)  # (C+U, 4U)
                    dc = dc * f if runtime_one is None else materialised(dc * f, runtime_one)
                else:  # x_0 @ W alone: the kernel's rows only
                    d_rows[0] = tf.matmul(dz, kernel, transpose_b=True)  # (N, C)
                    share = tf.concat(
                        [
                            _wide_matmul(step_input, dz, tf.float32),  # (C, 4U)
                            tf.zeros((units, 4 * units), tf.float32),
                        ],
                        0,
                    )  # (C+U, 4U)
                d_stacked = share if d_stacked is None else d_stacked + share
            d_kernel, d_recurrent = d_stacked[:channels], d_stacked[channels:]
            weights = (tf.cast(value, dtype) for value in (d_kernel, d_recurrent, d_bias))
            return tf.stack(d_rows), *weights

        return hidden, in_forward_scope(backward)

    return lstm(sequences, kernel, recurrent_kernel, bias)


def pooled_taps(inputs, kernel, pool_height: int):
    """Conv2D (one input channel, 'same' padding, no bias) as k*k shifted multiply-adds from
    kernel (k, k, 1, C), then max-pool over `pool_height` rows: (B, H, T, 1) -> (R, T, B, C),
    with what the gradient needs: the features (R, p, T, B, C) and the k*k windows (R*p, T, B)."""
    k, channels, dtype = kernel.shape[0], kernel.shape[-1], kernel.dtype
    rows = inputs.shape[1] // pool_height
    batch, time_steps = tf.shape(inputs)[0], tf.shape(inputs)[2]
    image = tf.transpose(tf.cast(inputs[..., 0], dtype), (1, 2, 0))  # (H, T, B)
    before, after = (k - 1) // 2, k - 1 - (k - 1) // 2  # 'same' padding, as Keras pads
    image = tf.pad(image, [[before, after], [before, after], [0, 0]])  # (H+k-1, T+k-1, B)
    windows = [
        image[dy : dy + rows * pool_height, dx : dx + time_steps]  # (R*p, T, B)
        for dy in range(k)
        for dx in range(k)
    ]
    taps_kernel = tf.reshape(kernel, (k * k, channels))  # (k*k, C)
    features = None
    for tap, window in enumerate(windows):
        term = window[..., None] * taps_kernel[tap]  # (R*p, T, B, C)
        features = term if features is None else features + term
    features = tf.reshape(
        features, (rows, pool_height, time_steps, batch, channels)
    )  # (R, p, T, B, C)
    return tf.reduce_max(features, axis=1), features, windows  # pooled (R, T, B, C)


def pooled_taps_with_gradient(inputs, kernel, bias, pool_height: int):
    """`pooled_taps` plus the bias: (B, H, T, 1) -> (R, T, B, C). The kernel's gradient is one (k*k,
    M) @ (M, C) matmul over the M = R*p*T*B positions, where XLA's own is k*k reductions; a max-pool
    tie shares the gradient, as TensorFlow does."""

    @tf.custom_gradient
    def taps(inputs, kernel, bias):
        k, channels, dtype = kernel.shape[0], kernel.shape[-1], kernel.dtype
        height = inputs.shape[1]
        rows = height // pool_height
        batch, time_steps = tf.shape(inputs)[0], tf.shape(inputs)[2]
        before = (k - 1) // 2  # 'same' padding, as Keras pads
        pooled, features, windows = pooled_taps(inputs, kernel, pool_height)
        taps_kernel = tf.reshape(kernel, (k * k, channels))  # (k*k, C)

        def backward(upstream):  # upstream (R, T, B, C)
            winners = tf.cast(tf.equal(features, pooled[:, None]), dtype)  # (R, p, T, B, C)
            winners /= tf.reduce_sum(winners, axis=1, keepdims=True)
            d_features = tf.reshape(winners * upstream[:, None], (-1, channels))  # (M, C)
            patches = tf.reshape(tf.stack(windows, -1), (-1, k * k))  # (M, k*k)
            d_kernel = tf.reshape(_wide_matmul(patches, d_features, dtype), tf.shape(kernel))
            d_bias = tf.cast(tf.reduce_sum(tf.cast(upstream, tf.float32), (0, 1, 2)), dtype)
            d_patches = tf.matmul(d_features, taps_kernel, transpose_b=True)  # (M, k*k)
            d_patches = tf.reshape(d_patches, (rows * pool_height, time_steps, batch, k * k))
            d_image = None
            for tap in range(k * k):
                dy, dx = divmod(tap, k)
                placed = tf.pad(
                    d_patches[..., tap],
                    [[dy, height + k - 1 - dy - rows * pool_height], [dx, k - 1 - dx], [0, 0]],
                )  # back into the padded image: (H+k-1, T+k-1, B)
                d_image = placed if d_image is None else d_image + placed
            d_image = d_image[before : before + height, before : before + time_steps]  # (H, T, B)
            d_inputs = tf.cast(tf.transpose(d_image, (2, 0, 1))[..., None], inputs.dtype)
            return d_inputs, d_kernel, d_bias

        return pooled + bias, in_forward_scope(backward)

    return taps(inputs, kernel, bias)

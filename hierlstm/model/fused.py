"""The `fused` variant's layer: the whole model, conv to outer LSTM, in TensorFlow ops shaped for
XLA on a CPU (B batch, H height, T time, R rows, C channels, U units, N = T*B). Each choice is
measured by `benchmarks.model.fused_ablation`: under XLA the conv is k*k shifted multiply-adds fused
with the max-pool (XLA:CPU's generic convolution is slow); batch and time are folded time-major (t*B
+ b) so the summaries reach the outer loop without a transpose; one [x, h] @ [W; U] matmul per step,
with no hoisted input projection (writing and re-reading it costs more on a CPU than it saves);
sigmoid(z) = 0.5 + 0.5 tanh(z / 2), the halving folded into the weights (XLA:CPU's sigmoid is slower
than its tanh); under XLA the conv and the inner LSTM run on slices of the batch as independent
chains, one per intra-op thread (XLA:CPU runs a chain of small ops on one thread, independent ones
at once), and the outer LSTM on the whole batch."""

from __future__ import annotations

import itertools

import keras
import tensorflow as tf

from hierlstm.hardware.cpu import cpu_cores
from hierlstm.model.bptt import (
    halved_gates,
    inner_lstm_with_bptt,
    outer_lstm_with_bptt,
    pooled_taps,
    pooled_taps_with_gradient,
)


def compiling_with_xla() -> bool:
    """Whether the ops being traced are inside `tf.function(jit_compile=True)` (or a Keras
    `jit_compile` step). TensorFlow exposes this only through a private module."""
    try:
        from tensorflow.python.ops import control_flow_util
    except ImportError:  # a TensorFlow without it: take the path that is right without XLA
        return False
    return control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph())


MAX_CHAINS = 4  # each chain is its own conv and R unrolled steps: the program grows with them


def placed_on_a_cpu() -> bool:
    """Whether the ops traced here run on a CPU: the device scope inside the traced function names
    one, or names none and no GPU is visible (a `tf.device` around a tf.function's call is not seen
    while it traces). A GPU runs one stream: chains there would only be more, smaller kernels."""
    scope = tf.zeros(()).device  # what the enclosing `tf.device` asks for; "" when nothing
    if scope:
        return tf.DeviceSpec.from_string(scope).device_type == "CPU"
    return not tf.config.list_logical_devices("GPU")


def chain_count() -> int:
    """How many independent chains the conv and the inner LSTM run in under XLA: one per intra-op
    thread (TensorFlow's setting, else this process's cores), at most MAX_CHAINS."""
    threads = tf.config.threading.get_intra_op_parallelism_threads() or cpu_cores()
    return max(1, min(threads, MAX_CHAINS))


def in_chains(inputs, chains: int, summarise):
    """`summarise` (b, H, T, 1) -> (T, b, I) run on `chains` contiguous slices of the batch of
    (B, H, T, 1) (fewer when B is smaller), the results joined: -> (T, B, I). The slices share no
    op, so XLA's runtime can run them at once; B may be unknown until the function is compiled."""
    if inputs.shape[0] is not None:
        chains = min(chains, inputs.shape[0])
    if chains == 1:
        return summarise(inputs)
    batch = tf.shape(inputs)[0]
    bounds = [batch * part // chains for part in range(chains + 1)]
    parts = [summarise(inputs[low:high]) for low, high in itertools.pairwise(bounds)]
    return tf.concat(parts, 1)  # -> (T, B, I)


def halved_lstm_step(preactivations, cell, units: int):
    """One LSTM update from (N, 4U) pre-activations (i, f, c, o) whose i, f, o columns are halved.
    `cell` (N, U), or None for a zero state. Returns hidden (N, U), cell (N, U)."""
    input_gate, forget_gate, candidate, output_gate = halved_gates(preactivations, units)
    cell = input_gate * candidate if cell is None else forget_gate * cell + input_gate * candidate
    return output_gate * tf.tanh(cell), cell


class LSTMWeights(keras.layers.Layer):
    """One LSTM's parameters, named as `LSTMCell` names them: kernel (D, 4U), recurrent_kernel (U,
    4U), bias (4U,), gates i, f, c, o, with `LSTMCell`'s initialisers; computes nothing."""

    def __init__(self, units: int, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):  # (..., D)
        units = self.units
        self.kernel = self.add_weight(
            shape=(input_shape[-1], 4 * units), initializer="glorot_uniform", name="kernel"
        )
        self.recurrent_kernel = self.add_weight(
            shape=(units, 4 * units), initializer="orthogonal", name="recurrent_kernel"
        )
        self.bias = self.add_weight(
            shape=(4 * units,), initializer=self._bias_initializer, name="bias"
        )

    def get_config(self):
        return {**super().get_config(), "units": self.units}

    def _bias_initializer(self, shape, dtype=None):
        units = self.units
        return keras.ops.concatenate(
            [
                keras.ops.zeros((units,), dtype=dtype),
                keras.ops.ones((units,), dtype=dtype),  # forget gate
                keras.ops.zeros((2 * units,), dtype=dtype),
            ]
        )

    def halved_weights(self, dtype):
        """kernel (D, 4U), recurrent_kernel (U, 4U), bias (4U,) cast to `dtype`, their i, f,
        o gate columns halved for `halved_lstm_step`."""
        units = self.units
        scale = tf.concat(
            [tf.fill((2 * units,), 0.5), tf.ones((units,)), tf.fill((units,), 0.5)], 0
        )  # (4U,)
        scale = tf.cast(scale, dtype)
        return tuple(
            tf.cast(variable, dtype) * scale
            for variable in (self.kernel, self.recurrent_kernel, self.bias)
        )


class FusedHierarchicalLSTM(keras.layers.Layer):
    """The whole hierarchical LSTM as one layer: (B, H, T, 1) -> (B, T, outer_units), from the same
    parameters as the other variants (sublayers `conv`, `inner_cell`, `outer_cell`). R unrolled
    inner steps and one while-loop over time, so the graph does not grow with T."""

    def __init__(
        self,
        filters: int,
        kernel_size: int,
        pool_height: int,
        inner_units: int,
        outer_units: int,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.filters = filters
        self.kernel_size = kernel_size
        self.pool_height = pool_height
        self.inner_units = inner_units
        self.outer_units = outer_units
        self.conv = keras.layers.Conv2D(
            filters, kernel_size, padding="same", name="conv", dtype=self.dtype_policy
        )
        self.inner_cell = LSTMWeights(inner_units, name="inner_cell", dtype=self.dtype_policy)
        self.outer_cell = LSTMWeights(outer_units, name="outer_cell", dtype=self.dtype_policy)

    def build(self, input_shape):  # (B, H, T, 1)
        self.conv.build(input_shape)
        self.inner_cell.build((None, self.filters))
        self.outer_cell.build((None, self.inner_units))

    def get_config(self):
        return {
            **super().get_config(),
            "filters": self.filters,
            "kernel_size": self.kernel_size,
            "pool_height": self.pool_height,
            "inner_units": self.inner_units,
            "outer_units": self.outer_units,
        }

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[2], self.outer_units)

    def call(self, inputs, training=None):
        if training:  # the same outputs, the backward pass written out (hierlstm.model.bptt)
            summaries = in_chains(
                inputs, self.chains(), self.summaries_for_training
            )  # (B, H, T, 1) -> (T, B, inner)
            outputs = self.outer_lstm_for_training(summaries)  # -> (T, B, outer)
        else:
            summaries = in_chains(
                inputs, self.chains(), self.summaries
            )  # (B, H, T, 1) -> (T, B, inner)
            outputs = self.outer_lstm(summaries)  # (T, B, inner) -> (T, B, outer)
        outputs = tf.transpose(outputs, (1, 0, 2))  # (T, B, outer) -> (B, T, outer)
        outputs.set_shape((inputs.shape[0], inputs.shape[2], self.outer_units))  # static B, T
        return outputs

    # The steps, as methods so that `benchmarks/model/fused_ablation.py` can swap one at a time.

    def chains(self) -> int:
        """The independent chains of conv and inner LSTM: `chain_count()` under XLA on a CPU, else
        one."""
        return chain_count() if compiling_with_xla() and placed_on_a_cpu() else 1

    def summaries(self, inputs):
        """Conv, pool and inner LSTM: (b, H, T, 1) -> (R, T, b, C) -> (T, b, inner)."""
        return self.inner_lstm(self.pooled_rows(inputs))

    def summaries_for_training(self, inputs):
        """`summaries` with the backward passes written out: (b, H, T, 1) -> (T, b, inner)."""
        return self.inner_lstm_for_training(self.pooled_rows_for_training(inputs))

    def pooled_rows(self, inputs):
        """Conv2D + bias + MaxPooling2D((p, 1)): (B, H, T, 1) -> (R, T, B, C), rows first."""
        if compiling_with_xla():
            return self.pooled_rows_by_taps(inputs)
        return self.pooled_rows_by_conv(inputs)

    def pooled_rows_by_conv(self, inputs):
        """The Keras Conv2D, then max-pool: (B, H, T, 1) -> (R, T, B, C)."""
        features = self.conv(inputs)  # (B, H, T, 1) -> (B, H, T, C)
        pooled = tf.nn.max_pool2d(
            features, (self.pool_height, 1), (self.pool_height, 1), "VALID"
        )  # -> (B, R, T, C)
        return tf.transpose(pooled, (1, 2, 0, 3))  # -> (R, T, B, C)

    def pooled_rows_by_taps(self, inputs):
        """The conv as k*k shifted multiply-adds of the one input channel, then max-pool:
        (B, H, T, 1) -> (R, T, B, C); XLA fuses it all into one loop."""
        kernel = tf.cast(self.conv.kernel, self.compute_dtype)  # (k, k, 1, C)
        pooled, _, _ = pooled_taps(inputs, kernel, self.pool_height)  # -> (R, T, B, C)
        return pooled + tf.cast(self.conv.bias, self.compute_dtype)  # one bias for all p rows

    def lstm_weights(self, holder: LSTMWeights):
        """kernel (D, 4U), recurrent_kernel (U, 4U), bias (4U,) as `lstm_step` wants them."""
        return holder.halved_weights(self.compute_dtype)

    def lstm_step(self, preactivations, cell, units: int):
        """(N, 4U) pre-activations, cell (N, U) or None -> hidden (N, U), cell (N, U)."""
        return halved_lstm_step(preactivations, cell, units)

    def inner_lstm(self, rows):
        """Every sub-sequence's last inner hidden state: (R, T, B, C) -> (T, B, inner).

        R unrolled steps over all N = T*B sequences, one (N, C+U) @ (C+U, 4U) matmul each."""
        units = self.inner_units
        kernel, recurrent_kernel, bias = self.lstm_weights(self.inner_cell)
        stacked_kernel = tf.concat([kernel, recurrent_kernel], 0)  # -> (C+U, 4U)
        shape = tf.shape(rows)
        sequences = tf.reshape(rows, (rows.shape[0], -1, self.filters))  # -> (R, N, C)
        # the first step starts from a zero state, so it needs only the input matmul
        hidden, cell = self.lstm_step(sequences[0] @ kernel + bias, None, units)  # (N, U) each
        for row in range(1, rows.shape[0]):
            step_input = tf.concat([sequences[row], hidden], 1)  # -> (N, C+U)
            preactivations = step_input @ stacked_kernel + bias  # -> (N, 4U)
            hidden, cell = self.lstm_step(preactivations, cell, units)  # -> (N, U) each
        return tf.reshape(hidden, (shape[1], shape[2], units))  # (N, U) -> (T, B, U)

    def outer_lstm(self, summaries):
        """The outer LSTM over time: (T, B, inner) -> (T, B, outer), a `tf.while_loop` carrying (h,
        c)."""
        kernel, recurrent_kernel, bias = self.lstm_weights(self.outer_cell)
        stacked_kernel = tf.concat([kernel, recurrent_kernel], 0)  # -> (inner+U, 4U)

        def preactivations(time, hidden):  # [x_t, h] @ [W; U] + b -> (B, 4U)
            return tf.concat([summaries[time], hidden], 1) @ stacked_kernel + bias

        return self.outer_loop(summaries, preactivations)

    def pooled_rows_for_training(self, inputs):
        """`pooled_rows` with the taps' backward pass written out under XLA (without XLA the
        Keras Conv2D and its own gradient run): (B, H, T, 1) -> (R, T, B, C)."""
        if not compiling_with_xla():
            return self.pooled_rows_by_conv(inputs)
        kernel = tf.cast(self.conv.kernel, self.compute_dtype)  # (k, k, 1, C)
        bias = tf.cast(self.conv.bias, self.compute_dtype)  # (C,)
        return pooled_taps_with_gradient(inputs, kernel, bias, self.pool_height)

    def inner_lstm_for_training(self, rows):
        """`inner_lstm` with its backward pass written out: (R, T, B, C) -> (T, B, inner)."""
        shape = tf.shape(rows)
        sequences = tf.reshape(rows, (rows.shape[0], -1, self.filters))  # -> (R, N, C)
        kernel, recurrent_kernel, bias = self.lstm_weights(self.inner_cell)
        hidden = inner_lstm_with_bptt(
            sequences, kernel, recurrent_kernel, bias, under_xla=compiling_with_xla()
        )  # (N, U)
        return tf.reshape(hidden, (shape[1], shape[2], self.inner_units))  # -> (T, B, U)

    def outer_lstm_for_training(self, summaries):
        """`outer_lstm` with a hand-written backward pass: (T, B, inner) -> (T, B, outer)."""
        return outer_lstm_with_bptt(summaries, *self.lstm_weights(self.outer_cell))

    def outer_loop(self, summaries, preactivations):
        """The loop over time: `preactivations(time, hidden) -> (B, 4U)`; (T, B, inner) -> (T, B,
        outer). Sized by T, so XLA can also compile its gradient."""
        units = self.outer_units
        time_steps, batch = tf.shape(summaries)[0], tf.shape(summaries)[1]
        outputs = tf.TensorArray(self.compute_dtype, size=time_steps, element_shape=(None, units))

        def step(time, hidden, cell, outputs):
            hidden, cell = self.lstm_step(preactivations(time, hidden), cell, units)  # (B, U)
            return time + 1, hidden, cell, outputs.write(time, hidden)

        zeros = tf.zeros((batch, units), self.compute_dtype)  # (B, U)
        # maximum_iterations gives the gradient's per-step accumulators a size, without which
        # XLA cannot compile the backward pass.
        _, _, _, outputs = tf.while_loop(
            lambda time, *_: time < time_steps,
            step,
            (0, zeros, zeros, outputs),
            maximum_iterations=time_steps,
        )
        return outputs.stack()  # -> (T, B, U)

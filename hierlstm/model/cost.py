"""The analytic cost model: parameters, FLOPs and bytes from the geometry alone.

A multiply-add is 2 FLOPs; elementwise work is left out, so FLOPs are lower bounds dominated by
matrix products: Conv2D 'same' 2*k*k*in*filters per output position; MaxPool (p, 1) p - 1
comparisons per output; LSTM 2*4*units*(input + units) per step per sequence; permutes 0."""

from __future__ import annotations

import dataclasses

from hierlstm.config import RunConfig
from hierlstm.registry import VARIANTS

BYTES_PER_ELEMENT = {"float32": 4, "mixed_float16": 2, "mixed_bfloat16": 2}


def lstm_params(input_size: int, units: int) -> int:
    """kernel (input, 4U) + recurrent kernel (U, 4U) + bias (4U)."""
    return 4 * units * (input_size + units + 1)


def recurrent_flops(gates: int, input_size: int, units: int, steps: int, sequences: int) -> int:
    """A recurrent layer with `gates` matrix products per step (LSTM 4, GRU 3, SimpleRNN 1):
    2*gates*units*(input + units) per step per sequence."""
    return 2 * gates * units * (input_size + units) * steps * sequences


def lstm_flops(input_size: int, units: int, steps: int, sequences: int) -> int:
    return recurrent_flops(4, input_size, units, steps, sequences)


GATES = {"LSTM": 4, "GRU": 3, "SimpleRNN": 1}  # matrix products per step, by Keras layer


def dense_flops(input_size: int, units: int, positions: int) -> int:
    """A Dense layer applied at `positions` places (the product of its output's leading axes)."""
    return 2 * input_size * units * positions


def window_flops(window: int, channels_in: int, output_elements: int) -> int:
    """A convolution: 2*window*channels_in per output element (window: the kernel's size)."""
    return 2 * window * channels_in * output_elements


def pooling_flops(window: int, output_elements: int) -> int:
    """A pooling: window - 1 comparisons (or additions) per output element."""
    return (window - 1) * output_elements


def conv_params(config: RunConfig) -> int:
    return config.kernel_size * config.kernel_size * config.filters + config.filters


def conv_flops(config: RunConfig, batch: int, time: int) -> int:
    positions = batch * config.height * time  # one input channel
    return window_flops(config.kernel_size * config.kernel_size, 1, positions * config.filters)


def pool_flops(config: RunConfig, batch: int, time: int) -> int:
    return pooling_flops(config.pool_height, batch * config.pooled_height * time * config.filters)


def inner_lstm_flops(config: RunConfig, batch: int, time: int) -> int:
    """One inner LSTM over the sub-sequence (the pooled height) of every (batch, time) cell."""
    return lstm_flops(config.filters, config.inner_units, config.pooled_height, batch * time)


def outer_lstm_flops(config: RunConfig, batch: int, time: int) -> int:
    return lstm_flops(config.inner_units, config.outer_units, time, batch)


def total_params(config: RunConfig) -> int:
    return (
        conv_params(config)
        + lstm_params(config.filters, config.inner_units)
        + lstm_params(config.inner_units, config.outer_units)
    )


def model_flops(config: RunConfig, batch: int | None = None, time: int | None = None) -> int:
    """Analytic FLOPs of one forward pass (the same for every variant: same function)."""
    batch = config.batch_size if batch is None else batch
    time = config.time_steps if time is None else time
    return (
        conv_flops(config, batch, time)
        + pool_flops(config, batch, time)
        + inner_lstm_flops(config, batch, time)
        + outer_lstm_flops(config, batch, time)
    )


# A training step's FLOPs: the forward pass, then a backward pass of about twice its work (each
# matrix product's gradient is two products of its size: one for its input, one for its
# weights), the usual convention; the update's elementwise work is left out.
TRAINING_FLOPS_FACTOR = 3


def training_flops(config: RunConfig) -> int:
    """Analytic FLOPs of one training step: `TRAINING_FLOPS_FACTOR` forward passes."""
    return TRAINING_FLOPS_FACTOR * model_flops(config)


def activation_bytes(config: RunConfig) -> int:
    """Bytes of every layer output of one forward pass at the config's precision: an upper bound on
    what inference holds, since it frees most of them early."""
    batch, time, size = config.batch_size, config.time_steps, BYTES_PER_ELEMENT[config.precision]
    input_elements = batch * config.height * time
    conv_elements = input_elements * config.filters
    pooled_elements = batch * config.pooled_height * time * config.filters
    summaries = batch * time * config.inner_units
    outputs = batch * time * config.outer_units
    return 4 * input_elements + size * (conv_elements + 2 * pooled_elements + summaries + outputs)


def dependent_steps(config: RunConfig) -> int:
    """Length of the longest chain of sequential LSTM steps, from the registry's formula."""
    return VARIANTS[config.variant].chain(config.pooled_height, config.time_steps)


# Variables an optimizer keeps per parameter: Keras's SGD without momentum none, Adam two
# (first and second moments).
OPTIMIZER_SLOTS = {"sgd": 0, "adam": 2}
# Tensors one LSTM step keeps for its backward pass, per sequence, in units of U beyond its
# input: previous hidden and cell (2U), the four gate activations (4U), tanh of the new cell (U).
LSTM_KEPT_PER_UNIT = 7


def lstm_kept_elements(input_size: int, units: int, steps: int, sequences: int) -> int:
    """Elements one LSTM keeps for its backward pass: per step and sequence its input and
    `LSTM_KEPT_PER_UNIT` * units (a cuDNN kernel's reserve space holds the same gates)."""
    return (input_size + LSTM_KEPT_PER_UNIT * units) * steps * sequences


def kept_activation_bytes(config: RunConfig) -> int:
    """Bytes a training step keeps from its forward pass for its backward pass, at the config's
    precision (the input float32): the input, conv (B, H, T, C) and pooled (B, R, T, C) outputs,
    both LSTMs' `lstm_kept_elements` and the output. The same minimum for every variant; what a
    variant holds beyond it shows in the measured peak."""
    batch, time, size = config.batch_size, config.time_steps, BYTES_PER_ELEMENT[config.precision]
    input_elements = batch * config.height * time
    conv_elements = input_elements * config.filters
    pooled_elements = batch * config.pooled_height * time * config.filters
    inner = lstm_kept_elements(
        config.filters, config.inner_units, config.pooled_height, batch * time
    )
    outer = lstm_kept_elements(config.inner_units, config.outer_units, time, batch)
    outputs = batch * time * config.outer_units
    return 4 * input_elements + size * (conv_elements + pooled_elements + inner + outer + outputs)


def training_state_bytes(config: RunConfig) -> int:
    """Bytes a training step holds beside the weights: one float32 gradient per parameter and
    the optimizer's float32 slots (`OPTIMIZER_SLOTS`)."""
    return 4 * total_params(config) * (1 + OPTIMIZER_SLOTS[config.optimizer])


# Scalars each Keras 3 optimizer keeps beside its slots: its iteration count (int64) and its
# learning rate (float32); under mixed_float16 the LossScaleOptimizer around it keeps its own
# two and a step counter (int64) and the dynamic loss scale (float32).
OPTIMIZER_SCALAR_BYTES = 8 + 4
LOSS_SCALE_SCALAR_BYTES = 8 + 4 + 8 + 4
MEMORY_PARTS = ("parameters", "gradients", "optimizer", "kept_activations", "transient")


@dataclasses.dataclass(frozen=True)
class MemoryParts:
    """A training step's memory by part, in bytes (`memory_parts`); `total` is their sum."""

    parameters: int
    gradients: int
    optimizer: int
    kept_activations: int
    transient: int

    @property
    def total(self) -> int:
        return sum(self.as_dict().values())

    def as_dict(self) -> dict[str, int]:
        """Part name -> bytes, in `MEMORY_PARTS` order."""
        return {name: getattr(self, name) for name in MEMORY_PARTS}


def optimizer_bytes(config: RunConfig) -> int:
    """Bytes of the optimizer's variables: `OPTIMIZER_SLOTS` float32 copies of every parameter
    (Adam's two moments; SGD without momentum none) and its scalars (`OPTIMIZER_SCALAR_BYTES`,
    plus `LOSS_SCALE_SCALAR_BYTES` under mixed_float16)."""
    scalars = OPTIMIZER_SCALAR_BYTES
    if config.precision == "mixed_float16":
        scalars += LOSS_SCALE_SCALAR_BYTES
    return 4 * total_params(config) * OPTIMIZER_SLOTS[config.optimizer] + scalars


def transient_bytes(config: RunConfig) -> int:
    """The largest working set one layer's backward pass holds beyond the kept activations: its
    output and input gradients in the compute dtype (the pool's is the largest; the conv needs no
    input gradient)."""
    batch, time, size = config.batch_size, config.time_steps, BYTES_PER_ELEMENT[config.precision]
    conv = batch * config.height * time * config.filters  # (B, H, T, C)
    pooled = batch * config.pooled_height * time * config.filters  # (B, R, T, C)
    summaries = batch * time * config.inner_units  # (B, T, inner)
    outputs = batch * time * config.outer_units  # (B, T, outer)
    return max(
        4 * outputs,  # the loss's gradient of the output, float32
        size * (outputs + summaries),  # the outer LSTM
        size * (summaries + pooled),  # the inner LSTM: (B, T, inner) back to (B*T, R, C)
        size * (pooled + conv),  # the max-pool: (B, R, T, C) back to (B, H, T, C)
    )


def memory_parts(config: RunConfig) -> MemoryParts:
    """A training step's memory by part: parameters and gradients (float32 under every precision),
    optimizer (`optimizer_bytes`), kept_activations (`kept_activation_bytes`) and transient
    (`transient_bytes`). The total assumes all are alive at once: an upper bound of the ideal step.
    Keras LSTMs' seed-generator states (16 bytes each) are left out."""
    parameters = 4 * total_params(config)
    return MemoryParts(
        parameters=parameters,
        gradients=parameters,
        optimizer=optimizer_bytes(config),
        kept_activations=kept_activation_bytes(config),
        transient=transient_bytes(config),
    )

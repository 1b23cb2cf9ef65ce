"""The analytic cost model: parameters, FLOPs and activation bytes, from the geometry alone.

Conventions (a multiply-add counts as 2 FLOPs; elementwise work is left out, as is usual for
recurrent-network FLOP counts, so these are lower bounds dominated by the matrix products):
- Conv2D, 'same' padding:   2 * k * k * in_channels * filters per output position.
- MaxPooling (p, 1):        p - 1 comparisons per output element.
- LSTM:                     2 * 4 * units * (input + units) per step, times steps, times sequences
                            (the four gate matrices applied to [x_t, h_{t-1}]).
- Permute and reshapes:     0 (they move data, they do no arithmetic).

A training step's memory beyond the weights (`kept_activation_bytes`, `training_state_bytes`)
is counted from the same geometry; see each function for what it counts. `memory_parts` splits
a whole step's memory into its five parts, the total their sum.
"""

from __future__ import annotations

import dataclasses

from hierlstm.config import RunConfig
from hierlstm.registry import VARIANTS

BYTES_PER_ELEMENT = {"float32": 4, "mixed_float16": 2, "mixed_bfloat16": 2}


def lstm_params(input_size: int, units: int) -> int:
    """kernel (input, 4U) + recurrent kernel (U, 4U) + bias (4U)."""
    return 4 * units * (input_size + units + 1)


def lstm_flops(input_size: int, units: int, steps: int, sequences: int) -> int:
    return 2 * 4 * units * (input_size + units) * steps * sequences


def conv_params(config: RunConfig) -> int:
    return config.kernel_size * config.kernel_size * config.filters + config.filters


def conv_flops(config: RunConfig, batch: int, time: int) -> int:
    positions = batch * config.height * time
    return 2 * config.kernel_size * config.kernel_size * config.filters * positions


def pool_flops(config: RunConfig, batch: int, time: int) -> int:
    return (config.pool_height - 1) * batch * config.rows * time * config.filters


def inner_lstm_flops(config: RunConfig, batch: int, time: int) -> int:
    """One inner LSTM over the `rows` sub-sequence of every (batch, time) cell."""
    return lstm_flops(config.filters, config.inner_units, config.rows, batch * time)


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
    """Bytes of every layer output of one forward pass at the config's precision: the input,
    conv, pool, permute, summaries and outer outputs (an estimate of live activation memory;
    inference frees most of them early, so this is an upper bound on what a pass holds)."""
    batch, time, size = config.batch_size, config.time_steps, BYTES_PER_ELEMENT[config.precision]
    input_elements = batch * config.height * time
    conv_elements = input_elements * config.filters
    pooled_elements = batch * config.rows * time * config.filters
    summaries = batch * time * config.inner_units
    outputs = batch * time * config.outer_units
    return 4 * input_elements + size * (conv_elements + 2 * pooled_elements + summaries + outputs)


def dependent_steps(config: RunConfig) -> int:
    """Length of the longest chain of sequential LSTM steps, from the registry's formula."""
    return VARIANTS[config.variant].chain(config.rows, config.time_steps)


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
    """Bytes of the activations a training step keeps from its forward pass for its backward
    pass, at the config's precision (the input is float32 whatever it is):
    - the input (B, H, T, 1), which the conv kernel's gradient reads;
    - the conv output (B, H, T, C) and the pooled (B, R, T, C), which the max-pool's gradient
      reads (where the maximum was);
    - the inner LSTM over B*T sequences of R steps and the outer LSTM over B sequences of T
      steps, each as `lstm_kept_elements`;
    - the output (B, T, outer), which the loss's gradient reads.
    Every variant computes the same function, so this minimum is the same for all of them; what
    a variant holds beyond it (the while-loops' accumulators, TimeDistributed's per-step
    slices, XLA's buffers) shows in the measured peak beside it. An estimate, stated as one.
    """
    batch, time, size = config.batch_size, config.time_steps, BYTES_PER_ELEMENT[config.precision]
    input_elements = batch * config.height * time
    conv_elements = input_elements * config.filters
    pooled_elements = batch * config.rows * time * config.filters
    inner = lstm_kept_elements(config.filters, config.inner_units, config.rows, batch * time)
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
    """The largest working set one layer's backward pass holds at once beyond the kept
    activations: the gradient of its output and the gradient of its input, in the compute
    dtype (the loss's in float32). The pool's, (B, R, T, C) and (B, H, T, C), is the largest at
    the question's geometry; the conv needs no input gradient (the input is no variable), and
    an LSTM's per-step gate gradients (B, 4U) are small beside its sequences'."""
    batch, time, size = config.batch_size, config.time_steps, BYTES_PER_ELEMENT[config.precision]
    conv = batch * config.height * time * config.filters  # (B, H, T, C)
    pooled = batch * config.rows * time * config.filters  # (B, R, T, C)
    summaries = batch * time * config.inner_units  # (B, T, inner)
    outputs = batch * time * config.outer_units  # (B, T, outer)
    return max(
        4 * outputs,  # the loss's gradient of the output, float32
        size * (outputs + summaries),  # the outer LSTM
        size * (summaries + pooled),  # the inner LSTM: (B, T, inner) back to (B*T, R, C)
        size * (pooled + conv),  # the max-pool: (B, R, T, C) back to (B, H, T, C)
    )


def memory_parts(config: RunConfig) -> MemoryParts:
    """A training step's memory by part, from the geometry alone:
    - parameters: every trainable variable, float32 under every precision (the mixed policies
      keep float32 variables and cast them to the compute dtype when a layer runs);
    - gradients: one per parameter, of its variable's shape and dtype (float32);
    - optimizer: its variables (`optimizer_bytes`);
    - kept_activations: what the forward pass keeps for the backward pass
      (`kept_activation_bytes`: the compute dtype, float16 or bfloat16 under the mixed
      policies, the input float32);
    - transient: the largest backward working set of one layer (`transient_bytes`).
    The total assumes every part is alive at once, as at the start of the backward pass plus
    its largest layer's work: an upper bound of the ideal step, which frees kept activations as
    the backward pass walks back. What a variant holds beyond it (loop accumulators, per-step
    slices, XLA's buffers, the allocator's rounding) shows in the measured peak beside it.
    The non-trainable seed-generator states of Keras's LSTMs (16 bytes each) are left out.
    """
    parameters = 4 * total_params(config)
    return MemoryParts(
        parameters=parameters,
        gradients=parameters,
        optimizer=optimizer_bytes(config),
        kept_activations=kept_activation_bytes(config),
        transient=transient_bytes(config),
    )

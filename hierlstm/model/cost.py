"""The analytic cost model: parameters, FLOPs and activation bytes, from the geometry alone.

Conventions (a multiply-add counts as 2 FLOPs; elementwise work is left out, as is usual for
recurrent-network FLOP counts, so these are lower bounds dominated by the matrix products):
- Conv2D, 'same' padding:   2 * k * k * in_channels * filters per output position.
- MaxPooling (p, 1):        p - 1 comparisons per output element.
- LSTM:                     2 * 4 * units * (input + units) per step, times steps, times sequences
                            (the four gate matrices applied to [x_t, h_{t-1}]).
- Permute and reshapes:     0 (they move data, they do no arithmetic).
"""

from __future__ import annotations

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

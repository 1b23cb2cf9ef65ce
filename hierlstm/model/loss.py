"""The training loss and its fixed target; numpy only.

    loss = mean over batch, time and units of (output - target) ** 2

output (batch, time, outer_units), target a seeded standard normal of that shape (`loss_target`).
`mean_squared_error` takes the array library's mean (np, tf, torch). A random regression target
keeps every output's gradient non-zero, so backward runs through both recurrences."""

from __future__ import annotations

import numpy as np

from hierlstm.config import RunConfig


def mean_squared_error(outputs, target, mean=np.mean):
    """The training loss: mean((outputs - target) ** 2) over every element; `mean` is the array
    library's full mean (np.mean, tf.reduce_mean, torch.mean)."""
    return mean((outputs - target) ** 2)


def loss_target(config: RunConfig, seed: int = 0) -> np.ndarray:
    """The fixed target: (batch_size, time_steps, outer_units) float32, standard normal from a
    stream of its own ([seed, 2]; the parameters use `seed`, the inputs seed + 1 or `seed`)."""
    rng = np.random.default_rng([seed, 2])
    shape = (config.batch_size, config.time_steps, config.outer_units)
    return rng.standard_normal(shape).astype(np.float32)

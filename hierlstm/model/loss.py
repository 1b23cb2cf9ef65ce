"""The training loss, defined once, and its fixed target; numpy only (no TensorFlow).

    loss = mean over batch, time and units of (output - target) ** 2

where output is the model's (batch, time, outer_units) and target a fixed array of that shape
drawn from a seeded standard normal (`loss_target`). `mean_squared_error` is the formula for
any array library, given that library's full mean: np.mean for the float64 oracle
(`hierlstm.model.gradcheck`), tf.reduce_mean for the training step (`hierlstm.model.training`,
in float32 whatever the precision), torch.mean for the PyTorch peer
(benchmarks/vs_pytorch.py). A regression loss to a random target keeps every output element's
gradient non-zero, so the backward pass runs through every step of both recurrences.
"""

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

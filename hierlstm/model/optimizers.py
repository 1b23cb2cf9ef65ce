"""The training step's optimizer, the same on every Keras backend: Keras's SGD or Adam at their
default learning rates, loss-scaled under mixed_float16 (see `hierlstm.model.training`)."""

from __future__ import annotations

import keras

from hierlstm.config import RunConfig

LEARNING_RATES = {"sgd": 0.01, "adam": 0.001}  # Keras's defaults for both


def make_optimizer(config: RunConfig) -> keras.optimizers.Optimizer:
    """`config.optimizer` as a Keras optimizer; loss-scaled under mixed_float16."""
    rate = LEARNING_RATES[config.optimizer]
    if config.optimizer == "adam":
        optimizer = keras.optimizers.Adam(learning_rate=rate, name="adam")
    else:
        optimizer = keras.optimizers.SGD(learning_rate=rate, name="sgd")
    if config.precision == "mixed_float16":
        optimizer = keras.optimizers.LossScaleOptimizer(optimizer, name="loss_scale")
    return optimizer

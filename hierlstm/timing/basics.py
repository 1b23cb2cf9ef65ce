"""What every timed run starts from, on any Keras backend: the progress callback and the
standard input. Imports no TensorFlow (`hierlstm.timing.calls` re-exports them for TensorFlow's
harness; `hierlstm.backends.local` uses them on JAX and PyTorch)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hierlstm.config import RunConfig

Progress = Callable[[float, str], None]


def no_progress(fraction: float, message: str) -> None:
    pass


def scaled_progress(progress: Progress, start: float, end: float, prefix: str = "") -> Progress:
    """A callback mapping 0..1 onto start..end of `progress`."""
    return lambda fraction, message: progress(
        start + (end - start) * fraction, f"{prefix}{message}"
    )


def share(progress: Progress, index: int, count: int, prefix: str = "") -> Progress:
    """`progress`'s `index`-th of `count` equal parts: one config or value of a loop."""
    return scaled_progress(progress, index / count, (index + 1) / count, prefix)


def make_inputs(config: RunConfig, seed: int = 0) -> np.ndarray:
    """Standard-normal input, (batch, height, time, 1) float32, from a numpy seed."""
    rng = np.random.default_rng(seed)
    shape = (config.batch_size, config.height, config.time_steps, 1)
    return rng.standard_normal(shape, dtype=np.float32)

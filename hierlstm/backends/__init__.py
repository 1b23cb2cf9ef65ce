"""The seam where the portable variants run on any of Keras 3's backends: TensorFlow, JAX or
PyTorch, one per process (`KERAS_BACKEND`, read when Keras is imported). `local` prepares, times
and checks a config inside the process's backend; `compile` holds each backend's compiled
functions and device sync; `kernels` reads which LSTM kernel ran from what ran. This module
itself imports no backend: `missing` asks only whether a backend's packages are installed."""

from __future__ import annotations

import importlib.util

from hierlstm.registry import BACKENDS

__all__ = ["BACKENDS", "current", "missing"]

# The packages a Keras backend needs, by backend (the import names).
PACKAGES = {"tensorflow": ("tensorflow",), "jax": ("jax", "jaxlib"), "torch": ("torch",)}


def current() -> str:
    """The Keras backend of this process ("tensorflow", "jax" or "torch"); imports Keras."""
    import keras

    return keras.backend.backend()


def missing(name: str) -> str | None:
    """None when backend `name`'s packages are installed, else one sentence naming what is
    missing and how to install it. Imports nothing of the backend (`importlib.util.find_spec`).
    Raises ValueError for a name that is no backend."""
    if name not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {name!r}.")
    absent = [package for package in PACKAGES[name] if importlib.util.find_spec(package) is None]
    if not absent:
        return None
    return (
        f"the {name} backend needs the {' and '.join(absent)} package, which is not installed "
        "here: run make run BACKENDS=1, or pip install -r requirements-backends.txt."
    )

"""The portable variants on any Keras 3 backend (TensorFlow, JAX, PyTorch), one per process since
Keras reads `KERAS_BACKEND` when imported. This module imports no backend."""

from __future__ import annotations

import importlib.util

from hierlstm.registry import BACKEND_RECORDS, BACKENDS

__all__ = ["BACKENDS", "current", "missing", "runner"]


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
    packages = BACKEND_RECORDS[name].packages
    absent = [package for package in packages if importlib.util.find_spec(package) is None]
    if not absent:
        return None
    return (
        f"the {name} backend needs the {' and '.join(absent)} package, which is not installed "
        "here: run make run BACKENDS=1, or pip install -r requirements-backends.txt."
    )


def runner(name: str):
    """Backend `name`'s runner module (`Backend.runner`, `hierlstm.backends.runners`): its
    framework's own calls. Imports the module, not the framework."""
    return importlib.import_module(BACKEND_RECORDS[name].runner)

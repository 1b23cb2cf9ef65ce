"""The portable variants on any Keras 3 backend (TensorFlow, JAX, PyTorch), one per process since
Keras reads `KERAS_BACKEND` when imported. This module imports no backend."""

from __future__ import annotations

import importlib.util

from hierlstm.registry import BACKEND_RECORDS, BACKENDS, KERAS_BACKENDS

__all__ = ["BACKENDS", "current", "missing", "runner", "runtime_refusal"]


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
    record = BACKEND_RECORDS[name]
    absent = [package for package in record.packages if importlib.util.find_spec(package) is None]
    if not absent:
        return None
    return (
        f"the {name} backend needs the {' and '.join(absent)} package, which is not installed "
        f"here: run make run {record.extra.upper()}=1, or pip install -r "
        f"requirements-{record.extra}.txt."
    )


def runtime_refusal(config) -> str:
    """One sentence when `config`'s backend is an inference runtime (its record's `exported`)
    that cannot run it, else "": a runtime runs the exported float32 file's forward pass on the
    CPU, with its own graph optimisations. Imports nothing."""
    record = BACKEND_RECORDS[config.backend]
    if not record.exported:
        return ""
    if config.task == "training":
        return (
            f"the {record.name} runtime runs the exported model's forward pass only; a training "
            f"step needs a Keras backend ({', '.join(KERAS_BACKENDS)})."
        )
    if config.xla:
        return (
            f"xla is TensorFlow's and JAX's compiler; the {record.name} runtime runs the "
            "exported file with its own graph optimisations."
        )
    if config.precision != "float32":
        return (
            f"precision {config.precision} is Keras's dtype policy; the {record.name} runtime "
            "runs the exported float32 file."
        )
    if config.device.startswith("gpu"):
        return f"device {config.device}: the {record.name} runtime runs on the CPU here."
    return ""


def runner(name: str):
    """Backend `name`'s runner module (`Backend.runner`, `hierlstm.backends.runners`): its
    framework's own calls. Imports the module, not the framework."""
    return importlib.import_module(BACKEND_RECORDS[name].runner)

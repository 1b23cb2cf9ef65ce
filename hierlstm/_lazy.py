"""Lazy re-exports for a package's `__init__`: `from hierlstm.hardware import resolve_device`
imports `hierlstm.hardware.devices` only when the name is first read (PEP 562), so a pure
module of the package (one that imports no TensorFlow) stays pure when its package is
imported. The modules stay importable themselves, for tests that patch their globals."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable, Callable]:
    """(`__getattr__`, `__dir__`) of `package`, whose `exports` map each public name to the
    module (relative to the package) that defines it."""

    def __getattr__(name: str):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{exports[name]}"), name)

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__

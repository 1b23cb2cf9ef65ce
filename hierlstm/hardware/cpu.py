"""The processor this process runs on, described one way for labels and stored results (no
TensorFlow, so the backends' workers describe it as TensorFlow's device report does)."""

from __future__ import annotations

import os
import platform


def cpu_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def machine() -> str:
    """ "x86_64", "aarch64", ..."""
    return platform.machine() or "unknown machine"


def cpu_description(machine_name: str | None = None, cores: int | None = None) -> str:
    """ "x86_64, 2 cores": this machine's unless `machine_name` and `cores` are given."""
    machine_name = machine() if machine_name is None else machine_name
    return f"{machine_name}, {cpu_cores() if cores is None else cores} cores"

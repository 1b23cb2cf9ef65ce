"""The benchmarks that set TensorFlow's or torch's threads (which only a fresh process can), and
Streamlit's cleanup, start in their own process and print their report on a tiny setting
(tests/benchmarks/test_smoke.py says why nothing is timed)."""

from __future__ import annotations

import pytest
from factories import is_report, python

TINY = {
    # Keras's own backends beside TensorFlow race in workers as `backends` does (its smoke runs
    # them); here PyTorch is the native peer, in this process.
    "vs_pytorch": "--repeats 2 --threads 1 --shapes 1x4 --task inference --backends tensorflow "
    "--profile-tf-steps 2",
    "gpu_peer": "--device cpu --repeats 2 --shapes 1x4",
    "rerun_cleanup": "--rounds 2 --models 1",
}
# What the report holds beyond its tables: fused + XLA's profile with XLA:CPU's thunks in it (a
# dot), so the flag reached the profiling process.
HOLDS = {"vs_pytorch": "XLA dot"}


@pytest.mark.parametrize("name", TINY)
def test_the_benchmark_prints_its_report_in_its_own_process(name):
    completed = python("-m", "benchmarks", name, *TINY[name].split(), timeout=600)
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert is_report(completed.stdout), completed.stdout
    assert HOLDS.get(name, "") in completed.stdout

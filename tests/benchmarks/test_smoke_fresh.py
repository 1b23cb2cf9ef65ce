"""The benchmarks that set TensorFlow's or torch's threads (which only a fresh process can), and
Streamlit's cleanup, start in their own process and print their report on a tiny setting
(tests/benchmarks/test_smoke.py says why nothing is timed)."""

from __future__ import annotations

import pytest
from factories import is_report, python

TINY = {
    "vs_pytorch": "--repeats 2 --threads 1 --shapes 1x4 --task inference --backends "
    "tensorflow,torch --portable folded",
    "gpu_peer": "--device cpu --repeats 2 --shapes 1x4",
    "rerun_cleanup": "--rounds 2 --models 1",
}


@pytest.mark.parametrize("name", TINY)
def test_the_benchmark_prints_its_report_in_its_own_process(name):
    completed = python("-m", "benchmarks", name, *TINY[name].split(), timeout=600)
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert is_report(completed.stdout), completed.stdout

"""The benchmarks that set TensorFlow's or torch's threads (which only a fresh process can), and
Streamlit's cleanup, start in their own process and print their report on a tiny setting
(tests/benchmarks/test_smoke.py says why nothing is timed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from factories import is_report

ROOT = Path(__file__).resolve().parents[2]
TINY = {
    "vs_pytorch": "--repeats 2 --threads 1 --shapes 1x4 --task inference",
    "gpu_peer": "--device cpu --repeats 2 --shapes 1x4",
    "rerun_cleanup": "--rounds 2 --models 1",
}


@pytest.mark.parametrize("name", TINY)
def test_the_benchmark_prints_its_report_in_its_own_process(name):
    completed = subprocess.run(
        [sys.executable, "-m", "benchmarks", name, *TINY[name].split()],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert is_report(completed.stdout), completed.stdout

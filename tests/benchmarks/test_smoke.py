"""Every benchmark that needs no server of its own starts and prints its report on a tiny
setting (nothing timed: a benchmark runs under `make bench`). Elsewhere: those that need a fresh
process (test_smoke_fresh.py), gpu_report (tests/test_gpu_check.py), profile_split (test_record.py
keeps its run), the browser ones, whose probe tests/app/test_browser.py runs, and classroom
(test_classroom.py, on its server)."""

from __future__ import annotations

import shlex

import pytest
from factories import is_report

from benchmarks.registry import BENCHMARKS

TINY = {
    # a training step's timing: tests/timing/test_bench_training.py (XLA's compile of one is
    # most of this benchmark's cost at this size)
    "variants": "--shapes 1x4 --repeats 2 --variants folded --timeit-shape 1x4 --task inference",
    "scaling": "--batch 1 --times 4,8 --repeats 2 --variants nested,folded",
    "estimate": "--variants nested,folded --shapes 1x4 --warmup 1 --repeats 2",
    "fused_ablation": "--rounds 2 --shapes 1x4 --ablations 'one chain'",
    "fused_backward": "--shapes 1x4 --repeats 2 --parts outer",
    # a Keras backend beside TensorFlow (PyTorch's, eager: JAX compiles, and its worker is
    # test_pool.py's and test_oracles.py's)
    "backends": "--repeats 2 --shapes 1x4 --variants folded --task inference --backends "
    "tensorflow,torch",
    "fastest": "--repeats 2 --shapes 1x3 --variants folded --backends onnxruntime",
}
ELSEWHERE = {"vs_pytorch", "gpu_peer", "rerun_cleanup", "gpu_report", "profile_split"}
ELSEWHERE |= {"first_page", "browser_floor", "soak", "classroom"}


def test_every_benchmark_has_a_smoke_test():
    assert set(BENCHMARKS) == set(TINY) | ELSEWHERE
    assert not set(TINY) & ELSEWHERE


@pytest.mark.parametrize("name", TINY)
def test_the_benchmark_prints_its_report_on_a_tiny_setting(name, capsys):
    BENCHMARKS[name](shlex.split(TINY[name]))
    report = capsys.readouterr().out
    assert is_report(report), report

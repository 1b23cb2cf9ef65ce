"""Every benchmark that needs no server of its own starts and prints its report on a tiny
setting: the header, then a markdown table. Nothing is timed or compared: a benchmark measures
the machine as much as the code, and runs under `make bench`. Those that set TensorFlow's or
torch's threads, which only a fresh process can, and Streamlit's cleanup run in their own
process (test_smoke_fresh.py); gpu_report on its folders in tests/test_gpu_check.py. The
browser benchmarks (first_page, browser_floor, soak) start their own servers and Chromium: a
tiny run of each took 42-99 s in a fresh clone's `make test` (2026-12-03), minutes rather
than seconds, so the suite runs their probe instead (tests/app/test_browser.py's
test_the_benchmarks_probe_waits_for_the_log_of_the_page_s_run) and `python -m benchmarks NAME
--help` (test_registry.py). A test below checks that every benchmark is in one of these.
"""

from __future__ import annotations

import pytest
from factories import is_report

from benchmarks.registry import BENCHMARKS

TINY = {
    "variants": "--shapes 1x4 --repeats 2 --variants nested,folded --timeit-shape 1x4 --task both",
    "scaling": "--batch 1 --times 4,8 --repeats 2",
    "estimate": "--variants nested,folded --shapes 1x4 --warmup 1 --repeats 2",
    "profile_split": "--variants folded --batch-size 1 --time-steps 4 --steps 1 --repeats 2",
    "fused_ablation": "--rounds 2 --shapes 1x4",
    "fused_backward": "--shapes 1x4 --repeats 2 --parts outer",
    "backends": "--repeats 2 --shapes 1x4 --variants folded --task inference --backends "
    "tensorflow,jax",
}
# Run elsewhere: their own process (threads, Streamlit), their folders; the browser ones' probe.
ELSEWHERE = {"vs_pytorch", "gpu_peer", "rerun_cleanup", "gpu_report"}
ELSEWHERE |= {"first_page", "browser_floor", "soak"}


def test_every_benchmark_has_a_smoke_test():
    assert set(BENCHMARKS) == set(TINY) | ELSEWHERE
    assert not set(TINY) & ELSEWHERE


@pytest.mark.parametrize("name", TINY)
def test_the_benchmark_prints_its_report_on_a_tiny_setting(name, capsys):
    BENCHMARKS[name](TINY[name].split())
    report = capsys.readouterr().out
    assert is_report(report), report

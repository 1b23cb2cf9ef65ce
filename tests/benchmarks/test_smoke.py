"""The benchmarks that can run a tiny setting in seconds, in this process, start and print
their report: the header, then a markdown table. Nothing is timed or compared: a benchmark
measures the machine as much as the code, and runs under `make bench`. Not here: the browser
benchmarks (first_page, browser_floor, soak), each of which starts its own servers, whose
warm-up alone takes tens of seconds (tests/app/test_browser.py checks their probe on its
running server), and those that set TensorFlow's threads, which only a fresh process can."""

from __future__ import annotations

import re

import pytest

from benchmarks.registry import BENCHMARKS

TINY = {
    "scaling": "--batch 1 --times 4,8 --repeats 2",
    "estimate": "--variants nested,folded --shapes 1x4 --warmup 1 --repeats 2",
    "profile_split": "--variants folded --batch-size 1 --time-steps 4 --steps 1 --repeats 2",
}


@pytest.mark.parametrize("name", TINY)
def test_the_benchmark_prints_its_report_on_a_tiny_setting(name, capsys):
    BENCHMARKS[name](TINY[name].split())
    report = capsys.readouterr().out
    assert report.startswith("## "), report
    assert re.search(r"^\|---\|", report, re.M), report

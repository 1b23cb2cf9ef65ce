"""Test data shared by the results, store, bad-input and app tests: plausible measurements, an
equality that counts NaN as equal to NaN, and the app's pages with their English titles; and the
command line run in this process, and Python in a fresh one."""

import dataclasses
import math
import re
import subprocess
import sys
from pathlib import Path

from hierlstm.config import RunConfig
from hierlstm.records import BenchResult, CompareEntry, CompareResult, Stats

# Run settings that keep a page's run short (the pages' own inputs, outside the sidebar).
SHORT_RUNS = {"profile": ("profile_steps", 2), "scaling": ("sweep_values_time_steps", "2, 4")}
SHORT_RUNS["inside"] = ("inside_steps", 10)
VERSIONS = {"python": "3.11.9", "tensorflow": "2.18.0", "keras": "3.8.0", "numpy": "2.0.2"}
ROOT = Path(__file__).resolve().parents[1]


def python(*args: str | Path, timeout: float = 120, **options) -> subprocess.CompletedProcess:
    """This interpreter on `args` in a fresh process from the repository root, its output kept
    as text; `options` (env, input) go to subprocess.run."""
    command = [sys.executable, *map(str, args)]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, cwd=ROOT, **options
    )


def cli_words(*argv: str | Path) -> list[str]:
    """A command line's words: a string with spaces is split at them (`"bench --variant
    folded"`); a Path is one word."""
    split = [
        item.split() if isinstance(item, str) and " " in item else [str(item)] for item in argv
    ]
    return [word for words in split for word in words]


def run_cli(capsys, *argv: str | Path) -> tuple[int, str, str]:
    """`python -m hierlstm` run in this process on `cli_words(*argv)`: its exit status, stdout
    and stderr."""
    from hierlstm.cli.main import main

    status = main(cli_words(*argv))
    out, err = capsys.readouterr()
    return status, out, err


def make_result(status="ok", **changes) -> BenchResult:
    """A plausible measurement of a small folded model; `changes` override any field,
    `config_changes` (a dict) replaces fields of its RunConfig (the rates follow) and
    `step_changes` (a dict) fields of its step's Stats."""
    config = RunConfig(variant="folded", batch_size=2, time_steps=4).replace(
        **changes.pop("config_changes", {})
    )
    median = 0.0125
    step = Stats(median=median, p10=0.0119, p90=0.0131, iqr=0.0007, mean=0.01253, std=0.0004)
    step = dataclasses.replace(step, min=0.0117, **changes.pop("step_changes", {}))
    result = BenchResult(
        config=config,
        first_call_s=1.75,
        step=step,
        repeats=30,
        warmup=5,
        noisy=False,
        samples_per_s=config.batch_size / median,
        steps_per_s=config.batch_size * config.time_steps / median,
        flops=1_234_567,
        gflops_per_s=1_234_567 / median / 1e9,
        peak_memory_bytes=52_428_800,
        peak_memory_kind="cpu_rss_growth",
        kernel="generic",
        kernel_reason="no GPU",
        trace_count=1,
        device="/CPU:0",
        versions=VERSIONS,
        status=status,
    )
    return dataclasses.replace(result, **changes)


def make_training_result(**changes) -> BenchResult:
    """A plausible training step of the same small folded model (SGD): the step's times, its
    phases' and the activations it keeps; `changes` as for `make_result`."""
    config_changes = {"task": "training", **changes.pop("config_changes", {})}
    phases = {
        "forward": Stats(median=0.004, p10=0.0038, p90=0.0043),
        "forward_backward": Stats(median=0.0105, p10=0.0101, p90=0.0112),
        "update": Stats(median=0.0011, p10=0.001, p90=0.0013),
    }
    measured = {"phases": phases, "kept_activation_bytes": 177_792}
    return make_result(config_changes=config_changes, **{**measured, **changes})


def make_compare(results, speedups, details=None, baseline: int = 0) -> CompareResult:
    """A comparison of `results`, entry i with speed-up `speedups[i]` (median, p10 and p90 the
    same, or a (median, p10, p90) triple) and `details[i]` ({} by default)."""
    details = details or [{}] * len(results)
    entries = []
    for result, speedup, detail in zip(results, speedups, details, strict=True):
        median, p10, p90 = speedup if isinstance(speedup, tuple) else (speedup,) * 3
        entries.append(CompareEntry(result, Stats(median=median, p10=p10, p90=p90), detail))
    return CompareResult(tuple(entries), baseline)


def make_failed_result() -> BenchResult:
    """An out-of-memory run as the harness records it: NaN times and rates, no kernel chosen."""
    nan = math.nan
    return make_result(
        status="failed",
        error="ResourceExhaustedError: OOM when allocating tensor",
        kernel="",
        kernel_reason="",
        first_call_s=nan,
        step=Stats(),
        samples_per_s=nan,
        steps_per_s=nan,
        gflops_per_s=nan,
    )


def is_missing(value) -> bool:
    """None (a JSON null, an SQL NULL) or NaN (a frame's or a record's missing time)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def same(first, second) -> bool:
    """Equal, counting any two missing values as equal."""
    return (is_missing(first) and is_missing(second)) or first == second


def make_profile_result(**changes):
    """A plausible profile of the same small folded model (2 steps, CPU): its layers' and op
    types' frames as `hierlstm.profiling.profiler.profile` makes them; `changes` override fields."""
    import pandas as pd

    from hierlstm.profiling import OUTSIDE, ProfileResult

    config = RunConfig(variant="folded", batch_size=2, time_steps=4)
    names = ["conv", "pool", "permute", "fold", "inner_lstm", "unfold", "outer_lstm", OUTSIDE]
    kinds = ["Conv2D", "MaxPooling2D", "Permute", "FoldTime", "LSTM", "UnfoldTime", "LSTM", ""]
    times = [9e-5, 5e-5, 3.5e-5, 0.0, 1.8e-4, 1e-6, 4e-5, 4e-6]
    layers = pd.DataFrame(
        {
            "layer": names,
            "type": kinds,
            "host_s": times,
            "device_s": [0.0] * len(names),
            "time_s": times,
            "ops": [3.0, 1.0, 1.0, 0.0, 301.0, 3.0, 111.0, 2.0],
        }
    )
    layers["share"] = layers["time_s"] / layers["time_s"].sum()
    op_types = pd.DataFrame(
        {"type": ["_MklMatMul", "BiasAdd"], "time_s": [3e-4, 1.01e-4], "ops": [32.0, 16.0]}
    )
    op_types["share"] = op_types["time_s"] / op_types["time_s"].sum()
    lines = pd.DataFrame({"line": ["/host:CPU python"], "op_s": [0.0], "busy_s": [1e-3]})
    kernels = pd.DataFrame(
        {
            "kernel": ["RNN_blockPersist_fp_LSTM"],
            "op_type": ["CudnnRNNV3"],
            "layer": ["outer_lstm"],
            "time_s": [4e-5],
            "launches": [1.0],
        }
    )
    result = ProfileResult(
        config=config,
        steps=2,
        warmup=1,
        layers=layers,
        op_types=op_types,
        lines=lines,
        kernels=kernels,
        step_s=(1.1e-3, 1.0e-3),
        profiled_step_s=1.05e-3,
        harness_median_s=0.9e-3,
        harness_repeats=3,
        logdir="/tmp/profiles/run",
        trace="/tmp/profiles/run/plugins/profile/x/host.xplane.pb",
        device="/CPU:0",
        kernel="generic",
        versions=VERSIONS,
    )
    return dataclasses.replace(result, **changes)


def __getattr__(name: str):
    """`PAGES`: every page script of the app, with the English title it must show (AppTest opens
    them by script), read from the app's own page list; made on first use, so the tests that
    need no page import no Streamlit."""
    if name != "PAGES":
        raise AttributeError(name)
    from hierlstm.app.pages import PAGES
    from hierlstm.i18n import t

    return {page.script: t(f"{page.heading}.title", "en") for page in PAGES}


def is_report(text: str) -> bool:
    """A benchmark's report: its "## " header first, and at least one markdown table."""
    return text.startswith("## ") and re.search(r"^\|---\|", text, re.M) is not None


def html_tables(html: str) -> list[list[list[str]]]:
    """The tables of an HTML page or fragment (a notebook's `_repr_html_`), each a list of rows,
    the header row first, each row its cells' text."""
    from html.parser import HTMLParser

    class Reader(HTMLParser):
        def __init__(self):
            super().__init__()
            self.tables, self.cell = [], None

        def handle_starttag(self, tag, attrs):
            if tag == "table":
                self.tables.append([])
            elif tag == "tr":
                self.tables[-1].append([])
            elif tag in ("td", "th"):
                self.cell = []

        def handle_endtag(self, tag):
            if tag in ("td", "th"):
                self.tables[-1][-1].append("".join(self.cell).strip())
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell.append(data)

    reader = Reader()
    reader.feed(html)
    return reader.tables

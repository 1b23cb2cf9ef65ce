"""Every benchmark, by name: a light record (its concern's subpackage, one line on what it answers,
what it needs beyond the venv) that imports nothing until it is run; `python -m benchmarks` and
the tests iterate it. The model's benchmarks (`benchmarks.model`) time the function; the serving
harnesses (`benchmarks.serving`) time the app's server and its visitors."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util

CONCERNS = ("model", "serving")  # the subpackages of benchmarks/


@dataclasses.dataclass(frozen=True)
class Benchmark:
    name: str  # the module's, in its concern's subpackage
    concern: str  # one of CONCERNS
    summary: str
    needs: str = ""  # beyond the venv: "chromium", "torch", or an argument to give it

    @property
    def module(self) -> str:
        """benchmarks.<concern>.<name>: what `python -m` runs."""
        return f"benchmarks.{self.concern}.{self.name}"

    def __call__(self, argv: list[str] | None = None) -> None:
        """Runs the benchmark's `main(argv)`."""
        importlib.import_module(self.module).main(argv)

    def unmet(self) -> str:
        """What it needs that this machine lacks to run it without arguments ("" if nothing)."""
        if self.needs == "chromium":
            from benchmarks.serving.browser import CHROMIUM  # light: no TensorFlow, no Playwright

            found = CHROMIUM.exists() and importlib.util.find_spec("playwright")
        else:  # nothing, a module ("torch", "locust") or an argument
            module = self.needs.isidentifier() and importlib.util.find_spec(self.needs)
            found = not self.needs or module
        return "" if found else self.needs


# (name, summary[, needs]) of each concern's benchmarks, in the order `--all` runs them.
MODEL = (
    ("variants", "every variant, with and without XLA, forward and training"),
    ("scaling", "first call and steady state against time steps"),
    ("estimate", "the app's long-run estimate against the real run"),
    ("profile_split", "the profiler's per-layer split beside the separate-call one"),
    ("fused_ablation", "why fused is fast: one of its choices undone at a time"),
    ("fused_backward", "each part of fused, forward and backward: TensorFlow's gradient vs bptt"),
    ("vs_pytorch", "the fastest variants against the same function in PyTorch", "torch"),
    ("gpu_peer", "the fastest variants against PyTorch on one device, GPU if any", "torch"),
    (
        "backends",
        "the portable variants on TensorFlow, JAX and PyTorch, a worker process each",
        "torch",
    ),
    (
        "fastest",
        "the fastest (variant, backend) per shape: TensorFlow, JAX, PyTorch and the runtimes",
        "onnxruntime",
    ),
    (
        "gpu_report",
        "the markdown report of gpu_check.sh, from its output folder",
        "gpu_check.sh's output folder",
    ),
)
SERVING = (
    ("rerun_cleanup", "Streamlit's cleanup after every script run, frozen and not"),
    ("first_page", "a fresh server's first page, every page, in Chromium", "chromium"),
    ("browser_floor", "what a new browser costs before any of our work", "chromium"),
    ("soak", "visitors in Chromium for minutes, a CLI loop, two servers", "chromium"),
    ("classroom", "sessions on one server without browsers (Locust), 1 to 60", "locust"),
)
BENCHMARKS = {
    name: Benchmark(name, concern, *rest)
    for concern, rows in zip(CONCERNS, (MODEL, SERVING), strict=True)
    for name, *rest in rows
}
SUMMARIES = {name: benchmark.summary for name, benchmark in BENCHMARKS.items()}  # RESULTS.md's

"""Every benchmark, by name: a light record (its module, one line on what it answers, what it
needs beyond the venv) that imports nothing until it is run; `python -m benchmarks` and the tests
iterate it."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util


@dataclasses.dataclass(frozen=True)
class Benchmark:
    name: str  # the module, benchmarks.<name>
    summary: str
    needs: str = ""  # beyond the venv: "chromium", "torch", or an argument to give it

    def __call__(self, argv: list[str] | None = None) -> None:
        """Runs the benchmark's `main(argv)`."""
        importlib.import_module(f"benchmarks.{self.name}").main(argv)

    def unmet(self) -> str:
        """What it needs that this machine lacks to run it without arguments ("" if nothing)."""
        if self.needs == "chromium":
            from benchmarks.browser import CHROMIUM  # light: no TensorFlow, no Playwright

            found = CHROMIUM.exists() and importlib.util.find_spec("playwright")
        else:  # nothing, a module ("torch", "locust") or an argument
            module = self.needs.isidentifier() and importlib.util.find_spec(self.needs)
            found = not self.needs or module
        return "" if found else self.needs


BENCHMARKS = {
    benchmark.name: benchmark
    for benchmark in (
        Benchmark("variants", "every variant, with and without XLA, forward and training"),
        Benchmark("scaling", "first call and steady state against time steps"),
        Benchmark("estimate", "the app's long-run estimate against the real run"),
        Benchmark("profile_split", "the profiler's per-layer split beside the separate-call one"),
        Benchmark("fused_ablation", "why fused is fast: one of its choices undone at a time"),
        Benchmark(
            "fused_backward",
            "each part of fused, forward and backward: TensorFlow's gradient vs bptt",
        ),
        Benchmark(
            "vs_pytorch", "the fastest variants against the same function in PyTorch", "torch"
        ),
        Benchmark(
            "gpu_peer", "the fastest variants against PyTorch on one device, GPU if any", "torch"
        ),
        Benchmark(
            "backends",
            "the portable variants on TensorFlow, JAX and PyTorch, a worker process each",
            "torch",
        ),
        Benchmark("rerun_cleanup", "Streamlit's cleanup after every script run, frozen and not"),
        Benchmark(
            "gpu_report",
            "the markdown report of gpu_check.sh, from its output folder",
            "gpu_check.sh's output folder",
        ),
        Benchmark("first_page", "a fresh server's first page, every page, in Chromium", "chromium"),
        Benchmark("browser_floor", "what a new browser costs before any of our work", "chromium"),
        Benchmark("soak", "visitors in Chromium for minutes, a CLI loop, two servers", "chromium"),
        Benchmark(
            "classroom", "sessions on one server without browsers (Locust), 1 to 32", "locust"
        ),
    )
}

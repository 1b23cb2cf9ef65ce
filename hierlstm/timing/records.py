"""The plain records that flow out of the harness into the store, the charts and the CLI."""

from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd

from hierlstm.config import RunConfig


@dataclasses.dataclass(frozen=True)
class BenchResult:
    """One measurement of one config: first call apart, then the steady-state distribution.

    Times are seconds per forward pass. A failed run (out of memory, say) has status "failed",
    its one-line message in `error`, and NaN times.
    """

    config: RunConfig
    first_call_s: float  # tracing/compilation plus the first execution
    median_s: float
    p10_s: float
    p90_s: float
    iqr_s: float  # p75 - p25
    mean_s: float
    std_s: float
    min_s: float
    repeats: int
    warmup: int
    noisy: bool  # iqr_s / median_s > 0.10
    samples_per_s: float  # batch_size / median_s
    steps_per_s: float  # batch_size * time_steps / median_s
    flops: int  # analytic, from hierlstm.model.cost
    gflops_per_s: float
    peak_memory_bytes: int
    peak_memory_kind: str  # "gpu_allocator_peak" or "cpu_rss_growth"
    kernel: str  # "cudnn" or "generic"
    kernel_reason: str  # why generic ran ("" for cudnn)
    trace_count: int  # how many times the forward function was traced
    device: str  # e.g. "/CPU:0" or "/GPU:0 (NVIDIA A100)"
    versions: dict[str, str]  # python, tensorflow, keras, numpy
    status: str = "ok"  # "ok" or "failed"
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A flat JSON-ready dict: `variant` and `config` (a dict) first, then every field."""
        fields = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        fields["config"] = self.config.to_dict()
        fields["versions"] = dict(self.versions)
        return {"variant": self.config.variant, **fields}


@dataclasses.dataclass
class CompareResult:
    """Several configs timed in interleaved rounds, with paired speed-ups against a baseline.

    `speedups[i]` is the median over rounds of baseline_time / config_i_time, each ratio taken
    within one round, so drift (thermal, other load) cancels; p10/p90 are of the same ratios.
    """

    results: list[BenchResult]
    speedups: list[float]
    speedup_p10: list[float]
    speedup_p90: list[float]
    baseline: int = 0
    # Per config, what a run under a strategy adds (strategy, replicas, per_replica_batch,
    # workers, output_checksum, replica_devices); {} for a single-device or failed run.
    details: list[dict] = dataclasses.field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for index, result in enumerate(self.results):
            row = flat_row(result)
            if index < len(self.details) and self.details[index]:
                row.update(self.details[index])
                row["replica_devices"] = ",".join(row["replica_devices"])
            row["speedup_vs_baseline"] = self.speedups[index]
            row["speedup_p10"] = self.speedup_p10[index]
            row["speedup_p90"] = self.speedup_p90[index]
            row["is_baseline"] = index == self.baseline
            rows.append(row)
        return pd.DataFrame(rows)


def flat_row(result: BenchResult) -> dict:
    """A result as one table row: its fields, then the config settings it does not repeat."""
    row = result.to_dict()
    config = row.pop("config")
    row.pop("versions")
    row.update({name: value for name, value in config.items() if name not in row})
    return row

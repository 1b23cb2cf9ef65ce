"""Sweeps: one config timed over time steps or batch sizes, over 1, 2, ... mirrored replicas,
and its scaling efficiency against one replica. A failing point is a failed row and the sweep
goes on."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import pandas as pd

from hierlstm.config import DEFAULT_TIMING, RunConfig, Timing
from hierlstm.distributed import cluster, distribute
from hierlstm.records import BenchResult, Stats
from hierlstm.timing.basics import Progress, no_progress
from hierlstm.timing.failures import RUN_FAILURES, error_line, failed_result
from hierlstm.timing.harness import benchmark, compare
from hierlstm.timing.points import sweep_points


def sweep(
    config: RunConfig,
    axis: str,
    values: Iterable[int],
    timing: Timing = DEFAULT_TIMING,
    *,
    on_progress: Progress | None = None,
    on_point: Callable[[BenchResult], None] | None = None,
) -> pd.DataFrame:
    """Benchmarks `config` at each value of `axis` ("time_steps" or "batch_size") in this process
    (`points.sweep_points`); a failing point is a "failed" row. `on_point` gets each point's
    BenchResult. Columns: variant, axis, value, status, error, then `BenchResult.to_row`'s."""
    return sweep_points(
        config,
        axis,
        values,
        lambda point, progress: benchmark(point, timing, on_progress=progress),
        on_progress=on_progress,
        on_point=on_point,
    )


def scaling(
    config: RunConfig,
    timing: Timing = DEFAULT_TIMING,
    *,
    on_progress: Progress | None = None,
) -> distribute.ScalingResult:
    """Times `config` under its strategy and on one replica (the per-replica batch on the first
    replica device), interleaved, so the efficiency compares equal work per replica. A run that
    cannot happen gives a "failed" result."""
    if config.strategy == "none":
        raise ValueError("scaling needs strategy mirrored or multi_worker; got 'none'.")
    progress = on_progress or no_progress
    try:
        plan = distribute.plan(config)
        one = distribute.one_replica_config(config, plan)
    except RUN_FAILURES as error:
        failed = failed_result(config, error)
        progress(1.0, f"failed: {failed.error}")
        nan = math.nan
        return distribute.ScalingResult(
            failed, None, config.strategy, 0, 0, 0, nan, nan, nan, "", ()
        )
    outcome = compare([config, one], timing, baseline=1, on_progress=progress)
    replicated, alone = outcome.entries
    return distribute.ScalingResult(
        result=replicated.result,
        one_replica=alone.result,
        strategy=config.strategy,
        replicas=plan.replicas,
        per_replica_batch=plan.per_replica_batch,
        workers=plan.workers,
        scaling_efficiency=replicated.speedup.median,  # median over rounds of t_one / t_all
        efficiency_p10=replicated.speedup.p10,
        efficiency_p90=replicated.speedup.p90,
        output_checksum=replicated.details.get("output_checksum", ""),
        replica_devices=plan.devices,
    )


REPLICA_SWEEP_COLUMNS = (
    "replicas",
    "batch_size",
    "per_replica_batch",
    "status",
    "error",
    "median_s",
    "p10_s",
    "p90_s",
    "samples_per_s",
    "scaling_efficiency",
    "efficiency_p10",
    "efficiency_p90",
    "kernel",
    "device",
)


def replica_sweep(
    config: RunConfig,
    counts: Iterable[int],
    timing: Timing = DEFAULT_TIMING,
    *,
    on_progress: Progress | None = None,
    on_point: Callable[[BenchResult], None] | None = None,
) -> pd.DataFrame:
    """Weak scaling of `config` on n = 1, 2, ... mirrored replicas, each running `config.batch_size`
    samples, on the first n of `config.devices`, else the local GPUs, else the logical CPUs.
    Efficiency of n = t_1 / t_n, the median within interleaved rounds. A count with too few devices
    is a "failed" row. Columns: `REPLICA_SWEEP_COLUMNS`."""
    if config.strategy == "multi_worker":
        raise ValueError(
            "replica_sweep varies mirrored replicas in one process; a multi-worker cluster "
            "has the size it was started with."
        )
    wanted = list(dict.fromkeys(counts))
    if not wanted or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in wanted):
        raise ValueError(f"counts must be whole numbers of 1 or more; got {wanted!r}.")
    if 1 not in wanted:
        wanted.insert(0, 1)
    base = config.replace(strategy="mirrored", device="auto", devices="")
    specs = config.device_list or cluster.replica_device_specs(base)
    rows: dict[int, dict] = {}
    configs: list[RunConfig] = []
    for count in wanted:
        row = {name: math.nan for name in REPLICA_SWEEP_COLUMNS}
        row.update(
            replicas=count,
            batch_size=count * config.batch_size,
            per_replica_batch=config.batch_size,
        )
        row.update(status="failed", kernel="", device="")
        rows[count] = row
        if count > len(specs):
            hint = "; split the CPU with --logical-cpus N" if specs[0].startswith("cpu") else ""
            row["error"] = (
                f"invalid setting: {count} replicas need {count} devices; this process has "
                f"{len(specs)} ({', '.join(specs)}){hint}"
            )
            continue
        try:
            configs.append(
                base.replace(devices=",".join(specs[:count]), batch_size=count * config.batch_size)
            )
        except ValueError as error:
            row["error"] = error_line(error)
    measured = {len(point.device_list): index for index, point in enumerate(configs)}
    if configs:
        baseline = measured.get(1, 0)
        outcome = compare(
            configs,
            timing,
            baseline=baseline,
            on_progress=on_progress,
        )
        for count, index in measured.items():
            entry = outcome.entries[index]
            if on_point is not None:
                on_point(entry.result)
            row = entry.result.to_row()
            rows[count].update({name: row[name] for name in REPLICA_SWEEP_COLUMNS if name in row})
            speedup = entry.speedup if 1 in measured else Stats()
            rows[count].update(
                replicas=count,
                batch_size=entry.result.config.batch_size,
                per_replica_batch=config.batch_size,
                scaling_efficiency=speedup.median,
                efficiency_p10=speedup.p10,
                efficiency_p90=speedup.p90,
            )
    elif on_progress is not None:
        on_progress(1.0, "no count could be measured")
    return pd.DataFrame([rows[count] for count in wanted], columns=list(REPLICA_SWEEP_COLUMNS))

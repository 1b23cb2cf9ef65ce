"""The timing commands: `bench`, `sweep`, `worker`. Each refuses what the server's limits
refuse before building anything, times through `hierlstm.timing`, and stores every result."""

from __future__ import annotations

import argparse
import json
import sys

from hierlstm.cli.format import _json_default, _table, format_bench, format_scaling
from hierlstm.cli.parser import UsageError, _count, _seed, _shard, _sweep_values, config_from_args


def _run_configs(args, **defaults) -> list:
    """One RunConfig per --variant, all other settings shared."""
    configs = []
    for variant in args.variant:
        namespace = argparse.Namespace(**{**vars(args), "variant": variant})
        configs.append(config_from_args(namespace, xla=args.xla, **defaults))
    if configs and configs[0].strategy == "none":
        from hierlstm.timing.devices import precision_supported, resolve_device

        try:
            resolve_device(configs[0].device)  # gpu:9 on a machine without it
        except ValueError as error:
            raise UsageError(str(error)) from None
        ok, message = precision_supported(configs[0].precision, configs[0].device)
        if not ok:
            raise UsageError(message)
        if message:  # runs, but the user should know (float16 emulated on a CPU)
            print(f"warning: {message}", file=sys.stderr)
    return configs


def _within_limits(configs) -> None:
    """The server limits of `hierlstm.timing.limits` (HIERLSTM_MAX_BATCH, ...) apply to the command
    line too, so a script cannot ask for what the app would refuse; raise them to go further."""
    from hierlstm.timing.limits import LimitError, check_limits

    for config in configs:
        try:
            check_limits(config)
        except LimitError as error:
            raise UsageError(str(error)) from None


def _store(args):
    if getattr(args, "no_store", False):
        if args.db:
            raise UsageError("--db and --no-store cannot be used together.")
        return None
    from hierlstm.results.store import ResultStore

    try:
        return ResultStore(args.db)
    except (ValueError, OSError) as error:
        raise UsageError(f"--db: {error}") from None


def environment() -> dict:
    import datetime
    import socket

    from hierlstm.timing.devices import device_report

    report = device_report()
    return {
        "created_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "python": report.python,
        "tensorflow": report.tensorflow,
        "keras": report.keras,
        "numpy": report.numpy,
        "machine": report.machine,
        "cpu_cores": report.cpu_cores,
        "gpus": [gpu.name for gpu in report.gpus],
        "cudnn_available": report.cudnn_available,
        "cudnn_reason": report.cudnn_reason,
    }


def _progress(enabled: bool):
    def report(fraction: float, message: str) -> None:
        print(f"\r[{fraction:4.0%}] {message[:70]:<70}", end="", file=sys.stderr, flush=True)
        if fraction >= 1.0:
            print(file=sys.stderr)

    return report if enabled else None


def cmd_bench(args) -> int:
    from hierlstm.timing.harness import compare

    configs = _run_configs(args)
    _within_limits(configs)
    repeats = _count("--repeats", args.repeats, 1)
    warmup = _count("--warmup", args.warmup)
    store = _store(args)
    if configs[0].strategy != "none":
        return _bench_scaling(args, configs, store, repeats=repeats, warmup=warmup)
    names = [config.variant for config in configs]
    baseline = names.index("nested") if "nested" in names else 0
    outcome = compare(
        configs,
        warmup=warmup,
        repeats=repeats,
        seed=_seed(args.seed),
        baseline=baseline,
        on_progress=_progress(sys.stderr.isatty()),
    )
    ids = [store.add(result) for result in outcome.results] if store else []
    rows = []
    for index, result in enumerate(outcome.results):
        row = result.to_dict()
        row["speedup_vs_baseline"] = outcome.speedups[index]
        row["baseline"] = names[baseline]
        if ids:
            row["id"] = ids[index]
        rows.append(row)
    if args.json:
        env = environment()
        if store:
            env["stored_in"] = str(store.path)
        print(json.dumps({"environment": env, "results": rows}, indent=2, default=_json_default))
    else:
        print(format_bench(rows))
        if store:
            print(f"stored {len(ids)} results in {store.path}", file=sys.stderr)
    return 0 if all(result.status == "ok" for result in outcome.results) else 1


def cmd_worker(args) -> int:
    configs = _run_configs(args, strategy="multi_worker")
    _within_limits(configs)
    repeats = _count("--repeats", args.repeats, 1)
    warmup = _count("--warmup", args.warmup)
    # Every worker measures and prints; only the chief (task 0) stores, so a shared results
    # file gets each measurement once.
    store = _store(args) if int(args.task_index) == 0 else None
    worker = {"cluster": args.cluster.split(","), "task_index": int(args.task_index)}
    return _bench_scaling(args, configs, store, repeats=repeats, warmup=warmup, worker=worker)


def _bench_scaling(args, configs, store, *, repeats: int, warmup: int, worker=None) -> int:
    """bench/worker under a strategy: each variant with one replica in the same rounds."""
    from hierlstm.timing.sweeps import scaling

    outcomes = [
        scaling(
            config,
            warmup=warmup,
            repeats=repeats,
            seed=_seed(args.seed),
            on_progress=_progress(sys.stderr.isatty()),
        )
        for config in configs
    ]
    rows, stored = [], 0
    for outcome in outcomes:
        row = outcome.to_dict()
        if store:
            row["id"] = store.add(outcome.result)
            stored += 1
            if outcome.one_replica is not None:
                row["one_replica"]["id"] = store.add(outcome.one_replica)
                stored += 1
        rows.append(row)
    if args.json:
        env = environment()
        if store:
            env["stored_in"] = str(store.path)
        document = {"environment": env, "results": rows}
        if worker:
            document["worker"] = worker
        print(json.dumps(document, indent=2, default=_json_default))
    else:
        print(format_scaling(rows))
        if store:
            print(f"stored {stored} results in {store.path}", file=sys.stderr)
    ok = all(
        outcome.status == "ok" and outcome.one_replica and outcome.one_replica.status == "ok"
        for outcome in outcomes
    )
    return 0 if ok else 1


def cmd_sweep(args) -> int:
    import pandas as pd

    from hierlstm.timing.sweeps import SWEEP_AXES, sweep

    if args.axis not in SWEEP_AXES:
        raise UsageError(f"--axis must be one of {', '.join(SWEEP_AXES)}; got {args.axis!r}.")
    if args.csv and args.json:
        raise UsageError("--csv and --json cannot be used together.")
    values = _sweep_values(args.values)
    if args.shard:
        index, count = _shard(args.shard)
        total, values = len(values), values[index::count]
        print(
            f"shard {index}/{count}: {len(values)} of {total} values "
            f"({', '.join(map(str, values)) or 'none'})",
            file=sys.stderr,
        )
    configs = _run_configs(args)
    _within_limits(config.replace(**{args.axis: max(values)}) for config in configs if values)
    repeats = _count("--repeats", args.repeats, 1)
    warmup = _count("--warmup", args.warmup)
    store = _store(args)
    on_point = store.add if store else None
    frames = [
        sweep(
            config,
            args.axis,
            values,
            warmup=warmup,
            repeats=repeats,
            seed=_seed(args.seed),
            on_progress=_progress(sys.stderr.isatty()),
            on_point=on_point,
        )
        for config in configs
    ]
    table = pd.concat(frames, ignore_index=True)
    if args.csv:
        table.to_csv(args.csv, index=False)
        print(f"wrote {len(table)} points to {args.csv}", file=sys.stderr)
    elif args.json:
        points = json.loads(table.to_json(orient="records"))
        print(
            json.dumps(
                {
                    "environment": environment(),
                    "axis": args.axis,
                    "shard": args.shard,
                    "points": points,
                },
                indent=2,
            )
        )
    else:
        lines = [
            (
                row.variant,
                row.value,
                row.status,
                f"{row.median_s * 1e3:.2f}" if row.status == "ok" else row.error,
                f"{row.first_call_s:.2f}" if row.status == "ok" else "",
            )
            for row in table.itertuples()
        ]
        print(_table(("variant", args.axis, "status", "median ms", "first call s"), lines))
    return 0 if (table["status"] == "ok").all() else 1

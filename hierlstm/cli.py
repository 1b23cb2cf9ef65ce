"""Command line: `python -m hierlstm variants | trace | check | bench | sweep | worker | results`.

Every bad argument exits with status 2 and one line on stderr starting `error:`; no traceback.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

SIZE_FLAGS = (
    "batch_size",
    "time_steps",
    "height",
    "filters",
    "kernel_size",
    "pool_height",
    "inner_units",
    "outer_units",
)

# Text flags parsed by RunConfig.from_strings, named as its fields.
CONFIG_FLAGS = (*SIZE_FLAGS, "precision", "lstm_kernel", "device", "strategy", "devices")


class UsageError(Exception):
    """A bad argument: reported as one `error:` line with exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def _add_geometry(parser, *, variant: bool):
    if variant:
        parser.add_argument("--variant", required=True, help="a name from `variants`")
    for name in SIZE_FLAGS:
        parser.add_argument("--" + name.replace("_", "-"), dest=name, metavar="N")
    parser.add_argument("--precision", help="float32 | mixed_float16 | mixed_bfloat16")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def build_parser() -> Parser:
    parser = Parser(prog="python -m hierlstm", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    listing = commands.add_parser("variants", help="list the execution strategies")
    listing.add_argument("--json", action="store_true")
    trace = commands.add_parser("trace", help="every shape through one variant")
    _add_geometry(trace, variant=True)
    _add_strategy(trace)
    check = commands.add_parser("check", help="every variant against the numpy reference")
    _add_geometry(check, variant=False)
    check.add_argument("--seed", default="0", metavar="N")
    check.add_argument("--xla", action="store_true", help="compile each variant with XLA")

    bench = commands.add_parser("bench", help="time variants side by side (interleaved)")
    _add_run_options(bench)
    sweep = commands.add_parser("sweep", help="time variants over time steps or batch sizes")
    _add_run_options(sweep)
    sweep.add_argument("--axis", required=True, help="time_steps | batch_size")
    sweep.add_argument("--values", required=True, help="comma-separated, e.g. 25,50,100")
    sweep.add_argument("--csv", metavar="FILE", help="write the sweep table as CSV to FILE")
    sweep.add_argument(
        "--shard",
        metavar="I/N",
        help="run only values I, I+N, I+2N, ... (0 <= I < N): N machines share one sweep",
    )
    worker = commands.add_parser(
        "worker", help="one member of a multi-worker run (MultiWorkerMirroredStrategy)"
    )
    _add_run_options(worker, strategy=False)
    worker.add_argument(
        "--cluster",
        required=True,
        metavar="HOST:PORT,...",
        help="every worker's address, the same list and order on every worker",
    )
    worker.add_argument("--task-index", required=True, metavar="I", help="this worker's place")

    results = commands.add_parser("results", help="stored measurements")
    actions = results.add_subparsers(dest="action", metavar="ACTION")
    listing = actions.add_parser("list", help="stored runs, newest first")
    _add_db(listing)
    listing.add_argument("--variant")
    listing.add_argument("--device")
    listing.add_argument("--json", action="store_true")
    export = actions.add_parser("export", help="write every stored run as CSV or JSON")
    _add_db(export)
    export.add_argument("--format", default="csv", help="csv | json")
    export.add_argument("--output", metavar="FILE", help="default: standard output")
    imported = actions.add_parser("import", help="add runs from a CSV or JSON export")
    _add_db(imported)
    imported.add_argument("file")
    return parser


def _add_db(parser):
    parser.add_argument(
        "--db",
        metavar="PATH",
        help="results file (default: $HIERLSTM_DB or the user data directory)",
    )


def _add_strategy(parser):
    parser.add_argument("--strategy", help="none | mirrored | multi_worker (tf.distribute)")
    parser.add_argument(
        "--devices", help="the mirrored replicas, e.g. gpu:0,gpu:1 (default: every GPU)"
    )


def _add_run_options(parser, *, strategy: bool = True):
    parser.add_argument(
        "--variant", action="append", required=True, help="repeat to time several variants"
    )
    if strategy:
        _add_strategy(parser)
    parser.add_argument(
        "--logical-cpus",
        dest="logical_cpus",
        metavar="N",
        help="split the CPU into N logical devices (cpu:0..cpu:N-1) before TensorFlow starts",
    )
    for name in SIZE_FLAGS:
        parser.add_argument("--" + name.replace("_", "-"), dest=name, metavar="N")
    parser.add_argument("--precision", help="float32 | mixed_float16 | mixed_bfloat16")
    parser.add_argument("--xla", action="store_true", help="compile with XLA (jit_compile)")
    parser.add_argument("--lstm-kernel", dest="lstm_kernel", help="auto | generic")
    parser.add_argument("--device", help="auto | cpu | gpu:N")
    parser.add_argument("--repeats", default="20", metavar="N")
    parser.add_argument("--warmup", default="3", metavar="N")
    parser.add_argument("--seed", default="0", metavar="N")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    _add_db(parser)
    parser.add_argument("--no-store", action="store_true", help="do not store the results")


def config_from_args(args, **defaults):
    """A RunConfig from the parsed flags (text, validated with RunConfig's messages)."""
    from hierlstm.config import RunConfig

    text = {
        name: getattr(args, name)
        for name in (*CONFIG_FLAGS, "variant")
        if getattr(args, name, None) is not None
    }
    try:
        return RunConfig.from_strings(text, **defaults)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _count(flag: str, text: str, low: int = 0, high: int = 10**6) -> int:
    if not text.isdigit() or not low <= int(text) <= high:
        raise UsageError(f"{flag} must be a whole number from {low} to {high}; got {text!r}.")
    return int(text)


def _seed(text: str) -> int:
    return _count("--seed", text)


def cmd_variants(args) -> int:
    from hierlstm.variants import VARIANTS

    rows = [
        {
            "name": v.name,
            "title": v.title,
            "can_use_cudnn": v.can_use_cudnn,
            "static_time": v.static_time,
            "explanation": v.explanation,
        }
        for v in VARIANTS.values()
    ]
    if args.json:
        print(json.dumps({"variants": rows}, indent=2))
        return 0
    for row in rows:
        cudnn = "cuDNN possible" if row["can_use_cudnn"] else "never cuDNN"
        print(f"{row['name']:<17} {row['title']}  [{cudnn}]")
        print(f"{'':<17} {row['explanation']}\n")
    return 0


def cmd_trace(args) -> int:
    from hierlstm.limits import check_trace_budget
    from hierlstm.trace import trace_report

    config = config_from_args(args)
    try:
        check_trace_budget(config)
        report = trace_report(config)
    except ValueError as error:  # the batch does not split over the replicas; no cluster
        raise UsageError(str(error)) from None
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(format_trace(report))
    return 0


def _shape(dims) -> str:
    return "(" + ", ".join("None" if d is None else str(d) for d in dims) + ")"


def format_trace(report: dict) -> str:
    header = ("step", "layer", "symbolic", "concrete", "axes", "params", "MFLOPs", "KiB")
    rows = [
        (
            "  " * step["depth"]
            + step["path"]
            + (f" x{step['calls']}" if step["calls"] > 1 else ""),
            step["layer"],
            _shape(step["symbolic_shape"]),
            _shape(step["concrete_shape"]),
            ", ".join(step["axes"]),
            f"{step['params']:,}",
            f"{step['flops'] / 1e6:,.2f}",
            f"{step['output_bytes'] / 1024:,.1f}",
        )
        for step in report["layers"]
    ]
    lines = _table(header, rows).splitlines()
    config = report["config"]
    replicas = report.get("replicas", 1)
    batch = f"batch {config['batch_size']}"
    if replicas > 1:
        batch += (
            f" ({config['strategy']}: {replicas} replicas x {report['per_replica_batch']}; "
            "shapes are one replica's)"
        )
    lines.insert(
        0, f"{config['variant']}: {batch}, time {config['time_steps']}, {config['precision']}\n"
    )
    per = "per replica per forward pass" if replicas > 1 else "per forward pass"
    lines.append(
        f"\ntotal params {report['total_params']:,}; total {report['total_flops'] / 1e6:,.2f} "
        f"MFLOPs {per}; dependent chain {report['dependent_steps']} steps\n"
    )
    lines += [f"{step['path']}: {step['note']}" for step in report["layers"]]
    return "\n".join(lines)


def cmd_check(args) -> int:
    from hierlstm.check import check_variants

    config = config_from_args(args, batch_size=4, time_steps=10)
    config = config.replace(xla=args.xla)
    results = check_variants(config, seed=_seed(args.seed))
    if args.json:
        print(json.dumps({"results": [result.to_dict() for result in results]}, indent=2))
    else:
        print(
            f"batch {config.batch_size}, time {config.time_steps}, {config.precision}"
            f"{', XLA' if config.xla else ''}: max |variant - numpy reference|"
        )
        for result in results:
            verdict = "ok" if result.ok else "FAIL"
            print(
                f"  {result.variant:<17} {result.max_abs_diff:.2e}  (tolerance "
                f"{result.tolerance:.0e})  {verdict}"
            )
    return 0 if all(result.ok for result in results) else 1


def _run_configs(args, **defaults) -> list:
    """One RunConfig per --variant, all other settings shared."""
    configs = []
    for variant in args.variant:
        namespace = argparse.Namespace(**{**vars(args), "variant": variant})
        configs.append(config_from_args(namespace, xla=args.xla, **defaults))
    if configs and configs[0].strategy == "none":
        from hierlstm.devices import precision_supported, resolve_device

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
    """The server limits of `hierlstm.limits` (HIERLSTM_MAX_BATCH, ...) apply to the command
    line too, so a script cannot ask for what the app would refuse; raise them to go further."""
    from hierlstm.limits import LimitError, check_limits

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
    from hierlstm.store import ResultStore

    try:
        return ResultStore(args.db)
    except (ValueError, OSError) as error:
        raise UsageError(f"--db: {error}") from None


def environment() -> dict:
    import datetime
    import socket

    from hierlstm.devices import device_report

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
    from hierlstm.bench import compare

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
    from hierlstm.bench import scaling

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


def format_scaling(rows) -> str:
    header = (
        "variant",
        "replicas",
        "per replica",
        "median ms",
        "samples/s",
        "1 replica samples/s",
        "efficiency (p10-p90)",
        "output checksum",
    )
    lines = []
    for row in rows:
        if row["status"] != "ok":
            lines.append((row["variant"], "failed: " + row["error"], *[""] * 6))
            continue
        lines.append(
            (
                row["variant"] + (" (noisy)" if row["noisy"] else ""),
                row["replicas"],
                row["per_replica_batch"],
                f"{row['median_s'] * 1e3:.2f}",
                f"{row['throughput']:.1f}",
                f"{row['one_replica_throughput']:.1f}",
                f"{row['scaling_efficiency']:.2f} ({row['efficiency_p10']:.2f}-"
                f"{row['efficiency_p90']:.2f})",
                row["output_checksum"],
            )
        )
    config = rows[0]["config"]
    title = (
        f"{config['strategy']}, global batch {config['batch_size']}, time "
        f"{config['time_steps']}, {config['precision']}{', XLA' if config['xla'] else ''}; "
        "efficiency = samples/s / (replicas x samples/s of one replica running the per-replica "
        "batch), paired per round\n"
    )
    notes = sorted({row["device"] for row in rows if row["status"] == "ok"})
    if any("/CPU:" in row["device"] and row["replicas"] > 1 for row in rows):
        notes.append(
            "CPU replicas share this machine's cores: the efficiency says nothing about GPUs."
        )
    return "\n".join([title, _table(header, lines), *notes])


def _json_default(value):
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def format_bench(rows) -> str:
    header = (
        "variant",
        "median ms",
        "p10-p90 ms",
        "IQR/med",
        "first call s",
        "speed-up",
        "GFLOP/s",
        "kernel",
    )
    lines = []
    for row in rows:
        if row["status"] != "ok":
            lines.append((row["variant"], "failed: " + row["error"], "", "", "", "", "", ""))
            continue
        lines.append(
            (
                row["variant"] + (" (noisy)" if row["noisy"] else ""),
                f"{row['median_s'] * 1e3:.2f}",
                f"{row['p10_s'] * 1e3:.2f}-{row['p90_s'] * 1e3:.2f}",
                f"{row['iqr_s'] / row['median_s']:.2f}",
                f"{row['first_call_s']:.2f}",
                f"{row['speedup_vs_baseline']:.2f}x",
                f"{row['gflops_per_s']:.2f}",
                row["kernel"],
            )
        )
    config = rows[0]["config"]
    title = (
        f"batch {config['batch_size']}, time {config['time_steps']}, {config['precision']}"
        f"{', XLA' if config['xla'] else ''}; speed-up = {rows[0]['baseline']} time / "
        "variant time, paired per round\n"
    )
    table = _table(header, lines)
    reasons = sorted(
        {
            f"generic kernel: {row['kernel_reason']}"
            for row in rows
            if row["status"] == "ok" and row["kernel"] == "generic"
        }
    )
    return "\n".join([title, table, *reasons])


def _table(header, rows) -> str:
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    lines = [
        "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in (header, *rows)
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)


def _sweep_values(text: str) -> list[int]:
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts or not all(part.isdigit() for part in parts):
        raise UsageError(
            f"--values must be comma-separated whole numbers, e.g. 25,50,100; got {text!r}."
        )
    return [int(part) for part in parts]


def _shard(text: str) -> tuple[int, int]:
    """ "I/N" -> (I, N). Shard I takes values I, I+N, I+2N, ...: disjoint shards whose union is
    every value, each spread over the whole range (so no shard gets all the slow points)."""
    match = re.fullmatch(r"\s*(\d{1,6})\s*/\s*(\d{1,6})\s*", text)
    if not match or not int(match.group(1)) < int(match.group(2)):
        raise UsageError(f"--shard must be I/N with 0 <= I < N; got {text!r}.")
    return int(match.group(1)), int(match.group(2))


def cmd_sweep(args) -> int:
    import pandas as pd

    from hierlstm.bench import SWEEP_AXES, sweep

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


def cmd_results(args) -> int:
    if args.action is None:
        raise UsageError("choose an action: list, export, import (see results --help).")
    store = _store(args)
    if args.action == "list":
        rows = store.rows(variant=args.variant, device=args.device)
        if args.json:
            print(rows.to_json(orient="records", indent=2))
        else:
            lines = [
                (
                    row.created_at[:19],
                    row.variant,
                    row.device,
                    row.status,
                    f"{row.median_s * 1e3:.2f}" if row.status == "ok" else row.error[:40],
                    row.id,
                )
                for row in rows.itertuples()
            ]
            print(
                _table(("created (UTC)", "variant", "device", "status", "median ms", "id"), lines)
            )
        return 0
    if args.action == "export":
        if args.format not in ("csv", "json"):
            raise UsageError(f"--format must be csv or json; got {args.format!r}.")
        export = store.export_csv if args.format == "csv" else store.export_json
        if args.output:
            export(args.output)
            print(f"exported {store.count()} results to {args.output}", file=sys.stderr)
        else:
            print(export(), end="")
        return 0
    try:
        report = store.import_file(args.file)
    except (ValueError, OSError) as error:
        raise UsageError(str(error).splitlines()[0]) from None
    print(f"imported {report.added} results, skipped {report.skipped} already stored")
    return 0


COMMANDS = {
    "variants": cmd_variants,
    "trace": cmd_trace,
    "check": cmd_check,
    "bench": cmd_bench,
    "sweep": cmd_sweep,
    "worker": cmd_worker,
    "results": cmd_results,
}


def _logical_cpus(args) -> int | None:
    text = getattr(args, "logical_cpus", None)
    return None if text is None else _count("--logical-cpus", text, 1, 64)


def _join_cluster(args) -> None:
    """TF_CONFIG for this worker, from --cluster and --task-index (read when the strategy is
    made, right after TensorFlow's import)."""
    from hierlstm.distribute import parse_cluster, set_cluster

    try:
        addresses = parse_cluster(args.cluster)
        set_cluster(addresses, _count("--task-index", args.task_index, 0, len(addresses) - 1))
    except ValueError as error:
        raise UsageError(str(error)) from None


def _start_devices(args, logical_cpus: int | None) -> None:
    """What must happen before TensorFlow's runtime starts: the logical CPUs, then the
    multi-worker strategy (it configures collective ops, which only a fresh runtime allows)."""
    from hierlstm import distribute

    try:
        if logical_cpus:
            distribute.ensure_logical_cpus(logical_cpus)
        if args.command == "worker" or getattr(args, "strategy", None) == "multi_worker":
            distribute.multi_worker_strategy()
    except (RuntimeError, ValueError) as error:
        raise UsageError(str(error)) from None


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise UsageError(f"choose a command: {', '.join(COMMANDS)} (see --help).")
        logical_cpus = _logical_cpus(args)
        if args.command == "worker":
            _join_cluster(args)
        from hierlstm._native import import_tensorflow_quietly

        tensorflow = import_tensorflow_quietly()
        tensorflow.get_logger().setLevel("ERROR")  # one trace per variant is intended, not a leak
        _start_devices(args, logical_cpus)
        return COMMANDS[args.command](args)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

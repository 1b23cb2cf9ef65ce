"""The timing commands: `bench`, `sweep`, `worker`. Each refuses what the server's limits
refuse before building anything, times through `hierlstm.timing`, and stores every result."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from hierlstm.backends import runtime_refusal
from hierlstm.cli.flags import (
    UsageError,
    backends_from_args,
    config_from_args,
    refuse_unsupported,
    shard_of,
    timing_from_args,
    usage,
    value_list,
)
from hierlstm.cli.format import format_bench, format_scaling, format_sweep, json_default
from hierlstm.config import SWEEP_AXES, Timing
from hierlstm.refusals import refusing, writable_file
from hierlstm.registry import BACKEND_RECORDS


def run_settings(args) -> tuple[list, Timing]:
    """One RunConfig per --variant and --backend (the variants x backends product, all other
    settings shared) and the Timing: the checks that need no TensorFlow, so `main` runs them
    before importing it. A variant that a backend cannot run is refused, naming the backends it
    has, before anything runs."""
    strategy = {"strategy": "multi_worker"} if args.command == "worker" else {}
    if args.optimizer is not None and args.task != "training":
        raise UsageError("--optimizer sets a training step's update; add --task training.")
    backends = backends_from_args(args)
    configs = []
    for variant in args.variant:
        for backend in backends:
            refuse_unsupported(variant, backend)
            namespace = argparse.Namespace(**{**vars(args), "variant": variant})
            config = config_from_args(namespace, xla=args.xla, backend=backend, **strategy)
            if config.strategy != "none" and not BACKEND_RECORDS[backend].strategies:
                raise UsageError(
                    f"--strategy {config.strategy} is TensorFlow's tf.distribute; --backend "
                    f"{backend} runs on one device (strategy none)."
                )
            if message := runtime_refusal(config):
                raise UsageError(message)
            configs.append(config)
    return configs, timing_from_args(args)


def sweep_values(args) -> list[int]:
    """The sweep's axis and values (this machine's shard of them), checked without TensorFlow."""
    if args.axis not in SWEEP_AXES:
        raise UsageError(f"--axis must be one of {', '.join(SWEEP_AXES)}; got {args.axis!r}.")
    if args.csv and args.json:
        raise UsageError("--csv and --json cannot be used together.")
    values = value_list(args.values)
    if args.shard:
        index, count = shard_of(args.shard)
        values = values[index::count]
    return values


def check_device(config) -> None:
    """What needs TensorFlow: the device exists, the precision runs there (a warning on stderr
    when it runs but the user should know: float16 emulated on a CPU)."""
    from hierlstm.hardware import precision_supported, resolve_device

    with usage():
        resolve_device(config.device)  # gpu:9 on a machine without it
    ok, message = precision_supported(config.precision, config.device)
    if not ok:
        raise UsageError(message)
    if message:
        print(f"warning: {message}", file=sys.stderr)


def in_process(configs) -> bool:
    """Whether the run happens in this process (`hierlstm.backends.dispatch`); else every config
    goes to the backends' workers and this process imports no TensorFlow."""
    from hierlstm.backends.dispatch import runs_here

    return runs_here(config.backend for config in configs)


def _run_configs(args) -> tuple[list, Timing]:
    """`run_settings`, then `check_device` for a run in this process (one device: the configs
    share their settings; a worker's device is its backend's to check)."""
    configs, timing = run_settings(args)
    if configs and configs[0].strategy == "none" and in_process(configs):
        check_device(configs[0])
    return configs, timing


def within_limits(configs) -> None:
    """The server limits of `hierlstm.admission.limits` (HIERLSTM_MAX_BATCH, ...) apply to the
    command line too, so a script cannot ask for what the app would refuse; raise them to go
    further. A run in the workers asks the driver (nvidia-smi) whether there is a GPU, since
    this process does not import TensorFlow to ask it."""
    from hierlstm.admission import LimitError, check_limits, limits

    configs = list(configs)
    bounds = (
        None if in_process(configs) else limits.current_limits(sees_a_gpu=limits.driver_sees_a_gpu)
    )
    for config in configs:
        with usage(LimitError):
            check_limits(config, bounds)


def open_store(args):
    """The results file of --db (else $HIERLSTM_DB or the default), opened before a run starts so
    that a file the machine refuses is said (`Refused`) before anything is measured."""
    if getattr(args, "no_store", False):
        if args.db:
            raise UsageError("--db and --no-store cannot be used together.")
        return None
    from hierlstm.results.store import ResultStore

    return ResultStore(args.db)


def measured(run_and_store, *arguments, **options):
    """`run_and_store(*arguments, **options)` with a progress line on a terminal: its
    `hierlstm.measure.Stored` (what it measured, the ids stored, and `reason`, the refusal's
    sentence when the store refused the writes: the results are printed all the same)."""
    return run_and_store(*arguments, **options, on_progress=progress_printer())


def said_not_stored(refused: str) -> int:
    """The line after a printed result that the store refused; exit status 1."""
    print(f"error: {refused} The results above were measured but not stored.", file=sys.stderr)
    return 1


def printed(args, configs, document, text, notes=(), *, store=None, refused="", ok=True) -> int:
    """A timing command's end: `document` after the run's `environment` (`store`'s path in it)
    as --json, else `text()` and the `notes` on stderr; exit 1 when the store refused the
    results (said after them) or a run failed."""
    if args.json:
        document = {"environment": environment(configs, store), **document}
        print(json.dumps(document, indent=2, default=json_default))
    else:
        if text:
            print(text())
        for note in notes:
            print(note, file=sys.stderr)
    return said_not_stored(refused) if refused else 0 if ok else 1


def stored_note(store, refused: str, what: str) -> list[str]:
    """The line that says where `what` went: none without a store, or when it refused."""
    return [f"stored {what} in {store.path}"] if store and not refused else []


def environment(configs, store=None) -> dict:
    """`--json`'s environment: where, when, and the versions; for a run in the workers, each
    backend's (its worker's are in every result's `versions` too), without TensorFlow here;
    with a `store`, the file the results went to."""
    import datetime
    import platform
    import socket

    where = {
        "created_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
    }
    stored = {"stored_in": str(store.path)} if store else {}
    if not in_process(configs):
        from hierlstm.backends.worker import backend_versions
        from hierlstm.hardware.cpu import cpu_cores, machine

        return (
            where
            | {
                "python": platform.python_version(),
                "machine": machine(),
                "cpu_cores": cpu_cores(),
                "backends": {
                    config.backend: backend_versions(config.backend) for config in configs
                },
            }
            | stored
        )
    from hierlstm.hardware import device_report

    report = device_report()
    versions = {name: getattr(report, name) for name in ("python", "tensorflow", "keras", "numpy")}
    return (
        where
        | versions
        | {
            "machine": report.machine,
            "cpu_cores": report.cpu_cores,
            "gpus": [gpu.name for gpu in report.gpus],
            "cudnn_available": report.cudnn_available,
            "cudnn_reason": report.cudnn_reason,
        }
        | stored
    )


def device_lock(configs, command: str):
    """The machine-wide lock of every device `configs` run on, the wait untimed and said on stderr
    each time the holder changes. A multi-worker run takes none: its workers wait for each other
    every step, and two on one machine would wait for each other's lock for ever."""
    from hierlstm.admission import hold

    if any(config.strategy == "multi_worker" for config in configs):
        return contextlib.nullcontext(0.0)
    from hierlstm.admission import device_keys

    here = in_process(configs)
    keys = {key for config in configs for key in device_keys(config, tensorflow=here)}
    said = []

    def waiting(holder, seconds: float, place: int) -> None:
        who = holder.describe("en")
        if not said or said[-1] != who:
            said.append(who)
            print(
                f"waiting for another run ({who}) to finish: one timing run per device at a "
                "time; the wait is not timed.",
                file=sys.stderr,
                flush=True,
            )

    return hold(keys, name=command, program="cli", on_wait=waiting)


def progress_printer(enabled: bool | None = None):
    """A progress line on stderr (`enabled`: by default, when stderr is a terminal)."""

    def report(fraction: float, message: str) -> None:
        print(f"\r[{fraction:4.0%}] {message[:70]:<70}", end="", file=sys.stderr, flush=True)
        if fraction >= 1.0:
            print(file=sys.stderr)

    return report if (sys.stderr.isatty() if enabled is None else enabled) else None


def label(config, with_backend: bool) -> str:
    """A config's name in a table: its variant, and its backend when the run had several."""
    return f"{config.variant} [{config.backend}]" if with_backend else config.variant


def cmd_bench(args) -> int:
    """The configs compared in interleaved rounds, in this process or the backends' workers
    (`hierlstm.measure`), stored, and printed as a table or `--json`."""
    from hierlstm.measure import compare_and_store

    configs, timing = _run_configs(args)
    within_limits(configs)
    store = open_store(args)
    if configs[0].strategy != "none":
        return _bench_scaling(args, configs, store, timing)
    names = [config.variant for config in configs]
    baseline = names.index("nested") if "nested" in names else 0
    with_backend = not in_process(configs)
    with device_lock(configs, "bench"):
        run = measured(compare_and_store, configs, timing, store, baseline=baseline)
    outcome, ids, refused = run.value, run.ids, run.reason
    rows, named, results = [], [], outcome.results
    for index, entry in enumerate(outcome.entries):
        result = entry.result
        row = result.to_dict()
        row["speedup_vs_baseline"] = entry.speedup.median
        row["baseline"] = label(configs[baseline], with_backend)
        if index < len(ids):
            row["id"] = ids[index]
        rows.append(row)
        named.append({**row, "variant": label(result.config, with_backend)})
    failed = [f"{label(r.config, True)} failed: {r.error}" for r in results if r.status != "ok"]
    return printed(
        args, configs, {"results": rows}, lambda: format_bench(named),
        (failed if with_backend else []) + stored_note(store, refused, f"{len(ids)} results"),
        store=store, refused=refused, ok=not failed,
    )  # fmt: skip


def cmd_worker(args) -> int:
    configs, timing = _run_configs(args)
    within_limits(configs)
    # Every worker measures and prints; only the chief (task 0) stores, so a shared results
    # file gets each measurement once.
    store = open_store(args) if int(args.task_index) == 0 else None
    worker = {"cluster": args.cluster.split(","), "task_index": int(args.task_index)}
    return _bench_scaling(args, configs, store, timing, worker=worker)


def _bench_scaling(args, configs, store, timing, *, worker=None) -> int:
    """bench/worker under a strategy: each variant with one replica in the same rounds."""
    from hierlstm.measure import scaling_and_store

    outcomes, rows, stored, refused = [], [], 0, ""
    with device_lock(configs, args.command):
        for config in configs:
            run = measured(scaling_and_store, config, timing, store)
            outcome, ids, refused = run.value, run.ids, run.reason or refused
            row = outcome.to_dict()
            if ids:
                row["id"] = ids[0]
                if len(ids) > 1:
                    row["one_replica"]["id"] = ids[1]
            stored += len(ids)
            outcomes.append(outcome)
            rows.append(row)
    ok = all(
        outcome.status == "ok" and outcome.one_replica and outcome.one_replica.status == "ok"
        for outcome in outcomes
    )
    return printed(
        args, configs, {"results": rows} | ({"worker": worker} if worker else {}),
        lambda: format_scaling(rows), stored_note(store, refused, f"{stored} results"),
        store=store, refused=refused, ok=ok,
    )  # fmt: skip


def cmd_sweep(args) -> int:
    """Each config timed at every value of the axis (`hierlstm.measure.sweep_and_store`), each
    point stored as it finishes; a table, `--csv` or `--json`."""
    import pandas as pd

    from hierlstm.measure import sweep_and_store

    values = sweep_values(args)
    if args.shard:
        index, count = shard_of(args.shard)
        print(
            f"shard {index}/{count}: {len(values)} of {len(value_list(args.values))} values "
            f"({', '.join(map(str, values)) or 'none'})",
            file=sys.stderr,
        )
    configs, timing = _run_configs(args)
    within_limits(config.replace(**{args.axis: max(values)}) for config in configs if values)
    store = open_store(args)
    if args.csv:  # before the sweep, not after it
        writable_file("export", args.csv)
    frames, refused = [], ""
    with device_lock(configs, "sweep"):
        for config in configs:
            run = measured(sweep_and_store, config, args.axis, values, timing, store)
            frames.append(run.value)
            refused = run.reason or refused
    table = pd.concat(frames, ignore_index=True)
    if args.csv:
        try:
            with refusing("export", args.csv):
                table.to_csv(args.csv, index=False)
        except OSError as error:  # the table goes to standard output instead, not lost
            print(table.to_csv(index=False), end="")
            print(f"error: {error} The sweep table is above instead.", file=sys.stderr)
            return 1
    points = json.loads(table.to_json(orient="records"))
    return printed(
        args, configs, {"axis": args.axis, "shard": args.shard, "points": points},
        None if args.csv else lambda: format_sweep(table, args.axis, not in_process(configs)),
        [f"wrote {len(table)} points to {args.csv}"] if args.csv else [],
        refused=refused, ok=(table["status"] == "ok").all(),
    )  # fmt: skip

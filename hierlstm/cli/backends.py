"""`check`, `bench`, `sweep` and `profile` with `--backend jax|torch`: every config runs in its
Keras backend's worker process (`hierlstm.backends.pool`), TensorFlow's too when several
backends are asked for, and this process imports no TensorFlow (the CLI works in a venv without
it). The output has the same shape as the TensorFlow-only commands', with each row's backend."""

from __future__ import annotations

import json
import sys

from hierlstm.cli.format import format_bench, json_default, text_table
from hierlstm.cli.parser import UsageError, backends_from_args, refuse_unsupported, seed_number
from hierlstm.cli.timing import (
    open_store,
    progress_printer,
    run_settings,
    said_not_stored,
    sweep_values,
)
from hierlstm.refusals import Refused


def in_workers(args) -> bool:
    """Whether the command runs in worker processes: any --backend other than tensorflow."""
    if args.command not in IN_WORKERS:
        return False
    return any(name != "tensorflow" for name in backends_from_args(args))


def worker_limits():
    """`hierlstm.admission.limits.current_limits()`, the GPU budget applying when the driver
    (nvidia-smi) reports a GPU: this process does not import TensorFlow to ask it."""
    from hierlstm.admission import limits

    return limits.current_limits(sees_a_gpu=limits.driver_sees_a_gpu)


def within_limits(configs) -> None:
    """The server limits (as `hierlstm.cli.timing.within_limits`), without TensorFlow."""
    from hierlstm.admission import LimitError, check_limits

    bounds = worker_limits()
    for config in configs:
        try:
            check_limits(config, bounds)
        except LimitError as error:
            raise UsageError(str(error)) from None


def worker_environment(configs) -> dict:
    """`bench --json`'s environment without TensorFlow: where, when, and each backend's
    versions (its worker's are in every result's `versions`)."""
    import datetime
    import os
    import platform
    import socket

    from hierlstm.backends.worker import backend_versions

    return {
        "created_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu_cores": len(os.sched_getaffinity(0)),
        "backends": {config.backend: backend_versions(config.backend) for config in configs},
    }


def _waiting(holder, seconds: float) -> None:
    print(
        f"waiting for another run ({holder.describe('en')}) to finish: one timing run per device "
        "at a time; the wait is not timed.",
        file=sys.stderr,
        flush=True,
    )


def _store_all(store, results) -> tuple[list[str], str]:
    """(stored ids, the refusal's sentence or ""): stores until the store first refuses."""
    ids = []
    for result in results:
        if store is None:
            break
        try:
            ids.append(store.add(result))
        except Refused as error:
            return ids, str(error)
    return ids, ""


def _label(config) -> str:
    return f"{config.variant} [{config.backend}]"


def bench_in_workers(args) -> int:
    from hierlstm.backends.pool import BackendPool, compare

    configs, timing = run_settings(args)
    within_limits(configs)
    store = open_store(args)
    names = [config.variant for config in configs]
    baseline = names.index("nested") if "nested" in names else 0
    with BackendPool() as pool:
        outcome = compare(
            configs,
            timing,
            baseline=baseline,
            pool=pool,
            on_progress=progress_printer(sys.stderr.isatty()),
            on_wait=_waiting,
        )
    ids, refused = _store_all(store, outcome.results)
    rows = []
    for index, result in enumerate(outcome.results):
        row = result.to_dict()
        row["speedup_vs_baseline"] = outcome.speedups[index]
        row["baseline"] = _label(configs[baseline])
        if ids and index < len(ids):
            row["id"] = ids[index]
        rows.append(row)
    if args.json:
        env = worker_environment(configs)
        if store:
            env["stored_in"] = str(store.path)
        print(json.dumps({"environment": env, "results": rows}, indent=2, default=json_default))
    else:
        labels = [_label(result.config) for result in outcome.results]
        shown = [{**row, "variant": label} for row, label in zip(rows, labels, strict=True)]
        print(format_bench(shown))
        for result in outcome.results:
            if result.status != "ok":
                print(f"{_label(result.config)} failed: {result.error}", file=sys.stderr)
        if store and not refused:
            print(f"stored {len(ids)} results in {store.path}", file=sys.stderr)
    if refused:
        return said_not_stored(refused)
    return 0 if all(result.status == "ok" for result in outcome.results) else 1


def sweep_in_workers(args) -> int:
    """The sweep point by point, every config of a point compared in the same rounds."""
    from hierlstm.backends.pool import BackendPool, compare

    values = sweep_values(args)
    configs, timing = run_settings(args)
    within_limits(config.replace(**{args.axis: max(values)}) for config in configs if values)
    store = open_store(args)
    points, refused = [], ""
    with BackendPool() as pool:
        for value in values:
            outcome = compare(
                [config.replace(**{args.axis: value}) for config in configs],
                timing,
                pool=pool,
                on_wait=_waiting,
            )
            ids, refused = _store_all(None if refused else store, outcome.results)
            for result in outcome.results:
                point = {"variant": result.config.variant, "backend": result.config.backend}
                point |= {"axis": args.axis, "value": value, "status": result.status}
                point |= {"error": result.error, "median_s": result.median_s}
                points.append(point | {"first_call_s": result.first_call_s})
            print(f"{args.axis} {value} done", file=sys.stderr, flush=True)
    if args.json or args.csv:
        if args.csv:
            import pandas as pd

            pd.DataFrame(points).to_csv(args.csv, index=False)
            print(f"wrote {len(points)} points to {args.csv}", file=sys.stderr)
        else:
            document = {"axis": args.axis, "shard": args.shard, "points": points}
            print(json.dumps(document, indent=2, default=json_default))
    else:
        lines = [
            (
                f"{point['variant']} [{point['backend']}]",
                point["value"],
                point["status"],
                f"{point['median_s'] * 1e3:.2f}" if point["status"] == "ok" else point["error"],
                f"{point['first_call_s']:.2f}" if point["status"] == "ok" else "",
            )
            for point in points
        ]
        header = ("variant [backend]", args.axis, "status", "median ms", "first call s")
        print(text_table(header, lines))
    if refused:
        return said_not_stored(refused)
    return 0 if all(point["status"] == "ok" for point in points) else 1


def check_in_workers(args) -> int:
    """Each backend's oracle report (`hierlstm.backends.local.check`), from its worker."""
    from hierlstm.backends.pool import BackendPool, RunFailed
    from hierlstm.cli.commands import check_config

    config = check_config(args)
    seed = seed_number(args.seed)
    reports, ok = {}, True
    with BackendPool() as pool:
        for backend in backends_from_args(args):
            try:
                reports[backend] = pool.check(config.replace(backend=backend), seed=seed)
            except RunFailed as error:
                reports[backend] = {"ok": False, "error": error.result.error}
            ok = ok and _report_ok(reports[backend])
    if args.json:
        print(
            json.dumps({"task": config.task, "backends": reports}, indent=2, default=json_default)
        )
        return 0 if ok else 1
    for backend, report in reports.items():
        print(_report_text(backend, config, report))
    return 0 if ok else 1


def _report_ok(report) -> bool:
    return bool(report.get("ok")) and "error" not in report


def _report_text(backend: str, config, report) -> str:
    """One backend's oracle report as `check` prints TensorFlow's: a line per variant."""
    lines = [
        f"{backend}: batch {config.batch_size}, time {config.time_steps}, {config.precision}: "
        "max |variant - numpy reference|, and the gradients against central differences"
    ]
    if "error" in report:
        return "\n".join([*lines, f"  FAIL: {report['error']}"])
    for row in report.get("forward", []):
        verdict = "ok" if row["ok"] else "FAIL"
        lines.append(
            f"  {row['variant']:<17} forward {row['max_abs_diff']:.2e} (tolerance "
            f"{row['tolerance']:.0e})  {verdict}"
        )
    for row in report.get("gradients", []):
        verdict = "ok" if row["ok"] else "FAIL"
        if row.get("error"):
            lines.append(f"  {row['variant']:<17} gradients {verdict}: {row['error']}")
            continue
        lines.append(
            f"  {row['variant']:<17} gradients {row['worst_error']:.1e} at {row['worst_tensor']}"
            f" (tolerance {row['tolerance']:.0e})  {verdict}"
        )
    return "\n".join(lines)


def profile_in_workers(args) -> int:
    """`profile --backend`: each backend's capture written in its worker, its summary printed
    and stored as a profile row with its backend."""
    from hierlstm.backends.pool import BackendPool, RunFailed
    from hierlstm.cli.profile import profile_settings
    from hierlstm.config import default_logdir

    config, timing, steps, logdir = profile_settings(args)
    within_limits([config])
    store = open_store(args)
    documents, status, names = [], 0, backends_from_args(args)
    for backend in names:  # every refusal before anything runs
        refuse_unsupported(config.variant, backend)
    with BackendPool() as pool:
        for backend in names:
            run = config.replace(backend=backend)
            folder = default_logdir(run) if logdir is None else logdir
            if logdir is not None and len(names) > 1:
                folder = logdir / backend  # one capture per backend, side by side
            try:
                documents.append(pool.profile(run, timing, steps=steps, logdir=folder))
            except RunFailed as error:
                print(f"profile failed on {backend}: {error.result.error}", file=sys.stderr)
                status = 1
    refused = ""
    for document in documents:
        if store is not None and not refused:
            try:
                document["stored_id"] = store.add_profile(_profile_record(document))
            except Refused as error:
                refused = str(error)
    if args.json:
        print(json.dumps({"profiles": documents}, indent=2, default=json_default))
    else:
        for document in documents:
            print(_format_profile(document))
    if refused:
        return said_not_stored(refused)
    return status


def _profile_record(document):
    from hierlstm.backends.profiles import profile_record

    return profile_record(document)


def _format_profile(document) -> str:
    config = document["config"]
    lines = [
        f"{config['variant']} on {config['backend']}: batch {config['batch_size']}, time "
        f"{config['time_steps']}, {document['steps']} profiled steps on {document['device']} "
        f"({document['kernel']} LSTM kernel)",
        f"step time: profiler {document['profiled_step_s'] * 1e3:.3f} ms, harness "
        f"{document['harness_median_s'] * 1e3:.3f} ms; {document['attribution']}",
        "",
    ]
    layer_rows = [
        (row["layer"], f"{row['time_s'] * 1e3:.3f}", f"{row['share']:.1%}")
        for row in document["layers"]
    ]
    lines += [text_table(("layer", "ms/step", "share"), layer_rows), ""]
    op_rows = [
        (row["type"], f"{row['time_s'] * 1e3:.3f}", f"{row['share']:.1%}", f"{row['ops']:g}")
        for row in document["op_types"][:12]
    ]
    lines += [text_table(("op", "ms/step", "share", "calls/step"), op_rows), ""]
    lines.append(f"capture: {document['trace']} (in {document['logdir']})")
    return "\n".join(lines)


# The commands that run in the backends' workers when any --backend is not tensorflow.
IN_WORKERS = {
    "check": check_in_workers,
    "bench": bench_in_workers,
    "sweep": sweep_in_workers,
    "profile": profile_in_workers,
}

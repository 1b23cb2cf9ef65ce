"""`check`, `bench`, `sweep` and `profile` with `--backend jax|torch`: every config runs in its
Keras backend's worker process (`hierlstm.backends.pool`), TensorFlow's too when several
backends are asked for, and this process imports no TensorFlow (the CLI works in a venv without
it). `bench` and `sweep` are the TensorFlow commands themselves (`hierlstm.cli.timing`, through
`hierlstm.measure`); `check` and `profile` ask each backend's worker. The output has the same
shape as the TensorFlow-only commands', with each row's backend."""

from __future__ import annotations

import json
import sys

from hierlstm.cli.format import json_default, text_table
from hierlstm.cli.parser import backends_from_args, refuse_unsupported, seed_number
from hierlstm.cli.timing import cmd_bench, cmd_sweep, open_store, said_not_stored, within_limits
from hierlstm.measure import IN_PROCESS, Keeper


def in_workers(args) -> bool:
    """Whether the command runs in worker processes: any --backend other than tensorflow."""
    if args.command not in IN_WORKERS:
        return False
    return any(name != IN_PROCESS for name in backends_from_args(args))


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
    keeper = Keeper(store, store.add_profile if store is not None else None)
    for document in documents:
        stored = len(keeper.ids)
        keeper(_profile_record(document))
        if len(keeper.ids) > stored:
            document["stored_id"] = keeper.ids[-1]
    if args.json:
        print(json.dumps({"profiles": documents}, indent=2, default=json_default))
    else:
        for document in documents:
            print(_format_profile(document))
    if keeper.refused is not None:
        return said_not_stored(str(keeper.refused))
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


# The commands that run in the backends' workers when any --backend is not tensorflow: bench and
# sweep go through `hierlstm.measure` as TensorFlow's do (`hierlstm.cli.timing`).
IN_WORKERS = {
    "check": check_in_workers,
    "bench": cmd_bench,
    "sweep": cmd_sweep,
    "profile": profile_in_workers,
}

"""`check`, `bench`, `sweep` and `profile` with `--backend jax|torch`: every config runs in its
backend's worker process (`hierlstm.backends.pool`), so this process imports no TensorFlow. The
output has the TensorFlow commands' shape, with each row's backend."""

from __future__ import annotations

from hierlstm.backends.dispatch import runs_here
from hierlstm.cli.flags import backends_from_args, seed_number
from hierlstm.cli.format import shown
from hierlstm.cli.profile import cmd_profile
from hierlstm.cli.timing import cmd_bench, cmd_sweep


def in_workers(args) -> bool:
    """Whether the command runs in worker processes: any --backend whose run does not happen in
    this process (`hierlstm.backends.dispatch.runs_here`)."""
    if args.command not in IN_WORKERS:
        return False
    return not runs_here(backends_from_args(args))


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
    texts = (_report_text(backend, config, report) for backend, report in reports.items())
    shown(args.json, {"task": config.task, "backends": reports}, lambda: "\n".join(texts))
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


# The commands that run in the backends' workers when any --backend is not tensorflow: bench,
# sweep and profile go through `hierlstm.measure` as TensorFlow's do.
IN_WORKERS = {
    "check": check_in_workers,
    "bench": cmd_bench,
    "sweep": cmd_sweep,
    "profile": cmd_profile,
}

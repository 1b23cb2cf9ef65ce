"""The `profile` command: one variant under each --backend's profiler, printed as tables or JSON,
its summary row stored and its log directory kept for TensorBoard or XProf.

`--json` prints {environment (as `bench --json`), profile (`ProfileResult.to_dict()`, times in
seconds per step), stored_id (null with --no-store), open_with}; with several --backend, `profiles`
holds one {profile, stored_id, open_with} per backend, each capture in `--logdir DIR/BACKEND`.
`--trace-json FILE` also writes the last profiled step as Chrome trace-event JSON. Exit 0 when the
profile ran, 1 when the run failed, 2 for a bad argument or a refused file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hierlstm.cli.flags import (
    UsageError,
    backends_from_args,
    config_from_args,
    refuse_unsupported,
    timing_from_args,
    whole_number,
)
from hierlstm.cli.format import text_table
from hierlstm.cli.timing import (
    check_device,
    device_lock,
    label,
    measured,
    open_store,
    printed,
    stored_note,
    within_limits,
)
from hierlstm.config import BOUNDS, SettingError
from hierlstm.refusals import Refused, refusing, writable_folder
from hierlstm.registry import BACKEND_RECORDS


def profile_settings(args):
    """(config, timing, steps, logdir) from the flags: the checks that need no TensorFlow."""
    if args.optimizer is not None and args.task != "training":
        raise UsageError("--optimizer sets a training step's update; add --task training.")
    config = config_from_args(args, xla=args.xla)
    steps = whole_number("--steps", args.steps, *BOUNDS["profile_steps"])
    logdir = None
    if args.logdir is not None:
        logdir = Path(args.logdir).expanduser()
        if not args.logdir.strip() or (logdir.exists() and not logdir.is_dir()):
            raise UsageError(
                f"--logdir must be a folder (it is made if missing); got {args.logdir!r}."
            )
    if args.trace_json is not None:
        trace = Path(args.trace_json).expanduser()
        if not args.trace_json.strip() or trace.is_dir():
            raise UsageError(
                f"--trace-json must name a file (its folder is made if missing); "
                f"got {args.trace_json!r}."
            )
        try:
            writable_folder("profile", trace.parent, trace)
        except Refused as error:  # its fix names --logdir: said here for this flag instead
            raise UsageError(
                f"--trace-json must be a file in a folder this process can write; got "
                f"{args.trace_json!r} ({error.refusal.kind.replace('_', ' ')})."
            ) from None
    return config, timing_from_args(args), steps, logdir


def open_commands(logdir: str) -> list[str]:
    return [f"tensorboard --logdir {logdir}", f"xprof server --logdir {logdir}"]


def cmd_profile(args) -> int:
    """The variant profiled on each --backend (`hierlstm.measure.profile_and_store`: TensorFlow's
    in this process, JAX's and torch's in their workers, one capture folder each), printed and
    each summary row stored; 1 if any profile failed, the others still printed."""
    from hierlstm.backends.pool import RunFailed
    from hierlstm.measure import profile_and_store

    config, timing, steps, logdir = profile_settings(args)  # --trace-json checked there too
    names = backends_from_args(args)
    for backend in names:  # every refusal before anything runs
        refuse_unsupported(config.variant, backend)
    configs = [config.replace(backend=backend) for backend in names]
    failures: tuple = (RunFailed,)
    if any(BACKEND_RECORDS[name].in_process for name in names):  # some run in this process
        from hierlstm.timing import RUN_FAILURES, error_line

        check_device(config)
        failures += RUN_FAILURES
    within_limits(configs)
    store = open_store(args)
    if logdir is not None:  # before the run: a folder that refuses the capture is said first
        writable_folder("profile", logdir)
    profiles, refused, status = [], "", 0
    with device_lock(configs, "profile"):
        for run in configs:
            folder = logdir / run.backend if logdir is not None and len(configs) > 1 else logdir
            try:
                stored = measured(
                    profile_and_store, run, timing, None if refused else store, steps=steps,
                    logdir=folder,
                )  # fmt: skip
            except failures as error:  # a refused setting, an op error, out of memory
                kind = "refused" if isinstance(error, SettingError) else "failed"
                line = error.result.error if isinstance(error, RunFailed) else error_line(error)
                where = "" if BACKEND_RECORDS[run.backend].in_process else f" on {run.backend}"
                print(f"profile {kind}{where}: {line}", file=sys.stderr)
                status = 1
                continue
            profiles.append((stored.value, stored.first_id))
            refused = refused or stored.reason
    if not profiles:
        return status
    if args.trace_json is not None:
        if written := write_trace([result for result, _ in profiles], Path(args.trace_json)):
            return written
    documents = [
        {
            "profile": result.to_dict(),
            "stored_id": stored_id,
            "open_with": open_commands(result.logdir),
        }
        for result, stored_id in profiles
    ]
    return printed(
        args, configs, {"profiles": documents} if len(configs) > 1 else documents[0],
        lambda: "\n\n".join(format_profile(result) for result, _ in profiles),
        stored_note(store, refused, "the profile's summary"), refused=refused, ok=status == 0,
    )  # fmt: skip


def write_trace(results, path: Path) -> int:
    """The last profiled step of each result as Chrome trace-event JSON in `path`, one process
    each (by variant, and backend when there are several); 0, or 1 with one line."""
    from hierlstm.profiling.timeline import chrome_trace

    path, several = path.expanduser(), len(results) > 1
    steps = {label(r.config, several): r.timeline for r in results if r.timeline is not None}
    document = chrome_trace(steps)
    try:
        with refusing("profile", path):
            path.write_text(json.dumps(document), encoding="utf-8")
    except OSError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    events = sum(event["ph"] == "X" for event in document["traceEvents"])
    what = f"step {results[0].timeline.step}" if len(steps) == 1 else f"{len(steps)} steps"
    print(f"wrote {what} ({events} ops) as a Chrome trace to {path}", file=sys.stderr)
    return 0


def _mib(size: float) -> str:
    return f"{size / 2**20:.3f}"


def format_memory(result) -> list[str]:
    """The memory lines: the measured peak, and for a training step its estimate by part."""
    from hierlstm.profiling import memory_estimate

    allocator = BACKEND_RECORDS[result.config.backend].allocator
    kind = {
        "gpu_allocator_peak": "the GPU allocator's peak over one call (bytes in use, weights, "
        "slots and inputs included)",
        "cpu_rss_growth": f"the growth of the process's RSS over one call: on a CPU {allocator} "
        "keeps no statistics, so no part and no peak can be measured; RSS growth misses memory "
        "the allocator reuses from earlier calls and counts other threads'",
    }.get(result.peak_memory_kind, result.peak_memory_kind)
    lines = [f"memory measured: {_mib(result.peak_memory_bytes)} MiB, {kind}"]
    estimate = memory_estimate(result.config)
    if estimate is None:
        return [*lines, "memory by part: a training step's (add --task training)", ""]
    rows = [(part, _mib(size), f"{size:,}") for part, size in estimate.items()]
    return [
        *lines,
        "memory estimated by part (a training step, from the geometry; the total assumes every "
        "part alive at once):",
        text_table(("part", "MiB", "bytes"), rows),
        "",
    ]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}"


def format_profile(result, top: int = 12) -> str:
    """The tables of one profile, then where its log is and how to open it."""
    config = result.config
    what = f"training step ({config.optimizer})" if config.task == "training" else "forward pass"
    step, harness, op_time = result.profiled_step_s, result.harness_median_s, result.op_s
    lines = [
        f"{config.variant}: batch {config.batch_size}, time {config.time_steps}, "
        f"{config.precision}{', XLA' if config.xla else ''}, one {what}, on {result.device}; "
        f"{result.steps} profiled steps after {result.warmup} untimed warm-up call(s)",
        f"step time: profiler {_ms(step)} ms (median of {result.steps} marked steps), harness "
        f"{_ms(harness)} ms (median of {result.harness_repeats} timed calls right after, profiler "
        f"off): profiling cost {step / harness - 1:+.0%}",
        f"op time {_ms(op_time)} ms per step ({op_time / step:.0%} of the profiled step): each "
        "op's self time, summed over every thread and stream; the rest of a step is the "
        "framework's own dispatch and executor work between ops",
        f"attributed {result.attribution}",
        "",
    ]
    layer_rows = [
        (row.layer, row.type, _ms(row.time_s), f"{row.share:.1%}", f"{row.ops:g}")
        for row in result.layers.itertuples()
    ]
    lines += [text_table(("layer", "type", "ms/step", "share", "ops/step"), layer_rows), ""]
    op_rows = [
        (row.type, _ms(row.time_s), f"{row.share:.1%}", f"{row.ops:g}")
        for row in result.op_types.head(top).itertuples()
    ]
    more = len(result.op_types) - top
    lines.append(text_table(("op type", "ms/step", "share", "ops/step"), op_rows))
    if more > 0:
        lines.append(f"... and {more} more op types (--json lists them all)")
    line_rows = [(row.line, _ms(row.op_s), _ms(row.busy_s)) for row in result.lines.itertuples()]
    lines += ["", text_table(("line", "op ms/step", "busy ms/step"), line_rows), ""]
    if not result.kernels.empty:  # what ran on the GPU, cuDNN's kernels by their CUDA names
        kernel_rows = [
            (row.kernel, row.op_type, row.layer, _ms(row.time_s), f"{row.launches:g}")
            for row in result.kernels.head(top).itertuples()
        ]
        header = ("device kernel", "op type", "layer", "ms/step", "launches/step")
        lines += [text_table(header, kernel_rows), ""]
    lines += format_memory(result)
    lines.append(f"log: {result.logdir}")
    lines.append("open it: " + "  or  ".join(open_commands(result.logdir)))
    return "\n".join(lines)

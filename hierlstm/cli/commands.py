"""The commands that time nothing: `variants`, `trace`, `check` (outputs, or with `--task
training` the gradients of the training loss), `learn` (the sounds task's curve), `results`."""

from __future__ import annotations

import json
import sys

from hierlstm.cli.flags import UsageError, config_from_args, inside_settings, seed_number, usage
from hierlstm.cli.format import format_diff, format_trace, json_default, shown, text_table
from hierlstm.cli.parser import CHECK_SIZES
from hierlstm.cli.timing import open_store
from hierlstm.results.schema import ResultsError


def cmd_variants(args) -> int:
    from hierlstm.config import RunConfig, named_sizes
    from hierlstm.registry import VARIANTS

    sizes = named_sizes(RunConfig())  # the question's
    rows = [
        {
            "name": v.name,
            "title": v.title(),
            "can_use_cudnn": v.can_use_cudnn,
            "static_time": v.static_time,
            "explanation": v.explanation(sizes),
        }
        for v in VARIANTS.values()
    ]
    cudnn = {True: "cuDNN possible", False: "never cuDNN"}
    lines = [
        f"{row['name']:<17} {row['title']}  [{cudnn[row['can_use_cudnn']]}]\n"
        f"{'':<17} {row['explanation']}\n"
        for row in rows
    ]
    shown(args.json, {"variants": rows}, lambda: "\n".join(lines))
    return 0


def cmd_trace(args) -> int:
    from hierlstm.admission import check_trace_budget
    from hierlstm.distributed import planned_replicas
    from hierlstm.model.trace import trace_report

    config = config_from_args(args)
    with usage():  # the batch does not split over the replicas; no cluster
        check_trace_budget(config)
        report = trace_report(config, replicas=planned_replicas(config))
    shown(args.json, report, lambda: format_trace(report))
    return 0


def check_config(args):
    """The config `check` runs at: batch 4, time 10 unless given; its task says whether the
    outputs or the training gradients are checked. Checked before TensorFlow is imported."""
    return config_from_args(args, **CHECK_SIZES, xla=args.xla)


def cmd_check(args) -> int:
    config = check_config(args)
    seed = seed_number(args.seed)
    if config.task == "training":
        return _check_training(args, config, seed)
    from hierlstm.model.check import check_variants
    from hierlstm.timing import RUN_FAILURES, error_line

    # A variant that cannot run here is a FAIL row with bench's one line, not a traceback.
    results = check_variants(config, seed=seed, failures=RUN_FAILURES, describe=error_line)
    lines = [
        f"batch {config.batch_size}, time {config.time_steps}, {config.precision}"
        f"{', XLA' if config.xla else ''}: max |variant - numpy reference|",
        *(
            f"  {result.variant:<17} FAIL: {result.error}"
            if result.error
            else f"  {result.variant:<17} {result.max_abs_diff:.2e}  (tolerance "
            f"{result.tolerance:.0e})  {'ok' if result.ok else 'FAIL'}"
            for result in results
        ),
    ]
    document = {"task": config.task, "results": [result.to_dict() for result in results]}
    shown(args.json, document, lambda: "\n".join(lines))
    return 0 if all(result.ok for result in results) else 1


def _check_training(args, config, seed: int) -> int:
    from hierlstm.model.gradcheck import STEP, check_gradients

    results = check_gradients(config, seed=seed)
    if args.json:
        document = {
            "task": config.task,
            "config": config.to_dict(),
            "difference_step": STEP,
            "results": [result.to_dict() for result in results],
        }
        print(json.dumps(document, indent=2, default=json_default))
        return 0 if all(result.ok for result in results) else 1
    directions = max(result.directions for result in results)
    reference = next((result.reference_variant for result in results if result.ok), "")
    print(
        f"batch {config.batch_size}, time {config.time_steps}, {config.precision}"
        f"{', XLA' if config.xla else ''}: gradients of the training loss (every parameter and "
        f"the input) along {directions} random directions against float64 central differences "
        f"of the numpy reference (h = {STEP:g}), and against {reference or 'the first variant'}"
    )
    for result in results:
        verdict = "ok" if result.ok else "FAIL"
        if result.error:
            print(f"  {result.variant:<17} {verdict}: {result.error}")
            continue
        print(
            f"  {result.variant:<17} oracle {result.worst_error:.1e} at {result.worst_tensor:<22}"
            f" (tolerance {result.tolerance:.0e})  vs {result.reference_variant} "
            f"{result.max_difference:.1e} (tolerance {result.difference_tolerance:.0e})  {verdict}"
        )
    return 0 if all(result.ok for result in results) else 1


def cmd_inside(args) -> int:
    """The model learning which sound plays at every time step: both curves as they come."""
    from hierlstm.inside.learner import learn

    config, learning = inside_settings(args)
    header = ("step", "train loss", "train accuracy", "held-out loss", "held-out accuracy")
    if not args.json:
        print(
            f"height {config.height}, time {config.time_steps}, {learning.train_sequences} "
            f"training and {learning.held_out} held-out sequences, batch {learning.batch_size}"
        )

    def row(point):
        return (
            point.step,
            f"{point.train_loss:.3f}",
            f"{point.train_accuracy:.1%}",
            f"{point.held_out_loss:.3f}",
            f"{point.held_out_accuracy:.1%}",
        )

    widths = [len(name) for name in header]

    def line(cells) -> str:
        return "  ".join(
            str(cell).ljust(width) for cell, width in zip(cells, widths, strict=True)
        ).rstrip()

    def progress(curve):
        if args.json:
            return
        if len(curve.points) == 1:  # the curve grows on the terminal, a line a measurement
            print(line(header) + "\n" + line("-" * width for width in widths))
        print(line(row(curve.points[-1])), flush=True)

    curve = learn(config, learning, progress)
    last = curve.points[-1]
    if args.json:
        print(json.dumps(curve.to_dict(), indent=2, default=json_default))
    else:
        print(
            f"chance (always the commonest sound): {curve.chance:.1%}; held-out accuracy "
            f"{last.held_out_accuracy:.1%} after {last.step} steps"
        )
    return 0


def cmd_results(args) -> int:
    if args.action is None:
        raise UsageError(
            "choose an action: list, export, import, check, recover, diff (see results --help)."
        )
    if args.action in ("check", "recover"):
        return _repair(args)
    if args.action == "export" and args.format not in ("csv", "json"):  # before the file is made
        raise UsageError(f"--format must be csv or json; got {args.format!r}.")
    store = open_store(args)
    if args.action == "diff":
        return _diff(store, args)
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
                text_table(
                    ("created (UTC)", "variant", "device", "status", "median ms", "id"), lines
                )
            )
        return 0
    if args.action == "export":
        export = store.export_csv if args.format == "csv" else store.export_json
        if args.output:
            export(args.output)
            print(f"exported {store.count()} results to {args.output}", file=sys.stderr)
        else:
            print(export(), end="")
        return 0
    try:
        report = store.import_file(args.file)
    except (ResultsError, OSError) as error:
        raise UsageError(str(error).splitlines()[0]) from None
    print(f"imported {report.added} results, skipped {report.skipped} already stored")
    return 0


def _repair(args) -> int:
    """`results check` (exit 1 when damaged) and `results recover`: neither writes the old file."""
    from hierlstm.results import repair
    from hierlstm.results.store import ResultStore, default_path

    path = args.db or default_path()
    if args.action == "check":
        report = repair.check(path)
        print(report.line())
        return 0 if report.ok else 1
    with usage(ResultsError):  # a file that is not damaged: nothing done
        kept, store = repair.recover(path, ResultStore)
    print(f"kept the damaged file as {kept}; a new results file is at {store.path}")
    return 0


def _diff(store, args) -> int:
    """`results diff ID_A ID_B`: run B against run A (`hierlstm.results.diff`); an id that is
    not stored, a failed run or two tasks exit 2 with the refusal's one line."""
    from hierlstm.results import diff

    rows = store.rows().to_dict("records")
    with usage(diff.DiffError):
        row_a, row_b = diff.find_row(rows, args.id_a), diff.find_row(rows, args.id_b)
        compared = diff.compare_rows(row_a, row_b)
    shown(args.json, compared.to_dict(), lambda: format_diff(compared, row_a, row_b))
    return 0

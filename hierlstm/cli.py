"""Command line: `python -m hierlstm variants | trace | check ...`.

Every bad argument exits with status 2 and one line on stderr starting `error:`; no traceback.
"""

from __future__ import annotations

import argparse
import json
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
    check = commands.add_parser("check", help="every variant against the numpy reference")
    _add_geometry(check, variant=False)
    check.add_argument("--seed", default="0", metavar="N")
    check.add_argument("--xla", action="store_true", help="compile each variant with XLA")
    return parser


def config_from_args(args, **defaults):
    """A RunConfig from the parsed flags (text, validated with RunConfig's messages)."""
    from hierlstm.config import RunConfig

    text = {
        name: getattr(args, name)
        for name in (*SIZE_FLAGS, "precision", "variant")
        if getattr(args, name, None) is not None
    }
    try:
        return RunConfig.from_strings(text, **defaults)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _seed(text: str) -> int:
    if not text.isdigit():
        raise UsageError(f"--seed must be a whole number of at least 0; got {text!r}.")
    return int(text)


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
    from hierlstm.trace import trace_report

    config = config_from_args(args)
    report = trace_report(config)
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
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    lines = [
        "  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in (header, *rows)
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    config = report["config"]
    lines.insert(
        0,
        f"{config['variant']}: batch {config['batch_size']}, time "
        f"{config['time_steps']}, {config['precision']}\n",
    )
    lines.append(
        f"\ntotal params {report['total_params']:,}; total {report['total_flops'] / 1e6:,.2f} "
        f"MFLOPs per forward pass; dependent chain {report['dependent_steps']} steps\n"
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


COMMANDS = {"variants": cmd_variants, "trace": cmd_trace, "check": cmd_check}


def main(argv=None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise UsageError(f"choose a command: {', '.join(COMMANDS)} (see --help).")
        from hierlstm._native import import_tensorflow_quietly

        tensorflow = import_tensorflow_quietly()
        tensorflow.get_logger().setLevel("ERROR")  # one trace per variant is intended, not a leak
        return COMMANDS[args.command](args)
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

"""The profiler's per-layer split of the real step beside the separate-call split.

    .venv/bin/python -m benchmarks profile_split [--variants nested,folded,fused]
        [--batch-size 8 --time-steps 50] [--steps 10] [--warmup 3] [--repeats 20] [--xla]

Per variant: `hierlstm.profiling.profile` (op self times mapped to layers) beside
`hierlstm.timing.layer_breakdown` (each layer its own function), then the step medians. Each
separate call pays one empty call's overhead, so it over-weights cheap layers; the profiler's op
time leaves out the executor's work between ops, so its layers add up to less than the step.
"""

from __future__ import annotations

import tempfile

from benchmarks.common import header
from benchmarks.record import argument_parser, markdown_table
from hierlstm.config import RunConfig, Timing
from hierlstm.profiling import OUTSIDE, profile
from hierlstm.timing import layer_breakdown


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}"


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--variants", default="nested,folded,fused")
    parser.add_argument("--batch-size", type=int, default=RunConfig.batch_size)
    parser.add_argument("--time-steps", type=int, default=RunConfig.time_steps)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--xla", action="store_true")
    args = parser.parse_args(argv)
    timing = Timing(warmup=args.warmup, repeats=args.repeats)
    logs = tempfile.mkdtemp(prefix="hierlstm-profile-split-")
    print(header("Per-layer split: the profiler against separate calls"))
    print(f"Captures kept under {logs} (open with `tensorboard --logdir DIR`).\n")
    summary = []
    for name in args.variants.split(","):
        config = RunConfig(
            variant=name, batch_size=args.batch_size, time_steps=args.time_steps, xla=args.xla
        )
        profiled = profile(config, timing, steps=args.steps, logdir=f"{logs}/{name}")
        separate = layer_breakdown(config, timing)
        calls = separate.set_index("layer")
        rows = []
        for row in profiled.layers.itertuples():
            separately = ("", "")
            if row.layer in calls.index:
                called = calls.loc[row.layer]
                separately = (_ms(called["median_s"]), f"{called['share']:.1%}")
            rows.append((row.layer, _ms(row.time_s), f"{row.share:.1%}", *separately))
        print(
            f"### {name}, batch {config.batch_size} x time {config.time_steps}"
            f"{', XLA' if config.xla else ''}\n"
        )
        header_row = ("layer", "profiler ms/step", "share of op time", "separate ms", "share")
        print(markdown_table(header_row, rows))
        print(
            f"\nop time {_ms(profiled.op_s)} ms per step, of which {OUTSIDE} "
            f"{_ms(profiled.outside_s)} ms; separate calls sum "
            f"{_ms(separate.attrs['sum_median_s'])} ms\n"
        )
        step_s, harness_s = profiled.profiled_step_s, profiled.harness_median_s
        ratios = (f"{step_s / harness_s:.2f}", f"{profiled.op_s / step_s:.0%}")
        calls_ms = (_ms(separate.attrs["model_median_s"]), _ms(separate.attrs["call_overhead_s"]))
        summary.append((name, _ms(step_s), _ms(harness_s), *ratios, *calls_ms))
    print("### Step time\n")
    header_row = ("variant", "profiled step ms", "harness ms", "profiled / harness")
    header_row += ("op time / step", "separate calls: model ms", "empty call ms")
    print(markdown_table(header_row, summary))


if __name__ == "__main__":
    main()

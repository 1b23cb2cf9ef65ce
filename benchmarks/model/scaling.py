"""First call and steady state against time_steps, per variant, interleaved at each length.

    .venv/bin/python -m benchmarks scaling [--batch 8] [--times 25,50,100,200,400] [--repeats 5]
                                           [--xla] [--variants nested,folded,...]

Tables of first-call seconds and steady-state medians, then each variant's growth from the
shortest length to the longest.
"""

from __future__ import annotations

import sys

from benchmarks.common import header
from benchmarks.record import argument_parser, markdown_table
from hierlstm.config import RunConfig, Timing
from hierlstm.registry import VARIANTS
from hierlstm.timing import compare


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--times", default="25,50,100,200,400")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--xla", action="store_true")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated")
    args = parser.parse_args(argv)
    times = [int(value) for value in args.times.split(",")]
    names = args.variants.split(",")
    if unknown := [name for name in names if name not in VARIANTS]:
        parser.error(f"unknown variant {unknown[0]!r}; known: {', '.join(VARIANTS)}")
    first, median = {name: {} for name in names}, {name: {} for name in names}
    print(header(f"Scaling with time steps (batch {args.batch}{', XLA' if args.xla else ''})"))
    for time in times:
        configs = [
            RunConfig(variant=name, batch_size=args.batch, time_steps=time, xla=args.xla)
            for name in names
        ]
        outcome = compare(configs, Timing(warmup=1, repeats=args.repeats))
        for result in outcome.results:
            name = result.config.variant
            ok = result.status == "ok"
            first[name][time] = f"{result.first_call_s:.2f}" if ok else "failed"
            median[name][time] = f"{result.step.median * 1e3:.1f}" if ok else "failed"
        print(f"time {time} done", file=sys.stderr, flush=True)
    columns = ("variant", *[f"T={time}" for time in times])
    print("\n### First call (trace + compile + first run), seconds\n")
    print(markdown_table(columns, [(name, *first[name].values()) for name in names]))
    print("\n### Steady state, median ms per forward pass\n")
    print(markdown_table(columns, [(name, *median[name].values()) for name in names]))
    print(f"\n### Growth from T={times[0]} to T={times[-1]}\n")
    rows = []
    for name in names:
        low, high = first[name][times[0]], first[name][times[-1]]
        slow, shigh = median[name][times[0]], median[name][times[-1]]
        growth = f"{float(high) / float(low):.2f}x" if "failed" not in (low, high) else "n/a"
        steady = f"{float(shigh) / float(slow):.2f}x" if "failed" not in (slow, shigh) else "n/a"
        rows.append((name, growth, steady))
    print(markdown_table(("variant", "first call growth", "steady-state growth"), rows))


if __name__ == "__main__":
    main()

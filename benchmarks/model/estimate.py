"""How close the app's long-run estimate comes to the run it estimates.

    .venv/bin/python -m benchmarks estimate [--variants nested,folded,fused,time_distributed]
                                            [--shapes 8x30,32x60,64x100] [--warmup 2] [--repeats 10]

Per variant, `calibrate`, then per shape the estimate beside the wall time of that very
`benchmark` call. The app asks before a run estimated over HIERLSTM_CONFIRM_SECONDS, so the ratio
must stay near 1.
"""

from __future__ import annotations

import time

from benchmarks.common import header
from benchmarks.record import argument_parser, markdown_table, shapes
from hierlstm.admission.estimate import calibrate, run_seconds
from hierlstm.config import RunConfig, Timing
from hierlstm.timing import benchmark


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--variants", default="nested,folded,fused,time_distributed")
    parser.add_argument("--shapes", type=shapes, default="8x30,32x60,64x100")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    timing = Timing(warmup=args.warmup, repeats=args.repeats)
    print(header("Long-run estimate against the measured run"))
    rows, ratios = [], []
    for name in args.variants.split(","):
        started = time.perf_counter()
        step_cost = calibrate(RunConfig(variant=name))
        calibration_s = time.perf_counter() - started
        for batch, steps in args.shapes:
            config = RunConfig(variant=name, batch_size=batch, time_steps=steps)
            estimate = run_seconds(config, step_cost, timing)
            started = time.perf_counter()
            result = benchmark(config, timing)
            measured = time.perf_counter() - started
            if result.status != "ok":  # an estimate of a failed run means nothing
                raise SystemExit(f"{name} at {batch}x{steps} failed: {result.error}")
            ratios.append(estimate / measured)
            seconds = (calibration_s, estimate, measured, estimate / measured)
            rows.append((name, f"{batch}x{steps}", *(f"{value:.2f}" for value in seconds)))
    columns = ("variant", "batch x time", "calibration s", "estimate s", "measured s", "ratio")
    print(markdown_table(columns, rows))
    print(f"\nestimate / measured: {min(ratios):.2f} to {max(ratios):.2f} over {len(ratios)} runs")


if __name__ == "__main__":
    main()

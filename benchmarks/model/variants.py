"""Every variant, with and without XLA, at three shapes, timed interleaved in one process.

    .venv/bin/python -m benchmarks variants [--repeats 10] [--shapes 8x50,32x100,128x200]
        [--task both]

Per task (a forward pass, a training step with SGD) and shape: median, IQR, the speed-up over the
first variant paired per round, first call, GFLOP/s and the share of the CPU's estimated FP32
peak. Then the harness's median beside `timeit`'s on the same compiled forward pass (of fused, or
of the first variant timed where fused is not one): a check of the harness itself.
"""

from __future__ import annotations

import timeit

import numpy as np

from benchmarks.common import fp32_peak_gflops, header
from benchmarks.record import argument_parser, markdown_table, shapes
from hierlstm.admission import LimitError, check_limits
from hierlstm.config import RunConfig, Timing
from hierlstm.model.builders import build_model
from hierlstm.model.params import init_params
from hierlstm.registry import VARIANTS
from hierlstm.timing.harness import compare, make_forward, make_inputs


def shape_table(
    batch: int, time: int, repeats: int, peak: float, variants: list[str], task: str
) -> str:
    configs, refused = [], []
    for name in variants:
        for xla in (False, True):
            config = RunConfig(variant=name, batch_size=batch, time_steps=time, xla=xla, task=task)
            try:  # what the app and the CLI refuse (time_distributed's long training) isn't run
                check_limits(config)
                configs.append(config)
            except LimitError as error:
                label = f"{name}{' + XLA' if xla else ''}"
                refused.append((label, "refused", error.sentence("en")[:90], "", "", "", "", ""))
    outcome = compare(configs, Timing(warmup=2, repeats=repeats), baseline=0)
    rows = []
    for entry in outcome.entries:
        result, speedup = entry.result, entry.speedup
        config = result.config
        name = f"{config.variant}{' + XLA' if config.xla else ''}"
        if result.status != "ok":
            rows.append((name, "failed", result.error[:90], "", "", "", "", ""))
            continue
        name += " (noisy)" if result.noisy else ""
        times = (f"{result.step.median * 1e3:.2f}", f"{result.step.iqr * 1e3:.2f}")
        spread = f"{speedup.median:.2f} ({speedup.p10:.2f}-{speedup.p90:.2f})"
        speed = (spread, f"{result.first_call_s:.2f}")
        gflops = (f"{result.gflops_per_s:.2f}", f"{result.gflops_per_s / peak:.2%}")
        rows.append((name, *times, *speed, *gflops, result.kernel))
    rows += refused
    what = TASK_TITLES[task]
    title = f"### batch {batch}, time {time}, {what} ({repeats} interleaved rounds)\n\n"
    columns = ("variant", "median ms", "IQR ms", f"speed-up vs {variants[0]} (p10-p90)")
    columns += ("first call s", "GFLOP/s", "of peak", "LSTM kernel")
    return title + markdown_table(columns, rows)


TASK_TITLES = {"inference": "forward pass", "training": "training step with SGD"}


def harness_against_timeit(variant: str, batch: int, time: int, repeats: int) -> str:
    """The harness's median beside `timeit` on the same traced function, alternating."""
    config = RunConfig(variant=variant, batch_size=batch, time_steps=time, xla=True)
    model = build_model(config, init_params(config))
    forward = make_forward(model, config)
    inputs = make_inputs(config)
    forward(inputs).numpy()
    from hierlstm.timing import benchmark

    harness, independent = [], []
    for _ in range(3):
        harness.append(
            benchmark(config, Timing(warmup=1, repeats=repeats), model=model).step.median
        )
        independent.append(
            np.median(timeit.repeat(lambda: forward(inputs).numpy(), number=1, repeat=repeats))
        )
    h, i = float(np.median(harness)), float(np.median(independent))
    return (
        f"harness median {h * 1e3:.2f} ms vs timeit (`forward(x).numpy()`, same function) "
        f"{i * 1e3:.2f} ms: ratio {h / i:.3f} ({variant} + XLA, batch {batch}, time {time}, "
        "3 alternating blocks)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--shapes", type=shapes, default="8x50,32x100,128x200")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="the first is the baseline")
    parser.add_argument(
        "--timeit-shape", type=shapes, default="32x100", help="of the check against timeit"
    )
    parser.add_argument("--task", default="both", choices=("inference", "training", "both"))
    args = parser.parse_args(argv)
    tasks = ("inference", "training") if args.task == "both" else (args.task,)
    peak, method = fp32_peak_gflops()
    print(header("Variants, with and without XLA"))
    print(f"Estimated FP32 peak: {method}.\n")
    variants = args.variants.split(",")
    for task in tasks:
        for batch, time in args.shapes:
            print(shape_table(batch, time, args.repeats, peak, variants, task), "\n", flush=True)
    # on the fastest of the variants timed: fused where it is one of them
    best = "fused" if "fused" in variants else variants[0]
    print(harness_against_timeit(best, *args.timeit_shape[0], 20))


if __name__ == "__main__":
    main()

"""The fastest (variant, backend) per shape, forward pass: every variant on TensorFlow (with and
without XLA), JAX, PyTorch through Keras, ONNX Runtime and OpenVINO, each backend in its own worker
process (`hierlstm.backends.pool`), all in the same interleaved rounds with the same threads.

    .venv/bin/python -m benchmarks fastest [--repeats 5] [--shapes 8x50,32x100,128x200]
        [--variants folded,fused,...] [--backends tensorflow,jax,torch,onnxruntime,openvino]
        [--threads 2]

Each row's ratio is its time over the fastest config's, paired per round; the line under each
table is TensorFlow's own best against the fastest runtime's (the issue's goal: within 1.2x). A
config a backend cannot run (a variant that does not convert, XLA off TensorFlow) is left out; one
that fails is a row saying why.
"""

from __future__ import annotations

import numpy as np

from benchmarks.common import header
from benchmarks.model.backends import prepared, thread_environment
from benchmarks.record import argument_parser, markdown_table, shapes
from hierlstm.backends import missing
from hierlstm.backends.pool import BackendPool
from hierlstm.config import RunConfig
from hierlstm.registry import BACKEND_RECORDS, BACKENDS, RUNTIMES, VARIANTS
from hierlstm.timing.rounds import timer_rounds


def shape_configs(batch: int, steps: int, variants, backends) -> list[RunConfig]:
    """Every variant on every backend that runs it, forward pass; TensorFlow's with and without
    XLA. time_distributed only up to 50 steps (its trace alone takes minutes past that)."""
    configs = []
    for variant in variants:
        if variant == "time_distributed" and steps > 50:
            continue
        for backend in backends:
            if backend not in VARIANTS[variant].backends:
                continue
            base = RunConfig(variant=variant, batch_size=batch, time_steps=steps, backend=backend)
            configs.append(base)
            if BACKEND_RECORDS[backend].in_process:  # TensorFlow's XLA (JAX always compiles)
                configs.append(base.replace(xla=True))
    return configs


def label(config: RunConfig) -> str:
    return f"{config.variant}{' + XLA' if config.xla else ''} [{config.backend}]"


def shape_table(pool, batch: int, steps: int, variants, backends, repeats: int) -> str:
    configs = shape_configs(batch, steps, variants, backends)
    with prepared(pool, configs) as (timers, runs, errors):
        times = timer_rounds(timers, repeats)
    timed = sorted(runs, key=lambda config: np.median(times[config]))
    fastest = timed[0]
    rows = []
    for config in timed:
        paired = np.array(times[config]) / np.array(times[fastest])
        ratio = f"{np.median(paired):.2f} ({np.min(paired):.2f}-{np.max(paired):.2f})"
        median_ms = f"{np.median(times[config]) * 1e3:.3f}"
        rows.append((label(config), median_ms, ratio, f"{runs[config].first_call_s:.2f}"))
    rows += [(label(config), "failed", errors[config][:80], "") for config in errors]
    title = f"### {batch}x{steps}, forward pass, {repeats} interleaved rounds\n\n"
    heading = ("variant [backend]", "median ms", "/ fastest (min-max)", "first call s")
    return title + markdown_table(heading, rows) + "\n\n" + _goal(timed, times)


def _goal(timed, times) -> str:
    """TensorFlow's best over the fastest runtime's, paired per round."""
    best = {
        "tensorflow": next((c for c in timed if BACKEND_RECORDS[c.backend].in_process), None),
        "runtime": next((c for c in timed if c.backend in RUNTIMES), None),
    }
    if best["tensorflow"] is None or best["runtime"] is None:
        return "TensorFlow's best against the runtimes: not both timed."
    paired = np.array(times[best["tensorflow"]]) / np.array(times[best["runtime"]])
    return (
        f"TensorFlow's best ({label(best['tensorflow'])}) / the fastest runtime "
        f"({label(best['runtime'])}): median {np.median(paired):.2f}, "
        f"{np.min(paired):.2f}-{np.max(paired):.2f} (goal: within 1.2)."
    )


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--shapes", type=shapes, default="8x50,32x100,128x200")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--threads", type=int, help="intra-op threads of every process")
    args = parser.parse_args(argv)
    backends = [name for name in args.backends.split(",") if not missing(name)]
    print(header("The fastest (variant, backend) per shape, forward pass"))
    absent = [f"{name}: {missing(name)}" for name in args.backends.split(",") if missing(name)]
    print(
        "Every backend in its own worker process with its own threads; one process runs at a "
        "time; each ratio paired per round against the fastest config. Threads per process: "
        f"{args.threads or 'each library default'}."
        + "".join(f"\nLeft out, {line}" for line in absent)
        + "\n"
    )
    with BackendPool(environment=thread_environment(args.threads)) as pool:
        for batch, steps in args.shapes:
            table = shape_table(
                pool, batch, steps, args.variants.split(","), backends, args.repeats
            )
            print(table, "\n", flush=True)


if __name__ == "__main__":
    main()

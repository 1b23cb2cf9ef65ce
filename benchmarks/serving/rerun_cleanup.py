"""Streamlit's cleanup after every script run, with the warm-up's `gc.freeze()` and without.

    .venv/bin/python -m benchmarks rerun_cleanup [--rounds 12] [--models 6]

Streamlit ends every script run with `_clean_problem_modules`, whose `keras.backend
.clear_session()` runs a full `gc.collect()`. The app's server no longer runs it, nor Streamlit's
post-run `gc.collect(2)` (`hierlstm.app.server.cleanup`, `runner.postScriptGC` in
.streamlit/config.toml): this measures what each such walk costs a process holding TensorFlow.
This process loads what a warm server holds (the "trace" warm-up's steps,
`hierlstm._native.freeze_what_is_loaded` included) plus `--models` traced models, as a server's
caches hold after a few visits, then times that cleanup in interleaved rounds with the warm-up's
objects frozen and with nothing frozen, on the wall clock and this process's CPU time, paired
per round.
"""

from __future__ import annotations

import gc
import statistics
import time

from benchmarks.common import header
from benchmarks.record import argument_parser, markdown_table

VARIANTS = ("nested", "folded", "fused", "shared_cell", "time_distributed", "vectorized_map")


def warm_up() -> None:
    """The warm-up's steps for "trace", its freeze included."""
    from hierlstm.app.server import warmup

    for step in warmup.steps_for("trace"):
        step.run()


def traced_models(models: int) -> list:
    """`models` traced models, kept alive as the caches keep them."""
    from hierlstm.config import RunConfig
    from hierlstm.model.trace import trace_shapes

    return [
        trace_shapes(RunConfig(variant=VARIANTS[index % len(VARIANTS)], time_steps=10 + index))
        for index in range(models)
    ]


def cleanup() -> tuple[float, float]:
    """Streamlit's own after-run cleanup, on both clocks (seconds)."""
    from streamlit.runtime.scriptrunner import script_runner

    wall, cpu = time.perf_counter(), time.process_time()
    script_runner._clean_problem_modules()
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--models", type=int, default=6, help="traced models beyond the warm-up's")
    args = parser.parse_args(argv)

    warm_up()
    frozen_count = gc.get_freeze_count()
    samples: dict[str, list[tuple[float, float]]] = {"frozen": [], "unfrozen": []}
    walked = {}
    for _round in range(args.rounds):
        # what the warm-up loaded frozen, as it leaves it; the models made after, not
        gc.unfreeze()
        kept = None
        gc.collect()
        gc.freeze()
        kept = traced_models(args.models)
        cleanup()  # the tracing's garbage freed first, so each timed cleanup frees none
        walked["frozen"] = len(gc.get_objects())
        samples["frozen"].append(cleanup())
        gc.unfreeze()
        walked["unfrozen"] = len(gc.get_objects())
        samples["unfrozen"].append(cleanup())

    def median_ms(state: str, clock: int) -> float:
        return statistics.median(sample[clock] for sample in samples[state]) * 1e3

    def paired(clock: int) -> str:
        ratios = sorted(
            frozen[clock] / unfrozen[clock]
            for frozen, unfrozen in zip(samples["frozen"], samples["unfrozen"], strict=True)
        )
        return f"{statistics.median(ratios):.3f} ({ratios[0]:.3f}-{ratios[-1]:.3f})"

    print(header("Streamlit's after-run cleanup, frozen against not"))
    print(
        f"{len(kept)} traced models beyond the warm-up's; {args.rounds} interleaved rounds; "
        f"the warm-up froze {frozen_count} objects.\n"
    )
    rows = [
        [state, walked[state], f"{median_ms(state, 0):.1f}", f"{median_ms(state, 1):.1f}"]
        for state in samples
    ]
    print(markdown_table(["", "objects walked", "wall ms", "CPU ms"], rows))
    print(f"\nfrozen / unfrozen, paired per round (min-max): wall {paired(0)}, CPU {paired(1)}")


if __name__ == "__main__":
    main()

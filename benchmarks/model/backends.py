"""The portable variants on TensorFlow, JAX and PyTorch, each backend in its own worker process
(`hierlstm.backends.pool`), interleaved, beside the PyTorch-native peer of `vs_pytorch`.

    .venv/bin/python -m benchmarks backends [--repeats 5] [--shapes 8x50,32x100,128x200]
        [--variants folded,nested,...] [--backends tensorflow,jax,torch] [--task both]
        [--threads N]

Each round asks every config's worker for one sample in turn (one process running at a time),
then times the native peer here; each ratio is to the same variant on TensorFlow, paired per
round. `--threads N` sets every process's intra-op threads (JAX's XLA:CPU has no such setting):
on a loaded machine PyTorch's OpenMP threads spin at their barriers, so one thread is the fair run.
"""

from __future__ import annotations

import contextlib

import numpy as np

from benchmarks.common import header
from benchmarks.record import argument_parser, markdown_table, shapes
from hierlstm.backends.pool import BackendPool, RunFailed
from hierlstm.config import RunConfig
from hierlstm.registry import BACKENDS, KERAS_BACKENDS, VARIANTS
from hierlstm.timing.rounds import timer_rounds

PORTABLE = [name for name, variant in VARIANTS.items() if set(BACKENDS) <= set(variant.backends)]


def thread_environment(threads: int | None) -> dict[str, str]:
    """A worker's added environment for `threads` intra-op threads ({}: each library's default;
    JAX's XLA:CPU has no such setting)."""
    names = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "TF_NUM_INTRAOP_THREADS")
    return dict.fromkeys(names, str(threads)) if threads else {}


def backend_configs(base: RunConfig, variants, backends) -> list[RunConfig]:
    """`base` for each variant on each backend, variant by variant."""
    # time_distributed unrolls one inner LSTM call per step: past 50 steps its trace alone
    # takes minutes (the trace budget of hierlstm.admission.limits refuses it there too).
    variants = [v for v in variants if v != "time_distributed" or base.time_steps <= 50]
    return [base.replace(variant=v, backend=b) for v in variants for b in backends]


@contextlib.contextmanager
def prepared(pool: BackendPool, configs):
    """Each config built in its backend's worker and its first call run; yields ({config: a
    timer of one sample's step, for `timer_rounds`}, {config: its prepared run (first call,
    LSTM kernel)}, {config: why it failed}) and frees the runs in their workers on exit."""
    runs, errors = {}, {}
    for config in configs:
        try:
            runs[config] = pool.prepare(config, seed=0)
        except RunFailed as error:
            errors[config] = error.result.error
    timers = {config: lambda r=run: pool.sample(r).times["step"] for config, run in runs.items()}
    try:
        yield timers, runs, errors
    finally:
        for run in runs.values():
            pool.release(run)


def native_peer(config: RunConfig, threads: int | None):
    """One timed call of the PyTorch-native model (forward, or SGD training step)."""
    import torch

    if threads:
        torch.set_num_threads(threads)

    from benchmarks.model.torch_peer import forward_timer, torch_model, training_timer
    from hierlstm.model.loss import loss_target
    from hierlstm.model.params import init_params
    from hierlstm.timing.harness import make_inputs

    model = torch_model(init_params(config), torch)
    inputs = torch.from_numpy(make_inputs(config))
    if config.task == "inference":
        return forward_timer(model, inputs, torch)
    target = torch.from_numpy(loss_target(config))
    return training_timer(model.train(), inputs, target, torch)


def shape_table(
    pool, variants, batch: int, steps: int, task: str, repeats: int, threads, backends=BACKENDS
) -> str:
    base = RunConfig(batch_size=batch, time_steps=steps, task=task)
    configs = backend_configs(base, variants, backends)
    with prepared(pool, configs) as (timers, runs, errors):
        times = timer_rounds({**timers, "peer": native_peer(base, threads)}, repeats)
    rows = []
    for config in configs:
        name = f"{config.variant} [{config.backend}]"
        if config in errors:
            rows.append((name, "failed", errors[config][:80], "", ""))
            continue
        tf_config = config.replace(backend="tensorflow")
        ratio = ""
        if tf_config in times:
            paired = np.array(times[config]) / np.array(times[tf_config])
            ratio = f"{np.median(paired):.2f} ({np.min(paired):.2f}-{np.max(paired):.2f})"
        run = runs[config]
        median_ms = f"{np.median(times[config]) * 1e3:.2f}"
        rows.append((name, median_ms, ratio, f"{run.first_call_s:.2f}", run.kernel))
    best = min(runs, key=lambda config: np.median(times[config]))
    paired = np.median(np.array(times["peer"]) / np.array(times[best]))
    of_best = f"{paired:.2f} of {best.variant} [{best.backend}]"
    peer_ms = f"{np.median(times['peer']) * 1e3:.2f}"
    rows.append(("PyTorch native (nn.LSTM)", peer_ms, of_best, "", ""))
    what = "forward pass" if task == "inference" else "training step (SGD)"
    title = f"### {batch}x{steps}, {what}, {repeats} interleaved rounds\n\n"
    heading = ("variant [backend]", "median ms", "/ TensorFlow (min-max)", "first call s", "kernel")
    return title + markdown_table(heading, rows)


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--shapes", type=shapes, default="8x50,32x100,128x200")
    parser.add_argument("--variants", default=",".join(PORTABLE))
    parser.add_argument("--backends", default=",".join(KERAS_BACKENDS))
    parser.add_argument("--task", default="both", choices=("inference", "training", "both"))
    parser.add_argument("--threads", type=int, help="intra-op threads of every process")
    args = parser.parse_args(argv)
    tasks = ("inference", "training") if args.task == "both" else (args.task,)
    print(header("The portable variants on three Keras backends, one process each"))
    print(
        "Each backend in its own worker process with its own threads; one process runs at a "
        "time; ratios paired per round against the same variant on TensorFlow. A shared "
        f"machine: small repeats, read the ratios, not the milliseconds. Threads per process: "
        f"{args.threads or 'each library default'}.\n"
    )
    with BackendPool(environment=thread_environment(args.threads)) as pool:
        for batch, steps in args.shapes:
            for task in tasks:
                variants, backends = args.variants.split(","), args.backends.split(",")
                table = shape_table(
                    pool, variants, batch, steps, task, args.repeats, args.threads, backends
                )
                print(table, "\n", flush=True)


if __name__ == "__main__":
    main()

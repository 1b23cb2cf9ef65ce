"""hierlstm's fastest variants against the same function in PyTorch, timed in one process: the
forward pass, and one training step (forward, backward, SGD update).

    .venv/bin/pip install -r requirements-bench.txt      # PyTorch (CPU build), benchmark-only
    .venv/bin/python -m benchmarks vs_pytorch [--repeats 30] [--threads N] [--task both]
        [--backends tensorflow,jax,torch] [--portable folded,nested,...]

The PyTorch model is the folded design as a PyTorch user writes it (Conv2d, MaxPool2d, nn.LSTM
over the (batch*time, 12, 16) sub-sequences, nn.LSTM over time), its weights copied from the same
`init_params`. Both frameworks get the same threads, outputs, losses and gradients are checked
before timing, and candidates are timed in interleaved rounds, paired per round. PyTorch's samples
are this module's own `perf_counter` intervals: the harness times TensorFlow only.
The training step is timed three ways on hierlstm's side: the harness's (`TrainingStep`, its
forward-backward and update compiled apart), a user's (one `tf.function` around a GradientTape
and the update) and `model.fit`'s (`train_on_batch`).
The same rounds time a 2048^3 float32 matmul in TensorFlow (a ruler that is not ours: the forward
pass's and the fastest step's FLOP/s as a share of its FLOP/s) and the portable variants on
Keras's other backends (`--backends`), each in its worker process (`benchmarks.model.backends`),
so the fastest (variant, backend) per shape comes from the same run.
`--profile-torch-steps N` prints where PyTorch's training step goes, under torch.profiler;
`--profile-tf-steps N` where fused + XLA's forward pass and training step go, each under
`hierlstm profile` in a process of its own with XLA:CPU's per-thunk trace on (an XLA flag read
when TensorFlow starts, so the timed process never has it).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

import keras
import numpy as np

from benchmarks.common import header, tf
from benchmarks.model.backends import PORTABLE, backend_configs, prepared, thread_environment
from benchmarks.model.torch_peer import (
    forward_timer,
    torch_gradients,
    torch_model,
    training_timer,
)
from benchmarks.record import argument_parser, markdown_table, shapes
from hierlstm.backends.pool import BackendPool
from hierlstm.config import RunConfig
from hierlstm.model.builders import build_model
from hierlstm.model.cost import model_flops, training_flops
from hierlstm.model.loss import loss_target, mean_squared_error
from hierlstm.model.params import init_params
from hierlstm.model.reference import reference_forward
from hierlstm.model.training import LEARNING_RATES, TrainingStep
from hierlstm.registry import BACKENDS, VARIANTS
from hierlstm.timing.harness import make_forward, make_inputs, timed_call
from hierlstm.timing.rounds import MAX_BURST, timer_rounds

PEER = "PyTorch"
TARGET = 0.8  # issue 38: hierlstm's fastest at most this times PyTorch's time (paired median)
RULER = "matmul 2048^3"
RULER_SIZE = 2048
RULER_FLOPS = 2 * RULER_SIZE**3  # a multiply and an add per term
# issue 38, at 128x200: the forward pass's and the fastest step's share of the ruler's FLOP/s
SHARE_TARGETS = {"inference": 0.60, "training": 0.45}
KINDS = {"harness": "", "user": " user", "fit": " fit"}  # a kind of step: its timers' suffix
# A sample is the mean of back-to-back calls lasting about this long, as a user's loop runs them:
# timed one call at a time, after another framework's call, each side paid for waking its threads
# (PyTorch's forward at 8x50: 2.0 ms in a loop, 3.0 ms one call at a time).
BURST_SECONDS = 0.02


def candidates() -> list[tuple[str, str, bool]]:
    """(label, variant, xla) of hierlstm's side."""
    names = ["folded", "fused"] if "fused" in VARIANTS else ["folded"]
    return [
        (f"{name}{' + XLA' if xla else ''}", name, xla) for name in names for xla in (True, False)
    ]


def same_threads(torch, threads: int) -> None:
    """`threads` intra-op threads for PyTorch and TensorFlow (and inter-op for TensorFlow)."""
    torch.set_num_threads(threads)
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)


def matmul_timer(size: int = RULER_SIZE):
    """One timed (size, size) @ (size, size) float32 product in TensorFlow on this process's
    threads, in a `tf.function` as the models are: the ruler (seconds)."""
    left = tf.random.stateless_uniform((size, size), seed=(0, 1))
    right = tf.random.stateless_uniform((size, size), seed=(1, 2))

    @tf.function
    def product(left, right):
        return tf.linalg.matmul(left, right)

    return lambda: timed_call(product, left, right)


@dataclasses.dataclass(frozen=True)
class Workers:
    """The contenders on Keras's other backends: `variants` on each of `backends`, each backend in
    its worker of `pool` (none: hierlstm's TensorFlow candidates alone)."""

    pool: BackendPool | None = None
    backends: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()


@dataclasses.dataclass
class Rounds:
    """One shape's interleaved rounds: every timer's seconds, one per round, and what they time."""

    shape: str  # "8x50"
    flops: int  # analytic FLOPs of one call of the task (`hierlstm.model.cost`)
    samples: dict[str, list[float]]  # by timer: PEER, RULER, the candidates'
    names: list[str]  # hierlstm's TensorFlow candidates, `candidates()`'s labels
    contenders: dict[str, dict[str, str]]  # {backend: {label: timer}}: those racing for fastest
    refused: dict[str, str]  # {contender: why it could not run}
    first_s: dict[str, float] = dataclasses.field(default_factory=dict)  # training: first step

    def median(self, timer: str) -> float:
        return float(np.median(self.samples[timer]))

    def fastest(self, backend: str) -> str | None:
        """The label of `backend`'s fastest contender by median (None: none ran)."""
        labels = self.contenders[backend]
        return min(labels, key=lambda label: self.median(labels[label]), default=None)


def in_rounds(timers: dict, workers: Workers, base: RunConfig, repeats: int):
    """`timers` (PEER's among them), the ruler and `workers`' variants at `base` timed in the same
    interleaved rounds: (samples by timer, {backend: {variant: timer}}, {contender: why it could
    not run}). The workers' runs are built, and their first call run, before the rounds."""
    configs = backend_configs(base, workers.variants, workers.backends)
    with prepared(workers.pool, configs) as (pooled, _runs, errors):
        named = {f"{config.variant} [{config.backend}]": timer for config, timer in pooled.items()}
        samples = timer_rounds(
            {**timers, **named, RULER: matmul_timer()},
            repeats,
            warmup=3,
            burst_seconds=BURST_SECONDS,
        )
    contenders = {backend: {} for backend in workers.backends}
    for config in pooled:
        contenders[config.backend][config.variant] = f"{config.variant} [{config.backend}]"
    refused = {f"{config.variant} [{config.backend}]": why for config, why in errors.items()}
    return samples, contenders, refused


def run_shape(batch: int, steps: int, repeats: int, torch, workers: Workers = Workers()) -> Rounds:
    base = RunConfig(batch_size=batch, time_steps=steps)
    params = init_params(base)
    x = make_inputs(base)
    expected = reference_forward(params, x)
    timers, names = {}, []
    inputs = tf.constant(x)
    for label, name, xla in candidates():
        config = base.replace(variant=name, xla=xla)
        forward = make_forward(build_model(config, params), config)
        difference = np.max(np.abs(np.asarray(forward(inputs), np.float64) - expected))
        if difference > 1e-5:
            raise SystemExit(f"{name} differs from the reference by {difference:.2e}")
        timers[label] = lambda forward=forward: timed_call(forward, inputs)
        names.append(label)
    model = torch_model(params, torch)
    torch_input = torch.from_numpy(x)
    with torch.inference_mode():
        difference = np.max(np.abs(model(torch_input).numpy().astype(np.float64) - expected))
    if difference > 1e-5:
        raise SystemExit(f"PyTorch differs from the reference by {difference:.2e}")
    timers[PEER] = forward_timer(model, torch_input, torch)
    samples, others, refused = in_rounds(timers, workers, base, repeats)
    contenders = {"tensorflow": {name: name for name in names}, **others}
    return Rounds(f"{batch}x{steps}", model_flops(base), samples, names, contenders, refused)


def forward_row(rounds: Rounds) -> list[str]:
    """The forward table's row: each candidate's and PyTorch's median ms, the fastest candidate,
    its paired ratio to PyTorch and whether that meets the target."""
    best = rounds.fastest("tensorflow")
    cells = [f"{rounds.median(name) * 1e3:.2f}" for name in [*rounds.names, PEER]]
    ratio = paired(rounds.samples, best, PEER)
    return [rounds.shape, *cells, best, ratio_cell(ratio), target_cell(ratio[0])]


def paired(samples, name: str, against: str) -> tuple[float, float, float]:
    """Median, p10 and p90 over rounds of `name`'s seconds / `against`'s in the same round."""
    ratios = np.array(samples[name]) / np.array(samples[against])
    low, high = np.percentile(ratios, [10, 90])
    return float(np.median(ratios)), float(low), float(high)


def ratio_cell(ratio: tuple[float, float, float]) -> str:
    median, low, high = ratio
    return f"{median:.2f} ({low:.2f}-{high:.2f})"


def target_cell(ratio: float, target: float = TARGET) -> str:
    """Whether a paired median ratio to PyTorch meets the target (at most `target`)."""
    return f"{'met' if ratio <= target else 'missed'} ({ratio:.2f} vs {target})"


def share_of_ruler(flops, seconds, ruler_seconds, ruler_flops: int = RULER_FLOPS):
    """The FLOP/s of a call of `flops` FLOPs that took `seconds`, as a fraction of the ruler's
    (`ruler_flops` in `ruler_seconds`); arrays of the same rounds give one share per round."""
    return (flops / np.asarray(seconds)) / (ruler_flops / np.asarray(ruler_seconds))


def ruler_row(rounds: Rounds, target: float) -> list[str]:
    """The ruler table's row: hierlstm's fastest TensorFlow contender, its GFLOP/s and the
    ruler's (analytic FLOPs / median), its share of the ruler (paired per round) and whether
    that reaches `target`."""
    best = rounds.fastest("tensorflow")
    timer = rounds.contenders["tensorflow"][best]
    shares = share_of_ruler(rounds.flops, rounds.samples[timer], rounds.samples[RULER])
    share = float(np.median(shares))
    return [
        rounds.shape,
        best,
        f"{rounds.flops / rounds.median(timer) / 1e9:.1f}",
        f"{RULER_FLOPS / rounds.median(RULER) / 1e9:.1f}",
        f"{share:.0%}",
        f"{'met' if share >= target else 'missed'} ({share:.0%} vs {target:.0%})",
    ]


def fastest_row(rounds: Rounds) -> list[str]:
    """The fastest (variant, backend) table's row: the fastest contender on any backend, its
    median ms, its paired ratio to PyTorch and the target; then each backend's fastest with its
    paired median ratio to PyTorch."""
    racing = {
        (label, backend): timer
        for backend, labels in rounds.contenders.items()
        for label, timer in labels.items()
    }
    (label, backend), timer = min(racing.items(), key=lambda item: rounds.median(item[1]))
    ratio = paired(rounds.samples, timer, PEER)
    cells = [rounds.shape, f"{label} [{backend}]", f"{rounds.median(timer) * 1e3:.2f}"]
    cells += [ratio_cell(ratio), target_cell(ratio[0])]
    for backend, labels in rounds.contenders.items():
        best = rounds.fastest(backend)
        if best is None:
            cells.append("fails")
            continue
        cells.append(f"{best}: {paired(rounds.samples, labels[best], PEER)[0]:.2f}")
    return cells


def user_step(model, xla: bool):
    """A training step as a user writes one: a GradientTape around the model, the loss, the
    gradients and an SGD update, all in one `tf.function` (XLA compiles it whole with `xla`, where
    the harness's `TrainingStep` compiles its forward-backward and its update apart). Returns the
    loss before the update."""
    optimizer = keras.optimizers.SGD(learning_rate=LEARNING_RATES["sgd"])

    @tf.function(jit_compile=xla)
    def step(inputs, targets):
        with tf.GradientTape() as tape:
            loss = mean_squared_error(model(inputs, training=True), targets, tf.reduce_mean)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables, strict=True))
        return loss

    return step


def fit_step(model, xla: bool):
    """The step `model.fit` runs, called as `train_on_batch` calls it (the same compiled train
    function, without fit's per-epoch work): Keras's own SGD and its "mse" loss, which is this
    loss. Returns the loss before the update."""
    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=LEARNING_RATES["sgd"]),
        loss="mse",
        jit_compile=xla,
    )
    return lambda inputs, targets: model.train_on_batch(inputs, targets)


def three_ways(config, params, inputs, targets, losses) -> tuple[dict, dict]:
    """The user's step and fit's step of `config`, each from `params`, checked on the losses
    of its first two steps against PyTorch's (`losses`, the loss before and after one update:
    the forward pass, then the gradients and the update); (timers, failures) by kind."""
    timers, failures = {}, {}
    for kind, make in (("user", user_step), ("fit", fit_step)):
        step = make(build_model(config, params), config.xla)
        try:
            found = [float(step(inputs, targets)) for _ in range(2)]
        except (tf.errors.OpError, ValueError, TypeError) as error:  # e.g. XLA refusing a loop
            failures[kind] = str(error).strip().splitlines()[0][:120]
            continue
        if max(abs(got - want) for got, want in zip(found, losses, strict=True)) > 1e-5:
            raise SystemExit(f"{config.variant} {kind} step: losses {found}, PyTorch's {losses}")

        def timed(step=step) -> float:
            start = time.perf_counter()
            np.asarray(step(inputs, targets))  # the loss on the host: the step has ended
            return time.perf_counter() - start

        timers[kind] = timed
    return timers, failures


def train_shape(batch: int, steps: int, repeats: int, torch, workers: Workers = Workers()):
    """One shape's training steps: every candidate (three kinds of step each), its forward, PyTorch,
    the ruler and `workers`' steps, interleaved; (its rounds, PyTorch's timed step)."""
    base = RunConfig(batch_size=batch, time_steps=steps, task="training")
    params, x, target = init_params(base), make_inputs(base), loss_target(base)
    inputs, targets = tf.constant(x), tf.constant(target)
    model = torch_model(params, torch).train()
    torch_input, torch_target = torch.from_numpy(x), torch.from_numpy(target)
    torch_step = training_timer(model, torch_input, torch_target, torch)
    with torch.no_grad():
        first_loss = float(mean_squared_error(model(torch_input), torch_target, torch.mean))
    # Every side takes its first step from the same weights; then the loss and gradients of the
    # second step are compared, which checks the gradients and the update together.
    torch_step()
    model.zero_grad(set_to_none=True)
    loss = mean_squared_error(model(torch_input), torch_target, torch.mean)
    loss.backward()
    expected_loss, expected = float(loss.detach()), torch_gradients(model)
    timers, firsts, names, refused = {}, {}, [], {}
    for label, name, xla in candidates():
        config = base.replace(variant=name, xla=xla)
        step = TrainingStep(build_model(config, params), config)
        start = time.perf_counter()  # tracing the step traces its gradient graph
        step.step.get_concrete_function()
        firsts[label] = time.perf_counter() - start + timed_call(step.step, inputs, targets)
        found_loss, grads = step.forward_backward(inputs, targets)
        worst = max(
            np.max(np.abs(grad.numpy() - expected[key])) / np.max(np.abs(expected[key]))
            for key, grad in zip(step.names, grads, strict=True)
        )
        if abs(float(found_loss) - expected_loss) > 1e-5 or worst > 1e-4:
            raise SystemExit(f"{label}: loss or gradients differ from PyTorch's ({worst:.1e})")
        forward = make_forward(step.model, config.replace(task="inference"))
        timers[label] = lambda step=step: timed_call(step.step, inputs, targets)
        timers[f"{label} forward"] = lambda forward=forward: timed_call(forward, inputs)
        names.append(label)
        others, failures = three_ways(config, params, inputs, targets, (first_loss, expected_loss))
        timers |= {f"{label} {kind}": timer for kind, timer in others.items()}
        refused |= {f"{label} {kind}": why for kind, why in failures.items()}
    timers[PEER] = torch_step
    samples, others, refused_there = in_rounds(timers, workers, base, repeats)
    steps_timed = {
        f"{name} ({kind})": name + suffix
        for name in names
        for kind, suffix in KINDS.items()
        if name + suffix in samples
    }
    rounds = Rounds(
        f"{batch}x{steps}",
        training_flops(base),
        samples,
        names,
        {"tensorflow": steps_timed, **others},
        refused | refused_there,
        firsts,
    )
    return rounds, torch_step


def training_row(rounds: Rounds) -> list[str]:
    """The training table's row: each candidate's harness step (ms, / its own forward, first
    step), PyTorch's, and the fastest with its paired ratio to PyTorch."""
    cells = []
    for name in rounds.names:
        step, own_forward = rounds.median(name), rounds.median(f"{name} forward")
        cells.append(
            f"{step * 1e3:.1f} ({step / own_forward:.1f}x fwd, first {rounds.first_s[name]:.1f} s)"
        )
    best = min(rounds.names, key=rounds.median)
    ratio = ratio_cell(paired(rounds.samples, best, PEER))
    return [rounds.shape, *cells, f"{rounds.median(PEER) * 1e3:.1f}", best, ratio]


def ways_row(rounds: Rounds) -> list[str]:
    """The three-ways table's row: per kind of step, each candidate's median ms, the fastest's
    paired ratio to PyTorch, and whether that meets the target."""
    row = [rounds.shape]
    for suffix in KINDS.values():
        kept = [name + suffix for name in rounds.names if name + suffix in rounds.samples]
        if not kept:
            row += ["fails", "-", "-"]
            continue
        fastest = min(kept, key=rounds.median)
        ratio = paired(rounds.samples, fastest, PEER)
        times = [
            f"{rounds.median(name + suffix) * 1e3:.1f}" if name + suffix in kept else "fails"
            for name in rounds.names
        ]
        row += [" / ".join(times), f"{fastest.removesuffix(suffix)}: {ratio_cell(ratio)}"]
        row.append(target_cell(ratio[0]))
    return row


def torch_profile(step, steps: int) -> str:
    """`steps` calls of `step` under torch.profiler (CPU activities): the top 15 ops by self CPU
    time, as its table prints them."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        for _ in range(steps):
            step()
    return profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=15)


XLA_THUNK_TRACE = "--xla_cpu_enable_xprof_traceme=true"  # each XLA:CPU thunk in the capture


def tf_profile(batch: int, steps: int, task: str, count: int) -> str:
    """`count` of fused + XLA's steps (`task`: inference or training, SGD) at batch x steps under
    `python -m hierlstm profile`, in a process of its own with XLA_THUNK_TRACE added to
    XLA_FLAGS: its tables, without the capture's path. RuntimeError with its last line if it
    failed."""
    flags = f"{os.environ.get('XLA_FLAGS', '')} {XLA_THUNK_TRACE}".strip()
    with tempfile.TemporaryDirectory(prefix="vs-pytorch-profile-") as logdir:
        command = [sys.executable, "-m", "hierlstm", "profile", "--variant", "fused", "--xla"]
        command += ["--task", task, "--batch-size", str(batch)]
        command += ["--optimizer", "sgd"] if task == "training" else []
        command += ["--time-steps", str(steps), "--steps", str(count), "--no-store"]
        command += ["--logdir", logdir]
        done = subprocess.run(
            command, env=os.environ | {"XLA_FLAGS": flags}, capture_output=True, text=True
        )
    if done.returncode:
        lines = (done.stderr or done.stdout).strip().splitlines() or ["no output"]
        raise RuntimeError(f"hierlstm profile failed ({done.returncode}): {lines[-1]}")
    return done.stdout.split("\nlog: ")[0] + "\n"


def print_tf_profiles(args, task: str) -> None:
    if not args.profile_tf_steps:
        return
    what = "training step (SGD)" if task == "training" else "forward pass"
    for batch, steps in args.shapes:
        table = tf_profile(batch, steps, task, args.profile_tf_steps)
        print(
            f"\n### hierlstm's {what} at {batch}x{steps}, fused + XLA, "
            f"{args.profile_tf_steps} steps under `hierlstm profile` (XLA:CPU's thunks "
            f"traced)\n\n```\n{table}```"
        )


def race_tables(found: list[Rounds], task: str) -> str:
    """One task's tables beside the candidates': the fastest (variant, backend) per shape, and the
    fastest TensorFlow contender against the ruler; then each contender that could not run."""
    what = "forward pass" if task == "inference" else "training step"
    target = SHARE_TARGETS[task]
    fastest_header = ["shape", "fastest [backend]", "median ms", "/ PyTorch (p10-p90)"]
    fastest_header += [f"target {TARGET}"]
    fastest_header += [f"fastest on {backend}: / PyTorch" for backend in found[0].contenders]
    ruler_header = ["shape", "hierlstm fastest (TensorFlow)", "GFLOP/s", "matmul GFLOP/s"]
    ruler_header += ["of matmul (paired)", f"target {target:.0%}"]
    return "\n".join(
        [
            f"\n### Fastest {what} per shape, every backend in the same rounds, paired against "
            "PyTorch\n",
            markdown_table(fastest_header, [fastest_row(rounds) for rounds in found]),
            f"\n### The {what} against a {RULER_SIZE}^3 float32 matmul in the same rounds "
            f"(TensorFlow, same threads; FLOPs from hierlstm.model.cost; issue 38's target, at "
            f"128x200: {target:.0%})\n",
            markdown_table(ruler_header, [ruler_row(rounds, target) for rounds in found]),
            *(
                f"- {rounds.shape} {name} fails: {why}"
                for rounds in found
                for name, why in rounds.refused.items()
            ),
        ]
    )


def backend_names(text: str) -> tuple[str, ...]:
    """Keras backends from "tensorflow,jax,torch": an argparse `type=`."""
    names = tuple(text.split(","))
    if unknown := [name for name in names if name not in BACKENDS]:
        raise argparse.ArgumentTypeError(
            f"no Keras backend {unknown[0]!r}; choose from {', '.join(BACKENDS)}"
        )
    if "tensorflow" not in names:
        raise argparse.ArgumentTypeError(
            "the backends must include tensorflow: hierlstm's candidates run on it"
        )
    return names


def check_workers(workers: Workers) -> None:
    """Every variant each worker builds, its forward and gradients against the numpy oracle at
    batch 1 and 4 steps (`BackendPool.check`); exits naming any that differ."""
    for backend in workers.backends:
        report = workers.pool.check(RunConfig(batch_size=1, time_steps=4, backend=backend))
        entries = report["forward"] + report["gradients"]
        if wrong := sorted({entry["variant"] for entry in entries if not entry["ok"]}):
            raise SystemExit(f"on {backend}, {', '.join(wrong)} differ from the numpy oracle")


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--shapes", type=shapes, default="8x50,32x100,128x200")
    parser.add_argument("--task", default="both", choices=("inference", "training", "both"))
    parser.add_argument("--train-repeats", type=int, default=15, help="rounds of the training step")
    installed = all(importlib.util.find_spec(name) for name in BACKENDS)
    parser.add_argument(
        "--backends",
        type=backend_names,
        default=",".join(BACKENDS) if installed else "tensorflow",
        help="Keras backends whose contenders race (default: every one installed); those "
        "beside tensorflow run --portable in a worker process each",
    )
    parser.add_argument(
        "--portable",
        default=",".join(PORTABLE),
        help="the variants timed on the backends beside tensorflow",
    )
    parser.add_argument(
        "--profile-torch-steps",
        type=int,
        default=0,
        help="after timing, profile this many of PyTorch's training steps per shape",
    )
    parser.add_argument(
        "--profile-tf-steps",
        type=int,
        default=0,
        help="after timing, profile this many of fused + XLA's forward passes and training "
        "steps per shape, each in a process of its own",
    )
    args = parser.parse_args(argv)
    import torch

    same_threads(torch, args.threads)
    others = tuple(name for name in args.backends if name != "tensorflow")
    print(header("hierlstm against PyTorch"))
    print(
        f"PyTorch {torch.__version__}; {args.threads} threads for both (TF intra-op "
        f"{tf.config.threading.get_intra_op_parallelism_threads()}, torch "
        f"{torch.get_num_threads()}); {args.repeats} interleaved rounds, each sample the mean of "
        f"back-to-back calls lasting about {BURST_SECONDS * 1e3:.0f} ms (1 to {MAX_BURST} "
        "calls, as a loop runs them); outputs of every "
        "candidate and of PyTorch checked against the numpy reference (max abs diff <= 1e-5) "
        f"before timing. Every round also times a {RULER_SIZE}^3 float32 matmul in TensorFlow"
        + (
            f", and {args.portable.replace(',', ', ')} on {', '.join(others)} in a worker process "
            f"each ({args.threads} intra-op threads; JAX's XLA:CPU takes its own), every variant "
            "there checked against the numpy oracle (forward and gradients, batch 1, 4 steps) "
            "first"
            if others
            else ""
        )
        + ".\n"
    )
    pool = BackendPool(environment=thread_environment(args.threads)) if others else None
    with pool or contextlib.nullcontext():
        workers = Workers(pool, others, tuple(args.portable.split(",")))
        check_workers(workers)
        if args.task != "training":
            forward(args, torch, workers)
        if args.task != "inference":
            training(args, torch, workers)


def forward(args, torch, workers: Workers) -> None:
    """The forward pass's rounds at every shape, then its tables."""
    found = []
    for batch, steps in args.shapes:
        found.append(run_shape(batch, steps, args.repeats, torch, workers))
        print(f"{batch}x{steps} forward done", file=sys.stderr, flush=True)
    print("\n### Forward pass\n")
    header_row = ("shape", *[f"{name} ms" for name in [*found[0].names, PEER]], "hierlstm best")
    header_row += ("best / PyTorch (p10-p90)", f"target {TARGET}")
    print(markdown_table(header_row, [forward_row(rounds) for rounds in found]))
    print(race_tables(found, "inference"))
    print_tf_profiles(args, "inference")


def training(args, torch, workers: Workers) -> None:
    """The training step's rounds at every shape, then its tables (and PyTorch's profiles)."""
    found, profiles = [], {}
    for batch, steps in args.shapes:
        rounds, torch_step = train_shape(batch, steps, args.train_repeats, torch, workers)
        found.append(rounds)
        if args.profile_torch_steps:
            profiles[rounds.shape] = torch_profile(torch_step, args.profile_torch_steps)
        print(f"{batch}x{steps} training done", file=sys.stderr, flush=True)
    names = found[0].names
    print(
        f"\n### Training step (SGD, {args.train_repeats} interleaved rounds; loss and every "
        "gradient checked against PyTorch autograd, max relative difference <= 1e-4, before "
        "timing)\n"
    )
    header_row = ("shape", *[f"{name} step ms (/ own forward, first step)" for name in names])
    header_row += ("PyTorch step ms", "hierlstm best", "best / PyTorch (p10-p90)")
    print(markdown_table(header_row, [training_row(rounds) for rounds in found]))
    print(
        "\n### The same step three ways: the harness's phases, a user's step (one "
        "`tf.function` around a GradientTape and the SGD update) and `model.fit`'s step "
        "(`train_on_batch`, fit's compiled train function), each from the same weights, its "
        "first two losses checked against PyTorch's (<= 1e-5)\n"
    )
    header_row = ["shape"]
    for kind in KINDS:
        header_row += [f"{kind} ms ({' / '.join(names)})", f"{kind}: fastest / PyTorch"]
        header_row += [f"{kind}: target {TARGET}"]
    print(markdown_table(header_row, [ways_row(rounds) for rounds in found]))
    print(race_tables(found, "training"))
    for shape, table in profiles.items():
        print(
            f"\n### PyTorch's training step at {shape}, {args.profile_torch_steps} steps "
            f"under torch.profiler\n\n```\n{table}```"
        )
    print_tf_profiles(args, "training")


if __name__ == "__main__":
    main()

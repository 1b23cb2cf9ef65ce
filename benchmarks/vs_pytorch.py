"""hierlstm's fastest variants against the same function in PyTorch, timed in one process: the
forward pass, and one training step (forward, backward, SGD update).

    .venv/bin/pip install -r requirements-bench.txt      # PyTorch (CPU build), benchmark-only
    .venv/bin/python -m benchmarks.vs_pytorch [--repeats 30] [--threads N] [--task both]

The PyTorch model is the folded design as a PyTorch user writes it (Conv2d, MaxPool2d, nn.LSTM
over the (batch*time, 12, 16) sub-sequences, nn.LSTM over time), its weights copied from the same
`init_params`. Both frameworks get the same threads, outputs, losses and gradients are checked
before timing, and candidates are timed in interleaved rounds, paired per round. PyTorch's samples
are this module's own `perf_counter` intervals: the harness times TensorFlow only.
The training step is timed three ways on hierlstm's side: the harness's (`TrainingStep`, its
forward-backward and update compiled apart), a user's (one `tf.function` around a GradientTape
and the update) and `model.fit`'s (`train_on_batch`).
`--profile-torch-steps N` prints where PyTorch's training step goes, under torch.profiler.
"""

from __future__ import annotations

import os
import sys
import time

import keras
import numpy as np

from benchmarks.common import header, tf
from benchmarks.record import argument_parser, markdown_table, shapes
from hierlstm.config import RunConfig
from hierlstm.model.builders import build_model
from hierlstm.model.loss import loss_target, mean_squared_error
from hierlstm.model.params import init_params
from hierlstm.model.reference import reference_forward
from hierlstm.model.training import LEARNING_RATES, TrainingStep
from hierlstm.registry import VARIANTS
from hierlstm.timing.harness import make_forward, make_inputs, timed_call
from hierlstm.timing.rounds import timer_rounds


def torch_model(params, torch):
    """The same function in PyTorch, from hierlstm's parameters (gate order i, f, g, o matches
    Keras's i, f, c, o; PyTorch's second bias is set to zero and not trained)."""
    nn = torch.nn

    def tensor(array):
        return torch.from_numpy(np.ascontiguousarray(array))

    class Hierarchical(nn.Module):
        def __init__(self):
            super().__init__()
            kernel = params["conv_kernel"]  # (k, k, 1, C)
            channels = kernel.shape[-1]
            self.conv = nn.Conv2d(1, channels, kernel.shape[0], padding="same")
            self.pool = nn.MaxPool2d((3, 1))
            inner = params["inner_recurrent_kernel"].shape[0]
            self.inner = nn.LSTM(channels, inner, batch_first=True)
            self.outer = nn.LSTM(inner, params["outer_recurrent_kernel"].shape[0], batch_first=True)
            with torch.no_grad():
                self.conv.weight.copy_(tensor(kernel.transpose(3, 2, 0, 1)))
                self.conv.bias.copy_(tensor(params["conv_bias"]))
                for lstm, prefix in ((self.inner, "inner"), (self.outer, "outer")):
                    lstm.weight_ih_l0.copy_(tensor(params[f"{prefix}_kernel"].T))
                    lstm.weight_hh_l0.copy_(tensor(params[f"{prefix}_recurrent_kernel"].T))
                    lstm.bias_ih_l0.copy_(torch.from_numpy(params[f"{prefix}_bias"]))
                    lstm.bias_hh_l0.zero_()
                    # Kept at zero: trained, it would move the one bias Keras has twice as fast
                    # (b_ih + b_hh both step by the same gradient).
                    lstm.bias_hh_l0.requires_grad_(False)

        def forward(self, x):  # (B, H, T, 1)
            batch, _, steps, _ = x.shape
            x = x.permute(0, 3, 1, 2)  # -> (B, 1, H, T)
            x = self.pool(self.conv(x))  # -> (B, C, R, T)
            x = x.permute(0, 3, 2, 1)  # -> (B, T, R, C)
            rows, channels = x.shape[2], x.shape[3]
            folded = x.reshape(batch * steps, rows, channels)  # -> (B*T, R, C)
            _, (hidden, _) = self.inner(folded)  # hidden: (1, B*T, inner)
            summaries = hidden[0].reshape(batch, steps, -1)  # -> (B, T, inner)
            outputs, _ = self.outer(summaries)  # -> (B, T, outer)
            return outputs

    return Hierarchical().eval()


def torch_gradients(model) -> dict[str, np.ndarray]:
    """PyTorch's parameter gradients under hierlstm's names and layouts (the trained bias_ih is
    Keras's one bias)."""
    grads = {
        "conv_kernel": model.conv.weight.grad.numpy().transpose(2, 3, 1, 0),
        "conv_bias": model.conv.bias.grad.numpy(),
    }
    for lstm, prefix in ((model.inner, "inner"), (model.outer, "outer")):
        grads[f"{prefix}_kernel"] = lstm.weight_ih_l0.grad.numpy().T
        grads[f"{prefix}_recurrent_kernel"] = lstm.weight_hh_l0.grad.numpy().T
        grads[f"{prefix}_bias"] = lstm.bias_ih_l0.grad.numpy()
    return grads


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


def forward_timer(model, inputs, torch, cuda: bool = False):
    """One timed forward pass of a PyTorch model (seconds), ended by a CUDA sync on a GPU."""

    def call() -> float:
        with torch.inference_mode():
            start = time.perf_counter()
            model(inputs)
            if cuda:
                torch.cuda.synchronize()
            return time.perf_counter() - start

    return call


def training_timer(model, inputs, target, torch):
    """One timed SGD step of a PyTorch model (seconds), on hierlstm's loss and learning rate."""
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATES["sgd"])

    def step() -> float:
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        mean_squared_error(model(inputs), target, torch.mean).backward()
        optimizer.step()
        return time.perf_counter() - start

    return step


def run_shape(batch: int, steps: int, repeats: int, torch) -> list:
    base = RunConfig(batch_size=batch, time_steps=steps)
    params = init_params(base)
    x = make_inputs(base)
    expected = reference_forward(params, x)
    timers = {}
    inputs = tf.constant(x)
    for label, name, xla in candidates():
        config = base.replace(variant=name, xla=xla)
        forward = make_forward(build_model(config, params), config)
        difference = np.max(np.abs(np.asarray(forward(inputs), np.float64) - expected))
        if difference > 1e-5:
            raise SystemExit(f"{name} differs from the reference by {difference:.2e}")
        timers[label] = lambda forward=forward: timed_call(forward, inputs)
    model = torch_model(params, torch)
    torch_input = torch.from_numpy(x)
    with torch.inference_mode():
        difference = np.max(np.abs(model(torch_input).numpy().astype(np.float64) - expected))
    if difference > 1e-5:
        raise SystemExit(f"PyTorch differs from the reference by {difference:.2e}")
    timers["PyTorch"] = forward_timer(model, torch_input, torch)
    samples = timer_rounds(timers, repeats, warmup=3)
    medians = {name: float(np.median(values)) for name, values in samples.items()}
    best = min((name for name in timers if name != "PyTorch"), key=medians.get)
    cells = [f"{medians[name] * 1e3:.2f}" for name in timers]
    return [f"{batch}x{steps}", *cells, best, _paired(samples, best, "PyTorch")], list(timers)


def _paired(samples, name: str, against: str) -> str:
    ratios = np.array(samples[name]) / np.array(samples[against])
    low, high = np.percentile(ratios, [10, 90])
    return f"{np.median(ratios):.2f} ({low:.2f}-{high:.2f})"


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


def train_shape(batch: int, steps: int, repeats: int, torch) -> list:
    """One shape's training steps: every candidate, its forward, and PyTorch, interleaved."""
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
    timers["PyTorch"] = torch_step
    samples = timer_rounds(timers, repeats, warmup=3)
    medians = {name: float(np.median(values)) for name, values in samples.items()}
    best = min(names, key=medians.get)
    cells = [
        f"{medians[name] * 1e3:.1f} ({medians[name] / medians[name + ' forward']:.1f}x fwd, "
        f"first {firsts[name]:.1f} s)"
        for name in names
    ]
    row = [f"{batch}x{steps}", *cells, f"{medians['PyTorch'] * 1e3:.1f}", best]
    ways = [f"{batch}x{steps}"]
    for kind in ("", " user", " fit"):
        kept = [name + kind for name in names if name + kind in samples]
        if not kept:
            ways += ["fails", "-"]
            continue
        fastest = min(kept, key=medians.get)
        ways += [
            " / ".join(
                f"{medians[name + kind] * 1e3:.1f}" if name + kind in medians else "fails"
                for name in names
            ),
            f"{fastest.removesuffix(kind)}: {_paired(samples, fastest, 'PyTorch')}",
        ]
    return [*row, _paired(samples, best, "PyTorch")], names, torch_step, ways, refused


def torch_profile(step, steps: int) -> str:
    """`steps` calls of `step` under torch.profiler (CPU activities): the top 15 ops by self CPU
    time, as its table prints them."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        for _ in range(steps):
            step()
    return profiler.key_averages().table(sort_by="self_cpu_time_total", row_limit=15)


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--shapes", type=shapes, default="8x50,32x100,128x200")
    parser.add_argument("--task", default="both", choices=("inference", "training", "both"))
    parser.add_argument("--train-repeats", type=int, default=15, help="rounds of the training step")
    parser.add_argument(
        "--profile-torch-steps",
        type=int,
        default=0,
        help="after timing, profile this many of PyTorch's training steps per shape",
    )
    args = parser.parse_args(argv)
    import torch

    same_threads(torch, args.threads)
    print(header("hierlstm against PyTorch"))
    print(
        f"PyTorch {torch.__version__}; {args.threads} threads for both (TF intra-op "
        f"{tf.config.threading.get_intra_op_parallelism_threads()}, torch "
        f"{torch.get_num_threads()}); {args.repeats} interleaved rounds; outputs of every "
        "candidate and of PyTorch checked against the numpy reference (max abs diff <= 1e-5) "
        "before timing.\n"
    )
    if args.task != "training":
        rows, names = [], []
        for batch, steps in args.shapes:
            row, names = run_shape(batch, steps, args.repeats, torch)
            rows.append(row)
            print(f"{batch}x{steps} forward done", file=sys.stderr, flush=True)
        print("\n### Forward pass\n")
        header_row = ("shape", *[f"{name} ms" for name in names], "hierlstm best")
        print(markdown_table((*header_row, "best / PyTorch (p10-p90)"), rows))
    if args.task != "inference":
        rows, names, profiles, ways, refused = [], [], {}, [], {}
        for batch, steps in args.shapes:
            found = train_shape(batch, steps, args.train_repeats, torch)
            row, names, torch_step = found[:3]
            rows.append(row)
            ways.append(found[3])
            refused |= found[4]
            if args.profile_torch_steps:
                profiles[f"{batch}x{steps}"] = torch_profile(torch_step, args.profile_torch_steps)
            print(f"{batch}x{steps} training done", file=sys.stderr, flush=True)
        print(
            f"\n### Training step (SGD, {args.train_repeats} interleaved rounds; loss and every "
            "gradient checked against PyTorch autograd, max relative difference <= 1e-4, before "
            "timing)\n"
        )
        header_row = ("shape", *[f"{name} step ms (/ own forward, first step)" for name in names])
        header_row += ("PyTorch step ms", "hierlstm best", "best / PyTorch (p10-p90)")
        print(markdown_table(header_row, rows))
        print(
            "\n### The same step three ways: the harness's phases, a user's step (one "
            "`tf.function` around a GradientTape and the SGD update) and `model.fit`'s step "
            "(`train_on_batch`, fit's compiled train function), each from the same weights, its "
            "first two losses checked against PyTorch's (<= 1e-5)\n"
        )
        header_row = ["shape"]
        for kind in ("harness", "user", "model.fit"):
            header_row += [f"{kind} ms ({' / '.join(names)})", f"{kind}: fastest / PyTorch"]
        print(markdown_table(header_row, ways))
        for name, why in refused.items():
            print(f"- {name} step fails: {why}")
        for shape, table in profiles.items():
            print(
                f"\n### PyTorch's training step at {shape}, {args.profile_torch_steps} steps "
                f"under torch.profiler\n\n```\n{table}```"
            )


if __name__ == "__main__":
    main()

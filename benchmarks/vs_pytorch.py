"""hierlstm's fastest variants against the same function in PyTorch, timed in one process.

    .venv/bin/pip install -r requirements-bench.txt      # PyTorch (CPU build), benchmark-only
    .venv/bin/python benchmarks/vs_pytorch.py [--repeats 30] [--threads N]

The PyTorch model is the folded design written the way a PyTorch user would: Conv2d, MaxPool2d,
one nn.LSTM over the (batch*time, 12, 16) sub-sequences, one nn.LSTM over time. Its weights are
copied from the same `init_params` as hierlstm's, and both outputs are checked against the numpy
reference before anything is timed. Both frameworks get the same thread count; every candidate
is timed in interleaved rounds (A B C ..., A B C ...), each sample a `perf_counter` interval
around one forward pass ended by the harness's device synchronisation (PyTorch on a CPU returns
when it is done). Prints per shape the medians and hierlstm-best / PyTorch, paired per round.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from common import header, markdown_table, tf

from hierlstm.config import RunConfig
from hierlstm.model.builders import build_model
from hierlstm.model.params import init_params
from hierlstm.model.reference import reference_forward
from hierlstm.registry import VARIANTS
from hierlstm.timing.harness import make_forward, make_inputs, timed_call


def torch_model(params, torch):
    """The same function in PyTorch, from hierlstm's parameters (gate order i, f, g, o matches
    Keras's i, f, c, o; PyTorch's second bias is set to zero)."""
    nn = torch.nn

    class Hierarchical(nn.Module):
        def __init__(self):
            super().__init__()
            kernel = params["conv_kernel"]  # (k, k, 1, C)
            self.conv = nn.Conv2d(1, kernel.shape[-1], kernel.shape[0], padding="same")
            self.pool = nn.MaxPool2d((3, 1))
            self.inner = nn.LSTM(
                kernel.shape[-1], params["inner_recurrent_kernel"].shape[0], batch_first=True
            )
            self.outer = nn.LSTM(
                params["outer_kernel"].shape[0],
                params["outer_recurrent_kernel"].shape[0],
                batch_first=True,
            )
            with torch.no_grad():
                self.conv.weight.copy_(torch.from_numpy(kernel.transpose(3, 2, 0, 1).copy()))
                self.conv.bias.copy_(torch.from_numpy(params["conv_bias"]))
                for lstm, prefix in ((self.inner, "inner"), (self.outer, "outer")):
                    lstm.weight_ih_l0.copy_(torch.from_numpy(params[f"{prefix}_kernel"].T.copy()))
                    lstm.weight_hh_l0.copy_(
                        torch.from_numpy(params[f"{prefix}_recurrent_kernel"].T.copy())
                    )
                    lstm.bias_ih_l0.copy_(torch.from_numpy(params[f"{prefix}_bias"]))
                    lstm.bias_hh_l0.zero_()

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


def candidates() -> list[tuple[str, bool]]:
    names = ["folded", "fused"] if "fused" in VARIANTS else ["folded"]
    return [(name, xla) for name in names for xla in (True, False)]


def run_shape(batch: int, steps: int, repeats: int, torch) -> list:
    base = RunConfig(batch_size=batch, time_steps=steps)
    params = init_params(base)
    x = make_inputs(base)
    expected = reference_forward(params, x)
    timers = {}
    for name, xla in candidates():
        config = base.replace(variant=name, xla=xla)
        forward = make_forward(build_model(config, params), config)
        inputs = tf.constant(x)
        difference = np.max(np.abs(np.asarray(forward(inputs), np.float64) - expected))
        if difference > 1e-5:
            raise SystemExit(f"{name} differs from the reference by {difference:.2e}")
        timers[f"{name}{' + XLA' if xla else ''}"] = lambda forward=forward, inputs=inputs: (
            timed_call(forward, inputs)
        )
    model = torch_model(params, torch)
    torch_input = torch.from_numpy(x)
    with torch.inference_mode():
        difference = np.max(np.abs(model(torch_input).numpy().astype(np.float64) - expected))
    if difference > 1e-5:
        raise SystemExit(f"PyTorch differs from the reference by {difference:.2e}")

    def torch_call():
        with torch.inference_mode():
            start = time.perf_counter()
            model(torch_input)
            return time.perf_counter() - start

    timers["PyTorch"] = torch_call
    for _ in range(3):  # warm-up
        for timer in timers.values():
            timer()
    samples = {name: [] for name in timers}
    for _ in range(repeats):
        for name, timer in timers.items():
            samples[name].append(timer())
    medians = {name: float(np.median(values)) for name, values in samples.items()}
    best = min((name for name in timers if name != "PyTorch"), key=medians.get)
    paired = np.array(samples[best]) / np.array(samples["PyTorch"])
    return [
        f"{batch}x{steps}",
        *(f"{medians[name] * 1e3:.2f}" for name in timers),
        best,
        f"{np.median(paired):.2f} ({np.percentile(paired, 10):.2f}-"
        f"{np.percentile(paired, 90):.2f})",
    ], list(timers)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--shapes", default="8x50,32x100,128x200")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    print(header("hierlstm against PyTorch"))
    print(
        f"PyTorch {torch.__version__}; {args.threads} threads for both (TF intra-op "
        f"{tf.config.threading.get_intra_op_parallelism_threads()}, torch "
        f"{torch.get_num_threads()}); {args.repeats} interleaved rounds; outputs of every "
        "candidate and of PyTorch checked against the numpy reference (max abs diff <= 1e-5) "
        "before timing.\n"
    )
    rows, names = [], []
    for shape in args.shapes.split(","):
        batch, steps = (int(part) for part in shape.split("x"))
        row, names = run_shape(batch, steps, args.repeats, torch)
        rows.append(row)
        print(f"{shape} done", file=sys.stderr, flush=True)
    print()
    print(
        markdown_table(
            (
                "shape",
                *[f"{name} ms" for name in names],
                "hierlstm best",
                "best / PyTorch (p10-p90)",
            ),
            rows,
        )
    )


if __name__ == "__main__":
    main()

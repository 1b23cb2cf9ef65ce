"""Why `fused` is fast: it against `folded`, with and without XLA, and with one of its choices
undone at a time, timed in one process.

    .venv/bin/python -m benchmarks fused_ablation [--rounds 20] [--shapes 8x50,...]
        [--ablations "one chain,XLA conv"]     (default: every one)

Each ablation is a `FusedHierarchicalLSTM` subclass that swaps back one method, so it sits outside
the registry and the harness's `compare`: every candidate is one `tf.function` for any batch and
length, checked against the numpy reference, then timed in rotating interleaved rounds with ratios
to folded and folded + XLA paired per round. Under XLA the ablations are:
- sigmoid gates: Keras's gate maths instead of one tanh per gate with the halving in the weights;
- XLA conv: the Conv2D layer and max-pool instead of fused shifted taps;
- hoisted inner / outer input: the input projection as one matmul before the loop (cuDNN's
  design) instead of one [x, h] @ [W; U] matmul per step;
- one chain: the conv and the inner LSTM over the whole batch as one chain of ops instead of one
  chain per intra-op thread, each on a slice of the batch.
"""

from __future__ import annotations

import time

import keras
import numpy as np

from benchmarks.common import header, tf
from benchmarks.record import argument_parser, markdown_table, shapes
from hierlstm.config import RunConfig
from hierlstm.model.builders import build_fused, build_model
from hierlstm.model.fused import FusedHierarchicalLSTM
from hierlstm.model.params import init_params, load_params
from hierlstm.model.reference import reference_forward
from hierlstm.timing import timed_call
from hierlstm.timing.rounds import timer_rounds


class SigmoidGates(FusedHierarchicalLSTM):
    """Keras's gate maths: weights as stored, sigmoid for i, f, o."""

    def lstm_weights(self, holder):
        return tuple(
            tf.cast(variable, self.compute_dtype)
            for variable in (holder.kernel, holder.recurrent_kernel, holder.bias)
        )

    def lstm_step(self, preactivations, cell, units):
        z = preactivations  # (N, 4U)
        input_gate = tf.sigmoid(z[:, :units])  # -> (N, U)
        candidate = tf.tanh(z[:, 2 * units : 3 * units])  # -> (N, U)
        output_gate = tf.sigmoid(z[:, 3 * units :])  # -> (N, U)
        forget_gate = tf.sigmoid(z[:, units : 2 * units])  # -> (N, U)
        cell = (
            input_gate * candidate if cell is None else forget_gate * cell + input_gate * candidate
        )
        return output_gate * tf.tanh(cell), cell


class XlaConv(FusedHierarchicalLSTM):
    """The Conv2D layer and max-pool under XLA too."""

    def pooled_rows(self, inputs):
        return self.pooled_rows_by_conv(inputs)  # (B, H, T, 1) -> (R, T, B, C)


class HoistedInnerInput(FusedHierarchicalLSTM):
    """All R rows' input projections as one matmul before the inner steps."""

    def inner_lstm(self, rows):
        units = self.inner_units
        kernel, recurrent_kernel, bias = self.lstm_weights(self.inner_cell)
        shape = tf.shape(rows)
        count = shape[1] * shape[2]  # N = T*B
        projected = tf.reshape(rows, (-1, self.filters)) @ kernel + bias  # (R*N, C) -> (R*N, 4U)
        projected = tf.reshape(projected, (rows.shape[0], count, 4 * units))  # -> (R, N, 4U)
        hidden, cell = self.lstm_step(projected[0], None, units)  # -> (N, U) each
        for row in range(1, rows.shape[0]):
            hidden, cell = self.lstm_step(
                projected[row] + hidden @ recurrent_kernel, cell, units
            )  # (N, 4U) -> (N, U) each
        return tf.reshape(hidden, (shape[1], shape[2], units))  # -> (T, B, U)


class HoistedOuterInput(FusedHierarchicalLSTM):
    """The outer input projection as one matmul before the loop over time."""

    def outer_lstm(self, summaries):
        kernel, recurrent_kernel, bias = self.lstm_weights(self.outer_cell)
        projected = summaries @ kernel + bias  # (T, B, inner) -> (T, B, 4U)
        return self.outer_loop(
            summaries, lambda time, hidden: projected[time] + hidden @ recurrent_kernel
        )


class OneChain(FusedHierarchicalLSTM):
    """The conv and the inner LSTM over the whole batch as one chain, whatever the threads."""

    def chains(self):
        return 1


ABLATIONS = {
    "fused - sigmoid gates": SigmoidGates,
    "fused - XLA conv": XlaConv,
    "fused - hoisted inner input": HoistedInnerInput,
    "fused - hoisted outer input": HoistedOuterInput,
    "fused - one chain": OneChain,
}


PREFIX = "fused - "


def ablation_names(text: str) -> tuple[str, ...]:
    """ "one chain,XLA conv" -> the ABLATIONS keys; argparse's error for an unknown name."""
    import argparse

    names = tuple(f"{PREFIX}{name.strip()}" for name in text.split(",") if name.strip())
    if unknown := [name for name in names if name not in ABLATIONS]:
        known = ", ".join(name.removeprefix(PREFIX) for name in ABLATIONS)
        name = unknown[0].removeprefix(PREFIX)
        raise argparse.ArgumentTypeError(f"unknown ablation {name!r}; known: {known}")
    return names


def ablation_model(layer_class, config: RunConfig, params) -> keras.Model:
    """`build_fused` with `layer_class` in place of `FusedHierarchicalLSTM`."""
    model = build_fused(config, layer_class)  # (B, H, T, 1) -> (B, T, outer)
    load_params(model, params)
    return model


def candidates(config: RunConfig, params, ablations=tuple(ABLATIONS)) -> dict:
    """Name -> tf.function (B, H, T, 1) -> (B, T, outer); the baseline comes first, then the
    four references, then each of `ablations` (names of ABLATIONS)."""
    signature = [tf.TensorSpec((None, config.height, None, 1), tf.float32)]
    models = {
        name: build_model(config.replace(variant=name), params) for name in ("folded", "fused")
    }
    functions = {}
    for name in ("folded", "fused"):
        for xla in (False, True):
            label = f"{name}{' + XLA' if xla else ''}"
            functions[label] = tf.function(models[name], input_signature=signature, jit_compile=xla)
    for label in ablations:
        model = ablation_model(ABLATIONS[label], config, params)
        functions[f"{label} + XLA"] = tf.function(
            model, input_signature=signature, jit_compile=True
        )
    return functions


def time_shape(functions: dict, params, batch: int, steps: int, rounds: int) -> list[list]:
    """Table rows for one (batch, time): check, warm up, time interleaved."""
    x = np.random.default_rng(batch * 1000 + steps).standard_normal((batch, 36, steps, 1))
    x = x.astype(np.float32)
    expected = reference_forward(params, x, pool_height=3)
    inputs = tf.constant(x)
    differences = {}
    for name, function in functions.items():
        differences[name] = float(np.max(np.abs(function(inputs).numpy() - expected)))
        if differences[name] > 1e-5:
            raise SystemExit(f"{name} differs from the reference by {differences[name]:.2e}")
    timers = {name: lambda f=fn: timed_call(f, inputs) for name, fn in functions.items()}
    samples = timer_rounds(timers, rounds, rotate=True)
    baseline, baseline_xla = np.array(samples["folded"]), np.array(samples["folded + XLA"])
    rows = []
    for name in functions:
        values = np.array(samples[name])
        low, high = np.percentile(values, [10, 90]) * 1e3
        ratios = (f"{np.median(baseline / values):.2f}", f"{np.median(baseline_xla / values):.2f}")
        ms = (f"{np.median(values) * 1e3:.2f}", f"{low:.1f}-{high:.1f}")
        rows.append([f"{batch}x{steps}", name, *ms, *ratios, f"{differences[name]:.1e}"])
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--shapes", type=shapes, default="8x50,32x100,128x200")
    parser.add_argument(
        "--ablations",
        type=ablation_names,
        default=",".join(name.removeprefix(PREFIX) for name in ABLATIONS),
        help="which choices to undo, comma-separated (default: every one)",
    )
    args = parser.parse_args(argv)
    config = RunConfig(variant="fused")
    params = init_params(config)
    functions = candidates(config, params, args.ablations)
    print(header("fused ablation"))
    print(
        f"{args.rounds} interleaved rounds per shape, default geometry (height 36, filters 16, "
        "k 3, pool 3, inner 48, outer 60), float32, "
        f"{tf.config.threading.get_intra_op_parallelism_threads() or 'all'} intra-op threads.\n"
    )
    rows = []
    started = time.perf_counter()
    for batch, steps in args.shapes:
        rows += time_shape(functions, params, batch, steps, args.rounds)
        print(f"{batch}x{steps} done ({time.perf_counter() - started:.0f} s)", flush=True)
    print()
    columns = ("shape", "candidate", "median ms", "p10-p90 ms", "x folded", "x folded + XLA")
    print(markdown_table((*columns, "max abs diff"), rows))
    traces = {
        name: function.experimental_get_tracing_count() for name, function in functions.items()
    }
    print(f"\ntraces per function (1 = one graph for every shape): {traces}")


if __name__ == "__main__":
    main()

"""Each part of the `fused` layer, forward and forward + backward under XLA, with TensorFlow's
own gradient beside the written-out one (`hierlstm.model.bptt`), timed interleaved.

    .venv/bin/python -m benchmarks fused_backward [--shapes 8x50,32x100] [--repeats 10]
        [--parts conv,inner,outer]

The parts (conv and pool by taps, inner LSTM, outer LSTM) are each compiled on their real input,
with the gradient of sum(y^2) with respect to that input and their weights.
"""

from __future__ import annotations

import numpy as np

from benchmarks.common import header, tf
from benchmarks.record import argument_parser, markdown_table, shapes
from hierlstm.config import RunConfig
from hierlstm.model.builders import build_model
from hierlstm.model.params import init_params
from hierlstm.timing.harness import make_inputs, timed_call
from hierlstm.timing.rounds import timer_rounds


def compiled_pair(function, weights):
    """(forward, forward + backward) of `function`, both under XLA."""

    def with_gradient(value):
        with tf.GradientTape() as tape:
            tape.watch(value)
            outputs = function(value)
            loss = tf.reduce_sum(outputs * outputs)
        return tape.gradient(loss, [value, *weights])

    return tf.function(function, jit_compile=True), tf.function(with_gradient, jit_compile=True)


def shape_rows(batch: int, steps: int, repeats: int, chosen=("conv", "inner", "outer")) -> list:
    config = RunConfig(variant="fused", batch_size=batch, time_steps=steps)
    layer = build_model(config, init_params(config)).get_layer("fused_lstm")
    inputs = tf.constant(make_inputs(config))
    rows = layer.pooled_rows_by_conv(inputs)  # (R, T, B, C)
    summaries = layer.inner_lstm(rows)  # (T, B, inner)
    inner = [layer.inner_cell.kernel, layer.inner_cell.recurrent_kernel, layer.inner_cell.bias]
    outer = [layer.outer_cell.kernel, layer.outer_cell.recurrent_kernel, layer.outer_cell.bias]
    conv = [layer.conv.kernel, layer.conv.bias]
    parts = {
        "conv + pool, autodiff": (layer.pooled_rows_by_taps, inputs, conv),
        "conv + pool, written out": (layer.pooled_rows_for_training, inputs, conv),
        "inner LSTM, autodiff": (layer.inner_lstm, rows, inner),
        "inner LSTM, written out": (layer.inner_lstm_for_training, rows, inner),
        "outer LSTM, autodiff": (layer.outer_lstm, summaries, outer),
        "outer LSTM, written out": (layer.outer_lstm_for_training, summaries, outer),
    }
    parts = {name: part for name, part in parts.items() if name.split()[0] in chosen}
    calls = {}
    for name, (function, value, weights) in parts.items():
        forward, backward = compiled_pair(function, weights)
        calls[(name, "forward")] = (forward, value)
        calls[(name, "forward + backward")] = (backward, value)
    timers = {key: lambda call=call: timed_call(*call) for key, call in calls.items()}
    samples = timer_rounds(timers, repeats)  # the warm-up compiles
    medians = {key: float(np.median(values)) for key, values in samples.items()}
    return [
        (
            f"{batch}x{steps}",
            name,
            f"{medians[(name, 'forward')] * 1e3:.2f}",
            f"{medians[(name, 'forward + backward')] * 1e3:.2f}",
            f"{medians[(name, 'forward + backward')] / medians[(name, 'forward')]:.1f}",
        )
        for name in parts
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("--shapes", type=shapes, default="8x50,32x100,128x200")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--parts", default="conv,inner,outer")
    args = parser.parse_args(argv)
    print(header("fused's backward pass, part by part (XLA)"))
    rows = []
    for batch, steps in args.shapes:
        rows += shape_rows(batch, steps, args.repeats, args.parts.split(","))
    columns = ("shape", "part, gradient", "forward ms", "forward + backward ms", "ratio")
    print(markdown_table(columns, rows))


if __name__ == "__main__":
    main()

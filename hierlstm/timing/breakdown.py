"""The per-layer split: each top-level layer of a model timed as its own function on its real
input, beside the whole model and the cost of one empty call."""

from __future__ import annotations

import keras
import numpy as np
import pandas as pd
import tensorflow as tf

from hierlstm.config import DEFAULT_TIMING, RunConfig, Timing
from hierlstm.hardware import resolve_device
from hierlstm.model.builders import build_model
from hierlstm.model.params import init_params
from hierlstm.timing.basics import scaled_progress
from hierlstm.timing.harness import Progress, make_forward, make_inputs, no_progress, timed_call
from hierlstm.timing.rounds import timer_rounds


def top_level_layers(model) -> list:
    """The model's layers but its input, in order: the rows of the per-layer split (here and
    in the profiler's, `hierlstm.profiling.profiler`)."""
    return [layer for layer in model.layers if not isinstance(layer, keras.layers.InputLayer)]


def _layer_inputs(model, layers, inputs) -> list:
    """Each layer's real input in one pass: a probe model returns every layer's output, and
    each layer's input tensors (one, or a list for `unfold`) are looked up among them."""
    probe = keras.Model(model.inputs, [layer.output for layer in layers], name="layer_probe")
    outputs = tf.nest.flatten(probe(inputs, training=False))  # one layer: a bare tensor
    values = {id(model.inputs[0]): inputs}
    values.update({id(layer.output): output for layer, output in zip(layers, outputs, strict=True)})
    return [
        keras.tree.map_structure(lambda tensor: values[id(tensor)], layer.input) for layer in layers
    ]


def layer_breakdown(
    config: RunConfig,
    timing: Timing = DEFAULT_TIMING,
    *,
    on_progress: Progress | None = None,
) -> pd.DataFrame:
    """Time of each top-level layer on its real input, and of the whole model, in interleaved
    rounds. Columns: layer, type, median_s, p10_s, p90_s, share; `df.attrs` holds model_median_s,
    sum_median_s and call_overhead_s (an empty function's median: each layer's time includes one, so
    the sum exceeds the model's)."""
    warmup, repeats, seed = timing.warmup, timing.repeats, timing.seed
    progress = on_progress or no_progress
    device = resolve_device(config.device)
    progress(0.0, f"building {config.variant} on {device}")
    with tf.device(device):
        model = build_model(config, init_params(config, seed))
        inputs = tf.identity(tf.convert_to_tensor(make_inputs(config, seed)))
        layers = top_level_layers(model)
        layer_inputs = _layer_inputs(model, layers, inputs)
        calls = [
            (
                tf.function(
                    lambda value, layer=layer: layer(value, training=False), jit_compile=config.xla
                ),
                value,
            )
            for layer, value in zip(layers, layer_inputs, strict=True)
        ]
        calls.append((make_forward(model, config), inputs))
        # An empty function measures what every separate call costs on its own (dispatch and
        # sync), which is most of the gap between the layers' sum and the whole model.
        calls.append((tf.function(tf.identity), inputs))
        progress(0.1, "tracing and warming up each layer")
        for function, value in calls:
            # Traced explicitly: TensorFlow does not count this as retracing, so many small
            # functions traced in a row do not set off its "excessive retracing" warning.
            function.get_concrete_function(value)
        timers = {
            index: (lambda function=function, value=value: timed_call(function, value))
            for index, (function, value) in enumerate(calls)
        }
        rounds = scaled_progress(progress, 0.2, 1.0)
        samples = timer_rounds(timers, repeats, warmup=warmup, progress=rounds)
    times = np.array([samples[index] for index in timers]).T  # (repeats, calls)
    medians = np.median(times, axis=0)
    p10, p90 = np.percentile(times, [10, 90], axis=0)
    count = len(layers)
    layer_sum = float(medians[:count].sum())
    frame = pd.DataFrame(
        {
            "layer": [layer.name for layer in layers],
            "type": [type(layer).__name__ for layer in layers],
            "median_s": medians[:count],
            "p10_s": p10[:count],
            "p90_s": p90[:count],
            "share": medians[:count] / layer_sum,
        }
    )
    frame.attrs["model_median_s"] = float(medians[count])
    frame.attrs["sum_median_s"] = layer_sum
    frame.attrs["call_overhead_s"] = float(medians[count + 1])
    return frame

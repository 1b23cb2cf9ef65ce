"""The VARIANTS registry: one hierarchical-LSTM function, several execution strategies.

Builder contract (written once, here): `builder(config) -> keras.Model` mapping
(batch, height, time, 1) float32 to (batch, time, outer_units) in the config's compute dtype.
Every layer is named; the layers holding parameters are called `conv` and `inner_*`/`outer_*`
(see `params.PARAM_SLOTS`), so one parameter set loads into every variant. Every layer gets the
config's dtype policy (never a global one). Builders create layers, nothing else: no weights
are loaded and nothing is run.

The shared trunk (all variants):
    input   (B, H, T, 1)
    conv    (B, H, T, C)        Conv2D(filters, k x k, padding same)
    pool    (B, R, T, C)        MaxPooling2D((pool_height, 1)), R = H // pool_height
    permute (B, T, R, C)        every time step now holds an R-row sub-sequence
then a summariser (B, T, R, C) -> (B, T, inner_units), the part the variants differ in, and
    outer_lstm (B, T, outer_units)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import keras

from hierlstm.config import RunConfig
from hierlstm.fused import FusedHierarchicalLSTM
from hierlstm.layers import FoldTime, NestedCell, UnfoldTime, VectorizedSummariser


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    title: str
    explanation: str
    builder: Callable[[RunConfig], keras.Model]
    can_use_cudnn: bool  # whether its LSTMs can take Keras's cuDNN path on a GPU
    static_time: bool = False  # built for one concrete time length (cannot take any T)
    chain: Callable[[int, int], int] = lambda rows, time: rows + time  # dependent steps


def _use_cudnn(config: RunConfig):
    # Keras takes the cuDNN path whenever any GPU is visible, whatever tf.device says, so a run
    # pinned to the CPU must ask for the generic kernel itself.
    return "auto" if config.lstm_kernel == "auto" and config.device != "cpu" else False


def _trunk(config: RunConfig, time_steps=None):
    """The input and the permuted (B, T, R, C) tensor shared by every variant."""
    policy = config.precision
    inputs = keras.Input(shape=(config.height, time_steps, 1), name="input")  # (B, H, T, 1)
    x = keras.layers.Conv2D(
        config.filters, config.kernel_size, padding="same", name="conv", dtype=policy
    )(inputs)  # (B, H, T, 1) -> (B, H, T, C)
    x = keras.layers.MaxPooling2D((config.pool_height, 1), name="pool", dtype=policy)(
        x
    )  # -> (B, R, T, C)
    x = keras.layers.Permute((2, 1, 3), name="permute", dtype=policy)(x)  # -> (B, T, R, C)
    return inputs, x


def _outer_lstm(config: RunConfig, summaries):
    return keras.layers.LSTM(
        config.outer_units,
        return_sequences=True,
        use_cudnn=_use_cudnn(config),
        name="outer_lstm",
        dtype=config.precision,
    )(summaries)  # (B, T, inner) -> (B, T, outer)


def build_nested(config: RunConfig) -> keras.Model:
    """The asker's design: `RNN` over time whose custom cell runs the whole inner LSTM, then one
    outer `LSTMCell` step. (B, T, R, C) -> (B, T, outer) in one RNN."""
    inputs, x = _trunk(config)
    cell = NestedCell(
        config.inner_units, config.outer_units, name="nested_cell", dtype=config.precision
    )
    outputs = keras.layers.RNN(
        cell, return_sequences=True, name="nested_rnn", dtype=config.precision
    )(x)  # (B, T, R, C) -> (B, T, outer)
    return keras.Model(inputs, outputs, name="nested")


def build_time_distributed(config: RunConfig) -> keras.Model:
    """The answer's fix, as Keras 3 runs it: `TimeDistributed(LSTM)` then `LSTM`.

    Built for the config's concrete time length: Keras 3 then calls the inner LSTM once per time
    step (T calls in the graph). With an unknown length its `vectorized_map` path maps over the
    batch axis instead of time (see `hierlstm.pitfalls`), so this variant never takes that path.
    """
    inputs, x = _trunk(config, time_steps=config.time_steps)
    inner = keras.layers.LSTM(
        config.inner_units,
        use_cudnn=_use_cudnn(config),
        name="inner_lstm",
        dtype=config.precision,
    )
    summaries = keras.layers.TimeDistributed(inner, name="summarise", dtype=config.precision)(
        x
    )  # (B, T, R, C) -> T calls of (B, R, C) -> (B, inner) -> (B, T, inner)
    return keras.Model(inputs, _outer_lstm(config, summaries), name="time_distributed")


def _folded(config: RunConfig, summariser, name: str) -> keras.Model:
    inputs, x = _trunk(config)
    folded = FoldTime(name="fold", dtype=config.precision)(x)  # (B, T, R, C) -> (B*T, R, C)
    summaries = summariser(folded)  # (B*T, R, C) -> (B*T, inner)
    summaries = UnfoldTime(name="unfold", dtype=config.precision)(
        [summaries, x]
    )  # (B*T, inner) -> (B, T, inner)
    return keras.Model(inputs, _outer_lstm(config, summaries), name=name)


def build_folded(config: RunConfig) -> keras.Model:
    """Explicit fold: one `LSTM` call over all B*T sub-sequences, then unfold, then `LSTM`."""
    inner = keras.layers.LSTM(
        config.inner_units,
        use_cudnn=_use_cudnn(config),
        name="inner_lstm",
        dtype=config.precision,
    )
    return _folded(config, inner, "folded")


def build_shared_cell(config: RunConfig) -> keras.Model:
    """The answer's weight-sharing recipe as the summariser: `RNN(LSTMCell)` over the folded
    sub-sequences. Identical maths to `folded`, but an `RNN` around a bare cell never takes
    the cuDNN path."""
    cell = keras.layers.LSTMCell(config.inner_units, name="inner_cell", dtype=config.precision)
    inner = keras.layers.RNN(cell, name="inner_rnn", dtype=config.precision)
    return _folded(config, inner, "shared_cell")


def build_vectorized_map(config: RunConfig) -> keras.Model:
    """The answer's custom-loop advice: `tf.vectorized_map` over time applying the inner LSTM."""
    inputs, x = _trunk(config)
    inner = keras.layers.LSTM(
        config.inner_units,
        use_cudnn=_use_cudnn(config),
        name="inner_lstm",
        dtype=config.precision,
    )
    summaries = VectorizedSummariser(inner, name="summarise", dtype=config.precision)(
        x
    )  # (B, T, R, C) -> (B, T, inner)
    return keras.Model(inputs, _outer_lstm(config, summaries), name="vectorized_map")


def build_fused(config: RunConfig, layer_class=FusedHierarchicalLSTM) -> keras.Model:
    """The whole model as one hand-written layer shaped for a CPU (see `hierlstm.fused`):
    (B, H, T, 1) -> (B, T, outer), same parameters (`conv`, `inner_cell`, `outer_cell`).
    `layer_class` lets benchmarks/fused_ablation.py swap in a subclass with one choice undone."""
    inputs = keras.Input(shape=(config.height, None, 1), name="input")  # (B, H, T, 1)
    outputs = layer_class(
        config.filters,
        config.kernel_size,
        config.pool_height,
        config.inner_units,
        config.outer_units,
        name="fused_lstm",
        dtype=config.precision,
    )(inputs)  # (B, H, T, 1) -> (B, T, outer)
    return keras.Model(inputs, outputs, name="fused")


VARIANTS: dict[str, Variant] = {
    variant.name: variant
    for variant in (
        Variant(
            name="nested",
            title="Nested cell (the question)",
            explanation=(
                "The asker's design: an RNN over time whose custom cell runs the whole inner "
                "LSTM over the 12-row sub-sequence and then one step of the outer LSTMCell. "
                "Every outer step waits for a complete inner loop, so the dependent chain is "
                "time x rows + time steps long, and a custom cell can never use cuDNN."
            ),
            builder=build_nested,
            can_use_cudnn=False,
            chain=lambda rows, time: time * rows + time,
        ),
        Variant(
            name="time_distributed",
            title="TimeDistributed(LSTM) (the answer)",
            explanation=(
                "The answer's fix: TimeDistributed(LSTM(48)) then LSTM(60). Keras 3 does not "
                "fold batch and time: with a known time length it calls the inner LSTM once per "
                "time step, so the graph holds T inner loops and tracing grows with T; with an "
                "unknown length its vectorized_map path is broken (see Pitfalls), so this "
                "variant is built for the concrete length."
            ),
            builder=build_time_distributed,
            can_use_cudnn=True,
            static_time=True,
        ),
        Variant(
            name="folded",
            title="Folded batch x time",
            explanation=(
                "Reshape (B, T, 12, 16) to (B*T, 12, 16), run one LSTM(48) over all B*T "
                "sub-sequences at once, reshape back to (B, T, 48), then LSTM(60). Two plain "
                "LSTM calls, each eligible for cuDNN; the dependent chain is rows + time."
            ),
            builder=build_folded,
            can_use_cudnn=True,
        ),
        Variant(
            name="vectorized_map",
            title="tf.vectorized_map over time",
            explanation=(
                "The answer's custom-loop advice: write the inner LSTM for one time step and let "
                "tf.vectorized_map (pfor) vectorise it over the time axis. pfor rewrites the "
                "inner loop's ops for all steps at once; ops it cannot convert (such as cuDNN's) "
                "fall back to a sequential while-loop."
            ),
            builder=build_vectorized_map,
            can_use_cudnn=True,
        ),
        Variant(
            name="shared_cell",
            title="RNN(LSTMCell) summariser",
            explanation=(
                "The answer's weight-sharing recipe used as the summariser: one LSTMCell inside "
                "an RNN layer over the folded sub-sequences. Same maths and chain as folded, "
                "but RNN(LSTMCell) never takes the cuDNN path: sharing weights this way "
                "silently gives up the fused kernel (calling one LSTM layer twice keeps it)."
            ),
            builder=build_shared_cell,
            can_use_cudnn=False,
        ),
        Variant(
            name="fused",
            title="Fused, shaped for the CPU",
            explanation=(
                "The whole model written out in TensorFlow ops for XLA on a CPU. Batch and time "
                "are folded time-major, so the inner LSTM is 12 unrolled steps over all B*T "
                "sub-sequences, each one [x, h] @ [W; U] matmul (no hoisted input projection: "
                "at large B*T that tensor is hundreds of MB, and a CPU is memory-bound), and the "
                "outer LSTM is a while-loop doing one [s, h] @ [W; U] matmul per time step. "
                "Every sigmoid is 0.5 + 0.5 tanh(z/2) with the halving folded into the weights, "
                "and under XLA the 3x3 conv and max-pool are one fused loop of shifted "
                "multiply-adds (XLA's CPU convolution is slow here). Same parameters and "
                "outputs as the others; on a 2-core CPU about 1.3-1.6x faster than folded "
                "under XLA and 2x faster than folded without it."
            ),
            builder=build_fused,
            can_use_cudnn=False,
            chain=lambda rows, time: rows + time,
        ),
    )
}


def build_model(config: RunConfig, params=None) -> keras.Model:
    """The model of `config.variant`: (batch, height, time, 1) -> (batch, time, outer_units).

    Loads `params` (see `hierlstm.params`) when given; otherwise the weights are Keras's own
    random initialisation.
    """
    from hierlstm.params import load_params

    model = VARIANTS[config.variant].builder(config)
    if params is not None:
        load_params(model, params)
    return model

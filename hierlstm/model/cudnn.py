"""When an LSTM can take Keras's cuDNN kernel, one rule per Keras backend (`RULES`), and how to see
on TensorFlow that it did. A `keras.layers.LSTM` with `use_cudnn="auto"`, default activations, no
recurrent dropout and no unroll takes cuDNN whenever Keras sees a GPU; an `RNN(LSTMCell)` never
does. hierlstm asks for the generic kernel on a run pinned to the CPU (Keras ignores `tf.device`)
and under TensorFlow's XLA, which has no kernel for `CudnnRNNV3`. The rule reads one recurrent
layer's facts (`RecurrentFacts`: an LSTM of a variant, or any LSTM, GRU or SimpleRNN of a user's
model) and says why not per backend (`layer_reasons`, every one; `layer_refusal`, the first);
`RULES` applies it to the variants.
Reasons are catalogue keys (`kernel.why.*`). Imports no TensorFlow."""

from __future__ import annotations

import dataclasses
import functools
import importlib

from hierlstm.config import RunConfig
from hierlstm.registry import BACKEND_RECORDS, KERAS_BACKENDS, VARIANTS


def use_cudnn_argument(config: RunConfig, backend: str = "tensorflow"):
    """The `use_cudnn` argument of every `keras.layers.LSTM` of `config` on `backend`: "auto" unless
    the generic kernel was asked for, the run is pinned to the CPU, or TensorFlow's XLA compiles it
    (JAX's cuDNN LSTM is a custom call inside XLA, so XLA refuses nothing there)."""
    if config.lstm_kernel == "generic" or config.device == "cpu":
        return False
    if config.xla and BACKEND_RECORDS[backend].xla_refuses_cudnn:
        return False
    return "auto"


def keras_sees_a_gpu() -> bool:
    """Keras's own GPU check, the one that decides whether an LSTM emits cuDNN's ops
    (`_is_gpu_available` in keras/src/backend/tensorflow/rnn.py). Imports TensorFlow."""
    # The module itself: keras.src.backend.tensorflow exports a function named `rnn` that
    # shadows the module of that name.
    return bool(importlib.import_module("keras.src.backend.tensorflow.rnn")._is_gpu_available())


@dataclasses.dataclass(frozen=True)
class RecurrentFacts:
    """What the rule reads of one recurrent layer: its kind ("lstm", "gru", "simple_rnn", or "cell"
    for an `RNN` around a bare or custom cell), its arguments as Keras stores them (activations by
    name) and whether it runs under a mask."""

    kind: str = "lstm"
    use_cudnn: object = "auto"  # "auto" | True | False
    activation: str = "tanh"
    recurrent_activation: str = "sigmoid"
    recurrent_dropout: float = 0.0
    unroll: bool = False
    use_bias: bool = True
    reset_after: bool = True  # a GRU's
    masked: bool = False


# A layer's own arguments that keep it off cuDNN on every backend, in the order they are checked.
_ARGUMENT_REASONS = (
    ("kernel.why.cell", lambda layer: layer.kind == "cell"),
    ("kernel.why.simple_rnn", lambda layer: layer.kind == "simple_rnn"),
    ("kernel.why.requested", lambda layer: layer.use_cudnn is False),
    ("kernel.why.activation", lambda layer: layer.activation != "tanh"),
    ("kernel.why.recurrent_activation", lambda layer: layer.recurrent_activation != "sigmoid"),
    ("kernel.why.recurrent_dropout", lambda layer: layer.recurrent_dropout > 0),
    ("kernel.why.unroll", lambda layer: bool(layer.unroll)),
    ("kernel.why.use_bias", lambda layer: not layer.use_bias),
    ("kernel.why.reset_after", lambda layer: layer.kind == "gru" and not layer.reset_after),
)


def layer_reasons(
    backend: str,
    layer: RecurrentFacts,
    *,
    cuda_build: bool,
    gpu_visible: bool,
    jit_compile: bool = False,
    pinned: bool = False,
    compiling: bool = False,
) -> tuple[str, ...]:
    """Every reason `layer` cannot take cuDNN on `backend` ("tensorflow", "jax", "torch"), as
    catalogue keys in the order Keras meets them; () if it can. The layer's arguments first
    (keras/src/layers/rnn/lstm.py, gru.py and each backend's `cudnn_ok`), then the machine
    (`cuda_build`, `gpu_visible`), then the run: on TensorFlow `jit_compile` (XLA has no cuDNN
    kernel), a run `pinned` to the CPU, on JAX and PyTorch a mask (Keras takes the generic loop
    under one), on PyTorch tracing or `torch.compile` (`compiling`). TensorFlow runs cuDNN under a
    mask, if it is right-padded. The backend's differences are its registry record's fields
    (`hierlstm.registry.Backend`)."""
    record = BACKEND_RECORDS[backend]
    found = [key for key, applies in _ARGUMENT_REASONS if applies(layer)]
    suffix = record.reason_suffix
    run = (
        (layer.kind == "gru" and not record.cudnn_gru, f"kernel.why.gru{suffix}"),
        (not cuda_build, f"kernel.why.no_cuda{suffix}"),
        (not gpu_visible, f"kernel.why.no_gpu{suffix}"),
        (jit_compile and record.xla_refuses_cudnn, "kernel.why.xla"),
        (pinned, "kernel.why.requested"),
        (layer.masked and not record.cudnn_under_mask, "kernel.why.masked"),
        (compiling and "compiling" in record.cudnn_conditions, "kernel.why.compiling"),
    )
    found += [key for applies, key in run if applies and key not in found]
    return tuple(found)


def layer_refusal(backend: str, layer: RecurrentFacts, **machine_and_run: bool) -> str:
    """The first of `layer_reasons` (the one Keras meets first), as a catalogue key; "" if
    `layer` can take cuDNN on `backend`."""
    reasons = layer_reasons(backend, layer, **machine_and_run)
    return reasons[0] if reasons else ""


def variant_facts(config: RunConfig, cell: bool = False, masked: bool = False) -> RecurrentFacts:
    """An LSTM of `config`'s variant as the rule reads it: a cell when `cell` (an
    `RNN(LSTMCell)` or a custom cell's LSTM) or the variant has no LSTM layer; `use_cudnn=False`
    when the generic kernel was asked for."""
    kind = "cell" if cell or not VARIANTS[config.variant].has_lstm_layer else "lstm"
    use_cudnn = False if config.lstm_kernel == "generic" else "auto"
    return RecurrentFacts(kind=kind, use_cudnn=use_cudnn, masked=masked)


def variant_refusal(
    backend: str,
    config: RunConfig,
    *,
    cuda_build: bool,
    gpu_visible: bool,
    cell: bool = False,
    **conditions: bool,
) -> str:
    """Why an LSTM of `config` cannot take cuDNN on `backend` (`layer_refusal`), as a catalogue
    key; "" if it can. Without a GPU the GPU is the reason, with one (on TensorFlow) XLA is.
    `conditions` are the backend's own (`Backend.cudnn_conditions`: `masked` on JAX and
    PyTorch, `compiling` on PyTorch); another is a TypeError."""
    allowed = BACKEND_RECORDS[backend].cudnn_conditions
    if unknown := sorted(set(conditions) - set(allowed)):
        raise TypeError(
            f"the {backend} rule takes no condition {unknown[0]!r}; it takes {allowed}."
        )
    return layer_refusal(
        backend,
        variant_facts(config, cell, conditions.get("masked", False)),
        cuda_build=cuda_build,
        gpu_visible=gpu_visible,
        jit_compile=config.xla,
        pinned=config.device == "cpu",
        compiling=conditions.get("compiling", False),
    )


RULES = {name: functools.partial(variant_refusal, name) for name in KERAS_BACKENDS}
refusal, refusal_jax, refusal_torch = RULES["tensorflow"], RULES["jax"], RULES["torch"]


def graph_op_types(concrete_function) -> set[str]:
    """Every op type in a traced function, including nested functions and while-loop bodies
    (they live in the graph's function library, not in its top-level nodes)."""
    graph_def = concrete_function.graph.as_graph_def()
    op_types = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        op_types.update(node.op for node in function.node_def)
    return op_types


def _called_functions(node) -> list[str]:
    """The library functions a graph node calls: a call op's `f`, a while loop's `cond` and
    `body`, a conditional's branches, or the node's op itself when it names a function."""
    names = [node.op]
    for value in node.attr.values():
        if value.HasField("func"):
            names.append(value.func.name)
        names.extend(function.name for function in value.list.func)
    return names


def _must_compile(attrs) -> bool:
    return "_XlaMustCompile" in attrs and attrs["_XlaMustCompile"].b


def cudnn_nodes(concrete_function) -> list[tuple[str, str, bool]]:
    """Every cuDNN RNN op in a traced function, at any depth of its called functions, as
    (node name, op type, under XLA): under XLA when it is in a function compiled with
    `jit_compile=True` or called (at any depth) from one. A node's name carries the name scopes
    of the Keras layers it was built in (`model/bidirectional/forward_gru/CudnnRNNV3`)."""
    graph_def = concrete_function.graph.as_graph_def()
    library = {function.signature.name: function for function in graph_def.library.function}
    found: list[tuple[str, str, bool]] = []
    seen: set[tuple[str, bool]] = set()

    def visit(nodes, compiled: bool) -> None:
        for node in nodes:
            if node.op.startswith("CudnnRNN"):
                found.append((node.name, node.op, compiled))
            for name in _called_functions(node):
                function = library.get(name)
                if function is None:
                    continue
                inner = compiled or _must_compile(node.attr) or _must_compile(function.attr)
                if (name, inner) not in seen:
                    seen.add((name, inner))
                    visit(function.node_def, inner)

    visit(graph_def.node, _must_compile(concrete_function.function_def.attr))
    return found


def cudnn_ops_under_xla(concrete_function) -> list[str]:
    """The cuDNN RNN ops that XLA would have to compile in a traced function (`cudnn_nodes`
    under XLA), sorted. [] when none."""
    return sorted(op for _name, op, compiled in cudnn_nodes(concrete_function) if compiled)


def ran_cudnn(op_types: set[str]) -> bool:
    """Whether a traced graph's op types hold cuDNN's RNN kernels."""
    return any(op.startswith("CudnnRNN") for op in op_types)


def ran_cudnn_training(op_types: set[str]) -> bool:
    """Whether a traced training step's op types hold cuDNN's forward RNN kernel and its backward
    (CudnnRNNBackprop*)."""
    forward = any(op.startswith("CudnnRNN") and "Backprop" not in op for op in op_types)
    return forward and any(op.startswith("CudnnRNNBackprop") for op in op_types)

"""When an LSTM can take Keras's cuDNN kernel, one rule per Keras backend (`RULES`), and how to see
on TensorFlow that it did. A `keras.layers.LSTM` with `use_cudnn="auto"`, default activations, no
recurrent dropout and no unroll takes cuDNN whenever Keras sees a GPU; an `RNN(LSTMCell)` never
does. hierlstm asks for the generic kernel on a run pinned to the CPU (Keras ignores `tf.device`)
and under TensorFlow's XLA, which has no kernel for `CudnnRNNV3`. Reasons are catalogue keys
(`kernel.why.*`). Imports no TensorFlow."""

from __future__ import annotations

import importlib

from hierlstm.config import RunConfig
from hierlstm.registry import VARIANTS


def use_cudnn_argument(config: RunConfig, backend: str = "tensorflow"):
    """The `use_cudnn` argument of every `keras.layers.LSTM` of `config` on `backend`: "auto" unless
    the generic kernel was asked for, the run is pinned to the CPU, or TensorFlow's XLA compiles it
    (JAX's cuDNN LSTM is a custom call inside XLA, so XLA refuses nothing there)."""
    if config.lstm_kernel == "generic" or config.device == "cpu":
        return False
    if config.xla and backend == "tensorflow":
        return False
    return "auto"


def keras_sees_a_gpu() -> bool:
    """Keras's own GPU check, the one that decides whether an LSTM emits cuDNN's ops
    (`_is_gpu_available` in keras/src/backend/tensorflow/rnn.py). Imports TensorFlow."""
    # The module itself: keras.src.backend.tensorflow exports a function named `rnn` that
    # shadows the module of that name.
    return bool(importlib.import_module("keras.src.backend.tensorflow.rnn")._is_gpu_available())


def _refused_first(config: RunConfig, cell: bool, cuda_build: bool, gpu_visible: bool, suffix=""):
    """The reasons every backend checks first, in order (a cell, the generic kernel asked for,
    no CUDA build, no GPU), as a catalogue key; "" when none applies."""
    if cell or not VARIANTS[config.variant].has_lstm_layer:
        return "kernel.why.cell"
    if config.lstm_kernel == "generic":
        return "kernel.why.requested"
    if not cuda_build:
        return f"kernel.why.no_cuda{suffix}"
    if not gpu_visible:
        return f"kernel.why.no_gpu{suffix}"
    return ""


def refusal(config: RunConfig, *, cuda_build: bool, gpu_visible: bool, cell: bool = False) -> str:
    """Why an LSTM of `config` cannot take cuDNN on TensorFlow, as a catalogue key; "" if it can.
    `cell`: an `RNN(LSTMCell)` or a custom cell's LSTM. Without a GPU the GPU is the reason, with
    one XLA is."""
    if key := _refused_first(config, cell, cuda_build, gpu_visible):
        return key
    if config.xla:
        return "kernel.why.xla"
    if use_cudnn_argument(config) is False:  # pinned to the CPU on a machine with a GPU
        return "kernel.why.requested"
    return ""


def refusal_jax(
    config: RunConfig, *, cuda_build: bool, gpu_visible: bool, cell: bool = False, masked=False
) -> str:
    """`refusal` on JAX (keras/src/backend/jax/rnn.py): no XLA reason, then a mask (Keras takes the
    generic loop under one). `gpu_visible`: `jax.default_backend() == "gpu"`."""
    if key := _refused_first(config, cell, cuda_build, gpu_visible, "_jax"):
        return key
    if use_cudnn_argument(config, "jax") is False:  # pinned to the CPU on a machine with a GPU
        return "kernel.why.requested"
    return "kernel.why.masked" if masked else ""


def refusal_torch(
    config: RunConfig,
    *,
    cuda_build: bool,
    gpu_visible: bool,
    cell: bool = False,
    masked: bool = False,
    compiling: bool = False,
) -> str:
    """`refusal` on PyTorch (keras/src/backend/torch/rnn.py): no XLA, then a mask, then tracing or
    `torch.compile`, under which Keras skips cuDNN. `gpu_visible`: CUDA and cuDNN available."""
    if key := _refused_first(config, cell, cuda_build, gpu_visible, "_torch"):
        return key
    if use_cudnn_argument(config, "torch") is False:  # pinned to the CPU on a machine with a GPU
        return "kernel.why.requested"
    if masked:
        return "kernel.why.masked"
    return "kernel.why.compiling" if compiling else ""


RULES = {"tensorflow": refusal, "jax": refusal_jax, "torch": refusal_torch}  # by Keras backend


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


def cudnn_ops_under_xla(concrete_function) -> list[str]:
    """The cuDNN RNN ops that XLA would have to compile in a traced function: those in a
    function compiled with `jit_compile=True`, or called (at any depth) from one. [] when none.
    """
    graph_def = concrete_function.graph.as_graph_def()
    library = {function.signature.name: function for function in graph_def.library.function}
    found: list[str] = []
    seen: set[tuple[str, bool]] = set()

    def visit(nodes, compiled: bool) -> None:
        for node in nodes:
            if compiled and node.op.startswith("CudnnRNN"):
                found.append(node.op)
            for name in _called_functions(node):
                function = library.get(name)
                if function is None:
                    continue
                inner = compiled or _must_compile(node.attr) or _must_compile(function.attr)
                if (name, inner) not in seen:
                    seen.add((name, inner))
                    visit(function.node_def, inner)

    visit(graph_def.node, _must_compile(concrete_function.function_def.attr))
    return sorted(found)


def ran_cudnn(op_types: set[str]) -> bool:
    """Whether a traced graph's op types hold cuDNN's RNN kernels."""
    return any(op.startswith("CudnnRNN") for op in op_types)


def ran_cudnn_training(op_types: set[str]) -> bool:
    """Whether a traced training step's op types hold cuDNN's forward RNN kernel and its backward
    (CudnnRNNBackprop*)."""
    forward = any(op.startswith("CudnnRNN") and "Backprop" not in op for op in op_types)
    return forward and any(op.startswith("CudnnRNNBackprop") for op in op_types)

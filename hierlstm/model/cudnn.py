"""When an LSTM can take Keras's cuDNN kernel, in one place, and how to see that it did.

The rule (keras/src/layers/rnn/lstm.py, keras/src/backend/tensorflow/rnn.py): a
`keras.layers.LSTM` with `use_cudnn` "auto" (and the default activations, no recurrent dropout,
`unroll=False`) takes the fused cuDNN kernel whenever TensorFlow sees a GPU and was built with
CUDA; an `RNN` around a bare `LSTMCell`, or a custom cell's LSTM, never does. Keras takes the
cuDNN path whenever any GPU is visible, whatever `tf.device` says, so a run pinned to the CPU
asks for the generic kernel itself.

A training step's graph holds the forward kernels and their backward (`CudnnRNNBackprop*`)
when cuDNN ran (`ran_cudnn_training`). `refusal` answers with a catalogue key (`kernel.why.*`
in `hierlstm.i18n`), so the harness's stored reason and the app's per-LSTM table say the same
thing. Only `graph_op_types` needs a
traced TensorFlow function; nothing here imports TensorFlow.
"""

from __future__ import annotations

from hierlstm.config import RunConfig
from hierlstm.registry import VARIANTS


def use_cudnn_argument(config: RunConfig):
    """The `use_cudnn` argument a builder gives every `keras.layers.LSTM` of `config`."""
    return "auto" if config.lstm_kernel == "auto" and config.device != "cpu" else False


def refusal(config: RunConfig, *, cuda_build: bool, gpu_visible: bool, cell: bool = False) -> str:
    """Why an LSTM of `config` cannot take the cuDNN kernel, as a catalogue key; "" if it can.

    `cell` is an LSTM built as `RNN(LSTMCell)` or inside a custom cell; a variant registered
    without `can_use_cudnn` has only those.
    """
    if cell or not VARIANTS[config.variant].can_use_cudnn:
        return "kernel.why.cell"
    if config.lstm_kernel == "generic":
        return "kernel.why.requested"
    if not cuda_build:
        return "kernel.why.no_cuda"
    if not gpu_visible:
        return "kernel.why.no_gpu"
    if use_cudnn_argument(config) is False:  # pinned to the CPU on a machine with a GPU
        return "kernel.why.requested"
    return ""


def graph_op_types(concrete_function) -> set[str]:
    """Every op type in a traced function, including nested functions and while-loop bodies
    (they live in the graph's function library, not in its top-level nodes)."""
    graph_def = concrete_function.graph.as_graph_def()
    op_types = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        op_types.update(node.op for node in function.node_def)
    return op_types


def ran_cudnn(op_types: set[str]) -> bool:
    """Whether a traced graph's op types hold cuDNN's RNN kernels."""
    return any(op.startswith("CudnnRNN") for op in op_types)


def ran_cudnn_training(op_types: set[str]) -> bool:
    """Whether a traced training step's op types hold cuDNN's forward RNN kernel (CudnnRNN,
    CudnnRNNV2, V3) and its backward kernel (CudnnRNNBackprop, V2, V3): the step's gradient
    graph takes cuDNN's backward only when the forward pass took its forward."""
    forward = any(op.startswith("CudnnRNN") and "Backprop" not in op for op in op_types)
    return forward and any(op.startswith("CudnnRNNBackprop") for op in op_types)

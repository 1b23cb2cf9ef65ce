"""What ran inside a traced function: its op types (while-loop bodies included) and the LSTM
kernel, cuDNN or generic, with the reason when cuDNN did not run."""

from __future__ import annotations

import tensorflow as tf

from hierlstm.config import RunConfig
from hierlstm.registry import VARIANTS


def graph_op_types(concrete_function) -> set[str]:
    """Every op type in a traced function, including nested functions and while-loop bodies
    (they live in the graph's function library, not in its top-level nodes)."""
    graph_def = concrete_function.graph.as_graph_def()
    op_types = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        op_types.update(node.op for node in function.node_def)
    return op_types


def lstm_kernel(config: RunConfig, concrete_function) -> tuple[str, str]:
    """("cudnn", "") when the traced graph holds a CudnnRNN op, else ("generic", why)."""
    if any(op.startswith("CudnnRNN") for op in graph_op_types(concrete_function)):
        return "cudnn", ""
    variant = VARIANTS[config.variant]
    if not variant.can_use_cudnn:
        return "generic", (
            f"the {variant.name} variant runs its LSTMs as RNN(LSTMCell) or a custom cell, "
            "which never takes the cuDNN path"
        )
    if config.lstm_kernel == "generic":
        return "generic", "use_cudnn=False was requested (lstm_kernel generic)"
    if not tf.config.list_logical_devices("GPU"):
        if not tf.test.is_built_with_cuda():
            return "generic", "TensorFlow was built without CUDA: cuDNN needs a CUDA build"
        return "generic", "no GPU visible to TensorFlow: cuDNN needs a GPU"
    return "generic", "Keras emitted no cuDNN op for these LSTMs, so the generic kernel ran"

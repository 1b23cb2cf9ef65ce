"""The LSTM kernel a traced run used, cuDNN or generic, and why cuDNN did not run
(the rule is `hierlstm.model.cudnn`'s; this asks TensorFlow and Keras what the machine has)."""

from __future__ import annotations

import tensorflow as tf

from hierlstm.config import RunConfig
from hierlstm.i18n import t
from hierlstm.model.cudnn import (
    graph_op_types,
    keras_sees_a_gpu,
    ran_cudnn,
    ran_cudnn_training,
    refusal,
)


def lstm_kernel(config: RunConfig, concrete_function) -> tuple[str, str]:
    """("cudnn", "") when the traced graph holds a CudnnRNN op (for a training step: the
    forward and the backward CudnnRNNBackprop op), else ("generic", why) with the reason in
    English (`BenchResult.kernel_reason`)."""
    ran = ran_cudnn_training if config.task == "training" else ran_cudnn
    if ran(graph_op_types(concrete_function)):
        return "cudnn", ""
    key = refusal(
        config,
        cuda_build=tf.test.is_built_with_cuda(),
        gpu_visible=keras_sees_a_gpu(),  # the check that chose the kernel
    )
    return "generic", t(key or "kernel.why.other", "en")

"""What every timed TensorFlow run is made of: one call ended by the device sync, and `PreparedRun`,
a built model's compiled function ready to time; the harness re-exports them."""

from __future__ import annotations

import dataclasses
import time

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
from hierlstm.timing.basics import (  # noqa: F401 (re-exported: the harness's vocabulary)
    Progress,
    make_inputs,
    no_progress,
)


def timed_call(function, *arguments) -> float:
    """Seconds for one call of a compiled function, ending when the device has finished. On a GPU
    the call returns once kernels are queued; `sync_devices()` (outside the tf.function) waits for
    them at a fixed few microseconds, where `.numpy()` would add a copy of the output. Kept on a CPU
    too, so every device is timed one way."""
    start = time.perf_counter()
    function(*arguments)
    tf.test.experimental.sync_devices()
    return time.perf_counter() - start


@dataclasses.dataclass
class PreparedRun:
    """A built model, its traced forward function and its input, all on one device."""

    config: RunConfig
    device: str  # "/CPU:0", "/GPU:N"
    forward: object
    inputs: tf.Tensor
    first_call_s: float
    kernel: str
    kernel_reason: str
    label: str = ""  # BenchResult.device when not the device's own description
    details: dict = dataclasses.field(default_factory=dict)  # replicas, checksum, ...

    @property
    def description(self) -> str:
        """`BenchResult.device`: the label, else the device with its details."""
        from hierlstm.hardware import device_string

        return self.label or device_string(self.device)

    @property
    def trace_count(self) -> int:
        return int(self.forward.experimental_get_tracing_count())

    @property
    def versions(self) -> dict[str, str]:
        from hierlstm.hardware import versions

        return versions()

    def call(self) -> float:
        with tf.device(self.device):
            return timed_call(self.forward, self.inputs)

    def sample(self) -> dict[str, float]:
        """One timed round of this run: {"step": seconds of the timed function}, and a training
        run's phases beside it (`hierlstm.timing.training.TrainingRun`)."""
        return {"step": self.call()}


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

"""Which LSTM kernel ran on JAX and PyTorch, read from what ran, and why (`model.cudnn.RULES`). JAX:
the lowered program holds a `cudnn_rnn_ffi` custom call (`cudnn_rnn_bwd_ffi` backward, `hipdnn_` on
ROCm). PyTorch: the profiler's op names show `aten::_cudnn_rnn`."""

from __future__ import annotations

import re

from hierlstm.backends import runner
from hierlstm.config import RunConfig
from hierlstm.i18n import t
from hierlstm.model.cudnn import RULES

CUDNN_CALL = re.compile(r"\b(?:cu|hip)dnn_rnn(_bwd)?_ffi\b")  # group 1: "_bwd" for backward
TORCH_CUDNN_FORWARD = "aten::_cudnn_rnn"
TORCH_CUDNN_BACKWARD = "aten::_cudnn_rnn_backward"


def jax_cudnn_calls(program_text: str) -> dict[str, int]:
    """How many cuDNN RNN custom calls a lowered JAX program holds: {"forward": n, "backward":
    m}, from its StableHLO or HLO text."""
    found = {"forward": 0, "backward": 0}
    for match in CUDNN_CALL.finditer(program_text):
        found["backward" if match.group(1) else "forward"] += 1
    return found


def ran_cudnn_jax(program_text: str, training: bool = False) -> bool:
    """Whether a lowered program ran cuDNN's LSTM: its forward call (and, for a training step,
    its backward call too)."""
    calls = jax_cudnn_calls(program_text)
    return calls["forward"] > 0 and (not training or calls["backward"] > 0)


def torch_op_names(function, *arguments) -> set[str]:
    """The names of every op the PyTorch profiler records over one call of `function`."""
    import torch

    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as profile:
        function(*arguments)
    return {event.name for event in profile.events()}


def ran_cudnn_torch(op_names: set[str], training: bool = False) -> bool:
    """Whether profiled op names show cuDNN's LSTM (and, for a training step, its backward)."""
    forward = TORCH_CUDNN_FORWARD in op_names
    return forward and (not training or TORCH_CUDNN_BACKWARD in op_names)


def backend_facts(backend: str) -> dict[str, bool]:
    """What the backend's rule asks of this machine: a CUDA build, and Keras's own GPU check (the
    one that decides whether the LSTM emits cuDNN), from its runner. Imports the backend."""
    return runner(backend).backend_facts()


def lstm_kernel(config: RunConfig, backend: str, ran: bool, **conditions) -> tuple[str, str]:
    """("cudnn", "") when what ran held cuDNN's LSTM, else ("generic", why) in English, the
    reason from the backend's rule (`RULES`) with this machine's facts; `conditions` are the
    rule's others (`masked`, `compiling` on PyTorch)."""
    if ran:
        return "cudnn", ""
    key = RULES[backend](config, **backend_facts(backend), **conditions)
    return "generic", t(key or "kernel.why.other", "en")

"""When a run fails: which errors are the run's (an op error, out of memory, a setting a check
refused) and become a failed result with one friendly line; anything else is a bug and raises."""

from __future__ import annotations

import re

import tensorflow as tf

from hierlstm.config import RunConfig, SettingError
from hierlstm.hardware import device_string, versions
from hierlstm.records import BenchResult
from hierlstm.timing.points import setting_line
from hierlstm.timing.summary import failed_record

# What a run can raise that is the run's failure, not a bug of ours: TensorFlow's op errors
# (out of memory included), the host out of memory, and a setting that a check refused (a
# device the machine lacks, an odd batch for the replicas, a server limit). A ValueError,
# TypeError, KeyError, ... from anywhere else is a bug: it raises, and the app logs it.
RUN_FAILURES = (tf.errors.OpError, MemoryError, SettingError)
_MAX_ERROR_CHARS = 300


def _message(error: BaseException) -> str:
    return error.message if isinstance(error, tf.errors.OpError) else str(error)


def first_line(error: BaseException) -> str:
    """The first non-blank line of an error's message (TensorFlow's own message for an op
    error), or its type's name; at most 300 characters."""
    lines = [line.strip() for line in _message(error).splitlines() if line.strip()]
    return (lines[0] if lines else type(error).__name__)[:_MAX_ERROR_CHARS]


def error_line(error: BaseException | str) -> str:
    """One friendly line: what went wrong in words, with a hint where there is one, then the
    first line of the message."""
    if isinstance(error, str):
        return error.splitlines()[0][:_MAX_ERROR_CHARS] if error else "unknown error"
    message, first = _message(error), first_line(error)
    if isinstance(error, tf.errors.ResourceExhaustedError | MemoryError):
        prefix = "out of memory (try a smaller batch_size or time_steps)"
    elif isinstance(error, tf.errors.NotFoundError | tf.errors.InvalidArgumentError) and (
        re.search(r"DT_HALF|DT_BFLOAT16|\bhalf\b|bfloat16", message)
    ):
        # "No registered kernel" / "Could not find device for node" at a 16-bit type.
        prefix = "this device cannot run an op at this precision (use float32)"
    elif isinstance(error, tf.errors.OpError) and "CudnnRNN" in message:
        # not XLA's refusal (under XLA every LSTM is generic): cuDNN's own kernel failed here
        prefix = "cuDNN's LSTM kernel failed on this GPU (use lstm_kernel generic)"
    elif isinstance(error, tf.errors.UnimplementedError):
        # The raw message is a graph node dump; name the op and where it sits instead.
        node = re.search(r"\{\{node ([^}]+)\}\} = (\w+)", message)
        where = f"the {node.group(2)} op at {node.group(1)}" if node else "an op of this model"
        return (
            f"not supported here: no kernel for {where} (under XLA, vectorized_map's pfor "
            "loops cannot be compiled; run without XLA)"
        )[:_MAX_ERROR_CHARS]
    elif isinstance(error, tf.errors.OpError):
        prefix = f"TensorFlow could not run this model ({type(error).__name__})"
    elif isinstance(error, ValueError):
        return setting_line(error)
    else:
        prefix = f"unexpected {type(error).__name__}"
    return f"{prefix}: {first}"[:_MAX_ERROR_CHARS]


def failed_result(config: RunConfig, error: BaseException | str) -> BenchResult:
    """The record of a run that failed: status "failed", a one-line `error`, NaN times."""
    try:
        device = device_string(config.device)
    except SettingError:
        device = config.device
    return failed_record(config, error_line(error), device=device, versions=versions())

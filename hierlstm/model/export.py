"""A variant as an ONNX file, for the inference runtimes (`hierlstm.registry.Backend.exported`):
built from `init_params(config, seed)` on TensorFlow, converted by tf2onnx (the converter Keras's
own `model.export(format="onnx")`, called here) at the config's sizes, and checked
against the numpy oracle (`hierlstm.model.reference`) before anyone calls it exported: with ONNX
Runtime when installed, else onnx's own reference evaluator.

    exported = export_onnx(config, seed=0)   (B, H, T, 1) float32 -> (B, T, outer) float32
    write(exported, "folded.onnx")           the checked file, or ExportError in one line
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import logging
import os
import re
import tempfile
import warnings
from pathlib import Path

import numpy as np

from hierlstm.config import RunConfig, SettingError
from hierlstm.registry import conversion_refusal

OPSET = 17  # ONNX Runtime 1.32 and OpenVINO 2026.4 both run it
TOLERANCE = 1e-5  # max |ONNX file - numpy oracle| on the same input, float32
INPUT_NAME = "inputs"
CONVERTER_PACKAGES = ("tf2onnx", "onnx")


class ExportError(SettingError):
    """A model that cannot be exported or written: str() is the one line saying why."""


@contextlib.contextmanager
def quiet_converter():
    """tf2onnx's log lines (an unsupported op is logged as an error, then said in one line by
    whoever exports) and Keras's np.object warning, off while converting."""
    logger = logging.getLogger("tf2onnx")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # Keras's tf2onnx patch: np.object
            yield
    finally:
        logger.setLevel(level)


@dataclasses.dataclass(frozen=True)
class Exported:
    """One variant's checked ONNX model: its bytes, how far from the oracle, and what the
    converter made of its recurrences (fused `LSTM` ops, `Loop`s)."""

    config: RunConfig
    seed: int
    model: bytes  # the ONNX file's bytes
    max_abs_diff: float
    checked_with: str  # "onnxruntime" or "onnx.reference"
    op_types: tuple[str, ...]  # the graph's nodes' op types, in order

    @property
    def lstm_ops(self) -> int:
        """How many fused LSTM ops the converter made (the runtimes run each as one kernel)."""
        return self.op_types.count("LSTM")

    def to_dict(self) -> dict:
        return {
            "variant": self.config.variant,
            "batch_size": self.config.batch_size,
            "time_steps": self.config.time_steps,
            "seed": self.seed,
            "opset": OPSET,
            "max_abs_diff": self.max_abs_diff,
            "tolerance": TOLERANCE,
            "checked_with": self.checked_with,
            "lstm_ops": self.lstm_ops,
            "loops": self.op_types.count("Loop"),
            "nodes": len(self.op_types),
        }


def converter_missing() -> str:
    """One sentence naming the converter's missing packages and how to install them, else ""."""
    absent = [name for name in CONVERTER_PACKAGES if importlib.util.find_spec(name) is None]
    if not absent:
        return ""
    return (
        f"export needs the {' and '.join(absent)} package, which is not installed here: run "
        "make run RUNTIMES=1, or pip install -r requirements-runtimes.txt."
    )


def _convert(config: RunConfig, params) -> bytes:
    """`config`'s model with `params`, converted by Keras's own `model.export(format="onnx")`
    (tf2onnx on TensorFlow) at the signature (any batch, H, T, 1) float32. The batch is left
    open because tf2onnx then rewrites both of folded's LSTMs as fused ONNX `LSTM` ops; with a
    fixed batch it left the outer one a `Loop` of its steps."""
    import tensorflow as tf

    from hierlstm.model.builders import build_model

    model = build_model(config.replace(backend="tensorflow"), params)
    shape = (None, config.height, config.time_steps, 1)  # (B, H, T, 1)
    signature = [tf.TensorSpec(shape, tf.float32, name=INPUT_NAME)]
    folder = tempfile.TemporaryDirectory(prefix="hierlstm-export-")
    with folder, quiet_converter():
        path = Path(folder.name) / f"{config.variant}.onnx"
        model.export(
            str(path), format="onnx", verbose=False, input_signature=signature, opset_version=OPSET
        )
        return path.read_bytes()


def run_onnx(model: bytes, inputs: np.ndarray) -> tuple[np.ndarray, str]:
    """(the file's output for `inputs`, which evaluator ran it): ONNX Runtime on the CPU when
    installed, else `onnx.reference.ReferenceEvaluator`."""
    if importlib.util.find_spec("onnxruntime") is not None:
        import onnxruntime

        session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
        return session.run(None, {session.get_inputs()[0].name: inputs})[0], "onnxruntime"
    import onnx
    from onnx.reference import ReferenceEvaluator

    evaluator = ReferenceEvaluator(onnx.load_from_string(model))
    return evaluator.run(None, {evaluator.input_names[0]: inputs})[0], "onnx.reference"


def export_onnx(config: RunConfig, seed: int = 0) -> Exported:
    """`config`'s variant from `init_params(config, seed)` as a checked ONNX model. Raises
    ExportError in one line for a variant that does not convert, a missing converter, a
    conversion that fails, or a file that computes something else than the oracle."""
    if message := conversion_refusal(config.variant) or converter_missing():
        raise ExportError(message)
    import onnx

    from hierlstm.model.check import random_input
    from hierlstm.model.params import init_params
    from hierlstm.model.reference import reference_forward

    params = init_params(config, seed)
    try:
        model = _convert(config, params)
    except (ValueError, TypeError, NotImplementedError, RuntimeError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ExportError(
            f"tf2onnx could not convert variant {config.variant}: {first[:200]}"
        ) from None
    inputs = random_input(config, seed)  # (B, H, T, 1)
    outputs, checker = run_onnx(model, inputs)  # (B, T, outer)
    expected = reference_forward(params, inputs, pool_height=config.pool_height)
    difference = float(np.max(np.abs(outputs.astype(np.float64) - expected)))
    if not difference <= TOLERANCE:
        raise ExportError(
            f"the ONNX file of {config.variant} differs from the numpy reference by "
            f"{difference:.2e} (tolerance {TOLERANCE:.0e}); it was not written."
        )
    op_types = tuple(node.op_type for node in onnx.load_from_string(model).graph.node)
    return Exported(config, seed, model, difference, checker, op_types)


def node_layers(names: list[str], layers: list[str], outside: str) -> list[str]:
    """The Keras layer of each node, in the order given (the file's or the execution's): the layer
    a path segment of its name names (tf2onnx keeps Keras's name scopes, "folded_1/conv_1/..."),
    else the layer of the node before it (the fused `LSTM__51` the rewriter named follows its
    layer's own nodes), else `outside`."""
    found, current = [], outside
    for name in names:
        scopes = {re.sub(r"_\d+$", "", part) for part in name.split("/")[:-1]}
        current = next((layer for layer in layers if layer in scopes), current)
        found.append(current)
    return found


def write(exported: Exported, path: str | os.PathLike) -> Path:
    """`exported` written to `path` whole (a file beside it, then renamed: never half a file).
    Raises ExportError in one line when the folder cannot take it."""
    target = Path(path)
    if target.is_dir():
        raise ExportError(f"cannot write the ONNX file to {target}: it is a folder.")
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        with os.fdopen(handle, "wb") as file:
            file.write(exported.model)
        os.replace(temporary, target)
    except OSError as error:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
        reason = error.strerror or type(error).__name__
        raise ExportError(f"cannot write the ONNX file to {target}: {reason}.") from None
    return target

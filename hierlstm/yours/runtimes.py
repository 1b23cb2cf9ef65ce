"""Your model as an ONNX file for the inference runtimes: exported by Keras's own
`model.export(format="onnx")` (tf2onnx) at its audited input shapes with the batch open (its run
on ONNX Runtime and OpenVINO beside TensorFlow is `hierlstm.backends.exported.bench_model`).
Which recurrent layers the converter made fused ONNX `LSTM`, `GRU` or `RNN` ops is read from the
file. A layer the converter rejects (an op left without an ONNX form, which no
runtime loads) is `ExportError`, one line naming the layer and the op."""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

import keras
import tensorflow as tf

from hierlstm.model.export import ExportError, node_layers, quiet_converter
from hierlstm.profiling.record import OUTSIDE
from hierlstm.records import Stats

FUSED = ("LSTM", "GRU", "RNN")  # ONNX's fused recurrent ops
TOLERANCE = 1e-4  # max |runtime - Keras| on the same inputs, float32 (any model, any depth)


@dataclasses.dataclass(frozen=True)
class RuntimeBench:
    """The exported model's fused ops by layer, each runtime's largest difference from Keras,
    and the forward pass's seconds per round by "tensorflow" and each runtime installed."""

    fused: list[dict[str, str]]  # [{"layer", "op", "node"}]
    max_abs_diff: dict[str, float]
    samples: dict[str, list[float]]
    missing: dict[str, str]  # a runtime not installed: how to install it

    def to_dict(self) -> dict:
        return {
            "fused": self.fused,
            "max_abs_diff": self.max_abs_diff,
            "median_s": {name: Stats.of(times).median for name, times in self.samples.items()},
            "samples": self.samples,
            "missing": self.missing,
        }


def export_model(model: keras.Model, shapes: list[tuple]) -> bytes:
    """`model` as ONNX bytes at `shapes` (each input's batch left open)."""
    signature = [
        tf.TensorSpec((None, *shape[1:]), tensor.dtype, name=tensor.name)
        for shape, tensor in zip(shapes, model.inputs, strict=True)
    ]
    folder = tempfile.TemporaryDirectory(prefix="hierlstm-yours-")
    with folder, quiet_converter():
        path = Path(folder.name) / "model.onnx"
        try:
            model.export(str(path), format="onnx", verbose=False, input_signature=signature)
        except (ValueError, TypeError, KeyError, NotImplementedError, RuntimeError) as error:
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise ExportError(f"tf2onnx could not convert {model.name}: {first[:200]}") from None
        return path.read_bytes()


def _layer_names(model: keras.Model) -> list[str]:
    return [layer.name for layer in model.layers]


def rejected(model: keras.Model, exported: bytes) -> str:
    """One line naming the layer and the op the converter left without an ONNX form, else ""."""
    import onnx
    from onnx import defs

    nodes = list(onnx.load_from_string(exported).graph.node)
    owners = node_layers([node.name for node in nodes], _layer_names(model), OUTSIDE)
    for node, owner in zip(nodes, owners, strict=True):
        if node.domain in ("", "ai.onnx") and not defs.has(node.op_type):
            return (
                f"tf2onnx could not convert layer {owner} of {model.name}: its op "
                f"{node.op_type} has no ONNX form, so no runtime can load the file."
            )
    return ""


def fused_ops(model: keras.Model, exported: bytes) -> list[dict[str, str]]:
    """The fused recurrent ops of the file, each with the layer it came from."""
    import onnx

    nodes = list(onnx.load_from_string(exported).graph.node)
    owners = node_layers([node.name for node in nodes], _layer_names(model), OUTSIDE)
    return [
        {"layer": owner, "op": node.op_type, "node": node.name}
        for node, owner in zip(nodes, owners, strict=True)
        if node.op_type in FUSED
    ]

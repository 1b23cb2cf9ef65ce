"""The audit checked on TensorFlow against the graph traced as a GPU traces it: Keras's one GPU
check (`_is_gpu_available`, which decides whether an LSTM or GRU emits cuDNN's ops) answers yes
while the model's forward function is traced, never run. Every cuDNN op is given to the layer
whose name scopes its node name carries (`model/bidirectional/forward_gru/CudnnRNNV3`): one traced
function for the whole model, so what the model's own call does (wrappers, masks, XLA) is what is
read."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import re
import threading

import keras
import numpy as np
import tensorflow as tf

from hierlstm.model.cudnn import cudnn_nodes
from hierlstm.yours.audit import Audit

_TRACING = threading.local()  # .on: this thread traces as a GPU would
_INSTALL_LOCK = threading.Lock()


def _install_check():
    """Keras's GPU check, wrapped once: it answers yes in a thread inside `as_on_a_gpu`, and as
    before everywhere else, so another session's model built meanwhile is not touched."""
    # The module itself: keras.src.backend.tensorflow exports a function named `rnn`.
    rnn = importlib.import_module("keras.src.backend.tensorflow.rnn")
    with _INSTALL_LOCK:
        if not getattr(rnn._is_gpu_available, "hierlstm_wrapped", False):
            original = rnn._is_gpu_available

            def is_gpu_available() -> bool:
                return bool(getattr(_TRACING, "on", False) or original())

            is_gpu_available.hierlstm_wrapped = True
            rnn._is_gpu_available = is_gpu_available


@contextlib.contextmanager
def as_on_a_gpu():
    """Keras's GPU check answers yes in this thread inside: graphs traced here hold cuDNN's ops
    where a GPU's would. Trace them, never run them."""
    _install_check()
    _TRACING.on = True
    try:
        yield
    finally:
        _TRACING.on = False


@dataclasses.dataclass(frozen=True)
class LayerCheck:
    path: str
    expected: str  # the audit's TensorFlow kernel: "cudnn", "generic" or "fails"
    cudnn_ops: int  # cuDNN ops of this layer outside XLA in the traced graph
    under_xla: int  # ... and inside XLA

    @property
    def found(self) -> str:
        return "fails" if self.under_xla else ("cudnn" if self.cudnn_ops else "generic")

    @property
    def agrees(self) -> bool:
        return self.found == self.expected


@dataclasses.dataclass(frozen=True)
class Verification:
    layers: list[LayerCheck]
    unassigned: list[str]  # cuDNN nodes no audited layer's scope names

    @property
    def agrees(self) -> bool:
        return not self.unassigned and all(check.agrees for check in self.layers)

    def to_dict(self) -> dict:
        return {
            "agrees": self.agrees,
            "unassigned": list(self.unassigned),
            "layers": [
                {**dataclasses.asdict(c), "found": c.found, "agrees": c.agrees} for c in self.layers
            ],
        }


def specs_of(model: keras.Model, shapes: list[tuple]) -> list[tf.TensorSpec]:
    return [
        tf.TensorSpec(shape, tensor.dtype)
        for shape, tensor in zip(shapes, model.inputs, strict=True)
    ]


def traced_forward(model: keras.Model, shapes: list[tuple], jit_compile: bool = False):
    """The model's forward pass traced (not run) at concrete `shapes` as a GPU traces it."""
    single = len(model.inputs) == 1

    def forward(*inputs):
        return model(inputs[0] if single else list(inputs), training=False)

    with as_on_a_gpu():
        return tf.function(forward, jit_compile=jit_compile).get_concrete_function(
            *specs_of(model, shapes)
        )


def _scope_matches(segments: list[str], path: list[str]) -> bool:
    """A node's scope segments after the model's own (`bi_1`, `forward_gru_1`) name `path`'s
    layers; TensorFlow makes a repeated scope unique with `_N`."""
    if len(segments) != len(path):
        return False
    return all(
        segment == name or re.fullmatch(re.escape(name) + r"(_\d+)+", segment)
        for segment, name in zip(segments, path, strict=True)
    )


def _owner(node_name: str, paths: list[str]) -> str | None:
    scopes = node_name.split("/")[1:-1]  # the model's scope first, the op's own name last
    matches = [path for path in paths if _scope_matches(scopes, path.split("/"))]
    if not matches:  # TimeDistributed calls its layer's `call`, inside its own scope alone
        matches = [path for path in paths if _scope_matches(scopes, path.split("/")[:-1])]
        matches = matches if len(matches) == 1 else []
    if len(matches) > 1:  # "lstm" and "lstm_1" both read "lstm_1": the exact name wins
        exact = [path for path in matches if path.split("/") == scopes]
        matches = exact or matches
    return matches[0] if matches else None


def verify(model: keras.Model, result: Audit) -> Verification:
    """Each audited layer's TensorFlow kernel against the cuDNN ops of its scope in the model's
    forward function traced as a GPU traces it (under XLA when the audit's `jit_compile`)."""
    function = traced_forward(model, result.input_shapes, result.jit_compile)
    paths = [row.path for row in result.recurrent]
    counts = {path: [0, 0] for path in paths}
    unassigned = []
    for name, _op, under_xla in cudnn_nodes(function):
        owner = _owner(name, paths)
        if owner is None:
            unassigned.append(name)
        else:
            counts[owner][1 if under_xla else 0] += 1
    checks = [
        LayerCheck(row.path, row.kernels["tensorflow"].kernel, *counts[row.path])
        for row in result.recurrent
    ]
    return Verification(checks, unassigned)


def sample_inputs(model: keras.Model, shapes: list[tuple], seed: int = 0) -> list[np.ndarray]:
    """Inputs at `shapes`: floats from a normal, integers (an Embedding's tokens) from 1 to the
    smallest vocabulary, the last time step 0 (right-padded, as a mask_zero Embedding expects)."""
    rng = np.random.default_rng(seed)
    vocab = min(
        (layer.input_dim for layer in _all_layers(model) if hasattr(layer, "input_dim")),
        default=2,
    )
    values = []
    for shape, tensor in zip(shapes, model.inputs, strict=True):
        if "int" in str(tensor.dtype):
            tokens = rng.integers(1, max(vocab, 2), size=shape).astype(str(tensor.dtype))
            if len(shape) > 1 and shape[1] > 1:
                tokens[:, -1] = 0
            values.append(tokens)
        else:
            values.append(rng.standard_normal(shape).astype(str(tensor.dtype)))
    return values


def _all_layers(layer):
    for child in getattr(layer, "layers", None) or []:
        yield child
        yield from _all_layers(child)
    inner = getattr(layer, "layer", None)
    if isinstance(inner, keras.layers.Layer):
        yield inner

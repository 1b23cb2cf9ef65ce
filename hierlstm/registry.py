"""The registries: VARIANTS (one hierarchical-LSTM function, six variants of how it runs) and
BACKEND_RECORDS (the Keras backends and the inference runtimes that run them, and where). A
`Variant` is metadata only (flags, chain length, backends, its builder's name) and a `Backend` too
(where it runs, its packages, what it supports, its runner module's name), so the registry imports
no TensorFlow, JAX, torch, Keras or runtime; titles and explanations are catalogue messages.
Nothing else lists the variants or the backends."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from hierlstm.i18n import MESSAGES, t


@dataclasses.dataclass(frozen=True)
class Backend:
    """One Keras 3 backend, one per process (`KERAS_BACKEND`), and where its runs happen: in this
    process (`in_process`, TensorFlow's harness) or in its worker (`hierlstm.backends.pool`). Its
    runner is the module of its framework's own calls, named after it
    (`hierlstm/backends/runners/<name>.py`), imported when a run needs it. The cuDNN fields are
    its rule's differences (`hierlstm.model.cudnn`)."""

    name: str
    packages: tuple[str, ...]  # the import names it needs (`hierlstm.backends.missing`)
    profiler: str  # the profiler a profile of it runs under
    allocator: str  # whose allocator a profile's memory line speaks of
    in_process: bool = False  # runs in this process; every other backend runs in its worker
    xla: bool = True  # the `xla` setting applies (TensorFlow's jit_compile, JAX's jax.jit)
    strategies: bool = False  # runs tf.distribute strategies (mirrored, multi_worker)
    torch_compile: bool = False  # could run under torch.compile (not offered: docs/backends.md)
    # cuDNN: XLA refuses its LSTM (TensorFlow's XLA has no CudnnRNNV3), it runs under a mask
    # (TensorFlow's, right-padded), it runs a GRU, the rule's extra conditions, the reasons' suffix
    xla_refuses_cudnn: bool = False
    cudnn_under_mask: bool = False
    cudnn_gru: bool = True
    cudnn_conditions: tuple[str, ...] = ("masked",)
    reason_suffix: str = ""
    # what a profile of it cannot give, by the Profile page's section: section -> message key
    profile_gaps: tuple[tuple[str, str], ...] = ()
    # An inference runtime runs the model exported to a file (`exported`: its format, made by
    # `hierlstm.model.export` on TensorFlow), so its worker imports Keras on another backend
    # (`keras_backend`, "" for its own name) and it runs no training step.
    exported: str = ""
    keras_backend: str = ""
    training: bool = True
    extra: str = "backends"  # the pip extra of its packages: requirements-<extra>.txt

    @property
    def keras(self) -> str:
        """The Keras backend its worker process imports (`KERAS_BACKEND`)."""
        return self.keras_backend or self.name

    @property
    def runner(self) -> str:
        """Its runner module's name (`hierlstm.backends.runner` imports it)."""
        return f"hierlstm.backends.runners.{self.name}"


# what a runtime's profile cannot give: the separate-call split is TensorFlow's, and its profiler
# times the file's nodes, not threads
RUNTIME_PROFILE_GAPS = (
    ("split", "profile.gap.split.separate"),
    ("lines", "profile.gap.lines.runtime"),
)

# What both inference runtimes' rows say alike: they run the ONNX file TensorFlow's Keras exports
# (their worker imports TensorFlow for the converter), no XLA and no training step, from the
# `runtimes` extra, with the same gaps in their profiles.
RUNTIME = dict(
    xla=False,
    profile_gaps=RUNTIME_PROFILE_GAPS,
    exported="onnx",
    keras_backend="tensorflow",
    training=False,
    extra="runtimes",
)
BACKEND_RECORDS: dict[str, Backend] = {
    backend.name: backend
    for backend in (
        Backend(
            "tensorflow",
            ("tensorflow",),
            profiler="the TensorFlow Profiler",
            allocator="TensorFlow's allocator",
            in_process=True,
            strategies=True,
            xla_refuses_cudnn=True,
            cudnn_under_mask=True,
            cudnn_conditions=(),
        ),
        Backend(
            "jax",
            ("jax", "jaxlib"),
            profiler="jax.profiler",
            allocator="JAX's allocator",
            cudnn_gru=False,
            reason_suffix="_jax",
            profile_gaps=(("split", "profile.gap.split.separate"),),
        ),
        Backend(
            "torch",
            ("torch",),
            profiler="torch.profiler",
            allocator="PyTorch's CPU allocator",
            xla=False,
            torch_compile=True,
            cudnn_conditions=("masked", "compiling"),
            reason_suffix="_torch",
            profile_gaps=(
                ("split", "profile.gap.split.torch"),
                ("lines", "profile.gap.lines.torch"),
                ("kernels", "profile.gap.kernels.torch"),
                ("timeline", "profile.gap.timeline.torch"),
            ),
        ),
        Backend(
            "onnxruntime",
            ("onnxruntime", "onnx", "tf2onnx"),
            profiler="ONNX Runtime's profiler",
            allocator="ONNX Runtime's CPU arena",
            **RUNTIME,
        ),
        Backend(
            "openvino",
            ("openvino", "onnx", "tf2onnx"),
            profiler="OpenVINO's performance counters",
            allocator="OpenVINO's CPU plugin",
            **RUNTIME,
        ),
    )
}
BACKENDS = tuple(BACKEND_RECORDS)  # their names, in this order everywhere
# TensorFlow, the first: the backend the others are compared with (the Lesson's ratios)
REFERENCE_BACKEND = BACKENDS[0]
RUNTIMES = tuple(name for name, record in BACKEND_RECORDS.items() if record.exported)
KERAS_BACKENDS = tuple(name for name in BACKENDS if name not in RUNTIMES)  # the cuDNN rule's
# A variant written with Keras layers and keras.ops only runs on every Keras backend, and tf2onnx
# converts it for every runtime.
PORTABLE = BACKENDS


def _pooled_height_plus_time(pooled_height: int, time: int) -> int:
    return pooled_height + time


TRUNK = (
    "input",
    "conv",
    "pool",
    "permute",
)  # (batch, height, time, 1) -> (batch, time, pooled height, filters)


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    builder: str  # a builder function's name: (RunConfig) -> keras.Model (`backends` says where)
    layers: tuple[str, ...]  # its model's layers by name, in order (`hierlstm.model.shapes`)
    can_use_cudnn: bool  # whether its summariser can take Keras's cuDNN path on a GPU
    has_lstm_layer: bool = True  # holds a keras.layers.LSTM, which may take cuDNN on a GPU
    static_time: bool = False  # built for one concrete time length (cannot take any T)
    chain: Callable[[int, int], int] = _pooled_height_plus_time  # (pooled height, time) -> steps
    # the Keras backends its builder runs on: TensorFlow alone for one that calls TensorFlow
    backends: tuple[str, ...] = PORTABLE

    @property
    def title_key(self) -> str:
        return f"variant.{self.name}.title"

    @property
    def explanation_key(self) -> str:
        return f"variant.{self.name}.explanation"

    def title(self, lang: str = "en") -> str:
        return t(self.title_key, lang)

    def explanation(self, sizes: dict[str, int], lang: str = "en") -> str:
        """Its explanation and detail, naming `sizes` (`hierlstm.config.named_sizes`)."""
        more = f"{self.explanation_key}.more"
        detail = " " + t(more, lang, **sizes) if more in MESSAGES else ""
        return t(self.explanation_key, lang, **sizes) + detail


VARIANTS: dict[str, Variant] = {
    variant.name: variant
    for variant in (
        Variant(
            "nested",
            "build_nested",
            (*TRUNK, "nested_rnn"),
            can_use_cudnn=False,
            has_lstm_layer=False,
            chain=lambda pooled_height, time: time * pooled_height + time,
        ),
        Variant(
            "time_distributed",
            "build_time_distributed",
            (*TRUNK, "summarise", "outer_lstm"),
            can_use_cudnn=True,
            static_time=True,
        ),
        Variant(
            "folded",
            "build_folded",
            (*TRUNK, "fold", "inner_lstm", "unfold", "outer_lstm"),
            can_use_cudnn=True,
        ),
        Variant(
            "vectorized_map",
            "build_vectorized_map",
            (*TRUNK, "summarise", "outer_lstm"),
            can_use_cudnn=True,
            backends=("tensorflow",),
        ),
        Variant(
            "shared_cell",
            "build_shared_cell",
            (*TRUNK, "fold", "inner_rnn", "unfold", "outer_lstm"),
            can_use_cudnn=False,
        ),
        Variant(
            "fused",
            "build_fused",
            ("input", "fused_lstm"),
            can_use_cudnn=False,
            has_lstm_layer=False,
            backends=("tensorflow",),
        ),
    )
}


def converts(variant: str) -> bool:
    """Whether tf2onnx converts `variant` to ONNX, so that every runtime runs it."""
    return all(runtime in VARIANTS[variant].backends for runtime in RUNTIMES)


def conversion_refusal(variant: str) -> str:
    """One sentence, in English, when `variant` does not convert to ONNX (why, from the
    catalogue: `export.why.<variant>`), else ""."""
    if converts(variant):
        return ""
    convertible = ", ".join(name for name in VARIANTS if converts(name))
    refused = t("export.refused", "en", variant=variant, convertible=convertible)
    return f"{refused} {t(f'export.why.{variant}', 'en')}"

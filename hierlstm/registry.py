"""The VARIANTS registry: one hierarchical-LSTM function, six variants of how it runs. A `Variant`
is metadata only (flags, chain length, backends, its builder's name), so the registry imports no
TensorFlow or Keras; titles and explanations are catalogue messages. Nothing else lists the
variants."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from hierlstm.i18n import MESSAGES, t

BACKENDS = ("tensorflow", "jax", "torch")  # Keras 3's backends, one per process (KERAS_BACKEND)
PORTABLE = BACKENDS  # a variant written with Keras layers and keras.ops only runs on all three


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

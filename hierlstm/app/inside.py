"""The Inside the tensors page's compute and widgets: the input chosen (a built-in sound or a WAV
file), the parameters shown (the seeded start, or the learnt ones), the scrubbers, every layer's
values and the variants' differences cached per input, config and parameters (so a scrubber only
redraws), and the learning run with its live curve and Stop button. Figures are `values_charts`'."""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
import streamlit as st

from hierlstm.app.session import session
from hierlstm.app.state import text
from hierlstm.config import RunConfig
from hierlstm.model.params import init_params
from hierlstm.model.reference import reference_layers
from hierlstm.values.agreement import variant_differences
from hierlstm.values.keras_values import layer_values
from hierlstm.values.learning import Curve, Learning, chance, learning_data
from hierlstm.values.sounds import SOUNDS, sound_input
from hierlstm.values.wav import WavRefused, wav_input

KEY = "inside"  # the learning run's slot (`hierlstm.app.runs`)
CURVE = "inside-curve"  # the last learning curve, kept as it grows (a Stop keeps it)
WAV = "wav"


def page_config(config: RunConfig) -> RunConfig:
    """What the page shows: the sidebar's geometry and time steps, one input, folded in float32."""
    return config.replace(variant="folded", batch_size=1, precision="float32", xla=False)


@st.cache_data(max_entries=32, show_spinner=False)
def _picture(source: str, height: int, time_steps: int, seed: int, data: bytes | None):
    if source == WAV:
        return wav_input(data, height, time_steps)
    return sound_input(source, height, time_steps, seed)


def input_ui(config: RunConfig, seed: int) -> np.ndarray | None:
    """The input picked, (height, time_steps); None (with one line) while no WAV file is given,
    or when it is refused."""
    source = (
        st.segmented_control(
            text("inside.input"),
            [*SOUNDS, WAV],
            format_func=lambda name: text(f"inside.sound.{name}"),
            default=SOUNDS[0],
            key="inside_input",
            help=text("inside.input.help"),
        )
        or SOUNDS[0]
    )
    data = None
    if source == WAV:
        upload = st.file_uploader(text("inside.upload"), type=["wav"], key="inside_wav")
        if upload is None:
            st.info(text("inside.upload.waiting"), icon=":material/upload_file:")
            return None
        data = upload.getvalue()
    try:
        return _picture(source, config.height, config.time_steps, seed, data)
    except WavRefused as refused:
        st.error(refused.sentence(st.session_state.get("lang", "en")), icon=":material/error:")
        return None


def current_curve(config: RunConfig) -> Curve | None:
    """The session's last learning curve, if it was learnt at this geometry."""
    curve = st.session_state.get(CURVE)
    return curve if curve is not None and curve.config == learning_config(config) else None


def learning_config(config: RunConfig) -> RunConfig:
    return page_config(config).replace(batch_size=16)


def params_ui(config: RunConfig, curve: Curve | None, seed: int) -> tuple[str, dict]:
    """(a name for the cache, the parameters): the seeded start, or the curve's when there is
    one and the reader chooses after training."""
    initial = ("initial", init_params(config, seed))
    if curve is None:
        return initial
    choice = st.segmented_control(
        text("inside.params"),
        ["initial", "trained"],
        format_func=lambda name: text(f"inside.params.{name}"),
        default="initial",
        key="inside_params",
    )
    if choice != "trained":
        return initial
    digest = hashlib.sha256(
        b"".join(np.ascontiguousarray(v).tobytes() for v in curve.params.values())
    )
    return f"trained-{digest.hexdigest()[:16]}", curve.params


def scrubbers_ui(config: RunConfig) -> tuple[int, int]:
    """(t, s): the outer time step and the inner step."""
    left, right = st.columns(2)
    time_step = left.slider(text("inside.scrub.t"), 0, config.time_steps - 1, 0, key="inside_t")
    row = right.slider(text("inside.scrub.s"), 0, config.rows - 1, 0, key="inside_s")
    return time_step, row


@st.cache_data(max_entries=16, show_spinner=False)
def values_of(config: RunConfig, picture: np.ndarray, params_key: str, _params) -> dict:
    """Every layer's values of the Keras model on `picture` (cached per input, config and
    `params_key`, which names `_params`), batch axis dropped."""
    values = layer_values(config, _params, picture[None, :, :, None])
    return {name: value[0] for name, value in values.items()}


@st.cache_data(max_entries=16, show_spinner=False)
def _oracle(config: RunConfig, picture: np.ndarray, seed: int) -> dict:
    params = init_params(config, seed)
    return reference_layers(params, picture[None, :, :, None], pool_height=config.pool_height)


@st.cache_data(max_entries=64, show_spinner=False)
def differences_of(config: RunConfig, picture: np.ndarray, seed: int) -> dict:
    """`config.variant` at `config.precision` against the oracle on `picture`, from the seeded
    parameters: {layer output: |difference|} (cached per input and config)."""
    params = init_params(config, seed)
    x = picture[None, :, :, None]
    return variant_differences(
        config,
        params,
        x,
        _oracle(config.replace(precision="float32", variant="folded"), picture, seed),
    )


@st.cache_data(max_entries=8, show_spinner=False)
def chance_of(config: RunConfig, learning: Learning) -> float:
    """The chance accuracy of a learning run before it runs (its held-out labels, numpy only)."""
    _train, (_inputs, labels) = learning_data(config, learning)
    return chance(labels)


def stop() -> None:
    """The Stop button: the running script is stopped by the rerun its click makes; this keeps
    the curve so far, marked stopped, and drops the run request that rerun would repeat."""
    session().run_request = None
    curve = st.session_state.get(CURVE)
    if curve is not None and not curve.done:
        st.session_state[CURVE] = dataclasses.replace(curve, stopped=True)

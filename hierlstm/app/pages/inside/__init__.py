"""Inside the tensors: a readable input's values through every layer, the outer step t and inner
step s chosen with two scrubbers and marked in every view with their provenance, the variants'
differences from the oracle at a chosen precision, and the model learning live. The input is a
built-in sound or a WAV file; the parameters the seeded start or the learnt ones; every layer's
values and the variants' differences are cached per input, config and parameters (so a scrubber
only redraws); the learning run (the page's Run) draws its curve as it grows, with a Stop
button. Its what-if panel (`whatif`, beside it) changes a part of the model and shows the change
in every view, the trained model's prediction and the map of the hidden states. Figures:
`charts.values`, `charts.agreement`, `charts.learning`."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from typing import Any

import numpy as np
import streamlit as st

from hierlstm import charts
from hierlstm.app import caches, display
from hierlstm.app.caches import COMPUTING, trace_problem
from hierlstm.app.pages.inside import whatif as inside_whatif
from hierlstm.app.runs import Plan, show_run_outcome
from hierlstm.app.session import session
from hierlstm.app.state import APPLIED_ON_RUN, language, text
from hierlstm.config import PRECISIONS, RunConfig
from hierlstm.inside.agreement import OUTPUTS, variant_differences
from hierlstm.inside.keras_values import layer_values
from hierlstm.inside.learning import Curve, Learning, chance, learning_data
from hierlstm.inside.sounds import SOUNDS, sound_input
from hierlstm.inside.wav import WavRefused, wav_input
from hierlstm.model.params import init_params
from hierlstm.model.reference import reference_layers
from hierlstm.registry import VARIANTS

KEY = __name__.rsplit(".", 1)[-1]  # the page's name: its run's slot (`hierlstm.app.runs`)
CURVE = "inside-curve"  # the last learning curve, kept as it grows (a Stop keeps it)
WAV = "wav"
COMPARE = "inside-compared"  # the reader asked for the variants' differences


def page_config(config: RunConfig) -> RunConfig:
    """What the page shows: the sidebar's geometry and time steps, one input, folded in float32."""
    return config.replace(variant="folded", batch_size=1, precision="float32", xla=False)


@st.cache_data(max_entries=64, show_spinner=False)
def _picture(source: str, height: int, time_steps: int, seed: int, data: bytes | None):
    if source == WAV:
        return wav_input(data, height, time_steps)
    return sound_input(source, height, time_steps, seed)


def input_ui(config: RunConfig, seed: int) -> tuple[str, np.ndarray | None]:
    """(the source picked: a sound's name or WAV, its input (height, time_steps)); the input is
    None (with one line) while no WAV file is given, or when it is refused."""
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
            return source, None
        data = upload.getvalue()
    try:
        return source, _picture(source, config.height, config.time_steps, seed, data)
    except WavRefused as refused:
        st.error(refused.sentence(language()), icon=":material/error:")
        return source, None


def current_curve(config: RunConfig) -> Curve | None:
    """The session's last learning curve, if it was learnt at this geometry."""
    curve = st.session_state.get(CURVE)
    return curve if curve is not None and curve.config == learning_config(config) else None


def learning_config(config: RunConfig) -> RunConfig:
    """What the learning run trains: the page's model, batches of 16 sequences."""
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
    return trained_key(curve), curve.params


def digest(*arrays: np.ndarray) -> str:
    """A name for `arrays` in a cache key: a digest of their shapes, types and values."""
    found = hashlib.sha256()
    for array in arrays:
        array = np.ascontiguousarray(array)
        found.update(f"{array.shape}{array.dtype}".encode())
        found.update(array.tobytes())
    return found.hexdigest()[:16]


def trained_key(curve: Curve) -> str:
    """A name for the curve's parameters in a cache: their digest."""
    return f"trained-{digest(*curve.params.values())}"


def mapped_params(config: RunConfig, curve: Curve | None, seed: int) -> tuple[dict, tuple]:
    """The parameter sets the map of the hidden states shows, and their names for its cache:
    the seeded start, and the curve's when there is one."""
    sets, keys = {"initial": init_params(config, seed)}, ("initial",)
    if curve is not None:
        sets["trained"], keys = curve.params, (*keys, trained_key(curve))
    return sets, keys


def scrubbers_ui(config: RunConfig) -> tuple[int, int]:
    """(t, s): the outer time step and the inner step."""
    left, right = st.columns(2)
    time_step = left.slider(text("inside.scrub.t"), 0, config.time_steps - 1, 0, key="inside_t")
    row = right.slider(text("inside.scrub.s"), 0, config.pooled_height - 1, 0, key="inside_s")
    return time_step, row


# ~1.6 MB each at 40 steps, 75 MB at most: every time length a class tries (4 to 40, say) fits,
# where 32 entries held fewer and the class's lengths evicted each other.
@st.cache_data(max_entries=48, show_spinner=False)
def values_of(config: RunConfig, picture: np.ndarray, params_key: str, _params) -> dict:
    """Every layer's values of the Keras model on `picture` (cached per input, config and
    `params_key`, which names `_params`), batch axis dropped."""
    with COMPUTING:
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
    with COMPUTING:
        oracle = _oracle(page_config(config), picture, seed)  # one oracle for every variant
        params = init_params(config, seed)
        return variant_differences(config, params, picture[None, :, :, None], oracle)


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


# --- the page's sections ---------------------------------------------------------------------


def _unchanged(figure):
    return figure


def values_ui(
    config: RunConfig,
    picture: np.ndarray,
    values: dict,
    selected,
    lang: str,
    redraw=_unchanged,
    named: tuple = (),
) -> None:
    """The input's heatmap with the provenance of (t, s) framed, that provenance in words, then
    every layer's values as heatmaps, (t, s) framed in each (`charts.values.values_figures`);
    `redraw` (a figure -> a figure) draws each as a change. The figures are made once for the
    server (`caches.figure`) per config, (t, s), language, input (by its digest) and `named`,
    which names the values and the redraw (their parameters, interventions and view)."""
    time_step, row = selected
    key = ("inside-values", config, selected, lang, digest(picture), named)
    figures = caches.figure(
        key,
        lambda: {
            name: redraw(figure)
            for name, figure in charts.values.values_figures(
                config, picture, values, selected, lang
            ).items()
        },
    )
    display.chart(figures["input"], None, "inside-input")
    field = charts.values.input_field(config, selected)
    rows, times = field.any(axis=1).nonzero()[0], field.any(axis=0).nonzero()[0]
    st.caption(text("inside.input.caption", height=config.height, time=config.time_steps))
    cells = {"row0": rows[0], "row1": rows[-1], "t0": times[0], "t1": times[-1]}
    st.markdown(
        text(
            "inside.provenance",
            t=time_step,
            s=row,
            cells=int(field.sum()),
            kernel=config.kernel_size,
            pool=config.pool_height,
            **cells,
        )
    )
    st.subheader(text("inside.section.layers"))
    for name, figure in figures.items():
        if name != "input":
            display.chart(figure, None, f"inside-{name}")


def agreement_ui(config: RunConfig, picture: np.ndarray, seed: int, lang: str) -> None:
    """Every variant against the oracle on this input, at the precision chosen here."""
    from hierlstm.timing import failures

    st.subheader(text("inside.section.agree"))
    st.markdown(text("inside.agree.intro"))
    precision = (
        st.segmented_control(
            text("inside.agree.precision"), PRECISIONS, default="float32", key="inside_precision"
        )
        or "float32"
    )
    if not st.session_state.get(COMPARE):
        # Six models built and run eagerly cost seconds of both cores: asked for, not paid on
        # every visit (in a classroom every visitor's settings differ, so a cache rarely helps).
        asking = st.empty()
        with asking.container():
            st.info(text("inside.agree.waiting"), icon=":material/compare_arrows:")
            pressed = st.button(text("inside.agree.compare"), key="inside-compare")
        if not pressed:
            return
        asking.empty()
        st.session_state[COMPARE] = True  # kept: later settings compare without asking again
    differences = {}
    with st.spinner(text("inside.computing")):
        for variant in VARIANTS:
            run_config = config.replace(variant=variant, precision=precision)
            if problem := trace_problem(run_config):
                st.caption(problem)
                continue
            try:
                differences[variant] = differences_of(run_config, picture, seed)
            except failures.RUN_FAILURES as error:
                line = failures.first_line(error)
                st.caption(text("inside.agree.failed", variant=variant, error=line))
    figure = charts.agreement.agreement_figure(differences, tuple(OUTPUTS), lang, precision)
    display.chart(figure, None, "inside-agree")
    largest = ", ".join(f"{name} {d['output'].max():.1e}" for name, d in differences.items())
    st.caption(text("inside.agree.largest", values=largest))


@dataclasses.dataclass(frozen=True)
class Learn:
    """The page above its learning run: its config, what the run would learn, and where its
    curve is drawn."""

    config: RunConfig
    learning: Learning
    live: Any  # an st.empty()


def inputs(controls) -> Learn:
    """The input, its values through every layer, the agreement, and the learning section up to
    its curve."""
    lang, seed = controls.language, controls.timing.seed
    config = page_config(controls.config)
    source, picture = input_ui(config, seed)
    if picture is None:
        st.stop()
    curve = current_curve(config)
    params_key, params = params_ui(config, curve, seed)
    selected = scrubbers_ui(config)
    panel = inside_whatif.panel_ui(config, picture, params_key, params, seed, source)
    values = None
    if panel.run is None:
        values = values_of(config, picture, params_key, params)  # cached: a scrubber only redraws
    shown, shown_picture = panel.views(values, picture)
    named = (params_key, panel.interventions, panel.view if panel.run else None)
    redraw = panel.redraw(lang) or _unchanged
    values_ui(config, shown_picture, shown, selected, lang, redraw, named)
    trained = params_key.startswith("trained")
    inside_whatif.prediction_ui(config, curve, trained, source, panel, values, selected[0])
    inside_whatif.map_ui(config, *mapped_params(config, curve, seed), seed, panel)
    agreement_ui(config, picture, seed, lang)

    st.subheader(text("inside.section.learn"))
    steps_column, _rest = st.columns([1, 3])
    steps = steps_column.number_input(
        text("inside.learn.steps"),
        1,
        2000,
        100,
        10,
        key="inside_steps",
        on_change=APPLIED_ON_RUN,  # Train applies it: a rerun now could drop the click
    )
    learning = Learning(steps=int(steps), seed=seed)
    sizes = {"train": learning.train_sequences, "held": learning.held_out}
    st.markdown(text("inside.learn.intro", time=config.time_steps, **sizes))
    return Learn(config, learning, st.empty())


def plan(controls, learn: Learn) -> Plan:
    """The learning run (`learner.learn_job`, in TensorFlow's worker as every run), its curve
    drawn in `learn.live` and kept as each point arrives; its Stop button is drawn now, above
    the run's progress bar."""
    from hierlstm.inside.learner import learn_job

    st.button(text("inside.learn.stop"), key="inside-stop", on_click=stop, type="primary")
    learning, learn_config = learn.learning, learning_config(learn.config)

    def shown(curve: Curve) -> str:
        st.session_state[CURVE] = curve
        point = curve.points[-1]
        figure = charts.learning.learning_figure(
            curve.points, curve.chance, controls.language, learning.steps
        )
        learn.live.plotly_chart(figure, theme="streamlit", width="stretch")
        accuracy = point.held_out_accuracy
        return text(
            "inside.learn.progress", step=point.step, steps=learning.steps, accuracy=accuracy
        )

    return Plan((learn_config,), functools.partial(learn_job, learn_config, learning), shown=shown)


def draw(controls, learn: Learn) -> None:
    """The learning curve (before, during, after a run) and the outcome."""
    config, learning, lang = learn.config, learn.learning, controls.language
    learn_config = learning_config(config)
    show_run_outcome(KEY)
    curve = current_curve(config)
    points, chance_line = (
        ((), chance_of(learn_config, learning)) if curve is None else (curve.points, curve.chance)
    )
    total = learning.steps if curve is None else curve.learning.steps
    shown = None if curve is None else (trained_key(curve), len(points))
    with learn.live.container():
        figure = caches.figure(
            ("inside-learning", shown, chance_line, lang, total),
            lambda: charts.learning.learning_figure(points, chance_line, lang, total),
        )
        display.chart(figure, None, "inside-learning")
    if curve is None:
        st.info(text("inside.learn.press_run"), icon=":material/play_arrow:")
        return
    last = curve.points[-1]
    if curve.stopped:
        st.warning(text("inside.learn.stopped", step=last.step, steps=total))
    accuracy = last.held_out_accuracy
    st.markdown(text("inside.learn.done", accuracy=accuracy, step=last.step, chance=curve.chance))

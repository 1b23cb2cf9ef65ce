"""The shared sidebar: the language switch and the one settings form, whose button applies the
settings and runs the page's work. `controls_ui` returns the plain `Controls` a page reads."""

from __future__ import annotations

import dataclasses
import functools

import streamlit as st

from hierlstm.app.devices import device_options, unusable_gpu_problems, visible_devices
from hierlstm.app.session import SESSION, init_state, session
from hierlstm.app.state import (
    APP_STRATEGIES,
    CONFIG_FIELDS,
    DEFAULT_BACKENDS,
    DEFAULT_VARIANTS,
    DEFAULTS,
    GEOMETRY,
    LISTS,
    NUMERIC,
    TIMING_FIELDS,
    Choice,
    backend_missing,
    choose,
    configs_of,
    labeller,
    language,
    limits_of,
    text,
    write_query,
)
from hierlstm.config import (
    BACKENDS,
    LSTM_KERNELS,
    OPTIMIZERS,
    PRECISIONS,
    TASKS,
    RunConfig,
    SettingError,
    Timing,
)
from hierlstm.i18n import LANGUAGES
from hierlstm.registry import VARIANTS

# --- sidebar -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Action:
    """What a page's Run button does: its label (a message key) and whether it is heavy (timing
    work: the button is disabled while it runs)."""

    label: str
    heavy: bool


@dataclasses.dataclass(frozen=True)
class Controls:
    config: RunConfig  # of the first selected variant
    variants: tuple[str, ...]
    language: str
    timing: Timing
    run: bool  # the Run button was pressed for this script run
    url_warnings: tuple[tuple[str, str, str], ...] = ()  # (name, value, reason) from the URL
    backends: tuple[str, ...] = DEFAULT_BACKENDS  # chosen and installed, in BACKENDS order

    @functools.cached_property
    def choice(self) -> Choice:
        return choose(self.variants, self.backends)

    @functools.cached_property
    def configs(self) -> tuple[RunConfig, ...]:
        """One config per selected variant on each chosen backend it has (variant-major):
        what the page checks, locks, estimates and times."""
        return configs_of(self.config, self.choice)

    @functools.cached_property
    def variant_configs(self) -> tuple[RunConfig, ...]:
        """One config per selected variant, on TensorFlow: what is traced and built in this
        process (the Shape trace), whatever the Backend choice."""
        return tuple(self.config.replace(variant=name) for name in self.variants)

    @property
    def several_backends(self) -> bool:
        return len({config.backend for config in self.configs}) > 1


def language_ui(*, devices_known: bool = True) -> str:
    """The language switch (applies at once, outside the settings form)."""
    init_state(devices_known=devices_known)
    st.sidebar.selectbox("Language · 语言", list(LANGUAGES), format_func=LANGUAGES.get, key="lang")
    return language()


def request_run(label: str) -> None:
    session().run_request = label  # the page whose button it was


def _widget(make, name: str, *options, labels: str = "", note: str = "", **extra):
    """`make` (a container's selectbox, multiselect, checkbox, number_input) for setting `name`:
    its value in the session under `name`, its label and help the catalogue's `control.<name>`
    and `control.<name>.help` (then `note`), its options' names `labels` + option."""
    if labels:
        extra["format_func"] = labeller(labels)
    help = extra.pop("help", text(f"control.{name}.help")) + note
    return make(text(f"control.{name}"), *options, key=name, help=help, **extra)


def _number(container, name: str) -> None:
    _widget(container.number_input, name, *limits_of(name), step=1)


def controls_ui(action: Action, *, devices_known: bool = True) -> Controls:
    """The shared sidebar settings form; its one button applies the settings and runs the page.

    Widgets hold their values in `st.session_state` under the keys of `DEFAULTS`. The button
    is disabled during a heavy run; it is re-enabled by the rerun that follows the run. Until
    the server's warm-up has started TensorFlow's devices (`devices_known` false), Device and
    Replicas offer only what they hold, disabled, and nothing asks TensorFlow.
    """
    init_state(devices_known=devices_known)
    state, kept = st.session_state, session()
    # The request stays in the session until the page has done its work (`start_run`) or has
    # finished (`page_run`): a run that Streamlit stops half-way, e.g. for the second click
    # of a double click, is not lost. A request made on another page is dropped, not run here.
    requested = kept.run_request == action.label
    if not requested:
        kept.run_request = None
    kept.current_action = action.label
    with st.sidebar.form("controls", border=False):
        placeholder = {name: text(f"control.{name}.placeholder") for name in LISTS}
        _widget(st.multiselect, "variants", list(VARIANTS), placeholder=placeholder["variants"])
        _widget(
            st.multiselect,
            "backends",
            list(BACKENDS),
            format_func=functools.partial(_label_backend, language()),  # marks a missing one
            placeholder=placeholder["backends"],
        )
        left, right = st.columns(2)
        _number(left, "time_steps")
        _number(right, "batch_size")
        left, right = st.columns(2)
        _widget(left.selectbox, "precision", PRECISIONS)
        _widget(right.selectbox, "lstm_kernel", LSTM_KERNELS, labels="kernel.")
        left, right = st.columns([3, 2])  # "training step" needs the room
        _widget(left.selectbox, "task", TASKS, labels="task.")
        _widget(right.selectbox, "optimizer", OPTIMIZERS)
        left, right = st.columns(2, vertical_alignment="bottom")
        detecting = "" if devices_known else " " + text("control.devices.detecting")
        held = list(dict.fromkeys(("auto", state["device"])))
        devices = device_options() if devices_known else held
        _widget(left.selectbox, "device", devices, note=detecting, disabled=not devices_known)
        _widget(right.checkbox, "xla")
        # A GPU is there but not among the choices: one line here, the reasons in the banner.
        problems = unusable_gpu_problems() if devices_known else ()
        for headline in dict.fromkeys(p.headline(language()) for p in problems):
            st.caption("⚠️ " + headline)
        left, right = st.columns(2)
        _widget(left.selectbox, "strategy", APP_STRATEGIES, labels="strategy.")
        replicas = visible_devices() if devices_known else list(state["devices"])
        _widget(
            right.multiselect,
            "devices",
            replicas,
            help=text("control.devices.help", devices=", ".join(replicas)),
            note=detecting,
            placeholder=placeholder["devices"],
            disabled=not devices_known,
        )
        with st.expander(text("control.timing")):
            left, right = st.columns(2)
            _number(left, "warmup")
            _number(right, "repeats")
        with st.expander(text("control.geometry")):
            for first, second in zip(GEOMETRY[::2], GEOMETRY[1::2], strict=True):
                left, right = st.columns(2)
                _number(left, first)
                _number(right, second)
        st.form_submit_button(
            text(action.label),
            type="primary",
            key="run",
            on_click=request_run,
            args=(action.label,),
            disabled=requested and action.heavy,
            width="stretch",
        )
    controls = _controls_from_state(requested, devices_known)
    write_query({name: state.get(name, default) for name, default in DEFAULTS.items()})
    if requested:
        kept.url_warnings = []  # the user has acted on them
    kept.controls = controls
    kept.saved_values = {name: state[name] for name in DEFAULTS if name in state}
    return controls


def _label_backend(lang: str, name: str) -> str:
    """A backend in the Backend choice, marked when its packages are missing."""
    if backend_missing(name) is None:
        return name
    from hierlstm.i18n import t

    return t("control.backends.not_installed", lang, backend=name)


def _backends_from_state() -> tuple[str, ...]:
    """The chosen backends whose packages are installed; each missing one is one line (what is
    missing and how to get it) and is left out; none left: TensorFlow's."""
    chosen = [name for name in st.session_state.get("backends", ()) if name in BACKENDS]
    installed = []
    for name in chosen:
        if (reason := backend_missing(name)) is None:
            installed.append(name)
        else:
            st.sidebar.caption("⚠️ " + missing_message(name, reason))
    return tuple(name for name in BACKENDS if name in installed) or DEFAULT_BACKENDS


def missing_message(backend: str, reason: str) -> str:
    """`hierlstm.backends.missing`'s sentence in English, else the catalogue's line."""
    if language() == "en":
        return reason
    return text("control.backends.missing", backend=backend)


def _left_out_caption(choice: Choice) -> None:
    """One line naming the selected variants that a chosen backend does not have, and why."""
    if not choice.left_out:
        return
    names = ", ".join(
        f"{variant} ({', '.join(backends)})" for variant, backends in choice.left_out.items()
    )
    key = "control.backends.fallback" if choice.fallback else "control.backends.left_out"
    st.sidebar.caption("ℹ️ " + text(key, variants=names, backends=", ".join(choice.backends)))


def _controls_from_state(requested: bool, devices_known: bool) -> Controls:
    state = st.session_state
    variants = tuple(name for name in state.get("variants", ()) if name in VARIANTS)
    if not variants:
        st.sidebar.warning(text("control.variants.none", default=", ".join(DEFAULT_VARIANTS)))
        variants = DEFAULT_VARIANTS
    backends = _backends_from_state()
    values = {name: state[name] for name in CONFIG_FIELDS}
    values.update({name: int(values[name]) for name in NUMERIC if name in values})
    if values["strategy"] == "mirrored":  # the replicas are the devices; Device is not used
        if values["device"] != "auto":
            st.sidebar.caption(text("control.strategy.device_unused", device=values["device"]))
            values["device"] = "auto"
        values["devices"] = ",".join(state.get("devices", ()))
    try:
        config = RunConfig(variant=variants[0], **values)
        session().last_config = config
    except SettingError as error:
        st.sidebar.error(text("control.invalid", reason=str(error)))
        config = (session().last_config or RunConfig()).replace(variant=variants[0])
        requested = False
    ok, message = True, ""
    if devices_known:
        from hierlstm.hardware import precision_supported  # TensorFlow's devices

        ok, message = precision_supported(config.precision, config.device)
    if message:
        warning = "⚠️ " + precision_message(config.precision, config.device, message)
        (st.sidebar.caption if ok else st.sidebar.error)(warning)
    controls = Controls(
        config=config,
        variants=variants,
        language=language(),
        timing=Timing(**{name: int(state[name]) for name in TIMING_FIELDS}),
        run=requested,
        url_warnings=tuple(session().url_warnings),
        backends=backends,
    )
    _left_out_caption(controls.choice)
    return controls


def precision_message(precision: str, device: str, message: str) -> str:
    """`precision_supported`'s warning for `precision` on `device` (a spec: "auto", "gpu:0") in
    the session's language: as it is in English, else the catalogue's line for a CPU or a GPU."""
    if language() == "en":
        return message
    from hierlstm.hardware import resolve_device  # TensorFlow's devices

    kind = "cpu" if resolve_device(device).startswith("/CPU") else "gpu"
    return text(f"precision.slow.{kind}", precision=precision)


def current_controls() -> Controls:
    """The controls of this script run (set by `controls_ui` in app.py before the page runs)."""
    controls = session().controls if SESSION in st.session_state else None
    if controls is None:  # a page run on its own, outside app.py
        controls = controls_ui(Action("run.apply", heavy=False))
    return controls

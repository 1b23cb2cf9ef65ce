"""The shared sidebar: the language switch and the one settings form, whose button applies the
settings and runs the page's work. The form shows the settings the page reads (its record in
`hierlstm.app.pages`); `controls_ui` returns the plain `Controls` it reads, every other setting at
its default, so a setting the page does not show cannot change what it draws."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Collection, Sequence

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
from hierlstm.registry import BACKEND_RECORDS, VARIANTS

# --- sidebar -------------------------------------------------------------------------------
# The form's settings, by what they set (a page names the ones it reads).
SIZES = ("time_steps", "batch_size")
MODEL = ("precision", "lstm_kernel", "device", "xla")
TASK = ("task", "optimizer")
REPLICAS = ("strategy", "devices")
TIMING = TIMING_FIELDS
EVERY_SETTING = ("variants", "backends", *SIZES, *MODEL, *TASK, *REPLICAS, *TIMING, *GEOMETRY)


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


def _row(shown: Collection[str], names: Sequence[str], spec=None, **options) -> dict:
    """The containers of a row of the form, one per setting of `names` that is `shown`: the
    row's columns (`spec` when all are shown), the whole width for one."""
    visible = [name for name in names if name in shown]
    if len(visible) < 2:
        return {name: st.container() for name in visible}
    spec = spec if spec is not None and len(visible) == len(names) else len(visible)
    return dict(zip(visible, st.columns(spec, **options), strict=False))


def controls_ui(
    action: Action, settings: Collection[str] = EVERY_SETTING, *, devices_known: bool = True
) -> Controls:
    """The shared sidebar settings form, showing `settings`; its one button applies them and runs
    the page. A page that reads no setting has no form.

    Widgets hold their values in `st.session_state` under the keys of `DEFAULTS`; one not drawn
    keeps its value for the pages that show it (`hierlstm.app.session`). The button is disabled
    during a heavy run; it is re-enabled by the rerun that follows the run. Until the server's
    warm-up has started TensorFlow's devices (`devices_known` false), Device and Replicas offer
    only what they hold, disabled, and nothing asks TensorFlow.
    """
    init_state(devices_known=devices_known)
    state, kept, shown = st.session_state, session(), frozenset(settings)
    # The request stays in the session until the page has done its work (`start_run`) or has
    # finished (`page_run`): a run that Streamlit stops half-way, e.g. for the second click
    # of a double click, is not lost. A request made on another page is dropped, not run here.
    requested = kept.run_request == action.label and bool(shown)
    if not requested:
        kept.run_request = None
    kept.current_action = action.label
    if shown:
        with st.sidebar.form("controls", border=False):
            _form(shown, devices_known)
            st.form_submit_button(
                text(action.label),
                type="primary",
                key="run",
                on_click=request_run,
                args=(action.label,),
                disabled=requested and action.heavy,
                width="stretch",
            )
    controls = _controls_from_state(requested, devices_known, shown)
    write_query({name: state.get(name, default) for name, default in DEFAULTS.items()})
    if requested:
        kept.url_warnings = []  # the user has acted on them
    kept.controls = controls
    kept.saved_values = {name: state[name] for name in DEFAULTS if name in state}
    return controls


def _form(shown: frozenset[str], devices_known: bool) -> None:
    """The form's widgets for the `shown` settings, in their rows."""
    state = st.session_state
    placeholder = {name: text(f"control.{name}.placeholder") for name in LISTS}
    if "variants" in shown:
        _widget(st.multiselect, "variants", list(VARIANTS), placeholder=placeholder["variants"])
    if "backends" in shown:
        _widget(
            st.multiselect,
            "backends",
            list(BACKENDS),
            format_func=functools.partial(_label_backend, language()),  # marks a missing one
            placeholder=placeholder["backends"],
        )
    for name, column in _row(shown, SIZES).items():
        _number(column, name)
    row = _row(shown, ("precision", "lstm_kernel"))
    if "precision" in row:
        _widget(row["precision"].selectbox, "precision", PRECISIONS)
    if "lstm_kernel" in row:
        _widget(row["lstm_kernel"].selectbox, "lstm_kernel", LSTM_KERNELS, labels="kernel.")
    row = _row(shown, TASK, [3, 2])  # "training step" needs the room
    if "task" in row:
        _widget(row["task"].selectbox, "task", TASKS, labels="task.")
    if "optimizer" in row:
        _widget(row["optimizer"].selectbox, "optimizer", OPTIMIZERS)
    detecting = "" if devices_known else " " + text("control.devices.detecting")
    row = _row(shown, ("device", "xla"), vertical_alignment="bottom")
    if "device" in row:
        held = list(dict.fromkeys(("auto", state["device"])))
        devices = device_options() if devices_known else held
        device = row["device"].selectbox
        _widget(device, "device", devices, note=detecting, disabled=not devices_known)
    if "xla" in row:
        _widget(row["xla"].checkbox, "xla")
    if "device" in shown:
        # A GPU is there but not among the choices: one line here, the reasons in the banner.
        problems = unusable_gpu_problems() if devices_known else ()
        for headline in dict.fromkeys(p.headline(language()) for p in problems):
            st.caption("⚠️ " + headline)
    row = _row(shown, REPLICAS)
    if "strategy" in row:
        _widget(row["strategy"].selectbox, "strategy", APP_STRATEGIES, labels="strategy.")
    if "devices" in row:
        replicas = visible_devices() if devices_known else list(state["devices"])
        _widget(
            row["devices"].multiselect,
            "devices",
            replicas,
            help=text("control.devices.help", devices=", ".join(replicas)),
            note=detecting,
            placeholder=placeholder["devices"],
            disabled=not devices_known,
        )
    if shown & set(TIMING):
        with st.expander(text("control.timing")):
            for name, column in _row(shown, TIMING).items():
                _number(column, name)
    if shown & set(GEOMETRY):
        with st.expander(text("control.geometry")):
            for first, second in zip(GEOMETRY[::2], GEOMETRY[1::2], strict=True):
                for name, column in _row(shown, (first, second)).items():
                    _number(column, name)


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
    extra = BACKEND_RECORDS[backend].extra  # the pip extra and make switch of its packages
    return text("control.backends.missing", backend=backend, switch=extra.upper(), extra=extra)


def _left_out_caption(choice: Choice) -> None:
    """One line naming the selected variants that a chosen backend does not have, and why."""
    if not choice.left_out:
        return
    names = ", ".join(
        f"{variant} ({', '.join(backends)})" for variant, backends in choice.left_out.items()
    )
    key = "control.backends.fallback" if choice.fallback else "control.backends.left_out"
    st.sidebar.caption("ℹ️ " + text(key, variants=names, backends=", ".join(choice.backends)))


def _controls_from_state(requested: bool, devices_known: bool, shown: frozenset[str]) -> Controls:
    """The Controls of the `shown` settings' values, every other setting at its default."""
    state = {name: st.session_state[name] if name in shown else DEFAULTS[name] for name in DEFAULTS}
    variants = tuple(name for name in state["variants"] if name in VARIANTS)
    if not variants:
        st.sidebar.warning(text("control.variants.none", default=", ".join(DEFAULT_VARIANTS)))
        variants = DEFAULT_VARIANTS
    backends = _backends_from_state() if "backends" in shown else DEFAULT_BACKENDS
    values = {name: state[name] for name in CONFIG_FIELDS}
    values.update({name: int(values[name]) for name in NUMERIC if name in values})
    if values["strategy"] == "mirrored":  # the replicas are the devices; Device is not used
        if values["device"] != "auto":
            st.sidebar.caption(text("control.strategy.device_unused", device=values["device"]))
            values["device"] = "auto"
        values["devices"] = ",".join(state["devices"])
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
    """The controls of this script run (set by `controls_ui` in the frame before the page runs)."""
    controls = session().controls if SESSION in st.session_state else None
    if controls is None:  # a page run on its own, outside the frame
        controls = controls_ui(Action("run.apply", heavy=False))
    return controls

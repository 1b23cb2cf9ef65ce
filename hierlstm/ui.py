"""The one module of hierlstm that imports Streamlit: the shared sidebar controls and their URL
mirror, the banner, the Run guard, cached wrappers around the compute core, and small display
helpers. Pages are thin scripts over these; figures come from `hierlstm.charts`.

Caching: models and traces live in `st.cache_resource`, keyed by the frozen `RunConfig` (with
the fields that cannot change the cached object normalised away) and bounded by `max_entries`.
Cached objects are only read: tracing and gradient checks never change a model's weights, and
benchmarks build their own models, so a measurement never touches a cached one. Every cached
model comes with a lock, because Keras layers are not safe to trace from two sessions at once.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

try:  # raised inside a running script when the browser asks for a rerun
    from streamlit.runtime.scriptrunner_utils.exceptions import RerunException
except ImportError:  # moved in another Streamlit version: never matches, runs are just dropped
    RerunException = type("RerunException", (BaseException,), {})

from hierlstm.bench import compare, error_line, first_line, layer_breakdown, sweep
from hierlstm.config import LSTM_KERNELS, PRECISIONS, RunConfig
from hierlstm.devices import device_report, precision_supported, resolve_device
from hierlstm.i18n import DEFAULT_LANGUAGE, LANGUAGES, has_text, t
from hierlstm.limits import (
    TRACE_SECONDS_PER_CALL,
    LimitError,
    check_limits,
    check_trace_budget,
    current_limits,
)
from hierlstm.store import ResultStore, default_path
from hierlstm.variants import VARIANTS, build_model

GEOMETRY = ("height", "filters", "kernel_size", "pool_height", "inner_units", "outer_units")
# The RunConfig fields the sidebar controls (and the URL may set). `devices`, the mirrored
# replicas, is a list in the session (a multiselect) and a comma-separated string in RunConfig.
CONFIG_FIELDS = (
    "time_steps",
    "batch_size",
    "precision",
    "xla",
    "lstm_kernel",
    "device",
    "strategy",
    *GEOMETRY,
)
# multi_worker needs a cluster started before TensorFlow runs: the command line's `worker`.
APP_STRATEGIES = ("none", "mirrored")
MAX_REPLICAS = 16
# What the app lets a user ask for; batch and time come from `hierlstm.limits` (environment-
# configurable), the rest are well inside RunConfig's sanity bounds.
UI_LIMITS = {
    "height": (1, 1024),
    "filters": (1, 256),
    "kernel_size": (1, 15),
    "pool_height": (1, 256),
    "inner_units": (1, 1024),
    "outer_units": (1, 1024),
    "warmup": (0, 20),
    "repeats": (1, 200),
}
DEFAULT_VARIANTS = tuple(name for name in ("nested", "folded", "fused") if name in VARIANTS)
DEFAULTS: dict[str, Any] = {
    **{name: getattr(RunConfig(), name) for name in CONFIG_FIELDS},
    "devices": [],
    "variants": list(DEFAULT_VARIANTS),
    "warmup": 2,
    "repeats": 10,
    "lang": DEFAULT_LANGUAGE,
}
_RUN_REQUEST = "_run_requested"
_CURRENT_ACTION = "_current_action"
_STATE_READY = "_state_ready"
_URL_WARNINGS = "_url_warnings"
_CONTROLS = "_controls"
_SAVED_VALUES = "_saved_values"  # not a widget key, so Streamlit never drops it
_CONFIRMED = "_confirmed_run"  # (page key, Workload) the user said yes to


# --- language ----------------------------------------------------------------------------


def language() -> str:
    return st.session_state.get("lang", DEFAULT_LANGUAGE)


def text(key: str, **values) -> str:
    """The catalogue message `key` in the session's language."""
    return t(key, language(), **values)


def variant_title(name: str) -> str:
    key = f"variant.{name}.title"
    return text(key) if has_text(key, language()) else VARIANTS[name].title


def variant_explanation(name: str) -> str:
    key = f"variant.{name}.explanation"
    if language() == "en" or not has_text(key, language()):
        return VARIANTS[name].explanation  # the registry's own words, always current
    return text(key)


# --- URL <-> controls ----------------------------------------------------------------------


def limits_of(name: str) -> tuple[int, int]:
    """The (lowest, highest) value the app accepts for a numeric control."""
    if name == "batch_size":
        return 1, current_limits().max_batch
    if name == "time_steps":
        return 1, current_limits().max_time_steps
    if name == "replicas":
        return 1, MAX_REPLICAS
    return UI_LIMITS[name]


NUMERIC = ("time_steps", "batch_size", *UI_LIMITS)


def _in_limits(name: str, value) -> str:
    low, high = limits_of(name)
    if isinstance(value, int) and not low <= value <= high:
        return f"{name} must be between {low} and {high} in the app; got {value}."
    return ""


def read_query(params: Mapping[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    """Control values from URL parameters, and (name, value, reason) per rejected parameter.

    Known keys: every RunConfig field but `variant`, `variants` (comma-separated), `warmup`,
    `repeats`, `lang`. Unknown keys are ignored; a bad value keeps the default.
    """
    values: dict[str, Any] = {}
    problems: list[tuple[str, str, str]] = []

    def reject(name, raw, reason):
        problems.append((name, raw, reason))

    params = {name: (raw[-1] if isinstance(raw, list) else raw) for name, raw in params.items()}
    for name, raw in params.items():
        raw = str(raw)
        if name == "lang":
            if raw in LANGUAGES:
                values[name] = raw
            else:
                reject(name, raw, f"lang must be one of {', '.join(LANGUAGES)}.")
        elif name == "variants":
            names = [part.strip() for part in raw.split(",") if part.strip()]
            unknown = [part for part in names if part not in VARIANTS]
            if unknown or not names:
                reject(name, raw, f"variants must be names from {', '.join(VARIANTS)}.")
            if known := [part for part in dict.fromkeys(names) if part in VARIANTS]:
                values[name] = known
        elif name == "devices":
            names = [part.strip() for part in raw.split(",") if part.strip()]
            unseen = [part for part in names if part not in visible_devices()]
            try:
                RunConfig(strategy="mirrored", devices=",".join(names))
                problem = (
                    f"devices must be among this server's {', '.join(visible_devices())}."
                    if unseen
                    else ""
                )
            except ValueError as error:
                problem = str(error)
            if problem:
                reject(name, raw, problem)
            else:
                values[name] = names
        elif name in ("warmup", "repeats"):
            low, high = limits_of(name)
            if raw.strip().isdigit() and low <= int(raw) <= high:
                values[name] = int(raw)
            else:
                reject(name, raw, f"{name} must be a whole number between {low} and {high}.")
        elif name in CONFIG_FIELDS:
            try:
                value = getattr(RunConfig.from_strings({name: raw}), name)
                if name == "device":
                    resolve_device(value)  # gpu:3 on a machine with one GPU
                problem = _in_limits(name, value) if name in NUMERIC else ""
                if name == "strategy" and value not in APP_STRATEGIES:
                    problem = (
                        f"the app runs strategy {' or '.join(APP_STRATEGIES)}; {value} runs from "
                        "the command line (python -m hierlstm worker)."
                    )
            except ValueError as error:
                problem = str(error)
            if problem:
                reject(name, raw, problem)
            else:
                values[name] = value
    geometry = {name: values[name] for name in GEOMETRY if name in values}
    try:
        RunConfig(**geometry)
    except ValueError as error:  # each value fine alone, not together (height < pool_height)
        reject(
            "height, pool_height",
            f"{geometry.get('height')}, {geometry.get('pool_height')}",
            str(error),
        )
        for name in ("height", "pool_height"):
            values.pop(name, None)
    return values, problems


def query_for(values: Mapping[str, Any]) -> dict[str, str]:
    """The URL parameters for control values: only those that differ from the defaults."""
    wanted = {}
    for name, default in DEFAULTS.items():
        value = values.get(name, default)
        if value == default:
            continue
        if name in ("variants", "devices"):
            wanted[name] = ",".join(value)
        elif isinstance(value, bool):
            wanted[name] = str(value).lower()
        else:
            wanted[name] = str(value)
    return wanted


def _init_state() -> None:
    """Once per session: defaults, overridden by the URL the session was opened with.

    On later runs, any setting missing from session state is put back from the copy kept by
    the last run: Streamlit drops a widget's value when a script run ends without drawing that
    widget (an interrupted rerun, say), and the number inputs would then reset to their minimum.
    """
    state = st.session_state
    if state.get(_STATE_READY):
        saved = state.get(_SAVED_VALUES, {})
        for name, default in DEFAULTS.items():
            if name not in state:
                state[name] = saved.get(name, default)
        return
    values, problems = read_query(st.query_params.to_dict())
    for name, default in DEFAULTS.items():
        state[name] = values.get(name, default)
    state[_SAVED_VALUES] = {name: state[name] for name in DEFAULTS}
    state[_URL_WARNINGS] = problems
    state[_STATE_READY] = True


def _write_query(values: Mapping[str, Any]) -> None:
    wanted = query_for(values)
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)


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
    warmup: int
    repeats: int
    run: bool  # the Run button was pressed for this script run
    url_warnings: tuple[tuple[str, str, str], ...] = ()  # (name, value, reason) from the URL

    def configs(self) -> list[RunConfig]:
        return [self.config.replace(variant=name) for name in self.variants]


def language_ui() -> str:
    """The language switch (applies at once, outside the settings form)."""
    _init_state()
    st.sidebar.selectbox("Language · 语言", list(LANGUAGES), format_func=LANGUAGES.get, key="lang")
    return language()


def _request_run(label: str) -> None:
    st.session_state[_RUN_REQUEST] = label  # the page whose button it was


def device_options() -> list[str]:
    return ["auto", "cpu", *(f"gpu:{gpu.index}" for gpu in cached_device_report().gpus)]


@st.cache_resource(max_entries=1, show_spinner=False)
def visible_devices() -> list[str]:
    """Every device this server's TensorFlow sees, as replica names: "cpu:0", "cpu:1" (logical
    CPU devices, HIERLSTM_LOGICAL_CPUS), "gpu:0", ..."""
    from hierlstm.distribute import local_devices

    return [
        f"{kind.lower()}:{index}"
        for kind in ("CPU", "GPU")
        for index in range(len(local_devices(kind)))
    ]


@st.cache_resource(max_entries=1, show_spinner=False)
def start_devices() -> str:
    """Splits the CPU into HIERLSTM_LOGICAL_CPUS logical devices, once, before TensorFlow's
    runtime starts (app.py calls this first); "" or why it could not."""
    from hierlstm.distribute import ensure_logical_cpus_from_environment

    try:
        ensure_logical_cpus_from_environment()
    except (ValueError, RuntimeError) as error:
        return str(error)
    return ""


def _number(container, name: str) -> None:
    low, high = limits_of(name)
    container.number_input(
        text(f"control.{name}"), low, high, step=1, key=name, help=text(f"control.{name}.help")
    )


def controls_ui(action: Action) -> Controls:
    """The shared sidebar settings form; its one button applies the settings and runs the page.

    Widgets hold their values in `st.session_state` under the keys of `DEFAULTS`. The button
    is disabled during a heavy run; it is re-enabled by the rerun that follows the run.
    """
    _init_state()
    state = st.session_state
    # The request stays in the session until the page has done its work (`start_run`) or has
    # finished (`end_of_run`): a run that Streamlit stops half-way, e.g. for the second click
    # of a double click, is not lost. A request made on another page is dropped, not run here.
    requested = state.get(_RUN_REQUEST) == action.label
    if not requested:
        state.pop(_RUN_REQUEST, None)
    state[_CURRENT_ACTION] = action.label
    with st.sidebar.form("controls", border=False):
        st.multiselect(
            text("control.variants"),
            list(VARIANTS),
            key="variants",
            help=text("control.variants.help"),
            placeholder=text("control.variants.placeholder"),
        )
        left, right = st.columns(2)
        _number(left, "time_steps")
        _number(right, "batch_size")
        left, right = st.columns(2)
        left.selectbox(
            text("control.precision"),
            PRECISIONS,
            key="precision",
            help=text("control.precision.help"),
        )
        right.selectbox(
            text("control.lstm_kernel"),
            LSTM_KERNELS,
            key="lstm_kernel",
            format_func=lambda name: text(f"kernel.{name}"),
            help=text("control.lstm_kernel.help"),
        )
        left, right = st.columns(2, vertical_alignment="bottom")
        left.selectbox(
            text("control.device"),
            device_options(),
            key="device",
            help=text("control.device.help"),
        )
        right.checkbox(text("control.xla"), key="xla", help=text("control.xla.help"))
        left, right = st.columns(2)
        left.selectbox(
            text("control.strategy"),
            APP_STRATEGIES,
            key="strategy",
            format_func=lambda name: text(f"strategy.{name}"),
            help=text("control.strategy.help"),
        )
        right.multiselect(
            text("control.devices"),
            visible_devices(),
            key="devices",
            help=text("control.devices.help", devices=", ".join(visible_devices())),
            placeholder=text("control.devices.placeholder"),
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
            on_click=_request_run,
            args=(action.label,),
            disabled=requested and action.heavy,
            width="stretch",
        )
    controls = _controls_from_state(requested)
    _write_query({name: state.get(name, default) for name, default in DEFAULTS.items()})
    if requested:
        state[_URL_WARNINGS] = []  # the user has acted on them
    state[_CONTROLS] = controls
    state[_SAVED_VALUES] = {name: state[name] for name in DEFAULTS if name in state}
    return controls


def _controls_from_state(requested: bool) -> Controls:
    state = st.session_state
    variants = tuple(name for name in state.get("variants", ()) if name in VARIANTS)
    if not variants:
        st.sidebar.warning(text("control.variants.none", default=", ".join(DEFAULT_VARIANTS)))
        variants = DEFAULT_VARIANTS
    values = {name: state[name] for name in CONFIG_FIELDS}
    values.update({name: int(values[name]) for name in NUMERIC if name in values})
    if values["strategy"] == "mirrored":  # the replicas are the devices; Device is not used
        if values["device"] != "auto":
            st.sidebar.caption(text("control.strategy.device_unused", device=values["device"]))
            values["device"] = "auto"
        values["devices"] = ",".join(state.get("devices", ()))
    try:
        config = RunConfig(variant=variants[0], **values)
        state["_last_config"] = config
    except ValueError as error:
        st.sidebar.error(text("control.invalid", reason=str(error)))
        config = state.get("_last_config", RunConfig()).replace(variant=variants[0])
        requested = False
    ok, message = precision_supported(config.precision, config.device)
    if message:
        (st.sidebar.caption if ok else st.sidebar.error)(_precision_message(config, message))
    return Controls(
        config=config,
        variants=variants,
        language=language(),
        warmup=int(state["warmup"]),
        repeats=int(state["repeats"]),
        run=requested,
        url_warnings=tuple(state.get(_URL_WARNINGS, ())),
    )


def _precision_message(config: RunConfig, message: str) -> str:
    if language() == "en":
        return "⚠️ " + message
    kind = "cpu" if resolve_device(config.device).startswith("/CPU") else "gpu"
    return "⚠️ " + text(f"precision.slow.{kind}", precision=config.precision)


def current_controls() -> Controls:
    """The controls of this script run (set by `controls_ui` in app.py before the page runs)."""
    controls = st.session_state.get(_CONTROLS)
    if controls is None:  # a page run on its own, outside app.py
        controls = controls_ui(Action("run.apply", heavy=False))
    return controls


# --- banner -------------------------------------------------------------------------------


@st.cache_resource(max_entries=1, show_spinner=False)
def cached_device_report():
    return device_report()


def cudnn_status() -> str:
    report = cached_device_report()
    if not report.cuda_build:
        return text("banner.cudnn.no_cuda")
    if not report.gpus:
        return text("banner.cudnn.no_gpu")
    return text("banner.cudnn.yes", version=report.cudnn_version or "?", gpus=len(report.gpus))


def strategy_status(config: RunConfig) -> str:
    """The strategy in use, in words: "none (one device)" or "mirrored, 2 replicas × 2"."""
    if config.strategy == "none":
        return text("banner.strategy.none")
    from hierlstm import distribute

    try:
        run_plan = distribute.plan(config)
    except (ValueError, RuntimeError) as error:
        return text("banner.strategy.invalid", strategy=config.strategy, error=first_line(error))
    return text(
        "banner.strategy.mirrored",
        label=run_plan.label,
        replicas=run_plan.replicas,
        batch=run_plan.per_replica_batch,
    )


def banner(controls: Controls) -> None:
    """Versions, the device and strategy in use and whether cuDNN is available (and why not),
    on every page."""
    report = cached_device_report()
    config = controls.config
    try:
        device = report.device_label(resolve_device(config.device))
    except ValueError as error:
        device = str(error)
    if config.strategy != "none":
        device = text("banner.device.replicas")
    with st.container(border=True, key="banner"):
        st.markdown(
            text(
                "banner.line",
                tensorflow=report.tensorflow,
                keras=report.keras,
                device=device,
                strategy=strategy_status(config),
                cudnn=cudnn_status(),
            )
        )
    if problem := start_devices():
        st.error(text("banner.devices_failed", error=problem), icon=":material/memory:")
    for name, value, reason in controls.url_warnings:
        st.warning(
            text("url.rejected", name=name, value=value, reason=reason), icon=":material/link_off:"
        )


# --- cached compute -------------------------------------------------------------------------


def _trace_key(config: RunConfig) -> RunConfig:
    """Settings that cannot change a trace's shapes are normalised, so they share one entry."""
    return config.replace(xla=False, device="auto", lstm_kernel="auto")


def _model_key(config: RunConfig) -> RunConfig:
    # Batch and time are symbolic in every model except a static-time variant's.
    static = VARIANTS[config.variant].static_time
    return _trace_key(config).replace(batch_size=1, time_steps=config.time_steps if static else 1)


@st.cache_resource(max_entries=16, show_spinner=False)
def _cached_model(config: RunConfig):
    """A built model (Keras's random weights; only its structure is read) and its lock."""
    return build_model(config), threading.Lock()


@st.cache_resource(max_entries=64, show_spinner=False)
def _cached_trace(config: RunConfig) -> tuple:
    from hierlstm.trace import trace_shapes

    model, lock = _cached_model(_model_key(config))
    with lock:
        return tuple(trace_shapes(config, model))


def trace(config: RunConfig) -> tuple:
    """The TraceSteps of `config` (cached); symbolic and concrete shapes, no timing."""
    return _cached_trace(_trace_key(config))


def trace_problem(config: RunConfig) -> str:
    """Why tracing `config` would take too long ("" if it will not): the trace budget of
    `hierlstm.limits`, in the session's language."""
    try:
        check_trace_budget(config)
    except LimitError:
        return text(
            "trace.static_too_long",
            variant=config.variant,
            limit=current_limits().trace_budget_steps,
            time=config.time_steps,
            seconds=config.time_steps * TRACE_SECONDS_PER_CALL,
        )
    return ""


def model_lstms(config: RunConfig) -> list[tuple[str, str, object]]:
    """(path, kind, layer) of every LSTM in the variant's model: kind "layer" for a Keras
    `LSTM` (cuDNN-eligible), "cell" for an `RNN(LSTMCell)` or a custom cell's LSTM."""
    import keras

    from hierlstm.layers import NestedCell, VectorizedSummariser

    model, _ = _cached_model(_model_key(config))
    found = []

    def visit(layer, prefix):
        path = f"{prefix}{layer.name}"
        if isinstance(layer, keras.layers.LSTM):
            found.append((path, "layer", layer))
        elif isinstance(layer, keras.layers.RNN):
            if isinstance(layer.cell, NestedCell):
                found.append(
                    (f"{path}/{layer.cell.name}/inner_lstm", "cell", layer.cell.inner_lstm)
                )
                found.append(
                    (f"{path}/{layer.cell.name}/outer_cell", "cell", layer.cell.outer_cell)
                )
            else:
                found.append((path, "cell", layer))
        elif isinstance(layer, keras.layers.TimeDistributed):
            visit(layer.layer, path + "/")
        elif isinstance(layer, VectorizedSummariser):
            visit(layer.inner_lstm, path + "/")

    for layer in model.layers:
        visit(layer, "")
    return found


def lstm_kernel_rows(frame: pd.DataFrame, configs: Sequence[RunConfig]) -> pd.DataFrame:
    """The LSTM kernel that ran, per LSTM of every measured variant, and why. `frame` is a
    `CompareResult.to_frame()`, `configs` the configs it measured, in its row order (the frame's
    `device` column holds the resolved device, so its rows cannot rebuild their configs)."""
    report = cached_device_report()
    rows = []
    for record, config in zip(frame.to_dict("records"), configs, strict=True):
        if record.get("status") != "ok":
            continue
        for path, kind, _layer in model_lstms(config):
            if kind == "cell":
                ran, why = "generic", text("kernel.why.cell")
            elif record["kernel"] == "cudnn":
                ran, why = "cudnn", text("kernel.why.cudnn")
            elif config.lstm_kernel == "generic" or config.device == "cpu":
                ran, why = "generic", text("kernel.why.requested")
            elif not report.cuda_build:
                ran, why = "generic", text("kernel.why.no_cuda")
            elif not report.gpus:
                ran, why = "generic", text("kernel.why.no_gpu")
            else:
                ran, why = "generic", text("kernel.why.other")
            rows.append(
                {
                    text("kernel.col.variant"): config.variant,
                    text("kernel.col.lstm"): path,
                    text("kernel.col.kind"): text(f"kernel.kind.{kind}"),
                    text("kernel.col.ran"): ran,
                    text("kernel.col.why"): why,
                }
            )
    return pd.DataFrame(rows)


@st.cache_resource(max_entries=8, show_spinner=False)
def _sharing_models(units: int, rows: int, features: int) -> dict:
    from hierlstm.sharing import FORMS, build_pair

    return {form: (build_pair(form, units, rows, features), threading.Lock()) for form in FORMS}


@st.cache_resource(max_entries=16, show_spinner=False)
def sharing_reports(units: int, rows: int, features: int, sequences: int) -> dict:
    """Per form, the live SharingReport on (sequences, rows, features) inputs (cached)."""
    from hierlstm.sharing import pair_inputs, sharing_report

    inputs = pair_inputs(sequences, rows, features)
    reports = {}
    for form, (model, lock) in _sharing_models(units, rows, features).items():
        with lock:
            reports[form] = sharing_report(model, inputs)
    return reports


@st.cache_resource(max_entries=4, show_spinner=False)
def pitfall_outcomes(outer_units: int) -> tuple:
    """The answer's TimeDistributed model at unknown length, run live at (batch, time) =
    (2, 4), (5, 4) and (4, 4): wrong shape, an error, and the one case that is right."""
    from hierlstm.pitfalls import time_distributed_unknown_length

    config = RunConfig(outer_units=outer_units)
    return tuple(
        time_distributed_unknown_length(batch, time, config=config)
        for batch, time in ((2, 4), (5, 4), (4, 4))
    )


@st.cache_resource(max_entries=4, show_spinner=False)
def _store(path: str) -> ResultStore:
    return ResultStore(path)


def result_store() -> ResultStore:
    """The results file ($HIERLSTM_DB, else the XDG default), one instance per path."""
    return _store(str(default_path()))


# --- runs ---------------------------------------------------------------------------------

Progress = Callable[[float, str], None]


def run_problem(configs: Sequence[RunConfig]) -> str:
    """Why these configs should not be timed on this server ("" if they may), from
    `hierlstm.limits` (batch, time, trace and activation-memory budgets)."""
    for config in configs:
        try:
            check_limits(config)
        except LimitError as error:
            return text("run.over_limit", reason=str(error))
    return ""


@dataclasses.dataclass(frozen=True)
class Workload:
    """What a run will time, for its estimate: one config per `benchmark` call (a sweep's
    points expanded) and the calls of each."""

    runs: tuple[RunConfig, ...]
    warmup: int
    repeats: int


@st.cache_resource(max_entries=64, show_spinner=False)
def _step_cost(key: RunConfig):
    """This machine's measured cost of one variant and setting (`hierlstm.estimate`)."""
    from hierlstm.estimate import calibrate

    return calibrate(key)


def estimate_seconds(workload: Workload, progress: Progress) -> float:
    """The workload's estimated duration: the cost model times this machine's measured cost
    per step (measured once per variant and setting, while the device lock is held). A
    setting that cannot even be calibrated counts as 0 here: its run fails fast and says why."""
    from hierlstm.estimate import calibration_key, run_seconds

    total = 0.0
    for config in workload.runs:
        progress(0.0, text("run.calibrating", variant=config.variant))
        try:
            step_cost = _step_cost(calibration_key(config))
        except Exception:
            continue
        total += run_seconds(config, step_cost, warmup=workload.warmup, repeats=workload.repeats)
    return total


def _lock_keys(configs: Sequence[RunConfig]) -> set[str]:
    from hierlstm.runlock import device_keys

    return {key for config in configs for key in device_keys(config)}


def start_run(
    key: str,
    work: Callable[[Progress], Any],
    configs: Sequence[RunConfig],
    workload: Workload | None = None,
) -> None:
    """Runs `work(progress)` now, keeps its result in the session under `key` (or its one-line
    error under `key + ":error"`), then reruns so the page shows it and the Run button is
    enabled again.

    Only one run per device at a time in the whole server (`hierlstm.runlock`): a run on a
    busy device shows that it is waiting, and the wait is over before anything is timed. With
    a `workload` whose estimate is over HIERLSTM_CONFIRM_SECONDS, nothing runs: the page asks
    for confirmation (`show_run_outcome`), and the confirmed rerun runs it.
    """
    from hierlstm import runlock

    state = st.session_state
    bar = st.progress(0.0, text=text("run.starting"))

    def progress(fraction: float, message: str) -> None:
        bar.progress(min(1.0, max(0.0, float(fraction))), text=message)

    def waiting(holder: str, seconds: float) -> None:  # a Streamlit call: a rerun stops us here
        progress(0.0, text("run.waiting", holder=holder, seconds=seconds))

    confirmed = state.pop(_CONFIRMED, None) == (key, workload)
    try:
        state.pop(_RUN_REQUEST, None)
        for suffix in (":error", ":confirm"):
            state.pop(key + suffix, None)
        try:
            keys = _lock_keys(configs)
        except ValueError as error:  # a device this machine does not have
            state[key + ":error"] = text("run.failed", error=error_line(error))
            keys = None
        if keys is not None:
            with runlock.hold(keys, name=text(f"lock.{key}"), on_wait=waiting):
                try:
                    limit = current_limits().confirm_seconds
                    seconds = 0.0
                    if workload is not None and not confirmed:
                        seconds = estimate_seconds(workload, progress)
                    if seconds > limit:
                        state[key + ":confirm"] = (workload, seconds, limit)
                    else:
                        state[key] = work(progress)
                except Exception as error:  # a run's failure is a message, never a traceback
                    state[key + ":error"] = text("run.failed", error=error_line(error))
    except RerunException:
        # Streamlit stops a running script when the browser asks for a rerun: the second click
        # of a double click, a language switch. Ask again, so the rerun does this work (once)
        # if it is on the same page, instead of dropping the run the user asked for.
        state[_RUN_REQUEST] = state.get(_CURRENT_ACTION)
        if confirmed:
            state[_CONFIRMED] = (key, workload)
        raise
    st.rerun()


def _confirm(key: str, workload: Workload) -> None:
    st.session_state.pop(key + ":confirm", None)
    st.session_state[_CONFIRMED] = (key, workload)
    _request_run(st.session_state.get(_CURRENT_ACTION))


def _cancel(key: str) -> None:
    st.session_state.pop(key + ":confirm", None)


def end_of_run() -> None:
    """Called by app.py when a page has run to its end: a Run request the page did not take
    (nothing heavy to do, or the run was refused) is spent."""
    st.session_state.pop(_RUN_REQUEST, None)


def show_run_outcome(key: str) -> None:
    """The last run's one-line error, or the question a long run is waiting on."""
    state = st.session_state
    if message := state.get(key + ":error"):
        st.error(message, icon=":material/error:")
    if pending := state.get(key + ":confirm"):
        workload, seconds, limit = pending
        with st.container(border=True, key=f"{key}-confirm"):
            st.warning(
                text("run.confirm", seconds=seconds, limit=limit, runs=len(workload.runs)),
                icon=":material/hourglass_top:",
            )
            left, right, _ = st.columns([1, 1, 3])
            left.button(
                text("run.confirm.yes", seconds=seconds),
                key=f"{key}-confirm-yes",
                type="primary",
                on_click=_confirm,
                args=(key, workload),
            )
            right.button(
                text("run.confirm.no"), key=f"{key}-confirm-no", on_click=_cancel, args=(key,)
            )


def store_results(results) -> int:
    store = result_store()
    for result in results:
        store.add(result)
    return len(results)


@dataclasses.dataclass(frozen=True)
class BenchmarkOutcome:
    frame: pd.DataFrame  # CompareResult.to_frame()
    configs: tuple  # the RunConfigs measured, in the frame's row order
    baseline: str
    breakdown: pd.DataFrame | None
    breakdown_variant: str
    breakdown_error: str
    stored: int
    settings: dict  # the controls it ran with, to say when they have changed since


def settings_of(controls: Controls) -> dict:
    return {
        "variants": controls.variants,
        "config": controls.config,
        "warmup": controls.warmup,
        "repeats": controls.repeats,
    }


def run_benchmark(controls: Controls, breakdown_variant: str, progress: Progress):
    configs = controls.configs()
    baseline = controls.variants.index("nested") if "nested" in controls.variants else 0
    result = compare(
        configs,
        warmup=controls.warmup,
        repeats=controls.repeats,
        baseline=baseline,
        on_progress=lambda f, m: progress(0.8 * f, m),
    )
    stored = store_results(result.results)
    breakdown, breakdown_error = None, ""
    try:
        breakdown = layer_breakdown(
            controls.config.replace(variant=breakdown_variant),
            warmup=controls.warmup,
            repeats=controls.repeats,
            on_progress=lambda f, m: progress(0.8 + 0.2 * f, f"{breakdown_variant}: {m}"),
        )
    except Exception as error:
        breakdown_error = error_line(error)
    return BenchmarkOutcome(
        frame=result.to_frame(),
        configs=tuple(configs),
        baseline=controls.variants[baseline],
        breakdown=breakdown,
        breakdown_variant=breakdown_variant,
        breakdown_error=breakdown_error,
        stored=stored,
        settings=settings_of(controls),
    )


def _each_variant(configs: Sequence[RunConfig], progress: Progress, measure) -> pd.DataFrame:
    """`measure(config, on_progress)` for each config, the progress bar split evenly between
    them and prefixed with the variant; their frames in one."""
    frames = []
    for index, config in enumerate(configs):
        start, end = index / len(configs), (index + 1) / len(configs)
        frames.append(
            measure(
                config,
                lambda f, m, s=start, e=end, v=config.variant: progress(
                    s + (e - s) * f, f"{v}: {m}"
                ),
            )
        )
    return pd.concat(frames, ignore_index=True)


def run_sweeps(controls: Controls, axis: str, values: Sequence[int], progress: Progress):
    """Every selected variant swept over `axis`; each point is stored as it finishes."""
    store = result_store()
    frame = _each_variant(
        controls.configs(),
        progress,
        lambda config, on_progress: sweep(
            config,
            axis,
            values,
            warmup=controls.warmup,
            repeats=controls.repeats,
            on_progress=on_progress,
            on_point=store.add,
        ),
    )
    return {"frame": frame, "axis": axis, "settings": settings_of(controls)}


def replica_configs(controls: Controls) -> list[RunConfig]:
    """The selected variants as one replica's run: the sidebar's batch is each replica's."""
    return [config.replace(strategy="mirrored", device="auto") for config in controls.configs()]


def run_replica_sweeps(controls: Controls, counts: Sequence[int], progress: Progress):
    """Every selected variant on 1, 2, ... mirrored replicas (weak scaling); each measured
    count is stored as it finishes."""
    from hierlstm.bench import replica_sweep

    store = result_store()

    def measure(config, on_progress):
        frame = replica_sweep(
            config,
            counts,
            warmup=controls.warmup,
            repeats=controls.repeats,
            on_progress=on_progress,
            on_point=store.add,
        )
        return frame.assign(variant=config.variant)[["variant", *frame.columns]]

    frame = _each_variant(replica_configs(controls), progress, measure)
    return {"frame": frame, "axis": "replicas", "settings": settings_of(controls)}


def parse_values(raw: str, axis: str) -> tuple[list[int], str]:
    """Sweep values from text ("10, 20, 50"): 2 to 12 distinct whole numbers in the app's
    limits, sorted; or ([], a one-line problem)."""
    parts = [part for part in raw.replace(",", " ").split() if part]
    low, high = limits_of(axis)
    if not all(part.isdigit() for part in parts):
        return [], text("scaling.values.bad", low=low, high=high)
    values = sorted({int(part) for part in parts})
    if not 2 <= len(values) <= 12 or values[0] < low or values[-1] > high:
        return [], text("scaling.values.bad", low=low, high=high)
    return values, ""


# --- display helpers -------------------------------------------------------------------------

_PLOTLY_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"format": "png", "scale": 2}}


def chart(figure, data: pd.DataFrame | None, key: str) -> None:
    """A plotly figure (PNG from its toolbar's camera button) and its data as CSV."""
    config = dict(_PLOTLY_CONFIG)
    config["toImageButtonOptions"] = {
        **config["toImageButtonOptions"],
        "filename": f"hierlstm-{key}",
    }
    st.plotly_chart(figure, key=key, theme="streamlit", config=config, width="stretch")
    if data is not None:
        st.download_button(
            text("download.chart_csv"),
            data.to_csv(index=False),
            file_name=f"hierlstm-{key}.csv",
            mime="text/csv",
            key=f"{key}-csv",
            type="tertiary",
            icon=":material/download:",
            on_click="ignore",
        )


def table(frame: pd.DataFrame, key: str, static: bool = False, **options) -> None:
    """A read-only table inside a keyed container (a display-only table keeps no key, so tests
    find it through its container). `static`: every cell shown in full, text wrapped (for
    short tables of sentences); otherwise a scrollable, sortable, downloadable grid."""
    with st.container(key=key):
        if static:
            st.table(frame, hide_index=True, **options)
        else:
            st.dataframe(frame, hide_index=True, **options)


def shape_text(shape) -> str:
    return "(" + ", ".join("None" if size is None else str(size) for size in shape) + ")"


def step_note(step, config: RunConfig) -> str:
    """The step's one-line explanation in the session's language (the library's own in
    English; the catalogue's, filled from the config, otherwise)."""
    if language() == "en":
        return step.note
    values = {
        "batch": config.batch_size,
        "time": config.time_steps,
        "rows": config.rows,
        "height": config.height,
        "filters": config.filters,
        "kernel": config.kernel_size,
        "pool": config.pool_height,
        "inner": config.inner_units,
        "outer": config.outer_units,
        "folded": config.batch_size * config.time_steps,
        "chain": config.time_steps * config.rows + config.time_steps,
    }
    for key in (f"note.{config.variant}/{step.path}", f"note.{step.path}"):
        if has_text(key, language()):
            return text(key, **values)
    return step.note


def trace_table(steps, config: RunConfig) -> pd.DataFrame:
    """One row per step: symbolic beside concrete shape, axes, calls, params, FLOPs, bytes."""
    rows = []
    for step in steps:
        rows.append(
            {
                text("trace.col.step"): ("    └ " if step.depth else "") + step.path,
                text("trace.col.layer"): step.layer,
                text("trace.col.symbolic"): shape_text(step.symbolic_shape),
                text("trace.col.concrete"): shape_text(step.concrete_shape),
                text("trace.col.axes"): " · ".join(
                    " × ".join(text("axis." + part) for part in axis.split("*"))
                    for axis in step.axes
                ),
                text("trace.col.note"): step_note(step, config),
                text("trace.col.calls"): step.calls,
                text("trace.col.params"): step.params,
                text("trace.col.mflops"): round(step.flops / 1e6, 3),
                text("trace.col.kib"): round(step.output_bytes / 1024, 1),
            }
        )
    return pd.DataFrame(rows)


def related_sources(function) -> list[tuple[str, str]]:
    """(name, source) of `function` and of the hierlstm functions and classes it uses, read
    from the running code: what is shown is what runs."""
    seen, order = set(), []

    def visit(obj, depth):
        if obj in seen or depth > 2:
            return
        seen.add(obj)
        order.append(obj)
        code = getattr(obj, "__code__", None)
        if code is None:
            return
        module_globals = getattr(obj, "__globals__", {})
        for name in code.co_names:
            found = module_globals.get(name)
            if (inspect.isfunction(found) or inspect.isclass(found)) and getattr(
                found, "__module__", ""
            ).startswith("hierlstm."):
                visit(found, depth + 1)

    visit(function, 0)
    return [(f"{obj.__module__}.{obj.__qualname__}", inspect.getsource(obj)) for obj in order]


def device_name(device: str) -> str:
    """ "CPU (x86_64, 2 cores)" for a stored device string such as "/CPU:0 (x86_64, 2 cores)"."""
    try:
        return cached_device_report().device_label(device.split(" ")[0])
    except ValueError:  # a GPU this machine does not have (an imported result)
        return device


def format_ms(seconds: float) -> str:
    return "—" if seconds is None or math.isnan(seconds) else f"{seconds * 1e3:.3g} ms"

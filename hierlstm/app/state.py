"""The settings and the URL: the settings' defaults, the Backend choice (variants x backends),
the URL parameters that set them (a bad value is replaced by the default with a one-line
warning), the message text in the session's language, and the bounds the app accepts for each
number. The session object beside the widgets is `hierlstm.app.session`'s."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import streamlit as st

from hierlstm.admission import max_sizes
from hierlstm.app.devices import visible_devices
from hierlstm.config import (
    BOUNDS,
    QUICK_TIMING,
    RunConfig,
    SettingError,
    Timing,
    named_sizes,
    out_of_bounds,
)
from hierlstm.i18n import DEFAULT_LANGUAGE, LANGUAGES, MESSAGES, t
from hierlstm.registry import BACKEND_RECORDS, BACKENDS, VARIANTS

GEOMETRY = ("height", "filters", "kernel_size", "pool_height", "inner_units", "outer_units")
# The RunConfig fields the sidebar controls (and the URL may set). `devices`, the mirrored
# replicas, is a list in the session (a multiselect) and a comma-separated string in RunConfig.
CONFIG_FIELDS = (
    "time_steps",
    "batch_size",
    "precision",
    "task",
    "optimizer",
    "xla",
    "lstm_kernel",
    "device",
    "strategy",
    *GEOMETRY,
)
# multi_worker needs a cluster started before TensorFlow runs: the command line's `worker`.
APP_STRATEGIES = ("none", "mirrored")
MAX_REPLICAS = 16
DEFAULT_VARIANTS = tuple(name for name in ("nested", "folded", "fused") if name in VARIANTS)
DEFAULT_BACKENDS = ("tensorflow",)  # the others run in worker processes (hierlstm.backends)
TIMING_FIELDS = tuple(field.name for field in dataclasses.fields(Timing) if field.name != "seed")
DEFAULTS: dict[str, Any] = {
    **{name: getattr(RunConfig(), name) for name in CONFIG_FIELDS},
    "devices": [],
    "variants": list(DEFAULT_VARIANTS),
    "backends": list(DEFAULT_BACKENDS),
    **{name: getattr(QUICK_TIMING, name) for name in TIMING_FIELDS},
    "lang": DEFAULT_LANGUAGE,
}
NUMERIC = tuple(name for name, value in DEFAULTS.items() if type(value) is int)
LISTS = ("variants", "backends", "devices")  # comma-separated in a link
# A setting whose URL parameter has another name: the link says backend=jax,torch.
URL_NAMES = {"backends": "backend"}
SETTING_OF = {url: name for name, url in URL_NAMES.items()}
# A page's own input beside the sidebar's form is applied by the Run button, as the form's are,
# without a rerun of its own: a rerun reaching the server while the click's run starts drops that
# run's widget states, the click with them.
APPLIED_ON_RUN = "ignore"


FORM_FIELDS = tuple(name for name in DEFAULTS if name != "lang")  # lang is outside the form


# --- language ----------------------------------------------------------------------------


def language() -> str:
    return st.session_state.get("lang", DEFAULT_LANGUAGE)


def text(key: str, **values) -> str:
    """The catalogue message `key` in the session's language."""
    return t(key, language(), **values)


def labeller(prefix: str) -> Callable[[str], str]:
    """A widget's `format_func`: the catalogue's `prefix + option` in the language of the run
    that draws the widget (AppTest calls it outside any script run, where the session's
    language cannot be read)."""
    return functools.partial(_label, prefix, language())


def _label(prefix: str, lang: str, option: str) -> str:
    return t(prefix + option, lang)


def variant_title(name: str) -> str:
    return text(VARIANTS[name].title_key)


def lead(key: str, config, prefix: str = "") -> None:
    """A paragraph a page shows at once, kept short, after `prefix`; its detail (`KEY.more`,
    where the catalogue has one) in an expander below it. Both name the config's sizes."""
    sizes = named_sizes(config)
    st.markdown(prefix + text(key, **sizes))
    if f"{key}.more" in MESSAGES:
        with st.expander(text("frame.more")):
            st.markdown(text(f"{key}.more", **sizes))


# --- the Backend choice -------------------------------------------------------------------
# Where each backend runs is its registry record's (`hierlstm.backends.dispatch`): TensorFlow in
# the server's process; JAX and torch each in a worker process, where every config of a run with
# them goes. When no chosen backend has a selected variant, they run on the first backend that
# has every variant.
EVERY_VARIANT = next(b for b in BACKENDS if all(b in v.backends for v in VARIANTS.values()))


def runs_here(config: RunConfig) -> bool:
    """Whether `config`'s backend runs in the server's own process (its registry record)."""
    return BACKEND_RECORDS[config.backend].in_process


@functools.cache
def backend_missing(name: str) -> str | None:
    """None when backend `name`'s packages are installed, else one English sentence naming
    what is missing and how to get it (`hierlstm.backends.missing`, which imports nothing).
    Asked once per server: the sidebar asks on every rerun, and looking for a package is a
    search of the import path (a package installed while the app serves is seen after a
    restart, as its imports would be)."""
    from hierlstm.backends import missing

    return missing(name)


@dataclasses.dataclass(frozen=True)
class Choice:
    """What the sidebar's Variants and Backend give: the (variant, backend) pairs to time,
    variant-major, and the variants left out of a chosen backend (variant -> its backends)."""

    pairs: tuple[tuple[str, str], ...]
    left_out: dict[str, tuple[str, ...]]
    backends: tuple[str, ...]  # the chosen backends that are installed, in BACKENDS order
    fallback: bool = False  # no variant had a chosen backend: they run on TensorFlow instead


def choose(variants: Sequence[str], backends: Iterable[str]) -> Choice:
    """Every selected variant on every chosen backend it has (registry `Variant.backends`).

    `backends` must be installed ones. When no pair is left (every variant lacks every chosen
    backend), the variants run on TensorFlow, which has them all, and `left_out` says why.
    """
    chosen = tuple(name for name in BACKENDS if name in set(backends)) or (EVERY_VARIANT,)
    pairs = tuple(
        (variant, backend)
        for variant in variants
        for backend in chosen
        if backend in VARIANTS[variant].backends
    )
    left_out = {
        variant: VARIANTS[variant].backends
        for variant in variants
        if any(backend not in VARIANTS[variant].backends for backend in chosen)
    }
    if not pairs:
        pairs = tuple((variant, EVERY_VARIANT) for variant in variants)
        return Choice(pairs, left_out, chosen, fallback=True)
    return Choice(pairs, left_out, chosen)


def configs_of(config: RunConfig, choice: Choice) -> tuple[RunConfig, ...]:
    return tuple(config.replace(variant=v, backend=b) for v, b in choice.pairs)


def label(config: RunConfig, several: bool) -> str:
    """A result's name in a chart or a message: its variant, and its backend when a run has
    several ("folded · jax")."""
    return f"{config.variant} · {config.backend}" if several else config.variant


# --- URL <-> controls ----------------------------------------------------------------------


def limits_of(name: str) -> tuple[int, int]:
    """The (lowest, highest) value the app accepts for a numeric control: hierlstm's bounds
    (`hierlstm.config.BOUNDS`), batch and time narrowed to this server's limits."""
    if name == "replicas":
        return 1, MAX_REPLICAS
    low, high = BOUNDS[name]
    return low, min(high, max_sizes().get(name, high))


def _in_limits(name: str, value) -> str:
    return out_of_bounds(name, value, *limits_of(name), scope=" in the app")


# A URL parameter's parser: its raw text (and whether TensorFlow's devices are known) to
# (the control's value, or None when there is none to take; a one-sentence reason, or "").
Parsed = tuple[Any, str]


def _parse_language(raw: str, devices_known: bool) -> Parsed:
    if raw in LANGUAGES:
        return raw, ""
    return None, f"lang must be one of {', '.join(LANGUAGES)}."


def _names(raw: str) -> list[str]:
    return [part.strip() for part in raw.split(",") if part.strip()]


def _parse_names(known: Collection[str], what: str, raw: str, devices_known: bool) -> Parsed:
    """Names from `known` (variants, Keras backends): the known ones are taken even when
    others are not, so one typo keeps the rest. Whether a backend's packages are installed is
    the sidebar's to say, not the link's."""
    names = _names(raw)
    problem = ""
    if not names or any(name not in known for name in names):
        problem = f"{what} must be names from {', '.join(known)}."
    return [name for name in dict.fromkeys(names) if name in known] or None, problem


def _parse_devices(raw: str, devices_known: bool) -> Parsed:
    names = _names(raw)
    try:
        RunConfig(strategy="mirrored", devices=",".join(names))
    except SettingError as error:
        return None, str(error)
    if devices_known and any(name not in visible_devices() for name in names):
        return None, f"devices must be among this server's {', '.join(visible_devices())}."
    return names, ""


def _parse_timing(name: str, raw: str, devices_known: bool) -> Parsed:
    low, high = limits_of(name)
    if raw.strip().isdigit() and low <= int(raw) <= high:
        return int(raw), ""
    return None, f"{name} must be a whole number between {low} and {high}."


def _parse_config_field(name: str, raw: str, devices_known: bool) -> Parsed:
    try:
        value = getattr(RunConfig.from_strings({name: raw}), name)
        if name == "device" and devices_known:
            from hierlstm.hardware import resolve_device  # TensorFlow's devices

            resolve_device(value)  # gpu:3 on a machine with one GPU
    except SettingError as error:
        return None, str(error)
    if name in NUMERIC and (problem := _in_limits(name, value)):
        return None, problem
    if name == "strategy" and value not in APP_STRATEGIES:
        return None, (
            f"the app runs strategy {' or '.join(APP_STRATEGIES)}; {value} runs from the "
            "command line (python -m hierlstm worker)."
        )
    return value, ""


# Every URL parameter the app reads, and its parser; any other parameter is ignored.
PARSERS: dict[str, Callable[[str, bool], Parsed]] = {
    "lang": _parse_language,
    "variants": functools.partial(_parse_names, VARIANTS, "variants"),
    "backend": functools.partial(_parse_names, BACKENDS, "backend"),
    "devices": _parse_devices,
    **{name: functools.partial(_parse_timing, name) for name in TIMING_FIELDS},
    **{name: functools.partial(_parse_config_field, name) for name in CONFIG_FIELDS},
}


def read_query(
    params: Mapping[str, Any], *, devices_known: bool = True
) -> tuple[dict[str, Any], list[tuple[str, str, str]]]:
    """Control values from URL parameters (`PARSERS`), and (name, value, reason) per rejected one;
    an unknown key is ignored, a bad value keeps the default. Without `devices_known`, `device` and
    `devices` are checked for form only; `init_state` checks them later."""
    values: dict[str, Any] = {}
    problems: list[tuple[str, str, str]] = []
    for name, raw in params.items():
        if (parse := PARSERS.get(name)) is None:
            continue
        raw = str(raw[-1] if isinstance(raw, list) else raw)
        value, problem = parse(raw, devices_known)
        if problem:
            problems.append((name, raw, problem))
        if value is not None:
            values[SETTING_OF.get(name, name)] = value
    geometry = {name: values[name] for name in GEOMETRY if name in values}
    try:
        RunConfig(**geometry)
    except SettingError as error:  # each value fine alone, not together (height < pool_height)
        problems.append(
            (
                "height, pool_height",
                f"{geometry.get('height')}, {geometry.get('pool_height')}",
                str(error),
            )
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
        url = URL_NAMES.get(name, name)
        if name in LISTS:
            wanted[url] = ",".join(value)
        elif isinstance(value, bool):
            wanted[url] = str(value).lower()
        else:
            wanted[url] = str(value)
    return wanted


def write_query(values: Mapping[str, Any]) -> None:
    wanted = query_for(values)
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)


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

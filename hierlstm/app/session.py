"""A session beside its widgets, as data: one `Session` under `SESSION` in `st.session_state`
(Streamlit never drops it, as it drops a widget's value a run did not draw), what a new session
takes from its URL (`first_values`) and what every later run puts back or sends again
(`restored`), both pure; `init_state` applies them before any widget is drawn."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import streamlit as st

from hierlstm.app.state import DEFAULTS, FORM_FIELDS, read_query
from hierlstm.config import RunConfig


@dataclasses.dataclass
class Session:
    """What a session keeps beside its widgets' values, as one object under `SESSION` in
    `st.session_state` (Streamlit never drops it, as it drops a widget's value a run did not
    draw). Made by `first_values` on the session's first run, carried by `restored` on every
    later one; the sidebar and `hierlstm.app.runs` read and set its fields."""

    saved_values: dict[str, Any]  # the last run's settings, to put back what Streamlit dropped
    url_warnings: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)
    devices_unchecked: dict[str, str] = dataclasses.field(default_factory=dict)  # the link's
    run_request: str | None = None  # the action whose Run button was pressed
    current_action: str | None = None  # the action of the page this run draws
    resend_settings: bool = False  # a timing run just ended: send the form's values again
    controls: Any = None  # this run's `Controls` (`hierlstm.app.sidebar`)
    last_config: RunConfig | None = None  # the last valid one, kept when a setting is not


SESSION = "_hierlstm"


def session() -> Session:
    """This session's `Session` (`init_state` has made it)."""
    return st.session_state[SESSION]


def first_values(
    params: Mapping[str, str], *, devices_known: bool
) -> tuple[dict[str, Any], Session]:
    """A new session's settings: the defaults, overridden by the URL it was opened with; and its
    `Session`, holding the URL's warnings. Before the server's warm-up has started its devices
    (`devices_known` false), the link's `device` and `devices` are taken as they are and kept
    to be checked on the first run after it (`restored`)."""
    read, problems = read_query(params, devices_known=devices_known)
    values = {name: read.get(name, default) for name, default in DEFAULTS.items()}
    unchecked = (
        {}
        if devices_known
        else {name: params[name] for name in ("device", "devices") if name in read}
    )
    return values, Session(dict(values), list(problems), unchecked)


def restored(
    widgets: Mapping[str, Any], current: Session, *, devices_known: bool
) -> tuple[dict[str, Any], Session]:
    """What a later run assigns to the widgets, and the session after it. A setting missing from
    `widgets` comes back from the last run's copy, since Streamlit drops a widget's value when a run
    ends without drawing it. After a timing run every form setting is assigned again, so Streamlit
    resends it: the browser's form could lose its values during a long run and send the minimums on
    the next Run. A link's device settings are checked once the devices are known."""
    assign, warnings = {}, list(current.url_warnings)
    if devices_known and current.devices_unchecked:
        read, problems = read_query(current.devices_unchecked)
        assign = {name: DEFAULTS[name] for name in current.devices_unchecked.keys() - read.keys()}
        warnings += problems
    for name, default in DEFAULTS.items():
        if name in assign:
            continue
        if name not in widgets:
            assign[name] = current.saved_values.get(name, default)
        elif current.resend_settings and name in FORM_FIELDS:
            assign[name] = widgets[name]  # a new value to Streamlit: sent to the browser
    after = dataclasses.replace(
        current,
        url_warnings=warnings,
        devices_unchecked={} if devices_known else current.devices_unchecked,
        resend_settings=False,
    )
    return assign, after


def init_state(*, devices_known: bool = True) -> None:
    """Every run, before any widget: a new session's settings from its URL (`first_values`),
    a later run's put back or sent again (`restored`)."""
    state = st.session_state
    if SESSION in state:
        values, current = restored(state, state[SESSION], devices_known=devices_known)
    else:
        values, current = first_values(st.query_params.to_dict(), devices_known=devices_known)
    for name, value in values.items():
        state[name] = value
    state[SESSION] = current

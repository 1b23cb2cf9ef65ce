"""A page's timing run inside one Streamlit script run: the server's limits, the device lock
(one timing run per device), the long-run estimate and its confirmation, the progress bar, and
the outcome (or its one-line error) kept in the session until the page shows it."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

try:  # raised inside a running script when the browser asks for a rerun
    from streamlit.runtime.scriptrunner_utils.exceptions import RerunException
except ImportError:  # moved in another Streamlit version: never matches, runs are just dropped
    RerunException = type("RerunException", (BaseException,), {})
from hierlstm.app.sidebar import _request_run
from hierlstm.app.state import _CONFIRMED, _CURRENT_ACTION, _RUN_REQUEST, text
from hierlstm.config import RunConfig
from hierlstm.timing.failures import error_line
from hierlstm.timing.limits import LimitError, check_limits, current_limits

# --- runs ---------------------------------------------------------------------------------

Progress = Callable[[float, str], None]


def run_problem(configs: Sequence[RunConfig]) -> str:
    """Why these configs should not be timed on this server ("" if they may), from
    `hierlstm.timing.limits` (batch, time, trace and activation-memory budgets)."""
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
    """This machine's measured cost of one variant and setting (`hierlstm.timing.estimate`)."""
    from hierlstm.timing.estimate import calibrate

    return calibrate(key)


def estimate_seconds(workload: Workload, progress: Progress) -> float:
    """The workload's estimated duration: the cost model times this machine's measured cost
    per step (measured once per variant and setting, while the device lock is held). A
    setting that cannot even be calibrated counts as 0 here: its run fails fast and says why."""
    from hierlstm.timing.estimate import calibration_key, run_seconds

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
    from hierlstm.timing.runlock import device_keys

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

    Only one run per device at a time in the whole server (`hierlstm.timing.runlock`): a run on a
    busy device shows that it is waiting, and the wait is over before anything is timed. With
    a `workload` whose estimate is over HIERLSTM_CONFIRM_SECONDS, nothing runs: the page asks
    for confirmation (`show_run_outcome`), and the confirmed rerun runs it.
    """
    from hierlstm.timing import runlock

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

"""A page's timing run inside one script run: the server's limits, the device lock, the long-run
estimate and its confirmation (`decide`), the progress bar and the page's `RunSlot`; and the
server-log line when a page's script run ends (`page_run`)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

try:  # raised inside a running script: by the browser's rerun, by the page's st.stop()
    from streamlit.runtime.scriptrunner_utils.exceptions import RerunException, StopException
except ImportError:  # moved in another Streamlit version: never matches, runs are just dropped
    RerunException = type("RerunException", (BaseException,), {})
    StopException = type("StopException", (BaseException,), {})

from hierlstm.admission import Holder, LimitError, check_limits, current_limits, device_keys, hold
from hierlstm.admission.estimate import (
    CalibrationFailed,
    calibrate,
    calibration_key,
    run_seconds,
    seconds_left,
)
from hierlstm.app.session import session
from hierlstm.app.sidebar import request_run
from hierlstm.app.state import language, text
from hierlstm.backends import dispatch
from hierlstm.backends.pool import JobFailed
from hierlstm.backends.protocol import WorkerDied
from hierlstm.config import RunConfig, SettingError, Timing
from hierlstm.timing import RUN_FAILURES, error_line
from hierlstm.timing.basics import no_progress
from hierlstm.timing.failures import first_line

# A run's failure that is one line, never a traceback: TensorFlow's and a worker's (one that died
# mid-run, or a failure that could not cross from it).
FAILURES = (*RUN_FAILURES, JobFailed, WorkerDied)

Progress = Callable[[float, str], None]
# The line a page's ended script run logs; the browser benchmarks wait for it in the server's log.
RUN_ENDED = "script run ended: page=%s session=%s"
_log = logging.getLogger(__name__)


def run_problem(configs: Sequence[RunConfig]) -> str:
    """Why these configs should not be timed on this server ("" if they may), from
    `hierlstm.admission.limits` (batch, time, trace and activation-memory budgets)."""
    for config in configs:
        try:
            check_limits(config)
        except LimitError as error:
            return text("run.over_limit", reason=error.sentence(language()))
    return ""


@dataclasses.dataclass(frozen=True)
class Workload:
    """What a run will time, for its estimate: one config per `benchmark` call (a sweep's
    points expanded) and the calls of each."""

    runs: tuple[RunConfig, ...]
    timing: Timing


@st.cache_resource(max_entries=64, show_spinner=False)
def step_cost(key: RunConfig):
    """This machine's measured cost of one variant and setting (`hierlstm.admission.estimate`),
    measured where runs are (`dispatch.execute`)."""
    cost = dispatch.execute(functools.partial(calibrate, key), no_progress, [key])
    _KNOWN_COSTS[key] = cost
    return cost


def _cost_key(config: RunConfig) -> RunConfig:
    """The calibration that estimates `config`: the home backend's (TensorFlow's) at its
    settings, whichever backend runs it."""
    return calibration_key(config.replace(backend=dispatch.home_backend()))


# The costs measured so far, for an estimate made without the device (`known_estimate`): a run
# waiting in line may not measure one.
_KNOWN_COSTS: dict[RunConfig, Any] = {}


def known_estimate(workload: Workload | None) -> float | None:
    """The workload's estimated seconds from costs already measured, else None."""
    if workload is None:
        return None
    keys = [_cost_key(config) for config in workload.runs]
    if not all(key in _KNOWN_COSTS for key in keys):
        return None
    return sum(
        run_seconds(config, _KNOWN_COSTS[key], workload.timing)
        for config, key in zip(workload.runs, keys, strict=True)
    )


@dataclasses.dataclass(frozen=True)
class Estimate:
    seconds: float  # of the runs that could be calibrated
    unknown: tuple[str, ...] = ()  # "variant: why" for each setting that could not be


def estimate(workload: Workload, progress: Progress) -> Estimate:
    """The workload's estimated duration: the cost model times this machine's cost per step,
    measured on TensorFlow under the device lock (a JAX or torch run uses TensorFlow's cost). A
    setting whose cost cannot be measured is named, never counted as 0 s."""
    total, unknown = 0.0, {}
    for config in workload.runs:
        progress(0.0, text("run.calibrating", variant=config.variant))
        try:
            cost = step_cost(_cost_key(config))
        except CalibrationFailed as failure:
            unknown.setdefault(failure.variant, f"{failure.variant}: {failure.error}")
            continue
        total += run_seconds(config, cost, workload.timing)
    return Estimate(total, tuple(unknown.values()))


@dataclasses.dataclass(frozen=True)
class Pending:
    """A run waiting for the user's yes: what it would time, its estimate, the server's limit."""

    workload: Workload
    estimate: Estimate
    limit: float


@dataclasses.dataclass(frozen=True)
class RunSlot:
    """A page's run in the session (under the page's key): the last result, the last run's
    one-line error, the question a long run is waiting on, and the workload the user said yes
    to (the next run of exactly that workload starts without asking)."""

    result: Any = None
    error: str = ""
    pending: Pending | None = None
    confirmed: Workload | None = None


def slot(key: str) -> RunSlot:
    return st.session_state.get(key) or RunSlot()


def _update(key: str, **changes) -> None:
    st.session_state[key] = dataclasses.replace(slot(key), **changes)


RUN, ASK = "run", "ask"


def decide(guess: Estimate | None, limit: float) -> str:
    """RUN now, or ASK first: a run is asked about when its estimate is over `limit` seconds
    or a setting's cost could not be measured (no estimate is never 0 s). `guess` is None when
    there is nothing to estimate: no workload, or the user has said yes to this one."""
    if guess is None:
        return RUN
    return ASK if guess.unknown or guess.seconds > limit else RUN


def _lock_keys(configs: Sequence[RunConfig]) -> set[str]:
    return {key for config in configs for key in device_keys(config)}


@dataclasses.dataclass(frozen=True)
class Plan:
    """What a page's Run does, described once: the configs it checks against the server's limits
    and locks the devices of, what it executes (`execute(progress)` returns its outcome), and
    what it times, for the estimate (None: a run too short to estimate). It runs where
    `hierlstm.backends.dispatch.execute` says (a worker, so `execute` must pickle). A run that
    sends what it has so far as it goes (`progress(fraction, message, partial)`, a learning
    curve) has it drawn by `shown(partial)`, which returns the progress line to show."""

    configs: tuple[RunConfig, ...]
    execute: Callable[[Progress], Any]
    workload: Workload | None = None
    shown: Callable[[Any], str] | None = None


class _Bar:
    """A run's progress bar: the message, and the time left once the work has started."""

    def __init__(self):
        self.bar = st.progress(0.0, text=text("run.starting"))
        self.started, self.estimate = None, 0.0

    def start(self, estimate: float) -> None:
        self.started, self.estimate = time.monotonic(), estimate

    def __call__(self, fraction: float, message: str) -> None:
        fraction = min(1.0, max(0.0, float(fraction)))
        if self.started is not None:
            left = seconds_left(fraction, time.monotonic() - self.started, self.estimate)
            if left is not None:
                message = text("run.left", message=message, seconds=math.ceil(left))
        self.bar.progress(fraction, text=message)

    def waiting(self, holder: Holder, seconds: float, place: int, workload=None) -> None:
        """In line: who runs, how long this one has waited, its place, and its own estimate
        where the costs are known (a rerun stops the run here)."""
        message = text("run.waiting", holder=holder.describe(language()), seconds=seconds)
        message += " " + text("run.waiting.place", place=place)
        if (guess := known_estimate(workload)) is not None:
            message += " " + text("run.waiting.estimate", seconds=math.ceil(guess))
        self(0.0, message)


def start_run(key: str, plan: Plan) -> None:
    """Runs `plan` now under the device lock, keeps its outcome (or one-line error) in the page's
    `RunSlot`, then reruns so the page shows it and Run is enabled again. A run over the server's
    limits is not run; one whose estimate is over HIERLSTM_CONFIRM_SECONDS or unknown (`decide`)
    waits in the slot for confirmation. Any other exception from the work is a bug: it is logged
    with its traceback and shown as the frame shows a page's, and Run is enabled again."""
    kept = session()
    bar = _Bar()
    confirmed = plan.workload is not None and slot(key).confirmed == plan.workload
    kept.run_request = None
    _update(key, error="", pending=None, confirmed=None)
    try:
        _update(key, **_run(key, plan, confirmed, bar))
    except RerunException:
        # Streamlit stops a running script when the browser asks for a rerun: the second click
        # of a double click, a language switch. Ask again, so the rerun does this work (once)
        # if it is on the same page, instead of dropping the run the user asked for.
        kept.run_request = kept.current_action
        if confirmed:
            _update(key, confirmed=plan.workload)
        raise
    kept.resend_settings = True
    st.rerun()


def _run(key: str, plan: Plan, confirmed: bool, bar: _Bar) -> dict[str, Any]:
    """What the run leaves in its slot: its result, its one-line error, or the question."""
    if problem := run_problem(plan.configs):  # over the server's limits: not run, one line
        return {"error": problem}
    try:
        keys = _lock_keys(plan.configs)
    except SettingError as error:  # a device this machine does not have
        return {"error": text("run.failed", error=error_line(error))}
    waiting = functools.partial(bar.waiting, workload=plan.workload)
    with hold(keys, name=key, program="app", on_wait=waiting):
        try:
            limit = current_limits().confirm_seconds
            asked = plan.workload is not None and not confirmed
            guess = estimate(plan.workload, bar) if asked else None
            if decide(guess, limit) == ASK:
                return {"pending": Pending(plan.workload, guess, limit)}
            bar.start(guess.seconds if guess else 0.0)
            progress = bar if plan.shown is None else _showing(bar, plan.shown)
            return {"result": dispatch.execute(plan.execute, progress, plan.configs)}
        except FAILURES as error:  # the run's failure: one line, never a traceback
            return {"error": text("run.failed", error=error_line(error))}
        except Exception as error:  # our bug: logged whole, one line, Run enabled again
            logging.getLogger("hierlstm.app").exception("run %s failed", key)
            return {"error": text("page.failed", error=first_line(error))}


def _showing(bar: _Bar, shown: Callable[[Any], str]) -> Callable[..., None]:
    """A run's progress that draws what the run sends of itself (`shown`) and shows the line
    `shown` returns for it on the bar."""

    def progress(fraction: float, message: str, partial: Any = None) -> None:
        if partial is not None:
            message = shown(partial)
        bar(fraction, message)

    return progress


def _confirm(key: str, workload: Workload) -> None:
    _update(key, pending=None, confirmed=workload)
    request_run(session().current_action)


def _cancel(key: str) -> None:
    _update(key, pending=None, confirmed=None)


@contextlib.contextmanager
def page_run(name: str):
    """Around a page's script: when its run ends (last line or st.stop()) an untaken Run request is
    spent and RUN_ENDED is logged with the page and session id, what a browser benchmark knows a run
    by. A run a rerun replaces has not ended."""
    kept = session()  # read now: after st.stop(), every Streamlit call raises again
    try:
        yield
    except StopException:
        _ended(name, kept)
        raise
    _ended(name, kept)


def _ended(name: str, kept) -> None:
    kept.run_request = None
    context = get_script_run_ctx(suppress_warning=True)
    _log.info(RUN_ENDED, name, context.session_id if context else "-")


def shown_result(key: str, press_run: str, settings: dict, *, stop: bool = False):
    """The page's last result, after its run's error or question (`show_run_outcome`). Without
    one, `press_run` says what Run would do (and with `stop` the page ends there); a result of
    other `settings` than the sidebar's is marked stale."""
    show_run_outcome(key)
    result = slot(key).result
    if result is None:
        st.info(press_run, icon=":material/play_arrow:")
        if stop:
            st.stop()
    elif result.settings != settings:
        st.info(text("bench.stale"), icon=":material/history:")
    return result


def show_run_outcome(key: str) -> None:
    """The last run's one-line error, or the question a long run is waiting on."""
    current = slot(key)
    if current.error:
        st.error(current.error, icon=":material/error:")
    if pending := current.pending:
        workload, guess, limit = pending.workload, pending.estimate, pending.limit
        runs = len(workload.runs)
        if guess.unknown:
            question = text("run.confirm.unknown", reasons="; ".join(guess.unknown), runs=runs)
            answer = text("run.confirm.yes.unknown")
        else:
            question = text("run.confirm", seconds=guess.seconds, limit=limit, runs=runs)
            answer = text("run.confirm.yes", seconds=guess.seconds)
        with st.container(border=True, key=f"{key}-confirm"):
            st.warning(question, icon=":material/hourglass_top:")
            left, right, _ = st.columns([1, 1, 3])
            left.button(
                answer,
                key=f"{key}-confirm-yes",
                type="primary",
                on_click=_confirm,
                args=(key, workload),
            )
            right.button(
                text("run.confirm.no"), key=f"{key}-confirm-no", on_click=_cancel, args=(key,)
            )

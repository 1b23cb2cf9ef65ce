"""The server's warm-up: once per server process, in a background thread, everything a first visitor
would otherwise wait for: numpy and pandas, TensorFlow and its devices, the pages' modules, the
default page's traces, then (once pages are quiet) the other tabs, the Weight sharing checks, the
Your model page's default example and the default variants' cost per step. app.py starts it from
the server's lifespan so the health check answers at once; until it is `ready` the frame draws
placeholders (`waiting`) and no session imports TensorFlow. Each step runs inside the `Gate`,
in an order checked by `check_order`.

HIERLSTM_WARMUP: "full" (the default), "trace" (no sharing checks or cost measurement) or "off"
(TensorFlow and the devices only). HIERLSTM_WARMUP_AFTER=FILE holds it until FILE exists (at most
10 minutes), so a test can look at a cold server. Imports no TensorFlow and draws nothing."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence

from hierlstm import settings
from hierlstm._native import freeze_what_is_loaded
from hierlstm.app.pages import BY_NAME, PAGES
from hierlstm.app.server.gate import Gate
from hierlstm.app.state import DEFAULT_VARIANTS
from hierlstm.config import RunConfig

LOG = logging.getLogger("hierlstm.app.server.warmup")
MODES = settings.SETTINGS["HIERLSTM_WARMUP"].parse.choices  # full, trace, off
QUIET_S = 3.0  # a step the pages do not wait for waits until no page has started for this long
QUIET_LIMIT_S = 120.0  # ... and for the gate, but no longer than this
_last_page = 0.0  # time.monotonic() when a script run of the frame last started
HOLD_LIMIT_S = 600  # HIERLSTM_WARMUP_AFTER holds the warm-up at most this long
FIRST_VISITOR_LIMIT_S = 5.0  # TensorFlow's import waits for a first visitor's figure this long
FIRST_FIGURE_SETTLE_S = 1.0  # ... and then this long for their browser to draw it


def _check_for_a_repl_once() -> None:
    """Streamlit's once-per-process REPL check (`inspect.stack()`, which resolves the file of
    every loaded module), made here before TensorFlow's thousands of modules are loaded, so no
    visitor's first element pays for it."""
    from streamlit import delta_generator

    check = getattr(delta_generator, "_maybe_print_use_warning", None)  # Streamlit 1.67
    if check is not None:
        check()


def _load_libraries() -> None:
    """numpy and pandas, imported before the frame may draw a chart: plotly takes them from
    sys.modules when they are there (`get_module(..., should_load=False)`), so a chart drawn
    while another thread imports either would find it half-initialised. plotly's own modules
    are imported as usual, under the import lock."""
    _check_for_a_repl_once()
    import numpy  # noqa: F401
    import pandas  # noqa: F401


def _import_tensorflow() -> None:
    from hierlstm._native import import_tensorflow_quietly

    import_tensorflow_quietly()


def _start_devices() -> None:
    from hierlstm.app import devices

    devices.start_devices()  # before anything else starts TensorFlow's runtime
    devices.cached_device_report()
    devices.visible_devices()
    devices.gpu_problems()


def _load_modules() -> None:
    """Every page's module, and what it imports: loading it here keeps a page switch from paying
    for it."""
    from hierlstm.app.pages import PAGES

    for page in PAGES:
        page.module()
    freeze_what_is_loaded()


def _default_configs() -> list[RunConfig]:
    return [RunConfig(variant=name) for name in DEFAULT_VARIANTS]


def page_started() -> None:
    """Called by the frame at the start of every script run: the cost measurement waits for
    the pages to be quiet, so the first visitors' pages are drawn before it takes the CPU."""
    global _last_page
    _last_page = time.monotonic()


def _wait_for_quiet() -> None:
    deadline = time.monotonic() + QUIET_LIMIT_S
    while time.monotonic() - _last_page < QUIET_S and time.monotonic() < deadline:
        time.sleep(0.25)


class _Busy(Exception): ...  # a device the calibration would have to wait for


def _busy(holder, seconds, place) -> None:
    raise _Busy(holder)


def _calibrate_defaults() -> None:
    """The estimate's cost per step for the default variants, under the device lock like any
    timing; left out (a page measures it when it needs it) if a device is busy: it runs inside
    the gate, where waiting for another run would keep every page waiting too."""
    from hierlstm.admission import device_keys, hold
    from hierlstm.admission.estimate import CalibrationFailed, calibration_key
    from hierlstm.app import runs

    configs = [RunConfig(variant=name) for name in DEFAULT_VARIANTS]
    keys = {key for config in configs for key in device_keys(config)}
    try:
        with hold(keys, name="warmup", program="app", on_wait=_busy, poll=0.05):
            for config in configs:
                try:
                    runs.step_cost(calibration_key(config))
                except CalibrationFailed as failure:  # the page says so when it estimates
                    LOG.warning("warm-up: %s", failure)
    except _Busy:
        LOG.info("warm-up: a device is busy; the estimate is measured when a page needs it")


class FirstVisitor:
    """A visitor who reached a fresh server before TensorFlow's import began: the import waits
    until their page has drawn its first figure and their browser has had time to draw it
    (`make_way`). On two cores, the import took one core and half the interpreter while the
    browser loaded and drew the page, and the first figure came at 1.7-2.0x Streamlit's floor
    (benchmarks.first_page and browser_floor); started after the figure was sent, with no time
    to draw it, it still came 1.2 s later than with no import at all. Only the first visitor is
    waited for, and for at most FIRST_VISITOR_LIMIT_S, so a browser that fetches the page and
    never connects costs the warm-up that much at most."""

    def __init__(self):
        self.arrived_at: float | None = None  # time.monotonic() of the first request for the app
        self.figure_drawn = threading.Event()  # set by the cold page (`waiting`)

    def arrived(self) -> None:
        if self.arrived_at is None:
            self.arrived_at = time.monotonic()

    def make_way(self) -> float:
        """Waits while a visitor has arrived and their first figure is not drawn, then
        FIRST_FIGURE_SETTLE_S more for their browser to draw what it was sent; at most
        FIRST_VISITOR_LIMIT_S from their arrival. The seconds waited."""
        if self.arrived_at is None:
            return 0.0
        started = time.monotonic()
        deadline = self.arrived_at + FIRST_VISITOR_LIMIT_S
        if self.figure_drawn.wait(max(0.0, deadline - time.monotonic())):
            time.sleep(max(0.0, min(FIRST_FIGURE_SETTLE_S, deadline - time.monotonic())))
        return time.monotonic() - started


class ArrivalMiddleware:
    """ASGI middleware (app.py adds it to the server): any HTTP request but Streamlit's own
    endpoints (`/_stcore/...`: the health check, the websocket) is a browser loading the app,
    which the warm-up's first visitor is (`FirstVisitor.arrived`)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and "_stcore" not in scope["path"].split("/"):
            server_warmup().first_visitor.arrived()
        await self.app(scope, receive, send)


@dataclasses.dataclass(frozen=True)
class Step:
    key: str  # the catalogue message that says what it does
    run: Callable[[], None]
    needed: bool = True  # pages wait for it; one that is not runs once the pages are quiet
    after: tuple[str, ...] = ()  # the steps it needs done before it


def check_order(steps: Sequence[Step]) -> tuple[Step, ...]:
    """The steps, if they can run in this order: each after the steps it needs, every needed
    step before the first that is not (the pages start there), no step twice; else ValueError
    naming the step."""
    done: set[str] = set()
    optional = ""
    for step in steps:
        if step.key in done:
            raise ValueError(f"warm-up step {step.key} comes twice.")
        if missing := [key for key in step.after if key not in done]:
            raise ValueError(f"warm-up step {step.key} must come after {', '.join(missing)}.")
        if step.needed and optional:
            raise ValueError(
                f"warm-up step {step.key} is needed by the pages, so it must come before "
                f"{optional}, which they do not wait for."
            )
        optional = optional or ("" if step.needed else step.key)
        done.add(step.key)
    return tuple(steps)


def _page_step(name: str, function: str) -> Callable[[], None]:
    """A page module's warm-up function, its module imported when the step runs (after
    TensorFlow's import)."""

    def step() -> None:
        getattr(BY_NAME[name].module(), function)()

    return step


def steps_for(mode: str) -> tuple[Step, ...]:
    """The generic steps (TensorFlow, the devices, every page's module), then each page's own
    steps for `mode` in the page list's order, then the estimate's cost measurement."""
    mode = settings.read("HIERLSTM_WARMUP", {"HIERLSTM_WARMUP": mode})  # the setting's refusal
    steps = [
        Step("warmup.tensorflow", _import_tensorflow),
        Step("warmup.devices", _start_devices, after=("warmup.tensorflow",)),
        Step("warmup.modules", _load_modules, after=("warmup.devices",)),
    ]
    steps += [
        Step(warm.key, _page_step(page.name, warm.function), warm.needed, ("warmup.modules",))
        for page in PAGES
        for warm in page.warm_ups
        if mode in warm.modes
    ]
    if mode == "full":
        steps.append(Step("warmup.calibrate", _calibrate_defaults, False, ("warmup.modules",)))
    return check_order(steps)


def run_step(step: Step, gate: Gate) -> bool:
    """One step inside the gate; one the pages do not wait for first waits until no page has
    started for QUIET_S, and is left out (False; a page computes what it needs) if a page is
    still running QUIET_LIMIT_S later."""
    if not step.needed:
        _wait_for_quiet()
    with gate.warm_up(None if step.needed else QUIET_LIMIT_S) as entered:
        if entered:
            step.run()
        else:
            LOG.info("warm-up: %s left out, the pages were never quiet", step.key)
    return entered


@dataclasses.dataclass(frozen=True)
class Status:
    step: str  # the message key of what it is doing now ("" when done)
    done: int  # needed steps finished
    needed: int
    seconds: float  # since it started
    ready: bool  # every needed step is done: pages may run
    failed: str = ""  # the first line of a step's error (logged with its traceback)


class Warmup:
    """The steps, run once in a daemon thread; `status()` is safe from any thread."""

    def __init__(self, steps: Sequence[Step], libraries: Callable[[], None] = _load_libraries):
        self.steps = check_order(steps)
        self.gate = Gate()  # the frame runs every page inside it
        self._load = libraries  # first, before any step (and before HIERLSTM_WARMUP_AFTER)
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self.charts_drawable = threading.Event()  # the libraries a chart needs are loaded
        self.first_visitor = FirstVisitor()
        self._thread: threading.Thread | None = None
        self._current = self.steps[0].key if self.steps else ""
        self._done, self._failed = 0, ""
        self._started = time.monotonic()

    def start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._started = time.monotonic()
                self._thread = threading.Thread(target=self._run, name="warm-up", daemon=True)
                self._thread.start()

    @contextlib.contextmanager
    def _showing(self, key: str):
        """`status().step` says `key` (a message) while the body runs, then what it said before."""
        with self._lock:
            before, self._current = self._current, key
        try:
            yield
        finally:
            with self._lock:
                self._current = before

    def _run(self) -> None:
        with self._showing("warmup.libraries"):
            try:
                run_step(Step("warmup.libraries", self._load), self.gate)
            except Exception:  # a bug of ours, logged; the frame then draws no placeholder chart
                LOG.exception("warm-up: loading the libraries failed")
            else:
                self.charts_drawable.set()
        if hold_file := settings.read("HIERLSTM_WARMUP_AFTER"):
            with self._showing("warmup.held"):
                deadline = time.monotonic() + HOLD_LIMIT_S
                while not os.path.exists(hold_file) and time.monotonic() < deadline:
                    time.sleep(0.05)
        with self._showing("warmup.first_visitor"):
            if (waited := self.first_visitor.make_way()) > 0.05:
                LOG.info("warm-up: waited %.2f s for the first visitor's first figure", waited)
        for step in self.steps:
            if not step.needed:
                self._ready.set()
            with self._lock:
                self._current = step.key
            started = time.monotonic()
            try:
                run_step(step, self.gate)
            except Exception as error:  # a bug of ours: logged; the pages then meet it too
                LOG.exception("warm-up step %s failed", step.key)
                with self._lock:
                    self._failed = f"{type(error).__name__}: {error}".splitlines()[0][:300]
            LOG.info("warm-up: %s took %.2f s", step.key, time.monotonic() - started)
            with self._lock:
                self._done += step.needed
        with self._lock:
            self._current = ""
        self._ready.set()
        LOG.info("warm-up finished after %.2f s", time.monotonic() - self._started)

    def wait(self, timeout: float | None = None) -> bool:
        return self._ready.wait(timeout)

    def status(self) -> Status:
        with self._lock:
            return Status(
                step=self._current,
                done=self._done,
                needed=sum(step.needed for step in self.steps),
                seconds=time.monotonic() - self._started,
                ready=self._ready.is_set(),
                failed=self._failed,
            )


_server: Warmup | None = None
_server_lock = threading.Lock()


def server_warmup() -> Warmup:
    """This process's warm-up (made on first use, from HIERLSTM_WARMUP)."""
    global _server
    with _server_lock:
        if _server is None:
            _server = Warmup(steps_for(settings.read("HIERLSTM_WARMUP")))
        return _server


def start() -> None:
    server_warmup().start()

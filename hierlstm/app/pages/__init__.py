"""The app's pages, in navigation order: one record a page, read by the frame (streamlit_app.py)
for its navigation, title, sidebar and Run button, by the server's warm-up, and by the tests and
benchmarks that visit every page. Nothing else knows a page.

A page is one module, `hierlstm.app.pages.<name>`, imported when it is drawn, behind one small
interface (each function but `draw` may be left out):

    inputs(controls) -> inputs       its own widgets, above where its run's progress is drawn
    plan(controls, inputs) -> Plan   what its Run does, described once (`hierlstm.app.runs`)
    draw(controls, inputs)           its outcome, and the rest of the page

The record says the rest: the settings it reads (the sidebar shows only those, and the page's
config takes every other setting at its default), its Run button, its texts (the catalogue's
`page.<name>`, `<heading>.title`, `<heading>.intro`) and its warm-up steps (functions of its
module). Its script, app_pages/<name>.py, is a two-line shim that lets AppTest switch to it; its
URL is /<name>, or the older address its record keeps (`url`).

To add a page: a module here, a record in PAGES, the shim, and its texts in the catalogue."""

from __future__ import annotations

import dataclasses
import importlib
from types import ModuleType

from hierlstm.app.sidebar import EVERY_SETTING, MODEL, REPLICAS, SIZES, TIMING, Action
from hierlstm.app.state import GEOMETRY


@dataclasses.dataclass(frozen=True)
class WarmUp:
    """A step of the server's warm-up that a page brings: what the placeholder says (`key`),
    the page module's function it calls, whether pages wait for it, in which warm-up modes."""

    key: str
    function: str
    needed: bool = False
    modes: tuple[str, ...] = ("full",)


@dataclasses.dataclass(frozen=True)
class Page:
    name: str
    icon: str
    action: Action  # what the sidebar's Run button does there
    heading: str
    settings: tuple[str, ...] = EVERY_SETTING  # the sidebar's settings it reads
    warm_ups: tuple[WarmUp, ...] = ()
    url: str = ""  # its address, /<url>, where that is older than its name; else /<name>

    @property
    def url_path(self) -> str:
        return self.url or self.name

    @property
    def script(self) -> str:
        return f"app_pages/{self.name}.py"

    @property
    def title(self) -> str:  # the navigation's message key
        return f"page.{self.name}"

    def module(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self.name}")


PAGES = (
    Page(
        "shape_trace",
        ":material/schema:",
        Action("run.trace", heavy=False),
        "trace",
        ("variants", *SIZES, *MODEL, *REPLICAS, *GEOMETRY),
        (
            WarmUp("warmup.trace", "warm_up_open_tab", needed=True),
            WarmUp("warmup.trace_tabs", "warm_up_other_tabs"),
            WarmUp("warmup.trace", "warm_up", needed=True, modes=("trace",)),
        ),
    ),
    Page("benchmark", ":material/timer:", Action("run.benchmark", heavy=True), "bench"),
    Page("profile", ":material/query_stats:", Action("run.profile", heavy=True), "profile"),
    Page("scaling", ":material/trending_up:", Action("run.sweep", heavy=True), "scaling"),
    Page(
        "weight_sharing",
        ":material/share:",
        Action("run.sharing", heavy=True),
        "sharing",
        (*SIZES, "precision", "lstm_kernel", "device", *TIMING, *GEOMETRY),
        (WarmUp("warmup.sharing", "warm_up"),),
    ),
    Page("results", ":material/table_view:", Action("run.apply", heavy=False), "results", ()),
    Page(
        "yours",
        ":material/upload_file:",
        Action("run.audit", heavy=True),
        "yours",
        ("device", "repeats"),
        (WarmUp("warmup.yours", "warm_up"),),
        url="your_model",  # its address since it was added
    ),
    Page(
        "inside",
        ":material/grid_on:",
        Action("run.learn", heavy=True),
        "inside",
        ("time_steps", "lstm_kernel", "device", *GEOMETRY),
    ),
    Page(
        "lesson",
        ":material/school:",
        Action("run.lesson", heavy=True),
        "lesson",
        (*SIZES, "lstm_kernel", "device", "xla", *TIMING, *GEOMETRY),
    ),
)
BY_NAME = {page.name: page for page in PAGES}


def draw_page(name: str) -> None:
    """Page `name` (its shim's one call): its inputs, its run when Run was pressed, its
    outcome."""
    from hierlstm.app import runs, sidebar

    module = BY_NAME[name].module()
    controls = sidebar.current_controls()
    inputs = module.inputs(controls) if hasattr(module, "inputs") else None
    if controls.run and hasattr(module, "plan") and (plan := module.plan(controls, inputs)):
        runs.start_run(name, plan)
    module.draw(controls, inputs)

"""Where a Streamlit server's script runs spend their time: `streamlit` run under a sampler.

    python -m benchmarks.serving.server_profile OUT.json run app.py [streamlit options]

Every 10 ms a thread charges each app-script thread's time to the innermost line of the frame or
a page on its stack and to the library of its innermost frame ("(import)" while importing): wall
time, a thread waiting counts. Every 50 ms it also charges the CPU time each of Streamlit's script
threads used since (Linux: /proc/self/task) to where that thread is then: an app line, or, between
a page's lines (Streamlit's own work before and after the script, a garbage collection), the
innermost function. Over a level's thousands of samples that is where the interpreter's time
went, which the wall time hides behind the threads waiting their turn.
PHASE_SIGNAL (SIGUSR2: app.py dumps every thread's stack on SIGUSR1) closes a phase
(`first_page --profile-server` sends one per visit, `classroom --profile-server` one per level).
The phases so far go to OUT.json at each phase's end and at a clean exit (a server stopped by
SIGTERM exits without one). Python frames only: time in a C call is charged to the line that
made it.
"""

from __future__ import annotations

import argparse
import atexit
import collections
import json
import linecache
import os
import runpy
import signal
import sys
import threading
import time
from pathlib import Path

from benchmarks.record import argument_parser, markdown_table

ROOT = Path(__file__).resolve().parents[2]  # the repository
INTERVAL_S = 0.01
PHASE_SIGNAL = signal.SIGUSR2  # closes a phase
# app.py serves the frame, streamlit_app.py, which runs a page's shim in app_pages/, which draws
# the page's module (hierlstm/app/pages/): the innermost of these is the line a sample is in.
SCRIPTS = (
    str(ROOT / "app.py"),
    str(ROOT / "streamlit_app.py"),
    str(ROOT / "app_pages") + os.sep,
    str(ROOT / "hierlstm" / "app" / "pages") + os.sep,
)


def _library(path: str) -> str:
    if "site-packages" + os.sep in path:
        return path.split("site-packages" + os.sep, 1)[1].split(os.sep, 1)[0].removesuffix(".py")
    if path.startswith(str(ROOT)):
        return Path(path).relative_to(ROOT).parts[0].removesuffix(".py")
    return "python"


def where(frame) -> tuple[str, str] | None:
    """(the innermost app-script line, the innermost library) of a stack; None if the stack
    runs no app script."""
    library, importing, line = None, False, None
    while frame is not None:
        path = frame.f_code.co_filename
        if path.startswith("<frozen importlib"):
            importing = True
        elif library is None:
            library = _library(path)
        if path.startswith(SCRIPTS):
            line = f"{Path(path).relative_to(ROOT)}:{frame.f_lineno}"
            break
        frame = frame.f_back
    if line is None:
        return None
    return line, f"{library or 'python'}{' (import)' if importing else ''}"


SCRIPT_THREAD = "ScriptRunner.scriptThread"  # Streamlit's name for a session's script thread
CPU_EVERY = 5  # samples: a thread's CPU time is read every 50 ms
TICK_S = 1 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01


def thread_cpu_s(native_id: int) -> float | None:
    """A thread of this process's CPU time so far (user + system), None where it cannot be read
    (not Linux, or the thread has ended)."""
    try:
        with open(f"/proc/self/task/{native_id}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * TICK_S


def innermost(frame) -> str:
    """ "library: function" of a stack's innermost frame."""
    return f"{_library(frame.f_code.co_filename)}: {frame.f_code.co_qualname}"


class Sampler:
    def __init__(self, out: Path):
        self.out = out  # written at every phase's end: the server may die by SIGTERM, no atexit
        self.phases, self.requests = [], []  # a PHASE_SIGNAL appends; the sampler closes a phase
        self.cpu_seen: dict[int, float] = {}  # native thread id -> its CPU seconds when last read
        self._reset()

    def _reset(self):
        self.lines, self.libraries = collections.Counter(), collections.Counter()
        self.cpu = collections.Counter()

    def close_phase(self):
        self.phases.append(
            {
                "busy_s": sum(self.lines.values()),
                "lines": dict(self.lines.most_common()),
                "libraries": dict(self.libraries.most_common()),
                "cpu_s": sum(self.cpu.values()),
                "cpu": dict(self.cpu.most_common()),
            }
        )
        self._reset()
        self.out.write_text(json.dumps(self.phases, indent=1) + "\n")

    def charge_cpu(self, frames: dict) -> None:
        """Each script thread's CPU time since it was last read, to where it is now."""
        seen = {}
        for thread in threading.enumerate():
            if not thread.name.startswith(SCRIPT_THREAD) or thread.ident not in frames:
                continue
            used = thread_cpu_s(thread.native_id)
            if used is None:
                continue
            seen[thread.native_id] = used
            spent = used - self.cpu_seen.get(thread.native_id, used)
            if spent > 0:
                frame = frames[thread.ident]
                found = where(frame)
                self.cpu[found[0] if found else innermost(frame)] += spent
        self.cpu_seen = seen

    def run(self):
        me, last, count = threading.get_ident(), time.perf_counter(), 0
        while True:
            time.sleep(INTERVAL_S)
            now = time.perf_counter()
            while self.requests:
                self.requests.pop()
                self.close_phase()
            frames = sys._current_frames()
            for ident, frame in frames.items():
                found = where(frame) if ident != me else None
                if found:
                    self.lines[found[0]] += now - last
                    self.libraries[found[1]] += now - last
            count += 1
            if count % CPU_EVERY == 0:
                self.charge_cpu(frames)
            last = now


def main() -> None:
    parser = argument_parser(__spec__.name, __doc__)
    parser.add_argument("out", type=Path, metavar="OUT.json", help="where the phases go at exit")
    parser.add_argument(
        "streamlit_args", nargs=argparse.REMAINDER, help="streamlit's: run app.py [options]"
    )
    args = parser.parse_args()  # a server's wrapper, not a benchmark: no main(argv)
    sampler = Sampler(args.out)

    def on_signal(_number, _frame):
        sampler.requests.append(True)

    signal.signal(PHASE_SIGNAL, on_signal)
    atexit.register(sampler.close_phase)  # when the server exits by itself
    threading.Thread(target=sampler.run, name="server-profile", daemon=True).start()
    sys.argv = ["streamlit", *args.streamlit_args]
    runpy.run_module("streamlit", run_name="__main__", alter_sys=True)


def phases(path: Path, labels: list[str]) -> dict[str, dict]:
    """OUT.json's phases by the label of the visit each one ended."""
    if not path.exists():  # the server was killed before it could write it
        return {}
    found = json.loads(path.read_text())
    return dict(zip([*labels, "(after the last visit)"], found, strict=False))


def top(seconds: dict[str, float], count: int, source: bool) -> str:
    """The `count` largest entries, "name s"; an app line with its source text."""
    parts = []
    for name, value in list(seconds.items())[:count]:
        if source and ROOT.joinpath(name.rsplit(":", 1)[0]).is_file():
            path, number = name.rsplit(":", 1)
            name += f" `{linecache.getline(str(ROOT / path), int(number)).strip()[:60]}`"
        parts.append(f"{name} {value:.2f} s")
    return "; ".join(parts)


def table(round_: dict) -> str:
    """Per row of a first_page round: its idle time beside the script threads' busy seconds, where
    they were, and when its last JS or CSS file had loaded."""
    rows = []
    for label, visit in round_["rows"].items():
        phase = round_["profile"].get(label, {"busy_s": 0.0, "lines": {}, "libraries": {}})
        idle = "timeout" if visit["idle_s"] is None else f"{visit['idle_s']:.2f}"
        assets = "-" if visit["assets_s"] is None else f"{visit['assets_s']:.2f}"
        where = ("", "")
        if phase["busy_s"] >= 0.05:
            where = (top(phase["lines"], 3, source=True), top(phase["libraries"], 3, False))
        rows.append((label, idle, f"{phase['busy_s']:.2f}", assets, *where))
    columns = ("", "idle s", "script busy s", "last JS/CSS loaded s", "app lines", "libraries")
    return markdown_table(columns, rows)


if __name__ == "__main__":
    main()

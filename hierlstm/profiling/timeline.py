"""One step of a profiler capture in time (`step_timeline`, every op on its thread or stream), and
steps as Chrome trace-event JSON (`chrome_trace`) for Perfetto and chrome://tracing."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence

import pandas as pd

from hierlstm.profiling.xspace import (
    classify,
    events_inside,
    hlo_instructions,
    layer_of,
    step_intervals,
)

_PS = 1e-12  # seconds per picosecond, XPlane's unit


@dataclasses.dataclass(frozen=True)
class StepTimeline:
    """One step of a capture in time, ops at their whole durations. events: line, plane, thread,
    start_s (from the step's start), duration_s, name, type, layer, depth (0 outermost on its line);
    by line, then start."""

    step: int
    step_s: float
    events: pd.DataFrame


TIMELINE_COLUMNS = ("line", "plane", "thread", "start_s", "duration_s", "name", "type", "layer")
# The layer of an op that no layer can be given: torch.profiler's ops carry no name scope.
UNATTRIBUTED = "no layer attribution"


def _depths(timed: Sequence[tuple[int, int]]) -> list[int]:
    """Nesting depth of each (start, duration) of one line among the others, input order."""
    order = sorted(range(len(timed)), key=lambda i: (timed[i][0], -timed[i][1]))
    depths, ends = [0] * len(timed), []  # the open events' ends, outermost first
    for index in order:
        while ends and ends[-1] < sum(timed[index]):
            ends.pop()
        depths[index] = len(ends)
        ends.append(sum(timed[index]))
    return depths


def step_timeline(space, layer_names: Sequence[str], step: int = -1) -> StepTimeline:
    """The op events of step `step` (by default the last marker: each marker holds a whole
    step, and the last is the farthest from the profiler's start). Raises ValueError when the
    capture holds no step marker or no step `step`."""
    steps = step_intervals(space)
    if not -len(steps) <= step < len(steps):  # none at all when nothing was profiled
        raise ValueError(f"the capture holds {len(steps)} step marker(s); no step {step}.")
    first, last = steps[step]
    hlo, rows = hlo_instructions(space), []
    for plane in space.planes:
        for line in plane.lines:
            kept, timed = events_inside(plane, line, [(first, last)])
            ops = [classify(plane, event, hlo) for event in kept]
            found = [(op, at) for op, at in zip(ops, timed, strict=True) if op is not None]
            thread, depths = line.display_name or line.name, _depths([at for _, at in found])
            for ((name, kind), (start, duration)), depth in zip(found, depths, strict=True):
                where = (f"{plane.name} {thread}", plane.name, thread, (start - first) * _PS)
                layer = layer_of(name, layer_names)
                rows.append((*where, duration * _PS, name, kind, layer, depth))
    events = pd.DataFrame(rows, columns=[*TIMELINE_COLUMNS, "depth"])
    events = events.sort_values(["line", "start_s", "depth"], ignore_index=True)
    return StepTimeline(step % len(steps), (last - first) * _PS, events)


def torch_step_timeline(trace: Mapping, step: int = -1) -> StepTimeline:
    """Step `step` (default the last) of torch.profiler's Chrome trace, as `step_timeline` gives an
    XSpace's: the "step" complete event and the "cpu_op" events inside it, layer `UNATTRIBUTED`.
    Raises ValueError when the trace holds no such step."""
    events = [event for event in trace.get("traceEvents", []) if event.get("ph") == "X"]

    def interval(event) -> tuple[int, int]:  # (start, duration) in ns; the trace's are µs
        start = round(float(event["ts"]) * 1e3)
        return start, round(float(event["ts"]) * 1e3 + float(event.get("dur", 0)) * 1e3) - start

    marks = sorted(
        interval(e) for e in events if e.get("name") == "step" and e.get("cat") == "user_annotation"
    )
    if not -len(marks) <= step < len(marks):
        raise ValueError(f"the trace holds {len(marks)} step marker(s); no step {step}.")
    first, length = marks[step]
    threads = {
        (event.get("pid"), event.get("tid")): event.get("args", {}).get("name", "")
        for event in trace.get("traceEvents", [])
        if event.get("ph") == "M" and event.get("name") == "thread_name"
    }
    lines: dict[str, list] = {}
    for event in events:
        start, duration = interval(event)
        if event.get("cat") != "cpu_op" or not first <= start <= start + duration <= first + length:
            continue
        key = (event.get("pid"), event.get("tid"))
        lines.setdefault(threads.get(key) or f"thread {key[1]}", []).append(
            (start, duration, str(event.get("name", "")))
        )
    rows = []
    for thread, ops in lines.items():
        depths = _depths([(start, duration) for start, duration, _ in ops])
        for (start, duration, name), depth in zip(ops, depths, strict=True):
            where = (f"/host:CPU {thread}", "/host:CPU", thread, (start - first) * 1e-9)
            rows.append((*where, duration * 1e-9, name, name, UNATTRIBUTED, depth))
    frame = pd.DataFrame(rows, columns=[*TIMELINE_COLUMNS, "depth"])
    frame = frame.sort_values(["line", "start_s", "depth"], ignore_index=True)
    return StepTimeline(step % len(marks), length * 1e-9, frame)


def chrome_trace(timelines: Mapping[str, StepTimeline]) -> dict:
    """Steps (`ProfileResult.timeline`, by label) as Chrome trace-event JSON: a process per (label,
    plane), a thread per line, one "X" event per op in microseconds from its step's start (so
    variants start together), cat its layer."""
    trace: list[dict] = []
    pids = itertools.count(1)
    for label, timeline in timelines.items():
        for plane, lines in timeline.events.groupby("plane", sort=False):
            pid = next(pids)
            trace.append(_named("process_name", pid, 0, f"{label} {plane}"))
            trace.append({**_named("process_sort_index", pid, 0, ""), "args": {"sort_index": pid}})
            for tid, (thread, events) in enumerate(lines.groupby("thread", sort=False), 1):
                trace.append(_named("thread_name", pid, tid, thread))
                trace += [
                    {
                        "name": row.name or row.type,
                        "cat": row.layer,
                        "ph": "X",
                        "ts": float(row.start_s) * 1e6,
                        "dur": float(row.duration_s) * 1e6,
                        "pid": pid,
                        "tid": tid,
                        "args": {"type": row.type, "layer": row.layer, "depth": int(row.depth)},
                    }
                    for row in events.itertuples()
                ]
    steps = {label: {"step": t.step, "step_us": t.step_s * 1e6} for label, t in timelines.items()}
    return {"traceEvents": trace, "displayTimeUnit": "ms", "otherData": {"steps": steps}}


def _named(kind: str, pid: int, tid: int, name: str) -> dict:
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}

"""One step of a profiler capture in time (`step_timeline`: every op on its thread or stream,
coloured later by its layer), and steps as Chrome trace-event JSON (`chrome_trace`), which
Perfetto and chrome://tracing open. The capture is read by `hierlstm.profiling.xspace`."""

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
    """One step of a capture in time: its op events at their whole durations (a timeline draws
    an op around the ops nested in it), `step` the marker's index, `step_s` its duration.

    events: line ("<plane> <line>", as `op_events` names it), plane, thread, start_s (from the
    step's start), duration_s, name (TF op name; "" when unknown), type, layer (`layer_of`),
    depth (0 for an op no other op on its line holds, 1 inside one, ...); by line, then start.
    """

    step: int
    step_s: float
    events: pd.DataFrame


TIMELINE_COLUMNS = ("line", "plane", "thread", "start_s", "duration_s", "name", "type", "layer")


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


def chrome_trace(timelines: Mapping[str, StepTimeline]) -> dict:
    """Steps (`ProfileResult.timeline`, by label) as Chrome trace-event JSON, which Perfetto
    and chrome://tracing open: one process per (label, plane) and one thread per line, named by
    "M" events; one complete ("X") event per op, ts and dur in microseconds from its step's
    start, so the steps of several variants start together; cat is the op's layer."""
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

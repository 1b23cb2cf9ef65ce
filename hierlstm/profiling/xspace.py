"""The reader of a TensorFlow Profiler capture: one XSpace (`.xplane.pb`) reduced to time per layer,
per op type and per line (a host thread, a GPU stream).

- Steps: only events inside a "step" marker with a `step_num` count, divided by the number of
markers, so warm-up and the profiler's start and stop are left out. - Self time: an op's duration
less its direct children's on the same line. Framework events inside an op (ParallelFor, the XLA
executable) are its own work, as XProf counts them; those around ops (the executor) are not op time.
So nothing counts twice on one line, but a sum over lines is op time, not wall time. - Ops:
TensorFlow ops (`scope/name:Type` or a `tf_op` stat), XLA thunks (an `hlo_op` stat, their scope from
the `/host:metadata` plane's HLO) and device-plane events; everything else is framework work, shown
per line as `busy_s` beside `op_s`. - Layers: an op belongs to the first top-level layer named in
its scope (Keras suffixes, gradient tapes and JAX transformations included); the rest are `OUTSIDE`,
so layers plus `OUTSIDE` add up to the op time."""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from hierlstm.profiling.record import OUTSIDE

STEP_MARKER = "step"
_PS = 1e-12  # seconds per picosecond
_TF_OP = re.compile(r"^([^\s:]+):([A-Za-z_][A-Za-z0-9_]*)$")  # "scope/name:Type"
_KERAS_SUFFIX = re.compile(r"^(.+)_\d+$")
# JAX names a transformed function's scope by its transformations: `transpose(jvp(inner_lstm))`
# is the backward pass of layer inner_lstm (TensorFlow's scope names hold no parentheses).
_JAX_WRAPPED = re.compile(r"^(?:[A-Za-z_]+\()+([^()]+)\)+$")


@dataclasses.dataclass(frozen=True)
class OpEvent:
    """One op event inside the steps: its line ("<plane> <line>"), TF name (scope path; "" when
    unknown), type, self time in picoseconds, and, for an event of a device plane, the kernel
    that ran (the event's own name: a CUDA kernel such as cuDNN's `RNN_blockPersist_fp_LSTM`)."""

    line: str
    name: str
    type: str
    self_ps: int
    kernel: str = ""  # "" for a host event

    @property
    def on_device(self) -> bool:
        return bool(self.kernel)


@dataclasses.dataclass(frozen=True)
class SpaceSummary:
    """An XSpace reduced; every time is seconds per step. layers: layer, host_s, device_s, time_s,
    ops, share, one row per `layer_names` then `OUTSIDE`. op_types: type, time_s, ops, share. lines:
    line, op_s, busy_s. kernels: kernel, op_type, layer, time_s, launches; empty on a CPU."""

    steps: int
    step_s: tuple[float, ...]  # each step marker's duration, in order
    layers: pd.DataFrame
    op_types: pd.DataFrame
    lines: pd.DataFrame
    kernels: pd.DataFrame

    @property
    def op_s(self) -> float:
        """Op time per step, summed over every line: the layers plus `OUTSIDE`."""
        return float(self.layers["time_s"].sum())


def find_xplane(logdir: str | Path) -> Path:
    """The newest `.xplane.pb` under `logdir`/plugins/profile/ (one per run and host)."""
    found = sorted(
        Path(logdir).glob("plugins/profile/*/*.xplane.pb"), key=lambda p: p.stat().st_mtime
    )
    if not found:
        raise FileNotFoundError(f"no .xplane.pb under {Path(logdir) / 'plugins' / 'profile'}")
    return found[-1]


def read_xspace(path: str | Path):
    """The XSpace protobuf of one `.xplane.pb` file."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    space = xplane_pb2.XSpace()
    space.ParseFromString(Path(path).read_bytes())
    return space


def layer_of(op_name: str, layer_names: Iterable[str]) -> str:
    """The top-level layer `op_name` belongs to: the first scope component that is a layer's
    name, or that name with Keras's `_N` suffix, JAX's transformations around it unwrapped
    (`transpose(jvp(conv))` is conv's); `OUTSIDE` when none is."""
    names = set(layer_names)
    for component in op_name.split("/"):
        if wrapped := _JAX_WRAPPED.match(component):
            component = wrapped.group(1)
        if component in names:
            return component
        suffixed = _KERAS_SUFFIX.match(component)
        if suffixed and suffixed.group(1) in names:
            return suffixed.group(1)
    return OUTSIDE


def self_times(events: Sequence[tuple[int, int]], counted: Sequence[bool] | None = None):
    """Self time of each (start, duration) of one line: its duration less its direct children's.
    With `counted`, only counted events are children and parents; an uncounted one is its parent's
    own work."""
    counted = [True] * len(events) if counted is None else counted
    order = sorted(range(len(events)), key=lambda i: (events[i][0], -events[i][1]))
    result = [duration for _, duration in events]
    stack: list[int] = []  # indices of the open counted events, outermost first
    for index in order:
        if not counted[index]:
            continue
        start, duration = events[index]
        while stack and sum(events[stack[-1]]) < start + duration:
            stack.pop()  # ended before this one ends: not its parent
        if stack:
            result[stack[-1]] -= duration
        stack.append(index)
    return result


def outermost(events: Sequence[tuple[int, int]]) -> int:
    """How long one line was busy: the length of the union of its (start, duration) events
    (on a line whose events nest, the summed durations of the outermost ones)."""
    total, reach = 0, None
    for start, duration in sorted(events):
        end = start + duration
        if reach is None or start >= reach:
            total, reach = total + duration, end
        elif end > reach:
            total, reach = total + end - reach, end
    return total


def _stat_value(plane, stat):
    kind = stat.WhichOneof("value")
    if kind == "ref_value":
        return plane.stat_metadata[stat.ref_value].name
    return getattr(stat, kind) if kind else None


def _stats(plane, event) -> dict:
    """An event's stats by name, its metadata's first and the event's own over them."""
    stats = {}
    for stat in (*plane.event_metadata[event.metadata_id].stats, *event.stats):
        stats[plane.stat_metadata[stat.metadata_id].name] = _stat_value(plane, stat)
    return stats


def hlo_instructions(space) -> dict[tuple[int | str, str], tuple[str, str]]:
    """(program id or module name, instruction name) -> (opcode, TF op_name) of every HLO
    module the `/host:metadata` plane holds (XLA's compiled functions)."""
    from tensorflow.compiler.xla.service import hlo_pb2

    found = {}
    for plane in space.planes:
        if plane.name != "/host:metadata":
            continue
        for program_id, metadata in plane.event_metadata.items():
            for stat in metadata.stats:
                if not stat.bytes_value:
                    continue
                proto = hlo_pb2.HloProto()
                proto.ParseFromString(stat.bytes_value)
                module = proto.hlo_module
                for computation in module.computations:
                    for instruction in computation.instructions:
                        value = (instruction.opcode, instruction.metadata.op_name)
                        found[(program_id, instruction.name)] = value
                        found[(module.name, instruction.name)] = value
    return found


def _split_tf_op(text: str) -> tuple[str, str] | None:
    """ "scope/name:Type" -> (name, Type); the innermost of a "::"-joined annotation."""
    match = _TF_OP.match(text.split("::")[-1].strip()) if text else None
    return (match.group(1), match.group(2)) if match else None


def _function_op(op_type: str) -> str:
    return "XLA function" if op_type.startswith(("__inference_", "__forward_")) else op_type


def classify(plane, event, hlo) -> tuple[str, str] | None:
    """(TF op name, op type) of an op event, or None for the framework's own events."""
    metadata = plane.event_metadata[event.metadata_id]
    stats = _stats(plane, event)
    if "hlo_op" in stats:
        name = str(stats["hlo_op"])
        found = [hlo.get((key, name)) for key in (stats.get("program_id"), stats.get("hlo_module"))]
        opcode, op_name = next((value for value in found if value), ("", ""))
        if not opcode:
            opcode = re.sub(r"(\.\d+)+$", "", name)
        return op_name, f"XLA {opcode}"
    for key in ("tf_op", "kernel_annotation"):
        if parsed := _split_tf_op(str(stats.get(key, ""))):
            return parsed[0], _function_op(parsed[1])
    if parsed := _split_tf_op(metadata.name):
        return parsed[0], _function_op(metadata.display_name or parsed[1])
    if plane.name.startswith("/device:"):
        return "", metadata.display_name or metadata.name
    return None


def step_intervals(space) -> list[tuple[int, int]]:
    """(start, end) in picoseconds of every step marker, in start order."""
    intervals = []
    for plane in space.planes:
        for line in plane.lines:
            for event in line.events:
                metadata = plane.event_metadata[event.metadata_id]
                if metadata.name == STEP_MARKER and "step_num" in _stats(plane, event):
                    start = line.timestamp_ns * 1000 + event.offset_ps
                    intervals.append((start, start + event.duration_ps))
    return sorted(intervals)


def _inside(start: int, end: int, steps: Sequence[tuple[int, int]], starts: Sequence[int]) -> bool:
    """Whether [start, end] lies inside one of `steps` (sorted, disjoint; `starts` theirs)."""
    index = bisect.bisect_right(starts, start) - 1
    return index >= 0 and end <= steps[index][1]


def events_inside(plane, line, steps: Sequence[tuple[int, int]]):
    """The line's events (not the markers) fully inside one of `steps` (sorted, disjoint),
    and their (start, duration) in picoseconds."""
    base, starts = line.timestamp_ns * 1000, [start for start, _ in steps]
    kept = [
        event
        for event in line.events
        if event.duration_ps > 0
        and _inside(
            base + event.offset_ps, base + event.offset_ps + event.duration_ps, steps, starts
        )
        and plane.event_metadata[event.metadata_id].name != STEP_MARKER
    ]
    return kept, [(base + event.offset_ps, event.duration_ps) for event in kept]


def op_events(space) -> tuple[list[OpEvent], dict[str, tuple[int, int]], list[tuple[int, int]]]:
    """Every op event inside the steps at its self time; each line's (op, busy) picoseconds
    over the steps; the step intervals."""
    steps = step_intervals(space)
    hlo = hlo_instructions(space)
    ops: list[OpEvent] = []
    lines: dict[str, tuple[int, int]] = {}
    for plane in space.planes:
        on_device = plane.name.startswith("/device:")
        for line in plane.lines:
            kept, timed = events_inside(plane, line, steps)
            if not kept:
                continue
            label = f"{plane.name} {line.display_name or line.name}"
            found = [classify(plane, event, hlo) for event in kept]
            own = self_times(timed, [op is not None for op in found])
            line_ops = 0
            for event, op, self_ps in zip(kept, found, own, strict=True):
                if op is not None:
                    kernel = plane.event_metadata[event.metadata_id].name if on_device else ""
                    ops.append(OpEvent(label, op[0], op[1], self_ps, kernel))
                    line_ops += self_ps
            lines[label] = (line_ops, outermost(timed))
    return ops, lines, steps


def _shares(frame: pd.DataFrame) -> pd.DataFrame:
    total = frame["time_s"].sum()
    frame["share"] = frame["time_s"] / total if total > 0 else 0.0
    return frame


def summarise(space, layer_names: Sequence[str]) -> SpaceSummary:
    """`space` reduced to per-step time per layer (`layer_names`, then `OUTSIDE`), per op type
    and per line. Raises ValueError if it holds no step marker."""
    ops, lines, steps = op_events(space)
    if not steps:
        raise ValueError("the capture holds no step marker: nothing was profiled")
    count = len(steps)
    per_layer = {name: [0, 0, 0] for name in (*layer_names, OUTSIDE)}  # host, device, events
    per_type: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for op in ops:
        row = per_layer[layer_of(op.name, layer_names)]
        row[1 if op.on_device else 0] += op.self_ps
        row[2] += 1
        per_type[op.type][0] += op.self_ps
        per_type[op.type][1] += 1
    layers = pd.DataFrame(
        {
            "layer": list(per_layer),
            "host_s": [row[0] * _PS / count for row in per_layer.values()],
            "device_s": [row[1] * _PS / count for row in per_layer.values()],
            "ops": [row[2] / count for row in per_layer.values()],
        }
    )
    layers.insert(3, "time_s", layers["host_s"] + layers["device_s"])
    op_types = pd.DataFrame(
        {
            "type": list(per_type),
            "time_s": [value[0] * _PS / count for value in per_type.values()],
            "ops": [value[1] / count for value in per_type.values()],
        },
        columns=["type", "time_s", "ops"],
    )
    op_types = op_types.sort_values(["time_s", "type"], ascending=[False, True], ignore_index=True)
    line_frame = pd.DataFrame(
        {
            "line": sorted(lines),
            "op_s": [lines[name][0] * _PS / count for name in sorted(lines)],
            "busy_s": [lines[name][1] * _PS / count for name in sorted(lines)],
        },
        columns=["line", "op_s", "busy_s"],
    )
    step_s = tuple((end - start) * _PS for start, end in steps)
    kernels = _kernels([op for op in ops if op.on_device], layer_names, count)
    return SpaceSummary(count, step_s, _shares(layers), _shares(op_types), line_frame, kernels)


def _kernels(ops: Sequence[OpEvent], layer_names: Sequence[str], count: int) -> pd.DataFrame:
    per_kernel: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
    for op in ops:
        row = per_kernel[(op.kernel, op.type, layer_of(op.name, layer_names))]
        row[0] += op.self_ps
        row[1] += 1
    frame = pd.DataFrame(
        [
            (kernel, op_type, layer, value[0] * _PS / count, value[1] / count)
            for (kernel, op_type, layer), value in per_kernel.items()
        ],
        columns=["kernel", "op_type", "layer", "time_s", "launches"],
    )
    return frame.sort_values(["time_s", "kernel"], ascending=[False, True], ignore_index=True)

"""One step in time: real captures of tiny training steps (nested, folded, fused under XLA) read
into the last step's timeline, which over every step holds exactly the op events the per-layer
table counts, and exported as Chrome trace-event JSON; the memory a profile measures."""

from __future__ import annotations

import json

import pytest

from hierlstm.config import RunConfig, Timing
from hierlstm.model.cost import memory_parts
from hierlstm.profiling import (
    chrome_trace,
    memory_estimate,
    profile,
    read_xspace,
    step_timeline,
)
from hierlstm.profiling.timeline import TIMELINE_COLUMNS, UNATTRIBUTED, torch_step_timeline
from hierlstm.profiling.xspace import op_events

TIMING = Timing(warmup=1, repeats=3)
STEPS = 3
CONFIGS = {
    "nested": RunConfig(variant="nested", batch_size=2, time_steps=3),
    "folded": RunConfig(variant="folded", batch_size=2, time_steps=3),
    "fused": RunConfig(variant="fused", batch_size=2, time_steps=3, xla=True),
}
REQUIRED = {"X": {"name", "cat", "ph", "ts", "dur", "pid", "tid", "args"}, "M": {"name", "ph"}}


@pytest.fixture(scope="module")
def profiles(tmp_path_factory):
    """One training-step profile per variant (captures are slow: made once)."""
    found = {}
    for label, config in CONFIGS.items():
        config = config.replace(task="training", optimizer="adam")
        logdir = tmp_path_factory.mktemp(label)
        found[label] = profile(config, TIMING, steps=STEPS, logdir=logdir)
    return found


def layer_names(result) -> list[str]:
    return [name for name in result.layers["layer"] if name != "outside any layer"]


@pytest.mark.parametrize("label", list(CONFIGS))
def test_the_timeline_is_the_last_step_and_inside_it(profiles, label):
    result = profiles[label]
    timeline = result.timeline
    assert timeline.step == STEPS - 1
    assert timeline.step_s == pytest.approx(result.step_s[-1], rel=1e-12)
    events = timeline.events
    assert list(events.columns) == [*TIMELINE_COLUMNS, "depth"] and len(events) > 10
    assert (events["start_s"] >= 0).all() and (events["duration_s"] > 0).all()
    assert (events["start_s"] + events["duration_s"] <= timeline.step_s * (1 + 1e-12)).all()
    assert set(events["layer"]) <= {*result.layers["layer"]}
    for line, rows in events.groupby("line"):
        assert rows["start_s"].is_monotonic_increasing, line
        assert line == f"{rows['plane'].iloc[0]} {rows['thread'].iloc[0]}"


@pytest.mark.parametrize("label", list(CONFIGS))
def test_every_steps_timeline_holds_the_op_events_the_tables_count(profiles, label):
    result = profiles[label]
    space = read_xspace(result.trace)
    names = layer_names(result)
    counted, _, steps = op_events(space)
    timelines = [step_timeline(space, names, step) for step in range(len(steps))]
    assert sum(len(timeline.events) for timeline in timelines) == len(counted)
    per_layer = result.layers.set_index("layer")["ops"] * STEPS
    for layer, count in per_layer.items():
        found = sum(int((timeline.events["layer"] == layer).sum()) for timeline in timelines)
        assert found == pytest.approx(count), layer
    # an op's whole duration is at least its self time: over the step, the timeline's sum too
    self_ps = sum(op.self_ps for op in counted) / STEPS * 1e-12
    durations = sum(timeline.events["duration_s"].sum() for timeline in timelines) / STEPS
    assert durations >= self_ps * (1 - 1e-9)
    with pytest.raises(ValueError, match="holds 3 step marker"):
        step_timeline(space, names, STEPS)


def test_nested_ops_are_a_level_deeper_inside_their_parent(profiles):
    events = profiles["fused"].timeline.events  # XLA: the while thunk holds its body's thunks
    assert events["depth"].max() >= 1
    for line, rows in events.groupby("line"):
        outer = rows[rows["depth"] == 0]
        for row in rows[rows["depth"] == 1].itertuples():
            inside = (outer["start_s"] <= row.start_s) & (
                outer["start_s"] + outer["duration_s"] >= row.start_s + row.duration_s
            )
            assert inside.any(), (line, row.name)


def test_nested_runs_many_more_ops_in_a_step_than_folded(profiles):
    """Counted, not timed: how long each op took depends on what else the cores were doing (a
    bound on the median duration failed under load), how many ran does not."""
    nested, folded = profiles["nested"].timeline.events, profiles["folded"].timeline.events
    assert len(nested) > 2 * len(folded)


def test_the_chrome_trace_holds_the_timelines_events(profiles):
    timelines = {label: result.timeline for label, result in profiles.items()}
    document = json.loads(json.dumps(chrome_trace(timelines)))  # plain JSON throughout
    assert document["displayTimeUnit"] == "ms"
    events = document["traceEvents"]
    for event in events:
        assert event["ph"] in REQUIRED and REQUIRED[event["ph"]] <= set(event), event
        assert isinstance(event["pid"], int) and isinstance(event["tid"], int)
    complete = [event for event in events if event["ph"] == "X"]
    assert len(complete) == sum(len(timeline.events) for timeline in timelines.values())
    for event in complete:
        assert isinstance(event["ts"], float) and isinstance(event["dur"], float)
        assert event["ts"] >= 0 and event["dur"] > 0
        assert event["cat"] == event["args"]["layer"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    threads = {
        (e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"
    }
    assert {(event["pid"], event["tid"]) for event in complete} == set(threads)
    for label, timeline in timelines.items():
        pids = [pid for pid, name in processes.items() if name.startswith(f"{label} /host:CPU")]
        assert len(pids) == 1, processes
        mine = [event for event in complete if event["pid"] == pids[0]]
        assert len(mine) == len(timeline.events)
        step_us = timeline.step_s * 1e6
        assert all(event["ts"] + event["dur"] <= step_us * (1 + 1e-9) for event in mine)
        assert sum(event["dur"] for event in mine) == pytest.approx(
            timeline.events["duration_s"].sum() * 1e6
        )
        names = {threads[(event["pid"], event["tid"])] for event in mine}
        assert names == set(timeline.events["thread"])
        assert document["otherData"]["steps"][label]["step"] == STEPS - 1


@pytest.mark.parametrize("label", list(CONFIGS))
def test_a_profile_measures_the_steps_memory_beside_its_parts(profiles, label):
    result = profiles[label]
    assert result.peak_memory_kind == "cpu_rss_growth"  # no GPU here: the RSS growth
    assert result.peak_memory_bytes >= 0
    document = result.to_dict()
    parts = memory_parts(result.config)
    assert document["memory_parts"] == {**parts.as_dict(), "total": parts.total}
    assert document["peak_memory_kind"] == "cpu_rss_growth"
    assert memory_estimate(result.config.replace(task="inference")) is None


def torch_trace() -> dict:
    """torch.profiler's export in miniature: two steps (µs as it writes them), ops nested in the
    second, one op outside every step, the thread named by an "M" event."""

    def op(name, ts, dur, cat="cpu_op"):
        return {"ph": "X", "cat": cat, "name": name, "pid": 7, "tid": 7, "ts": ts, "dur": dur}

    return {
        "traceEvents": [
            {"ph": "M", "name": "thread_name", "pid": 7, "tid": 7, "args": {"name": "python"}},
            op("step", 1000.0, 50.0, "user_annotation"),
            op("aten::mm", 1010.0, 20.0),
            op("step", 2000.123, 40.0, "user_annotation"),
            op("aten::linear", 2000.123, 30.0),  # starts with its step
            op("aten::addmm", 2005.5, 24.623),  # ends with its parent (float µs)
            op("aten::tanh", 2032.0, 8.123),  # ends with the step
            op("aten::zero_", 2100.0, 1.0),  # after the last step: not in it
        ]
    }


def test_a_torch_trace_s_last_step_is_its_ops_in_time_nested_without_layers():
    step = torch_step_timeline(torch_trace())
    assert step.step == 1 and step.step_s == pytest.approx(40e-6)
    events = step.events
    assert list(events["name"]) == ["aten::linear", "aten::addmm", "aten::tanh"]
    assert list(events["depth"]) == [0, 1, 0]
    assert list(events["start_s"]) == pytest.approx([0, 5.377e-6, 31.877e-6])
    assert list(events["duration_s"]) == pytest.approx([30e-6, 24.623e-6, 8.123e-6])
    assert set(events["layer"]) == {UNATTRIBUTED} and set(events["line"]) == {"/host:CPU python"}
    first = torch_step_timeline(torch_trace(), step=0)
    assert list(first.events["name"]) == ["aten::mm"]
    trace = chrome_trace({"folded · torch": step})  # the page's download reads it as any other
    assert sum(event["ph"] == "X" for event in trace["traceEvents"]) == 3
    with pytest.raises(ValueError, match="2 step marker"):
        torch_step_timeline(torch_trace(), step=2)

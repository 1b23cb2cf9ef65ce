"""The capture reader on XSpaces built here with xplane_pb2, so every number is known: self
times of nested events, only events inside the step markers counted and divided by the steps,
ops mapped to layers by scope, the outside bucket, XLA thunks through their HLO module, device
events, and the framework's own events left out of op time."""

from __future__ import annotations

import pytest
from tensorflow.compiler.xla.service import hlo_pb2
from tensorflow.tsl.profiler.protobuf import xplane_pb2

from hierlstm.profiling.xspace import (
    OUTSIDE,
    layer_of,
    outermost,
    self_times,
    step_intervals,
    summarise,
)

US = 1_000_000  # picoseconds per microsecond
LAYERS = ["conv", "inner_lstm", "outer_lstm"]


class PlaneBuilder:
    """One XPlane: `event(line, name, start_us, duration_us, **stats)` adds an event."""

    def __init__(self, space, name):
        self.plane = space.planes.add(name=name)
        self.lines = {}

    def _metadata(self, table, name):
        for key, value in table.items():
            if value.name == name:
                return key
        key = len(table) + 1
        table[key].id, table[key].name = key, name
        return key

    def event(self, line, name, start_us, duration_us, display_name="", **stats):
        if line not in self.lines:
            self.lines[line] = self.plane.lines.add(name=line, timestamp_ns=1000)
        key = self._metadata(self.plane.event_metadata, name)
        self.plane.event_metadata[key].display_name = display_name
        event = self.lines[line].events.add(
            metadata_id=key, offset_ps=int(start_us * US), duration_ps=int(duration_us * US)
        )
        for stat_name, value in stats.items():
            stat = event.stats.add(metadata_id=self._metadata(self.plane.stat_metadata, stat_name))
            if isinstance(value, str):
                stat.str_value = value
            else:
                stat.int64_value = value
        return event


def space_with_steps(steps=((0, 100), (200, 100))):
    space = xplane_pb2.XSpace()
    host = PlaneBuilder(space, "/host:CPU")
    for index, (start, duration) in enumerate(steps):
        host.event("python", "step", start, duration, step_num=index, _r=1)
    return space, host


def test_self_time_is_duration_minus_direct_children():
    # parent [0, 100] holds a [10, 40] (which holds b [15, 20]) and c [50, 70]; d [100, 110]
    # starts where the parent ends; e [105, 120] overlaps d without nesting.
    events = [(0, 100), (10, 30), (15, 5), (50, 20), (100, 10), (105, 15)]
    assert self_times(events) == [100 - 30 - 20, 30 - 5, 5, 20, 10, 15]
    assert self_times([(5, 10), (5, 10)]) == [0, 10]  # the same span: the first holds the second
    assert self_times([]) == []


def test_uncounted_events_are_their_parent_s_own_work():
    # an op [0, 100] holds a ParallelFor [10, 60] (framework) holding an op [20, 30]; an
    # executor span [200, 300] (framework) holds two ops
    events = [(0, 100), (10, 50), (20, 10), (200, 100), (210, 20), (240, 30)]
    counted = [True, False, True, False, True, True]
    assert self_times(events, counted) == [100 - 10, 50, 10, 100, 20, 30]
    assert outermost(events) == 100 + 100
    assert outermost([(0, 10), (5, 10), (20, 5)]) == 15 + 5  # the union of the spans


@pytest.mark.parametrize(
    ("op_name", "layer"),
    [
        ("folded_1/inner_lstm_1/while/body/_1/folded_1/inner_lstm_1/while/add", "inner_lstm"),
        ("gradient_tape/folded_1/outer_lstm_1/while/MatMul", "outer_lstm"),
        ("StatefulPartitionedCall/folded_1/conv_12/BiasAdd", "conv"),
        ("conv/Conv2D", "conv"),
        ("folded_1/Identity", OUTSIDE),  # the model's own scope is no layer
        ("StatefulPartitionedCall_1/sgd/AssignSubVariableOp", OUTSIDE),
        ("convolution/conv_x", OUTSIDE),  # neither a name nor a name with an _N suffix
        ("jit(counted)/transpose(jvp(inner_lstm))/while/body/dot_general", "inner_lstm"),
        ("jit(forward_backward)/jvp(conv)/conv_general_dilated", "conv"),
        ("jit(update)/sgd/sub", OUTSIDE),
        ("", OUTSIDE),
    ],
)
def test_an_op_belongs_to_the_first_layer_in_its_scope(op_name, layer):
    assert layer_of(op_name, LAYERS) == layer


def test_a_layer_named_like_another_with_a_suffix_is_matched_exactly():
    names = ["fold", "unfold", "lstm", "lstm_1"]
    assert layer_of("m_1/unfold_1/Reshape", names) == "unfold"
    assert layer_of("m_1/fold_3/Reshape", names) == "fold"
    assert layer_of("m_1/lstm_1/MatMul", names) == "lstm_1"  # the exact name first
    assert layer_of("m_1/lstm_1_1/MatMul", names) == "lstm_1"


def test_only_events_inside_the_steps_count_per_step_at_self_time():
    space, host = space_with_steps()
    thread = "tf_Compute/1"
    for base in (0, 200):  # the same work in both steps
        host.event(thread, "ExecutorState::Process", base + 10, 80)  # framework: not op time
        host.event(thread, "m_1/conv_1/Conv2D:Conv2D", base + 12, 20, "Conv2D")
        host.event(thread, "ParallelFor", base + 14, 15)  # the kernel's own work
        host.event(thread, "m_1/inner_lstm_1/while:While", base + 40, 40, "While")
        host.event(thread, "m_1/inner_lstm_1/while/body/_1/MatMul:MatMul", base + 45, 10, "MatMul")
        host.event(thread, "m_1/inner_lstm_1/while/body/_1/Tanh:Tanh", base + 60, 5, "Tanh")
        host.event(thread, "m_1/Identity:Identity", base + 85, 4, "Identity")  # no layer
    host.event(thread, "m_1/conv_1/Conv2D:Conv2D", 150, 30, "Conv2D")  # between the steps
    host.event(thread, "m_1/conv_1/Conv2D:Conv2D", 290, 20, "Conv2D")  # runs past step 2
    host.event("python", "EagerLocalExecute: __inference_forward_1", 5, 90)  # framework
    summary = summarise(space, LAYERS)
    assert summary.steps == 2 and summary.step_s == pytest.approx((100e-6, 100e-6))
    time = dict(zip(summary.layers["layer"], summary.layers["time_s"], strict=True))
    assert time == pytest.approx(
        {"conv": 20e-6, "inner_lstm": 40e-6, "outer_lstm": 0.0, OUTSIDE: 4e-6}, abs=1e-15
    )
    assert list(summary.layers["layer"]) == [*LAYERS, OUTSIDE]
    ops = dict(zip(summary.layers["layer"], summary.layers["ops"], strict=True))
    assert ops == {"conv": 1, "inner_lstm": 3, "outer_lstm": 0, OUTSIDE: 1}
    types = dict(zip(summary.op_types["type"], summary.op_types["time_s"], strict=True))
    # While's self time: 40 - 10 - 5; the op types add up to the same op time as the layers
    assert types == pytest.approx(
        {"Conv2D": 20e-6, "While": 25e-6, "MatMul": 10e-6, "Tanh": 5e-6, "Identity": 4e-6}
    )
    assert list(summary.op_types["type"])[:2] == ["While", "Conv2D"]  # most time first
    assert summary.op_s == pytest.approx(64e-6) == summary.op_types["time_s"].sum()
    assert summary.layers["share"].sum() == pytest.approx(1.0)
    lines = summary.lines.set_index("line")
    assert lines.loc[f"/host:CPU {thread}", "op_s"] == pytest.approx(64e-6)
    assert lines.loc[f"/host:CPU {thread}", "busy_s"] == pytest.approx(80e-6)
    assert lines.loc["/host:CPU python", "op_s"] == 0.0
    assert lines.loc["/host:CPU python", "busy_s"] == pytest.approx(45e-6)  # 90 us, 2 steps


def test_a_tf_op_stat_names_the_op_when_the_event_name_does_not():
    space, host = space_with_steps(((0, 100),))
    host.event("tf_Compute/1", "kernel", 10, 30, tf_op="m_1/outer_lstm_1/MatMul:MatMul")
    summary = summarise(space, LAYERS)
    assert summary.layers.set_index("layer").loc["outer_lstm", "time_s"] == pytest.approx(30e-6)
    assert list(summary.op_types["type"]) == ["MatMul"]


def test_device_events_are_ops_named_by_their_annotation():
    space, host = space_with_steps(((0, 100),))
    host.event("tf_Compute/1", "m_1/outer_lstm_1/CudnnRNNV3:CudnnRNNV3", 5, 10, "CudnnRNNV3")
    device = PlaneBuilder(space, "/device:GPU:0")
    annotation = "forward::m_1/outer_lstm_1/CudnnRNNV3:CudnnRNNV3"
    device.event(
        "Stream #7(Compute)", "RNN_blockPersist_fp_LSTM", 20, 50, kernel_annotation=annotation
    )
    device.event("Stream #7(Compute)", "volta_sgemm_128x64_nn", 75, 5)  # no annotation
    summary = summarise(space, LAYERS)
    row = summary.layers.set_index("layer")
    assert row.loc["outer_lstm", "host_s"] == pytest.approx(10e-6)
    assert row.loc["outer_lstm", "device_s"] == pytest.approx(50e-6)
    assert row.loc["outer_lstm", "time_s"] == pytest.approx(60e-6)
    assert row.loc[OUTSIDE, "device_s"] == pytest.approx(5e-6)
    types = dict(zip(summary.op_types["type"], summary.op_types["time_s"], strict=True))
    assert types == pytest.approx({"CudnnRNNV3": 60e-6, "volta_sgemm_128x64_nn": 5e-6})
    assert "/device:GPU:0 Stream #7(Compute)" in set(summary.lines["line"])
    # The kernels that ran on the device, cuDNN's named as CUDA named it, with its TF op.
    kernels = summary.kernels.to_dict(orient="records")
    assert kernels == [
        {
            "kernel": "RNN_blockPersist_fp_LSTM",
            "op_type": "CudnnRNNV3",
            "layer": "outer_lstm",
            "time_s": pytest.approx(50e-6),
            "launches": 1.0,
        },
        {
            "kernel": "volta_sgemm_128x64_nn",
            "op_type": "volta_sgemm_128x64_nn",
            "layer": OUTSIDE,
            "time_s": pytest.approx(5e-6),
            "launches": 1.0,
        },
    ]
    assert summarise(space_with_steps(((0, 100),))[0], LAYERS).kernels.empty  # a CPU capture


def test_xla_thunks_take_their_layer_and_opcode_from_the_hlo_module():
    space, host = space_with_steps(((0, 100),))
    proto = hlo_pb2.HloProto()
    computation = proto.hlo_module.computations.add(name="main")
    proto.hlo_module.name = "a_inference_forward_1"
    for name, opcode, op_name in (
        ("while.6", "while", "m_1/inner_lstm_1/while"),
        ("dot.3", "dot", "m_1/inner_lstm_1/while/lstm_cell_1/MatMul"),
        ("copy.1", "copy", ""),
    ):
        instruction = computation.instructions.add(name=name, opcode=opcode)
        instruction.metadata.op_name = op_name
    metadata = space.planes.add(name="/host:metadata")
    metadata.stat_metadata[1].id, metadata.stat_metadata[1].name = 1, "Hlo Proto"
    metadata.event_metadata[156].id = 156
    metadata.event_metadata[156].name = proto.hlo_module.name
    metadata.event_metadata[156].stats.add(metadata_id=1, bytes_value=proto.SerializeToString())
    line = "python"
    host.event(line, "__inference_forward_1:__inference_forward_1", 2, 90, "__inference_forward_1")
    host.event(line, "CpuExecutable::ExecuteAsyncOnStream", 4, 80)
    host.event(line, "while.6", 10, 50, hlo_op="while.6", program_id=156)
    host.event(line, "dot.3", 20, 10, hlo_op="dot.3", program_id=156)
    host.event(line, "copy.1", 70, 5, hlo_op="copy.1", program_id=156)
    host.event(line, "fusion.9", 76, 2, hlo_op="fusion.9", program_id=999)  # unknown module
    summary = summarise(space, LAYERS)
    time = dict(zip(summary.layers["layer"], summary.layers["time_s"], strict=True))
    # the function op holds the executable (its own work) and, inside that, the thunks: its
    # self time is 90 - 50 - 5 - 2; while: 50 - 10; outside: the function, copy and fusion
    assert time == pytest.approx(
        {"conv": 0.0, "inner_lstm": 50e-6, "outer_lstm": 0.0, OUTSIDE: 40e-6}, abs=1e-15
    )
    types = dict(zip(summary.op_types["type"], summary.op_types["time_s"], strict=True))
    assert types == pytest.approx(
        {
            "XLA while": 40e-6,
            "XLA dot": 10e-6,
            "XLA function": 33e-6,
            "XLA copy": 5e-6,
            "XLA fusion": 2e-6,
        }
    )


def test_a_capture_without_step_markers_is_refused():
    space = xplane_pb2.XSpace()
    PlaneBuilder(space, "/host:CPU").event("python", "step", 0, 10)  # no step_num: not a marker
    assert step_intervals(space) == []
    with pytest.raises(ValueError, match="no step marker"):
        summarise(space, LAYERS)

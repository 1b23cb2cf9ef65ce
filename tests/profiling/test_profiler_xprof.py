"""An independent check of the reader's op types: XProf (the TensorFlow Profiler's own tools,
the `xprof` package of requirements-dev.txt) reduces the same capture to its framework op
stats, and its host self time and count per op type must equal ours (`make test` installs it).
Not under XLA, whose thunks XProf groups by HLO category instead."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from xprof.convert import raw_to_tool_data

from hierlstm.config import RunConfig, Timing
from hierlstm.profiling import profile


def xprof_op_types(xplane: str) -> tuple[Counter, Counter]:
    """Host self time (microseconds) and occurrences per op type, as XProf's framework op
    stats table gives them."""
    data, _ = raw_to_tool_data.xspace_to_tool_data([xplane], "framework_op_stats", {})
    table = json.loads(data)[0]
    columns = [column["id"] for column in table["cols"]]
    self_us, count = Counter(), Counter()
    for row in table["rows"]:
        cells = dict(zip(columns, (cell.get("v") for cell in row["c"]), strict=True))
        if cells["host_or_device"] == "Host" and cells["type"] != "IDLE":
            self_us[cells["type"]] += cells["total_self_time"]
            count[cells["type"]] += cells["occurrences"]
    return self_us, count


@pytest.mark.parametrize("variant", ["nested", "folded", "fused"])
def test_op_type_self_times_agree_with_xprof(variant, tmp_path):
    config = RunConfig(variant=variant, batch_size=2, time_steps=4)
    result = profile(config, Timing(warmup=1, repeats=2), steps=2, logdir=tmp_path)
    theirs, their_count = xprof_op_types(result.trace)
    ours = {row.type: row.time_s * result.steps * 1e6 for row in result.op_types.itertuples()}
    our_count = {row.type: round(row.ops * result.steps) for row in result.op_types.itertuples()}
    assert set(ours) == set(theirs)
    for name, microseconds in ours.items():
        assert microseconds == pytest.approx(theirs[name], rel=1e-6, abs=1e-3), name
    assert our_count == dict(their_count)

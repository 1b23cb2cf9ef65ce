"""Where a run happens is read from the backends' registry records alone (`dispatch.place`), so a
new row is placed by its record; a sweep in the workers is the one sweep loop, a refused value a
failed row; `hierlstm.measure` returns one `Stored` record, stored ids and refusal beside the value.
No process started: the runs are stand-ins."""

import collections
import dataclasses

import pytest
from factories import make_result

from hierlstm import measure
from hierlstm.backends import dispatch
from hierlstm.config import RunConfig, Timing
from hierlstm.refusals import Refusal, Refused
from hierlstm.registry import BACKEND_RECORDS, BACKENDS

TIMING = Timing(warmup=0, repeats=1)
Point = collections.namedtuple("Point", "backend")  # the one field of a config the dispatch reads


@pytest.mark.parametrize("name", BACKENDS)
def test_each_backend_runs_where_its_record_says(name):
    where = dispatch.place([RunConfig(variant="folded", backend=name)])
    expected = dispatch.InProcess if BACKEND_RECORDS[name].in_process else dispatch.InWorkers
    assert type(where) is expected
    assert dispatch.runs_here([name]) is BACKEND_RECORDS[name].in_process


def test_a_new_backend_row_is_placed_by_its_record(monkeypatch):
    tensorflow = BACKEND_RECORDS["tensorflow"]
    here = dataclasses.replace(tensorflow, name="here_too")
    elsewhere = dataclasses.replace(tensorflow, name="elsewhere", in_process=False)
    monkeypatch.setitem(BACKEND_RECORDS, here.name, here)
    monkeypatch.setitem(BACKEND_RECORDS, elsewhere.name, elsewhere)
    assert type(dispatch.place([Point("here_too"), Point("tensorflow")])) is dispatch.InProcess
    # one config in a worker sends every config of the run to the workers
    assert type(dispatch.place([Point("here_too"), Point("elsewhere")])) is dispatch.InWorkers
    # a record changed is a run moved: TensorFlow's configs follow its row, not its name
    monkeypatch.setitem(BACKEND_RECORDS, "tensorflow", elsewhere)
    assert type(dispatch.place([RunConfig()])) is dispatch.InWorkers


class RefusingStore:
    """Takes `room` results, then refuses every write as a full disk."""

    def __init__(self, room: int):
        self.room, self.rows = room, []

    def add(self, result) -> str:
        if len(self.rows) >= self.room:
            raise Refused(Refusal("results", "/tmp/results.sqlite", "full"))
        self.rows.append(result)
        return f"id-{len(self.rows)}"


def test_a_sweep_in_the_workers_refuses_a_value_as_a_row_and_stores_the_others(monkeypatch):
    measured = []

    class Workers(dispatch.InWorkers):
        def benchmark(self, config, timing, *, on_progress=None):
            measured.append(config.time_steps)
            return make_result(config=config)

    monkeypatch.setattr(measure, "place", lambda configs: Workers())
    config = RunConfig(variant="folded", batch_size=2, time_steps=4, backend="jax")
    store = RefusingStore(room=1)
    stored = measure.sweep_and_store(config, "time_steps", [3, 0, 5], TIMING, store)
    frame = stored.value
    assert measured == [3, 5]  # the refused value has no point to measure
    assert list(frame["status"]) == ["ok", "failed", "ok"]
    assert frame["error"][1].startswith("invalid setting: time_steps must be between")
    assert list(frame.columns[:5]) == ["variant", "axis", "value", "status", "error"]
    # the store took one point and refused the next: the sweep went on, the refusal is its reason
    assert stored.ids == ("id-1",) and stored.first_id == "id-1"
    assert isinstance(stored.refused, Refused) and stored.reason == str(stored.refused)


def test_a_run_that_stored_everything_has_no_reason():
    stored = measure.Keeper(RefusingStore(room=2))
    stored(make_result(), None, make_result())
    done = stored.done("measured")
    assert (done.value, done.ids, done.refused, done.reason) == (
        "measured",
        ("id-1", "id-2"),
        None,
        "",
    )

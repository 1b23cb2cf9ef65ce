"""The interleaved rounds as a pure loop, with fake runs (no TensorFlow): the order A B C, A B C,
warm-up rounds left out of the samples, a failing config dropped while the others go on, the
progress, and the paired speed-ups."""

import math

import numpy as np
import pytest
from factories import make_result

from hierlstm.config import RunConfig
from hierlstm.timing.rounds import (
    MAX_BURST,
    Sample,
    Track,
    burst_calls,
    comparison,
    interleave,
    timer_rounds,
    tracks_for,
)
from hierlstm.timing.summary import failed_record

CONFIGS = [RunConfig(variant=variant) for variant in ("folded", "nested", "fused")]


class Broke(Exception):
    """A run's failure, as an out-of-memory error would be."""


class FakeRun:
    """A prepared run whose rounds take the times `steps` gives, one per call, in order; it
    raises Broke at the call numbered `breaks_at` (counting from 1)."""

    def __init__(self, config, log, steps, breaks_at=None):
        self.config, self.log, self.steps, self.breaks_at = config, log, iter(steps), breaks_at
        self.calls = 0

    def sample(self) -> Sample:
        self.calls += 1
        self.log.append(self.config.variant)
        if self.calls == self.breaks_at:
            raise Broke(f"{self.config.variant} ran out of memory")
        step = next(self.steps)
        return Sample({"step": step, "forward": step / 2}, peak_bytes=self.calls, peak_kind="fake")


def run_rounds(steps, *, warmup=1, repeats=3, breaks=None, refuses=()):
    """The rounds of CONFIGS, config i taking the times steps[i]; `breaks` {variant: call}
    makes that run fail at that call, `refuses` fails those variants' preparation."""
    log, progress, breaks = [], [], breaks or {}
    tracks = tracks_for(iter(CONFIGS), baseline=0)

    def prepare(config, *, progress):
        progress(0.0, "building")
        if config.variant in refuses:
            raise Broke(f"{config.variant} cannot be built")
        index = CONFIGS.index(config)
        return FakeRun(config, log, steps[index], breaks.get(config.variant))

    interleave(
        tracks,
        prepare,
        FakeRun.sample,
        warmup=warmup,
        repeats=repeats,
        failures=(Broke,),
        fail=lambda track, error: track.drop(failed_record(track.config, str(error), **WHERE)),
        progress=lambda fraction, message: progress.append((fraction, message)),
    )
    return tracks, log, progress


def compared(tracks, baseline):
    """`comparison` of the tracks, each live one's result a stand-in (results are made by the
    harness or the pool, tested there)."""
    results = [track.failure or make_result(config=track.config) for track in tracks]
    return comparison(tracks, results, baseline)


WHERE = {"device": "/CPU:0", "versions": {}}
STEPS = [[9e-3, 1e-3, 2e-3, 4e-3], [9e-3, 2e-3, 2e-3, 2e-3], [9e-3, 4e-3, 1e-3, 8e-3]]


def test_every_round_samples_each_config_once_in_order_and_the_warm_up_is_not_kept():
    tracks, log, _ = run_rounds(STEPS, warmup=1, repeats=3)
    assert log == ["folded", "nested", "fused"] * 4  # one warm-up round, then three timed
    assert [track.steps for track in tracks] == [steps[1:] for steps in STEPS]
    assert all(track.failure is None and track.live for track in tracks)


def test_a_config_that_fails_is_dropped_and_the_others_go_on():
    # nested breaks at its third call: the second timed round (one warm-up round first).
    tracks, log, _ = run_rounds(STEPS, breaks={"nested": 3})
    folded, nested, fused = tracks
    assert log == ["folded", "nested", "fused"] * 3 + ["folded", "fused"]
    assert not nested.live and nested.failure.error == "nested ran out of memory"
    assert nested.steps == [2e-3]  # what it took before it failed
    assert folded.steps == STEPS[0][1:] and fused.steps == STEPS[2][1:]
    speedups = [entry.speedup.median for entry in compared(tracks, baseline=0).entries]
    assert speedups[0] == 1.0 and math.isnan(speedups[1]) and not math.isnan(speedups[2])


def test_a_config_that_cannot_be_prepared_takes_no_round():
    tracks, log, progress = run_rounds(STEPS, refuses=("folded",))
    assert tracks[0].run is None and tracks[0].failure.error == "folded cannot be built"
    assert "folded" not in log and tracks[1].steps == STEPS[1][1:]
    assert "folded (0): failed: folded cannot be built" in [message for _, message in progress]
    entries = compared(tracks, baseline=0).entries
    assert all(math.isnan(entry.speedup.median) for entry in entries)


def test_a_compare_needs_a_config_and_a_baseline_among_them():
    with pytest.raises(ValueError, match="compare needs at least one config; got none."):
        tracks_for([], baseline=0)
    with pytest.raises(ValueError, match="baseline must be an index from 0 to 2; got 3."):
        tracks_for(CONFIGS, baseline=3)


def test_an_error_that_is_no_run_failure_raises():
    def buggy(run):
        raise KeyError("step")  # a bug of ours, not the run's failure

    track = Track(CONFIGS[0])
    with pytest.raises(KeyError):
        interleave(
            [track],
            lambda config, progress: "run",
            buggy,
            warmup=0,
            repeats=1,
            failures=(Broke,),
            fail=lambda track, error: track.drop(failed_record(track.config, str(error), **WHERE)),
        )
    assert track.failure is None


def test_progress_rises_through_the_preparations_the_warm_up_and_each_round():
    _, _, progress = run_rounds(STEPS, warmup=1, repeats=3)
    fractions = [fraction for fraction, _ in progress]
    assert all(later > earlier for earlier, later in zip(fractions, fractions[1:], strict=False))
    assert 0 < fractions[0] and fractions[-1] == pytest.approx(0.95)
    messages = [message for _, message in progress]
    assert messages[:3] == ["folded (0): building", "nested (1): building", "fused (2): building"]
    assert messages[3:] == [
        "warm-up round 1/1",
        "round 1/3: 1, 2, 4 ms",
        "round 2/3: 2, 2, 1 ms",
        "round 3/3: 4, 2, 8 ms",
    ]


def test_a_track_keeps_each_phase_and_the_largest_memory_peak():
    (track, *_), _, _ = run_rounds(STEPS)
    assert track.phases() == {"forward": [step / 2 for step in STEPS[0][1:]]}
    assert track.peak_bytes == 4 and track.peak_kind == "fake"  # calls 2 to 4 were timed
    assert Track(CONFIGS[0]).phases() == {} and Track(CONFIGS[0]).peak_bytes == 0


def test_speedups_are_the_spread_of_the_ratios_paired_within_each_round():
    tracks, _, _ = run_rounds(STEPS)
    result = compared(tracks, baseline=1)
    for entry, track in zip(result.entries, tracks, strict=True):
        ratios = np.array(tracks[1].steps) / np.array(track.steps)
        assert entry.speedup.median == np.median(ratios)
        assert (entry.speedup.p10, entry.speedup.p90) == tuple(np.percentile(ratios, [10, 90]))
        # the entry is the track's: its samples, in the order taken, and no worker
        assert entry.samples == tuple(track.samples) and entry.pid == 0
    speedup = result.entries[1].speedup
    assert speedup.median == speedup.p10 == speedup.p90 == 1.0 and result.baseline == 1


@pytest.mark.parametrize(
    ("rotate", "order"),
    [(False, "AB" * 2 + "AB" * 3), (True, "AB" * 2 + "AB" + "BA" + "AB")],
)
def test_timer_rounds_warm_up_untimed_then_time_each_in_turn(rotate, order):
    log, seconds = [], iter(range(100))

    def timer(name):
        def call():
            log.append(name)
            return next(seconds)

        return call

    samples = timer_rounds({"A": timer("A"), "B": timer("B")}, 3, warmup=2, rotate=rotate)
    assert "".join(log) == order
    timed = order[4:]  # the warm-up's four calls are not samples
    assert samples == {name: [4 + i for i, n in enumerate(timed) if n == name] for name in "AB"}


def test_a_burst_is_the_mean_of_back_to_back_calls_sized_by_the_last_warm_up_call():
    log = []

    def timer(name, seconds):
        def call():
            log.append(name)
            return seconds.pop(0)

        return call

    # A's last warm-up call took 4 ms: 5 calls fill a 20 ms burst; B's 30 ms: one call
    timers = {"A": timer("A", [9.0, 0.004, 1, 2, 3, 4, 5]), "B": timer("B", [9.0, 0.03, 7])}
    samples = timer_rounds(timers, 1, warmup=2, burst_seconds=0.02)
    assert "".join(log) == "AB" * 2 + "A" * 5 + "B"
    assert samples == {"A": [3.0], "B": [7.0]}
    assert burst_calls(1e-6, 0.02) == MAX_BURST and burst_calls(0.0, 0.02) == MAX_BURST

"""Interleaved rounds: configs timed in turn (A B C, A B C, ...), so drift falls on each alike; the
one loop behind the harness's and the backends' `compare`. No TensorFlow or Keras.

    tracks = tracks_for(configs, baseline)
    interleave(tracks, prepare, sample, warmup=2, repeats=5, failures=(...), fail=...)
    compared = comparison(tracks, results, baseline)  # a result per track, made by the caller

An error of `failures` goes to `fail(track, error)`, which drops that track; the others go on.
`timer_rounds` is the same loop for plain timers."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from hierlstm.config import RunConfig
from hierlstm.records import BenchResult, CompareEntry, CompareResult, Stats
from hierlstm.timing.basics import Progress, no_progress, scaled_progress


@dataclasses.dataclass(frozen=True)
class Sample:
    """One timed round of one run: seconds by phase ("step", and a training run's phases
    beside it) and the memory peak a probe saw during the round."""

    times: dict[str, float]
    peak_bytes: int
    peak_kind: str


@dataclasses.dataclass
class Track:
    """One config's part in the rounds: its prepared run (None until prepared), its failed
    record once it failed (it then takes no more rounds), and its timed samples in order."""

    config: RunConfig
    run: Any = None
    failure: BenchResult | None = None
    samples: list[Sample] = dataclasses.field(default_factory=list)

    @property
    def live(self) -> bool:
        return self.run is not None and self.failure is None

    def drop(self, failure: BenchResult) -> None:
        self.failure = failure

    @property
    def steps(self) -> list[float]:
        """The step's timed seconds, one per round."""
        return [sample.times["step"] for sample in self.samples]

    def phases(self) -> dict[str, list[float]]:
        """A training run's phases' timed seconds, {phase: one per round}; {} for inference."""
        names = [name for name in (self.samples[0].times if self.samples else ()) if name != "step"]
        return {name: [sample.times[name] for sample in self.samples] for name in names}

    @property
    def peak_bytes(self) -> int:
        return max((sample.peak_bytes for sample in self.samples), default=0)

    @property
    def peak_kind(self) -> str:
        return self.samples[-1].peak_kind if self.samples else ""


def tracks_for(configs: Iterable[RunConfig], baseline: int) -> list[Track]:
    """A track per config, for a compare against config `baseline`; ValueError when there is
    no config or no such baseline."""
    configs = list(configs)
    if not configs:
        raise ValueError("compare needs at least one config; got none.")
    if not 0 <= baseline < len(configs):
        raise ValueError(f"baseline must be an index from 0 to {len(configs) - 1}; got {baseline}.")
    return [Track(config) for config in configs]


def interleave(
    tracks: Sequence[Track],
    prepare: Callable[..., Any],
    sample: Callable[[Any], Sample],
    *,
    warmup: int,
    repeats: int,
    failures: tuple[type[BaseException], ...],
    fail: Callable[[Track, BaseException], None],
    progress: Progress = no_progress,
) -> None:
    """Prepares every track, then runs `warmup` untimed rounds and `repeats` timed ones, each
    sampling every live track once. Progress: preparing 0-0.3, warm-up 0.3-0.4, rounds 0.4-0.95."""
    count = len(tracks)
    for index, track in enumerate(tracks):
        # Each config starts just above where the previous ended, so fractions keep increasing.
        start, end = 0.3 * (index + 0.01) / count, 0.3 * (index + 1) / count
        prefix = f"{track.config.variant} ({index}): " if count > 1 else ""
        span = scaled_progress(progress, start, end, prefix)
        try:
            track.run = prepare(track.config, progress=span)
        except failures as error:
            fail(track, error)
            span(1.0, f"failed: {track.failure.error}")
    warming, timing = scaled_progress(progress, 0.3, 0.4), scaled_progress(progress, 0.4, 0.95)
    for round_index in range(warmup + repeats):
        timed = round_index >= warmup
        for track in [track for track in tracks if track.live]:
            try:
                taken = sample(track.run)
            except failures as error:
                fail(track, error)
                continue
            if timed:
                track.samples.append(taken)
        if not timed:
            warming((round_index + 1) / warmup, f"warm-up round {round_index + 1}/{warmup}")
            continue
        number = round_index - warmup + 1
        latest = [f"{track.steps[-1] * 1e3:.3g}" for track in tracks if track.live]
        timing(number / repeats, f"round {number}/{repeats}: {', '.join(latest) or '-'} ms")


def paired_speedup(base: Track, track: Track) -> Stats:
    """Median, p10 and p90 over rounds of `base`'s time / `track`'s, the two taken in the same
    round (a compare's speed-up); NaN where either failed."""
    if track.failure is not None or base.failure is not None:
        return Stats()
    return Stats.of(first / second for first, second in zip(base.steps, track.steps, strict=True))


def comparison(
    tracks: Sequence[Track], results: Sequence[BenchResult], baseline: int
) -> CompareResult:
    """The compare of `tracks` against track `baseline`, one entry per track: its result (its
    record or failed record, made by the caller), paired speed-up, strategy details (a prepared
    run's `details`, {} for a failed one), timed samples and worker pid (a worker's run's
    `worker_pid`, 0 in this process)."""
    entries = tuple(
        CompareEntry(
            result=result,
            speedup=paired_speedup(tracks[baseline], track),
            details={} if track.failure else dict(getattr(track.run, "details", {})),
            samples=tuple(track.samples),
            pid=getattr(track.run, "worker_pid", 0),
        )
        for track, result in zip(tracks, results, strict=True)
    )
    return CompareResult(entries, baseline)


MAX_BURST = 50


def burst_calls(seconds: float, burst_seconds: float) -> int:
    """Back-to-back calls of `seconds` each that last about `burst_seconds`: 1 to MAX_BURST."""
    return max(1, min(MAX_BURST, round(burst_seconds / max(seconds, 1e-9))))


def timer_rounds(
    timers: Mapping[Hashable, Callable[[], float]],
    repeats: int,
    *,
    warmup: int = 2,
    rotate: bool = False,
    burst_seconds: float = 0.0,
    progress: Progress = no_progress,
) -> dict[Hashable, list[float]]:
    """Each timer (a call that returns its own seconds) called `warmup` times untimed, then
    `repeats` rounds of each in turn; {name: its seconds, one per round}. `rotate` starts each
    round one timer later (A B C, B C A, ...), so no timer always runs first after the others.
    `burst_seconds`: a sample is the mean of a burst of back-to-back calls lasting about that long,
    as a user's loop calls a step (thread pools that fall asleep between single calls stay awake);
    each timer's count is fixed by its last warm-up call, at most MAX_BURST."""
    names = list(timers)
    calls = dict.fromkeys(names, 1)
    for _ in range(warmup):
        for name, timer in timers.items():
            seconds = timer()
            if burst_seconds > 0:
                calls[name] = burst_calls(seconds, burst_seconds)
    samples: dict[Hashable, list[float]] = {name: [] for name in names}
    for round_index in range(repeats):
        shift = round_index % len(names) if rotate else 0
        for name in names[shift:] + names[:shift]:
            burst = [timers[name]() for _ in range(calls[name])]
            samples[name].append(sum(burst) / len(burst))
        progress((round_index + 1) / repeats, f"round {round_index + 1}/{repeats}")
    return samples

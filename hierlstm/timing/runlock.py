"""One timing run per device at a time in a process: two runs sharing a device would slow each
other down and both timings would be wrong.

`hold(keys)` takes the lock of every device a run uses (in sorted order, so two runs over
overlapping devices cannot deadlock) and releases them in `finally`, whatever stops the run:
an exception, a Streamlit rerun or a closed tab (both raised inside the run's progress
updates). While it waits it calls `on_wait(holder, waited_s)` every `poll` seconds, so a
caller can say "waiting for another run" and be interrupted there; the wait happens before the
run starts, so it is never part of a timing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Iterable, Iterator

from hierlstm.config import RunConfig


@dataclasses.dataclass
class _DeviceLock:
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)
    holder: str = ""  # what the run holding it said it is
    since: float = 0.0  # time.monotonic() when it was taken


_LOCKS: dict[str, _DeviceLock] = {}
_REGISTRY = threading.Lock()


def _device_lock(key: str) -> _DeviceLock:
    with _REGISTRY:
        return _LOCKS.setdefault(key, _DeviceLock())


def device_keys(config: RunConfig) -> tuple[str, ...]:
    """The physical devices `config` runs on: "CPU" (every logical CPU device shares the
    processor) or "GPU:N" per GPU."""
    from hierlstm.timing.devices import resolve_device

    if config.strategy == "none":
        names = [resolve_device(config.device)]
    else:
        from hierlstm.timing.cluster import replica_device_specs

        names = list(replica_device_specs(config))
    keys = set()
    for name in names:
        kind, _, index = name.strip("/").upper().partition(":")
        keys.add("CPU" if kind == "CPU" else f"GPU:{index}")
    return tuple(sorted(keys))


def is_free(key: str) -> bool:
    return not _device_lock(key).lock.locked()


def holder(key: str) -> tuple[str, float]:
    """(what holds `key`'s lock, seconds it has held it), or ("", 0.0) when free."""
    state = _device_lock(key)
    if not state.lock.locked():
        return "", 0.0
    return state.holder, time.monotonic() - state.since


@contextlib.contextmanager
def hold(
    keys: Iterable[str],
    *,
    name: str = "a run",
    on_wait: Callable[[str, float], None] | None = None,
    poll: float = 0.5,
) -> Iterator[float]:
    """Holds every device lock in `keys`; yields the seconds spent waiting for them."""
    taken: list[_DeviceLock] = []
    start = time.monotonic()
    try:
        for key in sorted(set(keys)):
            state = _device_lock(key)
            while not state.lock.acquire(timeout=poll):
                if on_wait is not None:
                    on_wait(state.holder, time.monotonic() - start)
            state.holder, state.since = name, time.monotonic()
            taken.append(state)
        yield time.monotonic() - start
    finally:
        for state in reversed(taken):
            state.holder = ""
            state.lock.release()

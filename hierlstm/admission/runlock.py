"""One timing run per physical device at a time, across every process on the machine: two runs
sharing a device would slow each other and both timings would be wrong.

`hold(keys)` takes, per device in sorted order (no deadlock), this process's turn (app sessions are
threads, served first come first served: `turns.TurnLock`) then an exclusive `fcntl.flock` on the
device's file, through a turnstile (`_take_file`).
The holder writes {"name", "program", "pid"} there, so a waiter can say whom it waits for
(`on_wait`, every `poll` seconds, before the run starts, so never timed). The system drops a flock
when its process dies, so a crash never leaves a device locked; both locks are released in
`finally`. Lock files live in HIERLSTM_LOCK_DIR, else $XDG_RUNTIME_DIR/hierlstm, else the data
folder's locks/; not beside HIERLSTM_DB, since two results files still share a device."""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from hierlstm import settings
from hierlstm.admission.turns import TurnLock
from hierlstm.config import RunConfig, data_folder
from hierlstm.hardware import physical_gpu
from hierlstm.i18n import has_text, t

LOCK_DIR_ENV = "HIERLSTM_LOCK_DIR"
_log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Holder:
    """Who holds a device: what its run said it is (an app page's lock key such as
    "benchmark", or a CLI command), which program ("app", "cli"; "" when unknown), its pid."""

    name: str
    program: str = ""
    pid: int = 0

    @property
    def here(self) -> bool:
        return self.pid == os.getpid()

    def describe(self, lang: str = "en") -> str:
        """ "the CLI, pid 4242", "a benchmark of another viewer", ... in `lang`."""
        key = f"lock.{self.name}"
        what = t(key, lang) if has_text(key, lang) else self.name
        if self.program == "cli":
            return t("run.waiting.cli", lang, pid=self.pid)
        if self.program == "app" and self.here:
            return t("run.waiting.viewer", lang, what=what)
        if self.program == "app":
            return t("run.waiting.server", lang, what=what, pid=self.pid)
        return t("run.waiting.other", lang, pid=self.pid or "?")


@dataclasses.dataclass
class _DeviceLock:
    turn: TurnLock = dataclasses.field(default_factory=TurnLock)  # this process's threads
    holder: Holder | None = None  # who in this process holds it
    since: float = 0.0  # time.monotonic() when it was taken
    file: int | None = None  # the open lock file while this process holds it


_LOCKS: dict[str, _DeviceLock] = {}
_REGISTRY = threading.Lock()


def _device_lock(key: str) -> _DeviceLock:
    with _REGISTRY:
        return _LOCKS.setdefault(key, _DeviceLock())


def device_keys(config: RunConfig, *, tensorflow: bool = True) -> tuple[str, ...]:
    """The physical devices `config` runs on: "CPU" (every logical CPU device shares the
    processor) or "GPU:N" per GPU. With `tensorflow=False` (a run in the backends' workers) they
    are found without importing TensorFlow: "auto" is the first GPU the driver lists, as
    TensorFlow, JAX and PyTorch CUDA builds all take it, else the CPU."""
    if not tensorflow:
        return (_device_key_without_tensorflow(config.device),)
    from hierlstm.hardware import resolve_device

    if config.strategy == "none":
        names = [resolve_device(config.device)]
    else:
        from hierlstm.distributed import replica_device_specs

        names = list(replica_device_specs(config))
    keys = set()
    for name in names:
        kind, _, index = name.strip("/").upper().partition(":")
        keys.add("CPU" if kind == "CPU" else f"GPU:{index}")
    return tuple(sorted(keys))


def _device_key_without_tensorflow(spec: str) -> str:
    if spec == "cpu":
        return "CPU"
    if spec.startswith("gpu:"):
        return f"GPU:{spec.split(':')[1]}"
    from hierlstm.hardware.gpu import visible_driver_gpus
    from hierlstm.hardware.nvidia import query_driver

    return "GPU:0" if visible_driver_gpus(query_driver().gpus, os.environ) else "CPU"


def lock_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The folder of the lock files (see the module docstring for the order)."""
    environ = os.environ if environ is None else environ
    if override := settings.read(LOCK_DIR_ENV, environ):
        return Path(override).expanduser()
    runtime = environ.get("XDG_RUNTIME_DIR", "").strip()
    if runtime and os.path.isabs(runtime) and os.access(runtime, os.W_OK | os.X_OK):
        return Path(runtime) / "hierlstm"
    return data_folder(environ) / "locks"


def lock_file_name(key: str, environ: Mapping[str, str] | None = None) -> str:
    """ "CPU" -> "cpu.lock"; "GPU:N" -> the machine-wide GPU ("gpu-1.lock" for GPU:0 under
    CUDA_VISIBLE_DEVICES=1, "gpu-GPU-8a3c....lock" for a UUID), so processes that see
    different GPU subsets still lock the same physical GPU."""
    environ = os.environ if environ is None else environ
    kind, _, index = key.partition(":")
    name = f"gpu-{physical_gpu(int(index), environ)}" if kind == "GPU" and index.isdigit() else key
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).lower() + ".lock"


def _read_holder(descriptor: int) -> Holder:
    try:
        record = json.loads(os.pread(descriptor, 4096, 0) or b"{}")
        return Holder(
            str(record.get("name", "")), str(record.get("program", "")), int(record["pid"])
        )
    except (OSError, ValueError, KeyError, TypeError):
        return Holder("")  # between the holder's lock and its write, or not ours


def _open_lock_file(key: str, suffix: str = "") -> int | None:
    folder = lock_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return os.open(folder / (lock_file_name(key) + suffix), os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as error:
        _log.warning(
            "no cross-process lock for %s (%s): runs of other processes may overlap; set %s "
            "to a writable folder",
            key,
            error,
            LOCK_DIR_ENV,
        )
        return None


def _poll_flock(descriptor: int, waiting: Callable[[], None]) -> None:
    """An exclusive flock on `descriptor`, tried without blocking, `waiting()` between tries
    (so a wait can be reported and interrupted)."""
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            waiting()


def _take_file(key: str, holder: Holder, waiting: Callable[[Holder], None]) -> int | None:
    """Opens `key`'s lock file and takes its flock through the key's turnstile (.turn): a waiter
    holds the turnstile, so a process running back to back cannot retake the device between its
    polls and starve it. `waiting(holder)` between tries names the holder."""
    descriptor = _open_lock_file(key)
    if descriptor is None:
        return None
    turnstile = _open_lock_file(key, ".turn")
    try:
        if turnstile is not None:
            _poll_flock(turnstile, lambda: waiting(_read_holder(descriptor)))
        _poll_flock(descriptor, lambda: waiting(_read_holder(descriptor)))
        record = json.dumps({"name": holder.name, "program": holder.program, "pid": holder.pid})
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, record.encode(), 0)
        return descriptor
    except BaseException:
        os.close(descriptor)  # closing drops the flock if it was taken
        raise
    finally:
        if turnstile is not None:
            os.close(turnstile)  # the next in line may take the turnstile


def _release_file(descriptor: int | None) -> None:
    if descriptor is None:
        return
    try:
        os.ftruncate(descriptor, 0)
    finally:
        os.close(descriptor)


def is_free(key: str) -> bool:
    """Whether no run of this process holds `key` (other processes: see `file_holder`)."""
    return not _device_lock(key).turn.locked()


def holder(key: str) -> tuple[str, float]:
    """(the name of the run of this process holding `key`, seconds it has held it), or
    ("", 0.0) when no run of this process holds it."""
    state = _device_lock(key)
    if not state.turn.locked() or state.holder is None:
        return "", 0.0
    return state.holder.name, time.monotonic() - state.since


def file_holder(key: str) -> Holder | None:
    """Who holds `key`'s lock file, in any process on this machine; None when it is free."""
    descriptor = _open_lock_file(key)
    if descriptor is None:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        return None
    except BlockingIOError:
        return _read_holder(descriptor)
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def hold(
    keys: Iterable[str],
    *,
    name: str = "",
    program: str = "",
    on_wait: Callable[[Holder, float, int], None] | None = None,
    poll: float = 0.5,
) -> Iterator[float]:
    """Holds every device in `keys`, in this process and machine-wide; yields the seconds spent
    waiting for them, calling `on_wait(holder, seconds waited, place)` meanwhile (`place`: the
    runs ahead, 1 when next; another process's run counts one). `name` and `program` say who
    holds them to those who wait."""
    me = Holder(name, program, os.getpid())
    taken: list[_DeviceLock] = []
    start = time.monotonic()

    def waiting(other: Holder, place: int = 1) -> None:
        if on_wait is not None:
            on_wait(other, time.monotonic() - start, place)

    def waiting_for_file(other: Holder) -> None:  # first here, behind another process's run
        waiting(other)
        time.sleep(poll)

    try:
        for key in sorted(set(keys)):
            state = _device_lock(key)
            state.turn.acquire(
                lambda place, state=state: waiting(
                    state.holder or Holder("", program, me.pid), place
                ),
                poll,
            )
            taken.append(state)
            state.holder, state.since = me, time.monotonic()
            state.file = _take_file(key, me, waiting_for_file)
        yield time.monotonic() - start
    finally:
        for state in reversed(taken):
            try:
                _release_file(state.file)
            finally:
                state.file, state.holder = None, None
                state.turn.release()

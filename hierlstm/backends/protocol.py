"""Both ends of a backend worker's pipe: the JSON line format, a failed run's record and the
backends' versions made without importing them, and `Worker`, the child process on the pool's side.
No TensorFlow, no Keras."""

from __future__ import annotations

import base64
import collections
import contextlib
import json
import os
import pickle
import platform
import signal
import subprocess
import sys
import threading
from importlib import metadata
from pathlib import Path

from hierlstm.config import RunConfig
from hierlstm.records import BenchResult
from hierlstm.registry import BACKEND_RECORDS
from hierlstm.timing.summary import failed_record

MAX_ERROR_CHARS = 300
CANCEL_WAIT_S = 10.0  # a cancelled job's worker gets this long to answer before it is killed
_ROOT = Path(__file__).resolve().parents[2]  # the folder holding the hierlstm package
_STDERR_LINES = 200
_EXIT_WAIT_S = 10.0


def package_version(name: str) -> str:
    """An installed distribution's version without importing it ("" when absent)."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return ""


def backend_versions(backend: str) -> dict[str, str]:
    """python, keras, numpy and the backend's own package: stored with every result."""
    found = {
        "python": platform.python_version(),
        "keras": package_version("keras"),
        "numpy": package_version("numpy"),
        backend: package_version(backend),
    }
    return {key: value for key, value in found.items() if value}


def one_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return (lines[0] if lines else "unknown error")[:MAX_ERROR_CHARS]


def failed(config: RunConfig, error: str, versions: dict[str, str] | None = None) -> BenchResult:
    """A failed run's record, as `hierlstm.timing.failures.failed_result` makes it, without
    TensorFlow: the device is the config's spec, the versions the backend's."""
    versions = versions or backend_versions(config.backend)
    return failed_record(config, one_line(error), device=config.device, versions=versions)


def keras_failure_line(backend: str, error: BaseException) -> str:
    """One friendly line for a failed run on JAX or PyTorch, in the words of
    `hierlstm.timing.failures.error_line`."""
    from hierlstm.config import SettingError

    text = one_line(str(error) or type(error).__name__)
    if (
        isinstance(error, MemoryError)
        or "RESOURCE_EXHAUSTED" in str(error)
        or (type(error).__name__ == "OutOfMemoryError")
    ):
        return f"out of memory (try a smaller batch_size or time_steps): {text}"[:MAX_ERROR_CHARS]
    if isinstance(error, SettingError):
        return text
    return f"{backend} could not run this model ({type(error).__name__}): {text}"[:MAX_ERROR_CHARS]


def encode(message: dict) -> str:
    """One line of the protocol (NaN allowed: both ends are Python's json)."""
    return json.dumps(message, default=_json_default, allow_nan=True) + "\n"


def _json_default(value):
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON-able")


def _partial(line: dict) -> tuple:
    """(what a job's progress line carries of the run so far,) or () without it."""
    if "partial" not in line:
        return ()
    return (pickle.loads(base64.b64decode(line["partial"])),)


class WorkerDied(Exception):
    """A worker process that ended while a request was in flight; the message is the sentence
    a failed result carries."""


class WorkerBug(RuntimeError):
    """A worker answered that a bug of ours stopped a request: `details` is its traceback (also
    on the worker's stderr)."""

    def __init__(self, message: str, details: str = ""):
        super().__init__(message)
        self.details = details


def describe_exit(code: int | None) -> str:
    """ "exit code 3", "killed by SIGKILL", or "no exit code" (still running)."""
    if code is None:
        return "no exit code"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class Worker:
    """One backend's worker process and its pipes."""

    def __init__(self, backend: str, python: str = sys.executable, environment=None):
        self.backend = backend
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        # the Keras backend its process imports: its own, or the converter's for a runtime
        keras_backend = BACKEND_RECORDS[backend].keras
        environment = {**os.environ, **(environment or {}), "KERAS_BACKEND": keras_backend}
        path = environment.get("PYTHONPATH", "")
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_ROOT), path]))
        self.process = subprocess.Popen(
            [python, "-m", "hierlstm.backends.worker", backend],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            env=environment,
        )
        self._next_id = 0
        self._reader = threading.Thread(target=self._drain, daemon=True, name=f"{backend}-stderr")
        self._reader.start()

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def _drain(self) -> None:
        for line in self.process.stderr:
            if line.strip():
                self._stderr.append(line.rstrip())

    def _died(self) -> WorkerDied:
        try:
            code = self.process.wait(timeout=_EXIT_WAIT_S)
        except subprocess.TimeoutExpired:  # its stdout closed but it runs on: end it
            self.process.kill()
            code = self.process.wait()
        self._reader.join(timeout=2.0)
        last = self._stderr[-1] if self._stderr else "nothing"
        return WorkerDied(
            f"the {self.backend} worker (pid {self.pid}) died ({describe_exit(code)}); the last "
            f"line on its stderr: {one_line(last)}"
        )

    def request(self, op: str, *, on_progress=None, **fields) -> dict:
        """Sends one request and returns its answer; raises WorkerDied if the process ends
        first, WorkerBug if it answers that a bug stopped the request. A job's progress lines,
        before its answer, go to `on_progress(fraction, message)`, with a third argument where
        the line carries what the run has so far (its "partial", unpickled: the worker is our
        own process running our own function); whatever that raises (a browser's rerun, say)
        cancels the job (`cancel`) and is raised again."""
        self._next_id += 1
        message = {"id": self._next_id, "op": op, **fields}
        try:
            self.process.stdin.write(encode(message))
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._died() from None
        while "progress" in (answer := self._read()):
            try:
                if on_progress is not None:
                    on_progress(*answer["progress"], *_partial(answer))
            except BaseException:
                self.cancel()
                raise
        if answer.get("bug"):
            raise WorkerBug(
                f"the {self.backend} worker hit an internal error: {answer['error']}",
                answer.get("traceback", ""),
            )
        return answer

    def _read(self) -> dict:
        try:
            line = self.process.stdout.readline()
        except (OSError, ValueError):
            line = ""
        if not line:
            raise self._died()
        return json.loads(line)

    def cancel(self) -> None:
        """Stops the job in flight: SIGINT (the worker raises KeyboardInterrupt in it and
        answers), its remaining lines read; a worker that has not answered within
        CANCEL_WAIT_S is killed (the next request starts a new one)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGINT)
        timer = threading.Timer(CANCEL_WAIT_S, self.process.kill)
        timer.start()
        try:
            with contextlib.suppress(WorkerDied):
                while "progress" in self._read():
                    pass
        finally:
            timer.cancel()

    def close(self) -> None:
        """Asks the worker to exit, and ends it if it does not; waits for it either way."""
        if self.alive():
            with contextlib.suppress(WorkerDied, WorkerBug, OSError, ValueError):
                self.request("close")
            try:
                self.process.wait(timeout=_EXIT_WAIT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError, ValueError):
                stream.close()
        self._reader.join(timeout=2.0)

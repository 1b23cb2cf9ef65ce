"""One backend's worker process: `KERAS_BACKEND=jax python -m hierlstm.backends.worker jax` (a
runtime's worker imports Keras on its record's `keras_backend`, the converter's). One
JSON object per line: requests on stdin, answers on stdout (nothing else), logs on stderr.

    {"id": 1, "op": "prepare", "config": {...}, "seed": 0}
        -> {"id": 1, "ok": true, "handle": 1, "first_call_s", "kernel", "kernel_reason",
            "trace_count", "device", "pid"}
    {"id": 2, "op": "sample", "handle": 1}
        -> {"id": 2, "ok": true, "sample": {"step": s, ...phases}, "wall_s", "cpu_s",
            "peak_bytes", "peak_kind"}
    {"id": 3, "op": "result", "handle": 1, "samples": [...], "phases": {...}, "warmup": 3,
     "peak_bytes": 0, "peak_kind": "cpu_rss_growth"}
        -> {"id": 3, "ok": true, "row": BenchResult.to_row()}   (the handle is released)
    {"id": 4, "op": "check", "config": {...}, "seed": 0}  -> {"id": 4, "ok": true, "report": {...}}
    {"id": 5, "op": "profile", "config": {...}, "steps": 5, "warmup": 2, "repeats": 5,
     "seed": 0, "logdir": "DIR", "read": true}            -> {"id": 5, "ok": true, "profile": {...}}
    {"id": 6, "op": "job", "job": "<base64 pickle of execute>", "settings": {"HIERLSTM_DB": ...}}
        -> {"id": 6, "progress": [fraction, "message"]} ... (with "partial": a base64 pickle
           of what the run has so far, where it sends one: a learning curve), then {"id": 6,
           "ok": true, "outcome": "<base64 pickle of execute(progress)>"}, or "raised": the
           exception it raised, pickled, with its "traceback", or "cancelled": true after a
           SIGINT (`hierlstm.backends.dispatch.execute`)
    {"id": 7, "op": "close"}                              -> {"id": 7, "ok": true}, then exit 0

A run's failure answers {"ok": false, "row": <a failed row>, "error"} (no "row" when the config
itself is refused); a bug answers {"ok": false, "bug": true, "error", "traceback"}, the traceback
on stderr too. A job is one of hierlstm's own functions pickled by the server (`dispatch`), never
anything a user sent.
`wall_s` and `cpu_s` time the sample in this process, a second timer for the pool to check."""

from __future__ import annotations

import base64
import importlib
import json
import logging
import os
import pickle
import signal
import sys
import threading
import time
import traceback
from typing import IO, Any

from hierlstm.backends import runner
from hierlstm.backends.protocol import MAX_ERROR_CHARS, backend_versions, encode, failed, one_line
from hierlstm.config import RunConfig, SettingError
from hierlstm.timing.rss import peak_over_calls

_log = logging.getLogger("hierlstm.backends.worker")


# --- inside the worker: the requests, each answered by the backend's runner -----------------


def failure_line(backend: str, error: BaseException) -> str:
    """One friendly line, in the words of `hierlstm.timing.failures.error_line`."""
    return runner(backend).failure_line(error)


class Worker:
    """The requests of one backend's process: prepared runs by handle; what differs by framework
    is its runner's (`hierlstm.backends.runners`)."""

    def __init__(self, backend: str):
        self.backend = backend
        self.runner = runner(backend)
        self.failures = self.runner.run_failures()
        self.runs: dict[int, Any] = {}
        self._next = 0
        self.answers: IO[str] = sys.stdout  # where a job's progress lines go (`serve` sets it)
        self.cancellable = False  # a job is running: SIGINT cancels it (`interrupt`)

    @property
    def local(self):
        return importlib.import_module("hierlstm.backends.local")

    def config(self, request: dict) -> RunConfig:
        config = RunConfig(**request["config"])
        if config.backend != self.backend:
            raise SettingError(
                f"backend {config.backend!r} cannot run in the {self.backend} worker; each "
                "backend has its own process."
            )
        return config

    def prepare(self, request: dict) -> dict:
        config, seed = self.config(request), int(request.get("seed", 0))
        run = self.local.prepare(config, seed=seed, backend=self.backend)
        self._next += 1
        self.runs[self._next] = run
        return {
            "handle": self._next,
            "first_call_s": run.first_call_s,
            "kernel": run.kernel,
            "kernel_reason": run.kernel_reason,
            "trace_count": run.trace_count,
            "device": run.description,
            "pid": os.getpid(),
        }

    def sample(self, request: dict) -> dict:
        run = self.runs[request["handle"]]
        cpu, start = time.process_time(), time.perf_counter()
        with self.memory_probe(run.description) as probe:
            (sample,), peak = peak_over_calls(run.sample, 1, probe)
        wall = time.perf_counter() - start
        return {
            "sample": sample,
            "wall_s": wall,
            "cpu_s": time.process_time() - cpu,
            "peak_bytes": peak,
            "peak_kind": probe.kind,
        }

    def result(self, request: dict) -> dict:
        run = self.runs.pop(request["handle"])
        from hierlstm.timing.summary import run_result

        result = run_result(
            run,
            request["samples"],
            int(request["warmup"]),
            int(request.get("peak_bytes", 0)),
            str(request.get("peak_kind", "")),
            request.get("phases") or {},
        )
        return {"row": result.to_row()}

    def check(self, request: dict) -> dict:
        config, seed = self.config(request), int(request.get("seed", 0))
        return {"report": self.local.check(config, seed=seed, backend=self.backend)}

    def memory_probe(self, device: str):
        """A probe of one sample's memory peak on `device` (the runner's)."""
        return self.runner.memory_probe(device)

    def profile(self, request: dict) -> dict:
        return {"profile": self.runner.profile(self, self.config(request), request)}

    def job(self, request: dict) -> dict:
        """`execute(progress)` here, its progress sent as lines before the answer; a SIGINT
        while it runs cancels it."""
        execute = pickle.loads(base64.b64decode(request["job"]))
        for name, value in request.get("settings", {}).items():  # the server's, as they are now
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

        def progress(fraction: float, message: str, partial: Any = None) -> None:
            line = {"id": request.get("id"), "progress": [float(fraction), str(message)]}
            if partial is not None:  # what the run has so far, for the page to draw
                line["partial"] = _text(pickle.dumps(partial))
            self.answers.write(encode(line))
            self.answers.flush()

        self.cancellable = True
        try:
            outcome = execute(progress)
        except KeyboardInterrupt:
            return {"cancelled": True}
        except Exception as error:  # raised again in the server, as if it had run there
            try:
                raised = pickle.dumps(error)
                pickle.loads(raised)
            except Exception:  # one that does not survive pickling: `answer` says it in a line
                raise error from None
            return {"raised": _text(raised), "traceback": traceback.format_exc()}
        finally:
            self.cancellable = False
        return {"outcome": _text(pickle.dumps(outcome))}

    def interrupt(self, _signal, _frame) -> None:
        """SIGINT's handler: cancels a running job (KeyboardInterrupt inside it), else nothing."""
        if self.cancellable:
            raise KeyboardInterrupt

    def release(self, request: dict) -> dict:
        self.runs.pop(request["handle"], None)
        return {}

    def answer(self, request: dict) -> dict:
        """The answer to one request; a run's failure and a bug are answers too."""
        op = request.get("op")
        base = {"id": request.get("id")}
        handler = getattr(self, op, None) if op in OPS else None
        if handler is None:
            return {**base, "ok": False, "bug": True, "error": f"unknown request {op!r}"}
        try:
            return {**base, "ok": True, **handler(request)}
        except self.failures as error:
            line = self.runner.failure_line(error)
            answer = {**base, "ok": False, "error": line}
            try:  # the failed result's row, when the config itself is one
                config = RunConfig(**request["config"])
            except (KeyError, TypeError, SettingError):
                return answer  # no config, or one RunConfig refuses: the pool has its own
            answer["row"] = failed(config, line, backend_versions(self.backend)).to_row()
            return answer
        except Exception as error:  # a bug of ours: the traceback to stderr and back
            traceback.print_exc(file=sys.stderr)
            line = f"{type(error).__name__}: {one_line(str(error) or type(error).__name__)}"
            details = traceback.format_exc()
            return {
                **base,
                "ok": False,
                "bug": True,
                "error": line[:MAX_ERROR_CHARS],
                "traceback": details,
            }


OPS = ("prepare", "sample", "result", "check", "profile", "job", "release")


def _text(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def serve(worker: Worker, requests: IO[str], answers: IO[str]) -> None:
    worker.answers = answers
    for line in requests:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("op") == "close":
            answers.write(encode({"id": request.get("id"), "ok": True}))
            answers.flush()
            return
        answers.write(encode(worker.answer(request)))
        answers.flush()


def _exit_with_parent(parent: int, poll: float = 1.0) -> None:
    """Ends this process when the one that started it has gone (killed without closing us):
    a worker never outlives its pool, even mid-request."""

    def watch():
        while os.getppid() == parent:
            time.sleep(poll)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def main() -> int:
    backend = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("KERAS_BACKEND", "tensorflow")
    _exit_with_parent(os.getppid())
    # Only the protocol goes to stdout: anything a library prints goes to stderr instead.
    answers, sys.stdout = sys.stdout, sys.stderr
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    worker = Worker(backend)
    signal.signal(signal.SIGINT, worker.interrupt)
    worker.runner.start()
    serve(worker, sys.stdin, answers)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Runs Python in a fresh process whose Keras backend is `backend` (KERAS_BACKEND, read when
Keras is imported, so one backend per process) and returns what it reported as JSON. The code
calls `report(value)`; other output (a backend's native log lines) is ignored."""

import json
import os
from pathlib import Path

from factories import python

ROOT = Path(__file__).resolve().parents[2]
MARKER = "REPORT-JSON "
PRELUDE = (
    f"import json as _json\ndef report(value): print({MARKER!r} + _json.dumps(value), flush=True)\n"
)


def run_in_backend(backend: str, code: str, timeout: float = 600) -> dict:
    """`code` run under KERAS_BACKEND=`backend` from the repository root: its `report`ed value.
    Fails the test with the process's last output when it exits non-zero or reports nothing."""
    environment = {**os.environ, "KERAS_BACKEND": backend, "PYTHONPATH": str(ROOT)}
    completed = python("-c", PRELUDE + code, timeout=timeout, env=environment)
    lines = [line for line in completed.stdout.splitlines() if line.startswith(MARKER)]
    assert completed.returncode == 0 and lines, (
        f"{backend} process exited {completed.returncode}:\n{completed.stderr[-3000:]}"
    )
    return json.loads(lines[-1][len(MARKER) :])

"""Imports TensorFlow with its native start-up lines kept off the terminal.

TensorFlow's C++ runtime writes to file descriptor 2 before its logging is configured ("Could
not find cuda drivers", "oneDNN custom operations are on", ...); TF_CPP_MIN_LOG_LEVEL does not
reach those lines. A command whose contract is one `error:` line on stderr cannot let them
through, so the CLI and the app import TensorFlow here: fd 2 goes to a temporary file during the
import and the first device query, and the text is kept in `startup_log()` for diagnostics.
"""

from __future__ import annotations

import os
import sys
import tempfile

_startup_log: str | None = None


def import_tensorflow_quietly():
    """Imports tensorflow and keras (once) and lists devices with fd 2 redirected."""
    global _startup_log
    if _startup_log is not None:
        import tensorflow

        return tensorflow
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as capture:
        os.dup2(capture.fileno(), 2)
        try:
            import keras  # noqa: F401
            import tensorflow

            tensorflow.config.list_physical_devices()
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            _startup_log = capture.read().decode(errors="replace")
    return tensorflow


def startup_log() -> str:
    """What TensorFlow's native runtime printed while it started ("" before the import)."""
    return _startup_log or ""

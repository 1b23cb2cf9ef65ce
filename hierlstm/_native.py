"""Imports TensorFlow with its native start-up lines kept off the terminal.

TensorFlow's C++ runtime writes to file descriptor 2 before its logging is configured ("Could
not find cuda drivers", "oneDNN custom operations are on", ...); TF_CPP_MIN_LOG_LEVEL does not
reach those lines. A command whose contract is one `error:` line on stderr cannot let them
through, so the CLI and the app import TensorFlow here: fd 2 goes to a temporary file during the
import and the first device query, and the text is kept in `startup_log()` for diagnostics.
Once such a process has loaded what it needs, `freeze_what_is_loaded` takes it out of the
garbage collector's walks.
"""

from __future__ import annotations

import gc
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


def freeze_what_is_loaded() -> None:
    """Everything loaded so far (TensorFlow's, Keras's, Streamlit's, pandas's modules: some
    400,000 objects) moved out of the garbage collector's reach with `gc.freeze()`. Streamlit
    calls `keras.backend.clear_session()` after every script run (`_clean_problem_modules`),
    and that runs a full `gc.collect()`, which walks every object the collector tracks: 0.2-1 s
    per click with TensorFlow loaded, on every rerun of every session, and longer while another
    thread holds the GIL. Frozen, the walk covers only what was made since (a traced model is a
    few thousand objects: its graph lives in C++). A frozen object is freed by reference
    counting only, never as part of a cycle: freeze what is meant to stay, a process's modules.
    The app's warm-up calls it once its modules are loaded; a test session after collection and
    after each test (what a test left alive, a cache's or a fixture's, mostly stays too)."""
    gc.collect()  # what is already garbage is freed, not frozen
    gc.freeze()

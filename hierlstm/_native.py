"""Imports TensorFlow with its native start-up lines kept off the terminal: its C++ runtime writes
to fd 2 before logging is configured, which would break the CLI's one-`error:`-line contract. fd 2
goes to a temporary file during the import; the text is kept in `startup_log()`."""

from __future__ import annotations

import contextlib
import ctypes
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
            with _without_jax():
                import tensorflow
            import keras  # noqa: F401

            tensorflow.config.list_physical_devices()
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            _startup_log = capture.read().decode(errors="replace")
    return tensorflow


@contextlib.contextmanager
def _without_jax():
    """`import jax` fails inside, where Keras does not run on JAX and JAX is not loaded yet.
    Importing TensorFlow or Keras imports JAX whenever it is installed, for what hierlstm never
    uses: TensorFlow's TFLite helpers (`from jax import jit` in tensorflow/lite/python/util.py,
    to convert JAX functions) and Keras's Orbax checkpoint callback (keras/src/callbacks/
    orbax_checkpoint.py), each in a `try` that lets it go. That was 1.0-1.2 s of CPU out of 5.8
    for TensorFlow's import, measured on the 2-core AMD machine. Keras's own uses of JAX import
    it inside the functions that need it, and afterwards `import jax` works as before."""
    blocked = "jax" not in sys.modules and os.environ.get("KERAS_BACKEND", "tensorflow") != "jax"
    if blocked:
        sys.modules["jax"] = None  # an import of a None entry raises ImportError
    try:
        yield
    finally:
        if blocked and "jax" in sys.modules and sys.modules["jax"] is None:
            del sys.modules["jax"]


def import_keras_without_jax():
    """Keras on the backend KERAS_BACKEND names (a worker's), without JAX unless it is that one."""
    with _without_jax():
        import keras
    return keras


def startup_log() -> str:
    """What TensorFlow's native runtime printed while it started ("" before the import)."""
    return _startup_log or ""


def freeze_what_is_loaded() -> None:
    """Everything loaded so far moved out of the garbage collector's walks (`gc.freeze()`):
    Streamlit runs `clear_session()`, a full `gc.collect()`, after every script run, and with
    TensorFlow loaded that walk costs a noticeable part of a second per click. Frozen objects are
    freed by reference counting only: freeze what is meant to stay."""
    gc.collect()  # what is already garbage is freed, not frozen
    gc.freeze()


M_ARENA_MAX = -8  # glibc's malloc.h


def fewer_heap_arenas(count: int = 2) -> bool:
    """At most `count` glibc malloc arenas in this process (`mallopt(M_ARENA_MAX)`); call it before
    the threads start. glibc gives each thread that allocates while the others hold theirs an arena
    of its own, up to eight per core, and a server's script threads and TensorFlow's pools each
    fragment theirs: the memory freed stays in the process in holes `malloc_trim` cannot return.
    Measured with 30 classroom sessions for 300 s: the heap's free space grew 28 -> 298 MB and the
    RSS 901 -> 1032 MB; with 2 arenas, 24 -> 40 MB and 898 -> 959 MB. False where the C library is
    not glibc, or MALLOC_ARENA_MAX is set (the user's choice, which glibc read at start)."""
    if "MALLOC_ARENA_MAX" in os.environ or not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "gnu_get_libc_version"):  # musl, say: not glibc's arenas
        return False
    return libc.mallopt(M_ARENA_MAX, count) == 1

"""The server's C heap: glibc's malloc arenas limited before its threads start (app.py); and
TensorFlow imported without the JAX its TFLite helpers would load."""

import json
import os
import platform
import sys

import pytest
from factories import python

# Eight threads alive at once, each after its first allocation (which gives it an arena, a new
# one while there is room), then glibc's own account of its heaps, read with the threads alive.
COUNT_ARENAS = """
import ctypes, json, os, sys, tempfile, threading
from hierlstm._native import fewer_heap_arenas
limited = fewer_heap_arenas(2) if sys.argv[1] == "limit" else None
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.fopen.restype = ctypes.c_void_p
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
allocated, counted = threading.Barrier(9), threading.Barrier(9)
def hold():
    libc.free(libc.malloc(1024))
    allocated.wait()
    counted.wait()
threads = [threading.Thread(target=hold) for _ in range(8)]
for thread in threads:
    thread.start()
allocated.wait()
path = os.path.join(tempfile.mkdtemp(), "heaps.xml")
out = libc.fopen(path.encode(), b"w")
libc.malloc_info(0, out)
libc.fclose(out)
counted.wait()
print(json.dumps({"limited": limited, "arenas": open(path).read().count("<heap nr=")}))
"""


# MALLOC_ARENA_MAX only where a test sets it
ENVIRON = {key: value for key, value in os.environ.items() if key != "MALLOC_ARENA_MAX"}


def arenas(mode: str, **env) -> dict:
    """COUNT_ARENAS in a fresh process."""
    done = python("-c", COUNT_ARENAS, mode, env={**ENVIRON, **env})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_server_s_threads_share_two_malloc_arenas_unless_the_user_chose():
    if platform.libc_ver()[0] != "glibc":  # no arenas to limit: the heap is left as it is
        from hierlstm._native import fewer_heap_arenas

        assert fewer_heap_arenas() is False
        return
    assert arenas("leave")["arenas"] == 9  # glibc's default: one per thread, the main one's too
    assert arenas("limit") == {"limited": True, "arenas": 2}
    # the user's MALLOC_ARENA_MAX, read by glibc at start, is theirs
    assert arenas("limit", MALLOC_ARENA_MAX="4") == {"limited": False, "arenas": 4}


def test_the_app_limits_them_when_streamlit_imports_it():
    done = python("-c", "import app; print(app.FEWER_ARENAS)", env=ENVIRON)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(platform.libc_ver()[0] == "glibc")]


def test_tensorflow_is_imported_without_jax_and_jax_imports_after():
    """conftest.py imported TensorFlow quietly before any test: TFLite's helper found no JAX."""
    from hierlstm._native import import_tensorflow_quietly

    import_tensorflow_quietly()
    from tensorflow.lite.python import util

    assert util._jit is None
    assert "jax" not in sys.modules or sys.modules["jax"] is not None
    import jax

    assert jax.jit is not None


@pytest.mark.parametrize("backend", ["tensorflow", "torch", "jax"])
def test_jax_is_blocked_unless_keras_runs_on_it_and_only_while_keras_imports(backend, monkeypatch):
    from hierlstm._native import _without_jax

    monkeypatch.setenv("KERAS_BACKEND", backend)
    loaded = sys.modules.pop("jax", None)
    try:
        with _without_jax():
            blocked = sys.modules.get("jax", "absent") is None
        assert blocked == (backend != "jax")
        assert "jax" not in sys.modules  # nothing left behind: a later import finds JAX
    finally:
        if loaded is not None:
            sys.modules["jax"] = loaded

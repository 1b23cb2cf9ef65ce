"""A script run ends without Keras's `clear_session()`: Streamlit's own cleanup calls it (a full
garbage collection, and Keras's global state reset under other sessions' threads), the frame
puts `hierlstm.app.server.cleanup`'s in its place."""

import keras
from apptests import clean, opened
from streamlit.runtime.scriptrunner import script_runner

from hierlstm.app.server import cleanup


def test_a_script_run_ends_without_clearing_keras_s_session(monkeypatch):
    cleared = []
    monkeypatch.setattr(keras.backend, "clear_session", lambda *a, **k: cleared.append(1))
    cleanup._STREAMLITS()  # Streamlit's own: the call this module is here to leave out
    assert cleared == [1]
    monkeypatch.setattr(script_runner, "_clean_problem_modules", cleanup._STREAMLITS)
    at = opened("app_pages/results.py")
    clean(at)
    assert script_runner._clean_problem_modules is cleanup.clean_after_run
    assert cleared == [1]


def test_nothing_is_replaced_where_streamlit_has_no_such_cleanup(monkeypatch):
    monkeypatch.setattr(cleanup, "_STREAMLITS", None)
    monkeypatch.setattr(script_runner, "_clean_problem_modules", print)
    assert cleanup.install() is False and script_runner._clean_problem_modules is print


def test_a_computation_ends_with_tensorflow_s_kernel_cache_emptied_unless_runs_are_here(
    monkeypatch,
):
    """The server's one computation at a time lets TensorFlow's kernels go as it ends (each model
    built adds its own for good); not with runs in the server, whose timing it would disturb."""
    from tensorflow.python.eager import context

    from hierlstm.app import caches

    emptied = []
    monkeypatch.setattr(context.context(), "clear_kernel_cache", lambda: emptied.append(1))
    monkeypatch.delenv("HIERLSTM_RUNS", raising=False)
    with caches.COMPUTING, caches.COMPUTING:
        pass
    assert emptied == [1]
    monkeypatch.setenv("HIERLSTM_RUNS", "here")
    with caches.COMPUTING:
        pass
    assert emptied == [1]

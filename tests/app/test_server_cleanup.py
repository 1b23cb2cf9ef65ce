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

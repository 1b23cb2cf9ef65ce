"""Streamlit's cleanup after every script run, without Keras's `clear_session()`.

Streamlit ends each script run with `_clean_problem_modules` (`streamlit.runtime.scriptrunner
.script_runner`), which calls `keras.backend.clear_session()` whenever Keras is loaded: in a
one-page script that builds a model on every run, it frees the last one. In this server it costs
twice. `clear_session()` ends in a full `gc.collect()`, whose walk grows with everything the
server keeps (cached models, traces, figures, each session's state): with 30 classroom sessions it
was 38 % of the server's interpreter time (py-spy `--gil`, the note in benchmarks/RESULTS.md's
classroom section), more than every page's drawing together. And it resets Keras's global state
from the thread of whichever script just ended, while another session's thread may be building or
tracing a model. The server's models live in its caches, each behind its lock, and go when they
are evicted; Python's own collector still runs, on its own schedule. `install` puts this module's
cleanup in Streamlit's place: what it did for matplotlib, nothing for Keras.

What `clear_session()` did free, TensorFlow's eager kernel cache, `forget_kernels` frees where it
is safe: as the server's one computation ends (`hierlstm.app.caches.COMPUTING`)."""

from __future__ import annotations

import sys

from streamlit.runtime.scriptrunner import script_runner

from hierlstm.settings import read

_STREAMLITS = getattr(script_runner, "_clean_problem_modules", None)


def clean_after_run() -> None:
    """Streamlit's cleanup less Keras's: open pyplot figures closed (the app draws none; a
    library it loads might)."""
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def install() -> bool:
    """Streamlit's after-run cleanup replaced by `clean_after_run` in this process; False (nothing
    changed) where this Streamlit has no such function to replace."""
    if _STREAMLITS is None:
        return False
    script_runner._clean_problem_modules = clean_after_run
    return True


def forget_kernels() -> None:
    """TensorFlow's eager kernel cache emptied, as Keras's `clear_session()` empties it. The
    cache keeps a kernel for every function it has run, and each model the server builds (an
    Inside page's values, a trace's model) runs functions of its own: 75 KB more for every model
    built, for good (37 models built five times over in one process: RSS 690 -> 701 MB; emptied
    after each round, 682 -> 683 MB). With runs in the server's interpreter (HIERLSTM_RUNS=here)
    the cache is left alone: a run's kernels are made again, inside its timing, if it is emptied
    under it. Nothing where TensorFlow was never loaded."""
    if "tensorflow" not in sys.modules or read("HIERLSTM_RUNS") == "here":
        return
    from tensorflow.python.eager import context  # Keras's clear_session() calls the same

    context.context().clear_kernel_cache()

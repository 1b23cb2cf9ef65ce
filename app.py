"""hierlstm's Streamlit app: `streamlit run app.py` (or `make run`).

The app is streamlit_app.py (the frame) and the pages in app_pages/; this file serves it and
starts the server's warm-up (`hierlstm.app.server.warmup`) when the server starts, in a
thread, so the health check answers at once and the first visitor does not pay for importing
TensorFlow and tracing the default models.
"""

import contextlib
import faulthandler
import logging
import signal

import streamlit as st
from starlette.middleware import Middleware

from hierlstm._native import fewer_heap_arenas
from hierlstm.app.server import warmup

# Before the server's threads start (`fewer_heap_arenas` says why).
FEWER_ARENAS = fewer_heap_arenas()


@contextlib.asynccontextmanager
async def warm_up_when_serving(_app):
    # hierlstm's log (the warm-up's steps, a page's internal error with its traceback) on the
    # server's terminal, beside Streamlit's.
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    log = logging.getLogger("hierlstm")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    if FEWER_ARENAS:
        log.info("heap: at most 2 malloc arenas (glibc), so freed memory is reused across threads")
    # `kill -USR1 <pid>` writes every thread's stack to the same terminal: what a stalled page
    # or a run that never ends is waiting on, without stopping the server.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    warmup.start()
    yield


# A browser loading the app tells the warm-up a first visitor has come: TensorFlow's import
# waits until their page has drawn its first figure (`warmup.FirstVisitor`).
app = st.App(
    "streamlit_app.py",
    lifespan=warm_up_when_serving,
    middleware=[Middleware(warmup.ArrivalMiddleware)],
)

"""One TensorFlow import per test session, with its native start-up lines kept quiet, and the
process's own folder for the device lock files: the timing runs of one test process (and the
servers and CLI processes it starts, which inherit the variable) queue on each other, never on
another's or a real app's beside it. Under `make test` each xdist worker imports this file and
has its own folder, so the workers' runs do not queue on each other: no test asserts a time.
hierlstm's data folder (XDG_DATA_HOME: the default results file, the profiles' captures) is the
process's own too, so no test writes to the user's; both folders go when the session ends. With
HIERLSTM_TESTS=fast (`make test-fast`) TensorFlow is left to the tests that need it. The app's
warm-up in this process (AppTest) traces the default models but measures no cost per step: that
would hold the device lock, at a moment no test chose, while a test times;
tests/app/test_warmup.py runs that step on its own. Once the tests are collected, what they
imported is frozen out of the garbage collector's walks, as the app's warm-up freezes what it
loaded (`freeze_what_is_loaded` in hierlstm/_native.py): with TensorFlow loaded, each full
collection walked some 400,000 objects (half a second here), and AppTest's script runs make one
after every run, as a server does. What each test leaves alive is frozen after it, for the same
reason: a worker's heap grows over some 85 files. No run asks for confirmation unless its test
sets a limit (HIERLSTM_CONFIRM_SECONDS): what a page draws must not depend on the load."""

import os
import shutil
import tempfile

from hierlstm._native import freeze_what_is_loaded, import_tensorflow_quietly

_OWN_FOLDERS = {
    "HIERLSTM_LOCK_DIR": tempfile.mkdtemp(prefix="hierlstm-test-locks-"),
    "XDG_DATA_HOME": tempfile.mkdtemp(prefix="hierlstm-test-data-"),
}
os.environ.update(_OWN_FOLDERS)
os.environ["HIERLSTM_WARMUP"] = "trace"
# A page asks before a run it estimates over this many seconds, and the estimate comes from a
# cost measured on this machine: under the suite's own load a tiny run could be asked about, and
# a test waiting for its charts would see none. The tests about the question set their own limit.
os.environ["HIERLSTM_CONFIRM_SECONDS"] = "3600"
# The fast tier (`make test-fast`) imports TensorFlow only where a test imports it; every other
# session imports it once, here, before any test thread could import it beside another.
if os.environ.get("HIERLSTM_TESTS") != "fast":
    import_tensorflow_quietly()


# The slowest files first, for `make test`'s workers (tests/suite_order.py).
from suite_order import pytest_collection_modifyitems  # noqa: E402, F401


def pytest_unconfigure(config):
    """The process's own folders go with it (some 12 MB of captures and results a session):
    every server and CLI process a test started has ended by now."""
    for folder in _OWN_FOLDERS.values():
        shutil.rmtree(folder, ignore_errors=True)


def pytest_collection_finish(session):
    freeze_what_is_loaded()


def pytest_runtest_logfinish(nodeid, location):
    """After each test, its garbage collected and what it left alive (a cached model, a
    fixture's objects) frozen too, so the next test's full collections walk only what it makes:
    this collection walks only the objects made since the last one."""
    freeze_what_is_loaded()

"""The suite's processes: TensorFlow imported once, quietly (only where a test imports it under
HIERLSTM_TESTS=fast); the device lock files and hierlstm's data folder (XDG_DATA_HOME) their
own, so their runs queue only on each other and nothing reaches the user's files (both go at the
end); the warm-up only traces (its per-step cost would hold the device lock at a moment no test
chose: tests/app/test_warmup.py runs it); no run asks for confirmation unless its test sets a
limit (under load a tiny run's estimate could ask); a page's run computes in this process
(HIERLSTM_RUNS=here: tests replace what a run calls; tests/app/test_run_worker.py and the browser's
server run the default, the worker); what is loaded, and what each test leaves
alive, is frozen out of the garbage collector's walks as the app's warm-up does (with TensorFlow
loaded a full collection walked 400,000 objects, and AppTest makes one per script run)."""

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
os.environ["HIERLSTM_CONFIRM_SECONDS"] = "3600"
os.environ["HIERLSTM_RUNS"] = "here"
if os.environ.get("HIERLSTM_TESTS") != "fast":
    import_tensorflow_quietly()


# The slowest files first, for `make test`'s workers (tests/suite_order.py).
from suite_order import pytest_collection_modifyitems  # noqa: E402, F401


def pytest_unconfigure(config):
    """The process's own folders go with it: every process a test started has ended by now."""
    for folder in _OWN_FOLDERS.values():
        shutil.rmtree(folder, ignore_errors=True)


def pytest_collection_finish(session):
    freeze_what_is_loaded()


def pytest_runtest_logfinish(nodeid, location):
    """What each test left alive (a cached model, a fixture's objects) frozen too."""
    freeze_what_is_loaded()

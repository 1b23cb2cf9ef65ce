"""`hierlstm app [STREAMLIT FLAGS ...]`: the app served by `streamlit run` (no TensorFlow here),
from the checkout's root or `hierlstm/serve/` once installed. The command replaces this process with
Streamlit's, so a signal reaches the server itself."""

from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # the hierlstm folder


def app_script() -> Path:
    """app.py of this installation: the installed copy, else the checkout's."""
    for candidate in (PACKAGE / "serve" / "app.py", PACKAGE.parent / "app.py"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"the app's app.py is neither in {PACKAGE / 'serve'} nor beside it")


def streamlit_command(arguments: list[str]) -> list[str]:
    """The command line that serves the app, `arguments` passed to `streamlit run` as given
    (`--server.port 8600`, `--server.headless true`, ...)."""
    return [sys.executable, "-m", "streamlit", "run", str(app_script()), *arguments]


def serve(arguments: list[str]) -> int:
    command = streamlit_command(arguments)
    os.execv(command[0], command)
    return 0  # not reached: the process is Streamlit's now

"""Who imports and builds: the server's warm-up or the pages, never both at once.

The rule: every heavy import or build in the server process (TensorFlow's modules, a model
built or traced, a cost measured, what the pages import) happens either in a warm-up step or in
a session's script run, never in both at once. A `Gate` holds it: the warm-up runs each of its
steps inside `warm_up()`, which waits until no session is inside and keeps them out until the
step is done; once the warm-up is ready, the frame draws itself and its page inside `page()`,
which waits while a step is inside and lets any number of sessions in together (they share the
cached models through the models' locks). Before then no page runs: the frame draws only itself
and a placeholder, whose one chart waits for the first step (numpy and pandas, which plotly
reads from sys.modules). After it, a session waits at most for one later step: those start only
once no page has started for a while, and none waits for anything a session or another process
holds (the calibration gives up on a busy device). The last two crash races (TensorFlow
imported in two threads, a chart drawn from a half-imported pandas) were both a session and the
warm-up importing at once.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator


class Gate:
    """Many pages at once, or one warm-up step; neither while the other is inside."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._pages = 0
        self._warming = False

    @contextlib.contextmanager
    def page(self) -> Iterator[None]:
        """A page's script run: waits while a warm-up step is inside."""
        with self._changed:
            self._changed.wait_for(lambda: not self._warming)
            self._pages += 1
        try:
            yield
        finally:
            with self._changed:
                self._pages -= 1
                self._changed.notify_all()

    @contextlib.contextmanager
    def warm_up(self, timeout: float | None = None) -> Iterator[bool]:
        """A warm-up step: waits until no page is inside (at most `timeout` seconds), then
        keeps the pages out until it is done. Yields whether it got in; a step that did not
        must not run."""
        with self._changed:
            entered = self._changed.wait_for(lambda: not self._pages and not self._warming, timeout)
            self._warming = entered
        try:
            yield entered
        finally:
            if entered:
                with self._changed:
                    self._warming = False
                    self._changed.notify_all()

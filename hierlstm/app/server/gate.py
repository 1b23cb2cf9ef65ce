"""Who imports and builds: the server's warm-up or the pages, never both at once, since a session
and the warm-up importing together crashed (TensorFlow imported in two threads, a chart drawn from a
half-imported pandas). A `Gate` lets one warm-up step in alone (`warm_up()`) or any number of page
runs together (`page()`); before the warm-up is ready no page runs, and after it a session waits for
at most one later step, started only once pages have been quiet a while."""

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

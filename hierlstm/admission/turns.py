"""A lock taken in the order it was asked for. `threading.Lock` and `RLock` wake an arbitrary
waiter: with a class's thirty runs queued on one device, some waited minutes while later ones ran,
and a page's computation could be overtaken the same way. Used for the device turns of a run
(`runlock`) and for the app's one computation at a time (`hierlstm.app.caches.COMPUTING`)."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable


class TurnLock:
    """First come, first served among this process's threads. `reentrant`: its holder may take it
    again (released as often as taken); otherwise a holder that asks again waits like anyone.
    `on_release`: called when a holder releases it for the last time, before anyone else may take
    it."""

    def __init__(self, *, reentrant: bool = False, on_release: Callable[[], None] | None = None):
        self.reentrant = reentrant
        self._on_release = on_release  # called as a holder lets go for good, while it still holds
        self._changed = threading.Condition()
        self._queue: collections.deque = collections.deque()  # the waiters' tickets, in order
        self._owner: int | None = None  # the holding thread's ident
        self._depth = 0

    def acquire(self, waiting: Callable[[int], None] | None = None, poll: float | None = None):
        """Waits for every thread that asked before this one; `waiting(place)` every `poll`
        seconds meanwhile, `place` the runs ahead of this one (the holder's among them: 1 is
        next). A waiting() that raises gives up the place in the line."""
        me = threading.get_ident()
        with self._changed:
            if self.reentrant and self._owner == me:
                self._depth += 1
                return
            ticket = object()
            self._queue.append(ticket)
        try:
            while True:
                with self._changed:
                    if self._changed.wait_for(
                        lambda: self._owner is None and self._queue[0] is ticket, timeout=poll
                    ):
                        self._queue.popleft()
                        self._owner, self._depth = me, 1
                        return
                if waiting is not None:
                    with self._changed:
                        place = self._queue.index(ticket) + (self._owner is not None)
                    waiting(place)
        except BaseException:
            with self._changed:
                self._queue.remove(ticket)
                self._changed.notify_all()  # the next in line may be first now
            raise

    def release(self) -> None:
        with self._changed:
            if self._owner != threading.get_ident():
                raise RuntimeError("released by a thread that does not hold it")
            last = self._depth == 1
        try:
            if last and self._on_release is not None:
                self._on_release()
        finally:
            self._let_go()

    def _let_go(self) -> None:
        with self._changed:
            self._depth -= 1
            if self._depth == 0:
                self._owner = None
                self._changed.notify_all()

    def locked(self) -> bool:
        return self._owner is not None

    def __enter__(self) -> TurnLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info) -> None:
        self.release()

"""The first-come-first-served lock's own rules (its order is `test_runlock`'s claim): a reentrant
one is taken again by its holder, and only its holder can let it go."""

import threading

import pytest

from hierlstm.admission.turns import TurnLock


def test_a_reentrant_lock_is_taken_again_by_its_holder_and_let_go_as_often():
    lock = TurnLock(reentrant=True)
    with lock:
        with lock:  # a cached computation inside another: no wait on itself
            assert lock.locked()
        assert lock.locked()
    assert not lock.locked()


def test_only_the_holder_lets_it_go():
    lock, errors = TurnLock(), []
    with lock:

        def release():
            try:
                lock.release()
            except RuntimeError as error:
                errors.append(error)

        thread = threading.Thread(target=release)
        thread.start()
        thread.join(10)
        assert lock.locked()
    assert len(errors) == 1 and not lock.locked()
    with pytest.raises(RuntimeError, match="does not hold it"):
        lock.release()


def test_the_last_release_calls_on_release_while_still_held_and_lets_go_if_it_raises():
    held = []

    def on_release():
        held.append(lock.locked())
        raise OSError("cleanup failed")

    lock = TurnLock(reentrant=True, on_release=on_release)
    with pytest.raises(OSError, match="cleanup failed"):
        with lock:
            with lock:
                pass
            assert held == []  # an inner release is not the last
    assert held == [True] and not lock.locked()

"""Telling a wait that may end from one that never can.

Caffe2 let a thread block on a full or empty blobs queue for as long as it
took; when no other thread could ever change that queue, the program hung.
caffe2rnn fails such a wait at once instead (``QueueTimeoutError``). A wait
can never end when every live thread is itself stuck:

* *waiting* on a queue that is not ready for it, without a timeout
  (:func:`waiting`), or
* *parked*: waiting for other threads to finish, as a plan step that runs
  its substeps concurrently does while it joins them (:func:`parked`).

:func:`nobody_can_help` answers that for the calling waiter. A thread
blocked in anything else (a ``join`` of the caller's own, I/O...) is not
counted, so it keeps the wait alive: the check only ever fires when the hang
is certain.
"""

import contextlib
import threading

_lock = threading.Lock()
_parked = 0
_waiters = set()


class _Waiter:
    """One thread's wait: ``ready()`` tells whether it may proceed now,
    ``bounded`` whether it has a timeout (then it wakes up by itself)."""

    __slots__ = ("ready", "bounded")

    def __init__(self, ready, bounded):
        self.ready = ready
        self.bounded = bounded


@contextlib.contextmanager
def parked():
    """The calling thread waits for other threads to finish."""
    global _parked
    with _lock:
        _parked += 1
    try:
        yield
    finally:
        with _lock:
            _parked -= 1


@contextlib.contextmanager
def waiting(ready, bounded=False):
    """The calling thread waits until ``ready()`` (``bounded``: or a timeout).
    Yields the waiter to pass to :func:`nobody_can_help`."""
    waiter = _Waiter(ready, bounded)
    with _lock:
        _waiters.add(waiter)
    try:
        yield waiter
    finally:
        with _lock:
            _waiters.discard(waiter)


def nobody_can_help(waiter):
    """True when ``waiter`` can never be woken: every live thread is parked
    or waiting, and no *other* waiter is ready to go on or has a timeout that
    will wake it (a notified thread that has not run yet is ready)."""
    with _lock:
        others = [w for w in _waiters if w is not waiter]
        if any(w.bounded or w.ready() for w in others):
            return False
        return _parked + len(_waiters) >= threading.active_count()

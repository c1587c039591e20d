"""runtime.blocking: a wait fails fast only when no live thread could end it."""

import threading

from caffe2rnn.runtime import blocking


def test_a_waiter_is_stuck_only_when_no_thread_can_move(monkeypatch):
    """The verdicts of a wait among this test's two threads (main, parked, and the
    worker). A thread another test left running (a library's helper that has not
    ended yet) would rightly keep every wait alive
    (:func:`test_an_unregistered_live_thread_keeps_the_wait_alive`), so the count of
    live threads is this test's own: the full CI run once failed here on a stray."""
    strays = [t for t in threading.enumerate() if t is not threading.main_thread()]
    count = threading.active_count

    def own_threads():
        return count() - sum(t.is_alive() for t in strays)

    monkeypatch.setattr(threading, "active_count", own_threads)
    done = threading.Event()
    finished = threading.Thread(target=lambda: None)
    finished.start()
    finished.join()
    verdicts = {}

    def waiter():
        with blocking.waiting(lambda: False) as me:
            verdicts["stuck"] = blocking.nobody_can_help(me)
            with blocking.waiting(lambda: True):  # another waiter that is ready
                verdicts["other ready"] = blocking.nobody_can_help(me)
            with blocking.waiting(lambda: False, bounded=True):  # one with a timeout
                verdicts["other bounded"] = blocking.nobody_can_help(me)
        done.set()

    worker = threading.Thread(target=waiter)
    with blocking.parked([worker]):
        worker.start()
        worker.join()
    # The main thread was parked on the worker, which was alive while it looked:
    # alone, the worker's wait was hopeless; a ready or bounded waiter saves it.
    assert verdicts == {"stuck": True, "other ready": False, "other bounded": False}
    with blocking.parked([finished]) as joiner:  # its threads have ended: ready
        assert joiner.ready()
    assert done.is_set()


def test_an_unregistered_live_thread_keeps_the_wait_alive():
    release = threading.Event()
    bystander = threading.Thread(target=release.wait)
    bystander.start()
    try:
        with blocking.waiting(lambda: False) as me:
            assert not blocking.nobody_can_help(me)
    finally:
        release.set()
        bystander.join()

"""runtime.blocking: a wait fails fast only when no live thread could end it."""

import threading

from caffe2rnn.runtime import blocking


def test_a_waiter_is_stuck_only_when_no_thread_can_move():
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

"""Caffe2's test files run beside the rest of the session (test_caffe2_suites.py).

Their tests move to the end of the session, and the files start as soon as
collection ends, in a process of their own: while they run, the session's
other tests use the other core. Each file's test then only waits for a run
that is (nearly always) already over.
"""

from test_caffe2_suites import RUNNER

SUITE_TEST = "test_caffe2_test_file"


def _is_suite_test(item):
    return getattr(item, "originalname", None) == SUITE_TEST and item.module.__name__ == (
        "test_caffe2_suites"
    )


def pytest_collection_modifyitems(items):
    suites = [item for item in items if _is_suite_test(item)]
    if suites:
        others = [item for item in items if not _is_suite_test(item)]
        items[:] = others + suites


def pytest_collection_finish(session):
    if session.config.option.collectonly:
        return
    suites = [item.callspec.params["suite"] for item in session.items if _is_suite_test(item)]
    if suites:
        RUNNER.start(suites, session.config)

"""Shared settings of the fuzz suite (see ``fuzz_harness``): a small
allocation cap, and the one-line summary at the end of the session."""

import os

import pytest
from fuzz_harness import FUZZ

from caffe2rnn.runtime import settings

#: Fuzzed operators may ask for any shape; 64 MiB keeps a case fast and the
#: machine safe, and exercises the cap's refusal path.
FUZZ_MAX_ALLOC_BYTES = 64 << 20


@pytest.fixture(autouse=True)
def _small_allocation_cap():
    old = settings.set_max_alloc_bytes(FUZZ_MAX_ALLOC_BYTES)
    yield
    settings.set_max_alloc_bytes(old)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if FUZZ.cases:
        terminalreporter.write_line(FUZZ.summary())
        for kind, detail in FUZZ.first.items():
            terminalreporter.write_line("  first of the %s: %s" % (kind, detail[:600]))


def pytest_sessionfinish(session, exitstatus):
    wanted = os.environ.get("CAFFE2RNN_FUZZ_MIN_CASES", "").strip()
    if wanted and FUZZ.cases < int(wanted):
        print("\nfuzz: only %d cases ran; CAFFE2RNN_FUZZ_MIN_CASES is %s" % (FUZZ.cases, wanted))
        session.exitstatus = 1

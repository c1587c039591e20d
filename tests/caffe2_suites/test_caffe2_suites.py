"""Caffe2's own test files, run unchanged on caffe2rnn, checked against a table.

Each file of :data:`caffe2_expectations.SUITES` runs in a subprocess exactly as
a user would run it (docs/caffe2-tests.md)::

    python -m pytest -p caffe2rnn.compat.pytest_plugin --caffe2-source SRC \\
        --caffe2-era E5 SRC/caffe2/python/operator_test/rnn_cell_test.py

with fixed seeds (``--caffe2-seed``, ``--hypothesis-seed``) so a run can be
repeated. The files selected for a session run ``$CAFFE2RNN_SUITE_JOBS`` at a time
(default: the machine's cores, at most 4), each in its own process and folder,
started in the table's order; each test waits for its own file, so results,
failures and recorded counts come in that order as if they ran one by one.
The per-test results are read from pytest's ``--junitxml`` report
and compared with the table: every test must pass, or skip itself for want
of a GPU or MKL-DNN, unless the table says otherwise (a known failure, with
its reason).

Caffe2's sources are not part of this repository: ``$CAFFE2_SOURCE`` names a
checkout of facebookarchive/caffe2 at 0cdd09da6 (E5), ``$CAFFE2_SOURCE_E4``,
``$CAFFE2_SOURCE_E6`` and ``$CAFFE2_SOURCE_E7`` checkouts at 23bd132c1,
042e8ede4 and 929c33cee; a file whose checkout is not given skips with the
reason.
"""

import collections
import json
import os
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

import pytest
from caffe2_expectations import ERA_COMMITS, ERA_SOURCES, HARDWARE_SKIP_WORDS, SUITES

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEED = 0
#: A whole file may take this long on a loaded 2-core machine (E5 rnn_cell_test:
#: 5-9 min; E4 recurrent_network_test, whose attention tests check gradients
#: through the E4 operator: ~20 min).
TIMEOUT_SECONDS = 3600


def checkout_for(suite):
    """The Caffe2 checkout for the suite's era, or skip saying which variable to set."""
    variable = ERA_SOURCES[suite.era]
    source = os.environ.get(variable)
    if not source:
        pytest.skip(
            "set %s to a checkout of facebookarchive/caffe2 at %s to run Caffe2's %s tests"
            % (variable, ERA_COMMITS[suite.era], suite.era)
        )
    if not os.path.isfile(os.path.join(source, "caffe2", "python", suite.path)):
        pytest.skip("caffe2/python/%s is not in %s=%s" % (suite.path, variable, source))
    return source


def suite_command(suite, source, report):
    """The command that runs one Caffe2 test file, writing the JUnit XML ``report``."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "caffe2rnn.compat.pytest_plugin",
        "--caffe2-source",
        source,
        "--caffe2-era",
        suite.era,
        "--caffe2-seed",
        str(SEED),
        "--hypothesis-seed",
        str(SEED),
        "-p",
        "no:cacheprovider",
        "-q",
        "-W",
        "ignore",
        "--junitxml",
        str(report),
        os.path.join(source, "caffe2", "python", suite.path),
    ]
    if suite.select:
        command += ["-k", suite.select]
    return command


def suite_jobs():
    """How many test files run at once: ``$CAFFE2RNN_SUITE_JOBS`` or the cores (<= 4)."""
    value = os.environ.get("CAFFE2RNN_SUITE_JOBS", "")
    if value:
        return max(1, int(value))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(4, cores or 1))


class SuiteRunner:
    """Runs the session's selected test files ahead, ``jobs`` at a time.

    The first test of a file starts every selected file whose checkout is
    given, in order; each test then waits for its own. When the last one has
    been collected the worker threads end: tests that come later count the
    threads alive (a blocked queue op fails at once when no other thread could
    wake it, ``caffe2rnn.runtime.blocking``). A session that ends early
    (``-x``, Ctrl-C) kills the processes still running."""

    def __init__(self):
        self.pool = None
        self.started = False
        self.runs = {}
        self.processes = set()
        self.lock = threading.Lock()

    def _run(self, suite, source, folder):
        report = folder / "report.xml"
        process = subprocess.Popen(
            suite_command(suite, source, report),
            cwd=folder,  # not the repository: Caffe2's tests write files where they run
            env=dict(os.environ, PYTHONPATH=REPOSITORY),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        with self.lock:
            self.processes.add(process)
        try:
            stdout, stderr = process.communicate(timeout=TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
            stderr += "\n(killed after %d s)" % TIMEOUT_SECONDS
        finally:
            with self.lock:
                self.processes.discard(process)
        return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr), report

    def _submit(self, suite, source, folder):
        if self.pool is None:
            self.pool = ThreadPoolExecutor(
                max_workers=suite_jobs(), thread_name_prefix="caffe2-suite"
            )
        self.runs[suite.id] = self.pool.submit(self._run, suite, source, folder)

    def _start(self, session, factory):
        self.started = True
        session.config.add_cleanup(self.stop)
        for item in session.items:
            callspec = getattr(item, "callspec", None)
            suite = callspec.params.get("suite") if callspec else None
            if getattr(item, "originalname", None) != "test_caffe2_test_file" or suite is None:
                continue
            source = os.environ.get(ERA_SOURCES[suite.era])
            if source and os.path.isfile(os.path.join(source, "caffe2", "python", suite.path)):
                self._submit(suite, source, factory.mktemp(suite.id))

    def result(self, suite, source, session, factory):
        """``(CompletedProcess, report path)`` of ``suite``'s file."""
        if not self.started:
            self._start(session, factory)
        if suite.id not in self.runs:  # not collected as a session item (a direct call)
            self._submit(suite, source, factory.mktemp(suite.id))
        try:
            return self.runs.pop(suite.id).result()
        finally:
            if not self.runs and self.pool is not None:
                self.pool.shutdown(wait=True)  # nothing queued: the threads end now
                self.pool = None

    def stop(self):
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
        with self.lock:
            for process in list(self.processes):
                process.kill()
        self.pool, self.runs, self.started = None, {}, False


RUNNER = SuiteRunner()


def read_outcomes(report):
    """``{"Class::test": (outcome, message)}`` from a JUnit XML report."""
    outcomes = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        test_id = "%s::%s" % (case.get("classname", "").rsplit(".", 1)[-1], case.get("name"))
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "failed"}.get(child.tag, child.tag)
                message = child.get("message") or (child.text or "")
        outcomes[test_id] = (outcome, message)
    return outcomes


def mismatches(suite, outcomes):
    """Lines describing every test whose outcome differs from the table."""
    problems = []
    for test_id, (outcome, message) in sorted(outcomes.items()):
        expected, reason = suite.outcomes.get(test_id, ("passed", ""))
        if expected == "flaky" and outcome in ("passed", "failed"):
            continue
        hardware = any(word in message.lower() for word in HARDWARE_SKIP_WORDS)
        if test_id not in suite.outcomes and outcome == "skipped" and hardware:
            continue  # a GPU or MKL-DNN test skipping itself
        if outcome != expected:
            problems.append(
                "%s: %s, expected %s%s — %s"
                % (test_id, outcome, expected, " (%s)" % reason if reason else "", message[:300])
            )
        elif outcome == "skipped" and reason and reason.lower() not in message.lower():
            problems.append("%s: skipped for %r, expected a %s skip" % (test_id, message, reason))
    for test_id in sorted(set(suite.outcomes) - set(outcomes)):
        problems.append("%s: listed in the table but not run" % test_id)
    return problems


def record_counts(suite, counts):
    """Append the suite's counts to ``$CAFFE2RNN_SUITE_COUNTS`` when it names a file:
    ``scripts/caffe2_tests_table.py`` writes docs/caffe2-tests.md's table from them."""
    path = os.environ.get("CAFFE2RNN_SUITE_COUNTS")
    if path:
        record = {"id": suite.id, "era": suite.era, "path": suite.path, "counts": dict(counts)}
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")


@pytest.mark.parametrize("suite", SUITES, ids=[s.id for s in SUITES])
def test_caffe2_test_file(suite, request, tmp_path_factory):
    source = checkout_for(suite)
    run, report = RUNNER.result(suite, source, request.session, tmp_path_factory)
    if not report.exists():
        pytest.fail(
            "caffe2/python/%s did not run (exit %d):\n%s"
            % (suite.path, run.returncode, (run.stdout + run.stderr)[-3000:])
        )
    outcomes = read_outcomes(report)
    assert outcomes, "no test of caffe2/python/%s ran:\n%s" % (suite.path, run.stdout[-3000:])
    counts = collections.Counter(outcome for outcome, _ in outcomes.values())
    print(
        "%s %s: %s"
        % (suite.era, suite.path, ", ".join("%d %s" % (n, o) for o, n in sorted(counts.items())))
    )  # shown with pytest -s (or -rP)
    record_counts(suite, counts)
    problems = mismatches(suite, outcomes)
    assert not problems, "caffe2/python/%s (era %s):\n%s\n\n%s" % (
        suite.path,
        suite.era,
        "\n".join(problems),
        run.stdout[-4000:],
    )


def test_no_runner_thread_outlives_the_files():
    """Runs after every file above: the runner's threads have ended, so later
    tests that count live threads (a queue op no thread could wake fails at
    once) see only their own. A thread left idle here hung such a test."""
    assert not [t.name for t in threading.enumerate() if t.name.startswith("caffe2-suite")]


# -- the runner's own logic, on made-up reports (no checkout needed) -------------------


def _report(tmp_path, cases):
    path = tmp_path / "r.xml"
    body = "".join(
        '<testcase classname="m.C" name="%s">%s</testcase>' % (name, inner) for name, inner in cases
    )
    path.write_text("<testsuites><testsuite>%s</testsuite></testsuites>" % body)
    return path


def test_runner_reads_outcomes_and_compares_them(tmp_path):
    from caffe2_expectations import Suite

    report = _report(
        tmp_path,
        [
            ("test_a", ""),
            ("test_gpu", '<skipped message="No GPU support"/>'),
            ("test_mkl", '<skipped message="No MKLDNN support."/>'),
            ("test_other", '<skipped message="Sparse operators not available"/>'),
            ("test_b", '<failure message="AssertionError: 1 != 2"/>'),
            ("test_c", '<error message="collection"/>'),
        ],
    )
    outcomes = read_outcomes(report)
    assert outcomes == {
        "C::test_a": ("passed", ""),
        "C::test_gpu": ("skipped", "No GPU support"),
        "C::test_mkl": ("skipped", "No MKLDNN support."),
        "C::test_other": ("skipped", "Sparse operators not available"),
        "C::test_b": ("failed", "AssertionError: 1 != 2"),
        "C::test_c": ("failed", "collection"),
    }
    suite = Suite(
        "E5",
        "x_test.py",
        outcomes={
            "C::test_other": ("skipped", "Sparse operators"),
            "C::test_b": ("failed", "a known failure"),
            "C::test_d": ("flaky", "random"),
        },
    )
    problems = mismatches(suite, outcomes)
    assert problems == [
        "C::test_c: failed, expected passed — collection",
        "C::test_d: listed in the table but not run",
    ]
    suite = Suite("E5", "x_test.py", outcomes={"C::test_other": ("skipped", "MKL")})
    assert any("expected a MKL skip" in p for p in mismatches(suite, outcomes))
    # A skip for any other reason, not listed, is a mismatch.
    suite = Suite("E5", "x_test.py")
    assert any(p.startswith("C::test_other: skipped") for p in mismatches(suite, outcomes))


def test_without_a_checkout_every_suite_skips_with_the_variable_to_set(monkeypatch):
    for variable in ERA_SOURCES.values():
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(
        pytest.skip.Exception, match="set CAFFE2_SOURCE_E6 to a checkout .*042e8ede4"
    ):
        checkout_for(next(s for s in SUITES if s.era == "E6"))


def test_the_docs_table_is_written_from_recorded_counts(tmp_path, monkeypatch):
    """record_counts + scripts/caffe2_tests_table.py: one row per suite, totals per era."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "caffe2_tests_table", os.path.join(REPOSITORY, "scripts", "caffe2_tests_table.py")
    )
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    counts_file = tmp_path / "counts.jsonl"
    monkeypatch.setenv("CAFFE2RNN_SUITE_COUNTS", str(counts_file))
    first, second = SUITES[0], SUITES[1]
    record_counts(first, collections.Counter(passed=3, skipped=1))
    record_counts(second, collections.Counter(passed=2))
    record_counts(second, collections.Counter(passed=5, failed=1))  # a rerun replaces
    text, missing = table.section(table.read_counts(counts_file))
    assert "| %s | `%s` | 3 | 1 | 0 |" % (first.era, first.path) in text
    assert "| %s | `%s` | 5 | 0 | 1 |" % (second.era, second.path) in text
    assert len(missing) == len(SUITES) - 2 and first.id not in missing
    page = tmp_path / "page.md"
    page.write_text("before\n%s\nSTALE-ROW\n%s\nafter\n" % (table.START, table.END))
    assert table.main([str(counts_file), "--page", str(page)]) == 1  # suites missing
    written = page.read_text()
    assert written.startswith("before\n") and written.endswith("after\n")
    assert "STALE-ROW" not in written

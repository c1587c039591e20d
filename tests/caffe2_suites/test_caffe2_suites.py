"""Caffe2's own test files, run unchanged on caffe2rnn, checked against a table.

Each file of :data:`caffe2_expectations.SUITES` runs in a subprocess exactly as
a user would run it (docs/caffe2-tests.md)::

    python -m pytest -p caffe2rnn.compat.pytest_plugin --caffe2-source SRC \\
        --caffe2-era E5 SRC/caffe2/python/operator_test/rnn_cell_test.py

with fixed seeds (``--caffe2-seed``, ``--hypothesis-seed``) so a run can be
repeated. The files selected for a session run ``$CAFFE2RNN_SUITE_JOBS`` at a time
(default: the machine's cores, at most 4), each in its own process and folder,
the longest first, in a supervisor process while the session's other tests
run (:class:`SuiteRunner`); each test waits for its own file, so results,
failures and recorded counts come in the table's order as if they ran one by one.
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
import contextlib
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import pytest
from caffe2_expectations import (
    ERA_COMMITS,
    ERA_SOURCES,
    HARDWARE_SKIP_WORDS,
    LONG_RUNNING,
    SUITES,
)

SUPERVISOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "suite_supervisor.py")
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

    When collection ends (tests/caffe2_suites/conftest.py) the runner starts
    every selected file whose checkout is given, the longest first
    (:data:`caffe2_expectations.LONG_RUNNING`), in a supervisor process
    (``suite_supervisor.py``). The conftest also moves these tests to the end
    of the session, so the session's other tests run while the files do and
    both cores stay busy. Each test then waits for its own file's result, so
    results, failures and recorded counts come in the table's order as if the
    files ran one by one. A session that ends early (``-x``, Ctrl-C) kills the
    supervisor and the files still running."""

    def __init__(self):
        self.folders = {}  # suite id -> its folder (result.json appears there)
        self.seconds = {}  # suite id -> wall-clock seconds of its file's run
        self.supervisors = {}  # suite id -> the supervisor process running its file
        self.base = None

    def start(self, suites, config=None):
        """Start ``suites`` (those whose checkout is given) in a supervisor."""
        if config is not None:
            config.add_cleanup(self.stop)
        runs = []
        rank = {suite_id: i for i, suite_id in enumerate(LONG_RUNNING)}
        for suite in sorted(suites, key=lambda s: rank.get(s.id, len(rank))):
            source = os.environ.get(ERA_SOURCES[suite.era])
            if source and os.path.isfile(os.path.join(source, "caffe2", "python", suite.path)):
                runs.append(self._plan(suite, source))
        if runs:
            self._launch(runs)

    def _plan(self, suite, source):
        if self.base is None:
            self.base = tempfile.mkdtemp(prefix="caffe2rnn-suites-")
        folder = os.path.join(self.base, suite.id)
        os.makedirs(folder, exist_ok=True)
        self.folders[suite.id] = folder
        # Not the repository: Caffe2's tests write files where they run.
        report = os.path.join(folder, "report.xml")
        env = dict(os.environ, PYTHONPATH=REPOSITORY)
        return {
            "id": suite.id,
            "command": suite_command(suite, source, report),
            "cwd": folder,
            "env": env,
        }

    def _launch(self, runs):
        plan = os.path.join(self.base, "plan-%d.json" % len(os.listdir(self.base)))
        with open(plan, "w") as handle:
            json.dump({"jobs": suite_jobs(), "timeout": TIMEOUT_SECONDS, "runs": runs}, handle)
        with open(plan + ".log", "w") as log:
            supervisor = subprocess.Popen(
                [sys.executable, SUPERVISOR, plan],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stop() ends the files too
            )
        for run in runs:
            self.supervisors[run["id"]] = supervisor

    def result(self, suite, source):
        """``(CompletedProcess, report path)`` of ``suite``'s file."""
        if suite.id not in self.folders:  # not collected as a session item (a direct call)
            self._launch([self._plan(suite, source)])
        folder = self.folders.pop(suite.id)
        done = os.path.join(folder, "result.json")
        supervisor = self.supervisors[suite.id]
        while not os.path.exists(done):
            if supervisor.poll() is not None and not os.path.exists(done):
                with open(supervisor.args[-1] + ".log") as handle:
                    said = handle.read()[-3000:]
                pytest.fail(
                    "the suite supervisor ended (exit %s) before %s ran:\n%s"
                    % (supervisor.returncode, suite.path, said)
                )
            time.sleep(0.2)
        with open(done) as handle:
            outcome = json.load(handle)
        self.seconds[suite.id] = outcome["seconds"]
        stdout = _read(os.path.join(folder, "stdout.txt"))
        stderr = _read(os.path.join(folder, "stderr.txt"))
        if outcome.get("error"):
            stderr += "\n(could not start: %s)" % outcome["error"]
        if outcome.get("killed_after"):
            stderr += "\n(killed after %d s)" % outcome["killed_after"]
        run = subprocess.CompletedProcess(None, outcome["returncode"], stdout, stderr)
        return run, pathlib.Path(folder) / "report.xml"

    def stop(self):
        for supervisor in set(self.supervisors.values()):
            if supervisor.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(supervisor.pid, signal.SIGKILL)
                supervisor.wait()
        if self.base is not None:
            shutil.rmtree(self.base, ignore_errors=True)
        self.__init__()


def _read(path):
    try:
        with open(path, errors="replace") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""


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


def record_counts(suite, counts, seconds=None):
    """Append the suite's counts (and how long its file ran) to
    ``$CAFFE2RNN_SUITE_COUNTS`` when it names a file: ``scripts/caffe2_tests_table.py``
    writes docs/caffe2-tests.md's table from them."""
    path = os.environ.get("CAFFE2RNN_SUITE_COUNTS")
    if path:
        record = {"id": suite.id, "era": suite.era, "path": suite.path, "counts": dict(counts)}
        if seconds is not None:
            record["seconds"] = round(seconds, 1)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")


@pytest.mark.parametrize("suite", SUITES, ids=[s.id for s in SUITES])
def test_caffe2_test_file(suite):
    source = checkout_for(suite)
    run, report = RUNNER.result(suite, source)
    if not report.exists():
        pytest.fail(
            "caffe2/python/%s did not run (exit %s):\n%s"
            % (suite.path, run.returncode, (run.stdout + run.stderr)[-3000:])
        )
    outcomes = read_outcomes(report)
    assert outcomes, "no test of caffe2/python/%s ran:\n%s" % (suite.path, run.stdout[-3000:])
    counts = collections.Counter(outcome for outcome, _ in outcomes.values())
    print(
        "%s %s: %s"
        % (suite.era, suite.path, ", ".join("%d %s" % (n, o) for o, n in sorted(counts.items())))
    )  # shown with pytest -s (or -rP)
    record_counts(suite, counts, RUNNER.seconds.get(suite.id))
    problems = mismatches(suite, outcomes)
    assert not problems, "caffe2/python/%s (era %s):\n%s\n\n%s" % (
        suite.path,
        suite.era,
        "\n".join(problems),
        run.stdout[-4000:],
    )


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


def test_the_supervisor_runs_its_plan_and_writes_each_result(tmp_path):
    """suite_supervisor.py: output in the run's folder, then result.json (exit
    code, seconds; a run past the timeout killed and said so)."""
    runs = []
    for name, code in [("ok", "print('hello'); raise SystemExit(3)"), ("slow", "while 1: pass")]:
        (tmp_path / name).mkdir()
        command = [sys.executable, "-c", code]
        runs.append({"id": name, "command": command, "cwd": str(tmp_path / name), "env": None})
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"jobs": 2, "timeout": 2, "runs": runs}))
    subprocess.run([sys.executable, SUPERVISOR, str(plan)], check=True, timeout=60)
    ok = json.loads((tmp_path / "ok" / "result.json").read_text())
    assert ok["returncode"] == 3 and ok["killed_after"] is None
    assert (tmp_path / "ok" / "stdout.txt").read_text() == "hello\n"
    slow = json.loads((tmp_path / "slow" / "result.json").read_text())
    assert slow["killed_after"] == 2 and slow["returncode"] != 0 and slow["seconds"] >= 2


def test_the_long_running_files_are_in_the_table():
    from caffe2_expectations import LONG_RUNNING

    assert not set(LONG_RUNNING) - {suite.id for suite in SUITES}


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

"""``make setup`` (scripts/setup.sh): one setup at a time in a checkout.

A reader ran ``make run`` while ``make setup`` was still running: the two pip installs
ran into each other in one .venv and the run died in a pip traceback. The setup now
holds a lock (the folder ``.setup-lock``, its ``pid`` file naming the process); a target
started meanwhile says so, waits, and goes on without building anything when the first
one succeeded. These tests run the script in an empty folder with a Python that cannot
make a virtual environment (``false``), so a setup that really starts fails at once."""

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "setup.sh")
WAITING = "caffe2rnn setup: setup is running in this checkout (process %d); waiting for it"

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


@pytest.fixture
def checkout(tmp_path):
    """A folder standing in for a checkout: one prerequisite file, written in the past."""
    (tmp_path / "requirements-dev.txt").write_text("numpy\n")
    os.utime(tmp_path / "requirements-dev.txt", (1_000_000_000, 1_000_000_000))
    return tmp_path


def start_setup(checkout):
    return subprocess.Popen(
        ["bash", SCRIPT, "false", "venv", "venv/stamp", "requirements-dev.txt"],
        cwd=checkout,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def hold_lock(checkout, pid):
    (checkout / ".setup-lock").mkdir()
    (checkout / ".setup-lock" / "pid").write_text("%d\n" % pid)


@pytest.fixture
def other_setup(checkout):
    """A live process holding the lock, as a running `make setup` does."""
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    hold_lock(checkout, holder.pid)
    yield holder
    holder.kill()
    holder.wait()


@pytest.mark.parametrize("it_succeeds", [True, False])
def test_a_setup_started_meanwhile_waits_for_the_running_one(checkout, other_setup, it_succeeds):
    waiting = start_setup(checkout)
    try:
        assert waiting.stdout.readline().startswith(WAITING % other_setup.pid)
        assert waiting.poll() is None  # still waiting: the lock is held
        if it_succeeds:
            (checkout / "venv").mkdir()
            (checkout / "venv" / "stamp").write_text("")
        shutil.rmtree(checkout / ".setup-lock")  # the running setup ends
        rest = waiting.communicate(timeout=120)[0]
    finally:
        waiting.kill()
    if it_succeeds:  # its work is done: nothing is built again
        assert waiting.returncode == 0, rest
        assert "the other setup finished; going on" in rest
        assert "virtual environment" not in rest
    else:  # it failed: this one runs the setup itself (and fails here, without a Python)
        assert waiting.returncode == 1, rest
        assert "could not create a virtual environment with 'false -m venv'" in rest
    assert not (checkout / ".setup-lock").exists()


def test_the_lock_of_a_setup_that_stopped_is_taken_over(checkout):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    hold_lock(checkout, gone.pid)
    done = subprocess.run(
        ["bash", SCRIPT, "false", "venv", "venv/stamp", "requirements-dev.txt"],
        cwd=checkout,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "taking over the lock of a setup that stopped (process %d)" % gone.pid in done.stdout
    assert "could not create a virtual environment" in done.stdout  # it went on itself
    assert done.returncode == 1
    assert not (checkout / ".setup-lock").exists()  # and let go of the lock


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize("target", ["setup", "run", "test-fast", "lint", "docs", "demo"])
def test_every_target_that_needs_the_environment_sets_up_through_the_script(tmp_path, target):
    planned = subprocess.run(
        ["make", "-n", target, "VENV=%s" % (tmp_path / "venv"), "NB=04"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        # run as its own make, also under `make test` (no "make[1]: Entering ..." line)
        env={k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")},
    )
    assert planned.returncode == 0, planned.stderr
    first = planned.stdout.splitlines()[0]
    assert first.startswith("bash scripts/setup.sh "), first

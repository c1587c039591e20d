"""Runs Caffe2's test files for a pytest session, in a process of its own.

``python suite_supervisor.py PLAN.json`` reads a plan written by
``test_caffe2_suites.SuiteRunner``: ``{"jobs": n, "timeout": seconds, "runs":
[{"id", "command", "cwd", "env"}...]}``. It runs the commands ``jobs`` at a
time, in the plan's order, each in its own folder (``cwd``), with its output
in ``stdout.txt`` / ``stderr.txt`` there. When a command ends it writes
``result.json`` (return code, seconds, whether it was killed at the timeout)
into the same folder, atomically: the tests wait for that file.

Why a process and not threads in pytest's own: the session's other tests run
while these files do, and some of them count the threads alive (a blocked
queue op fails at once when no other thread could wake it,
``caffe2rnn.runtime.blocking``). The supervisor's threads are not theirs.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor


def run_one(run, timeout):
    try:
        result = run_command(run, timeout)
    except OSError as exc:  # the command could not start: say so in its result
        result = {"returncode": None, "seconds": 0.0, "killed_after": None, "error": str(exc)}
    partial = os.path.join(run["cwd"], "result.json.part")
    with open(partial, "w") as handle:
        json.dump(result, handle)
    os.replace(partial, os.path.join(run["cwd"], "result.json"))


def run_command(run, timeout):
    folder = run["cwd"]
    started = time.monotonic()
    with (
        open(os.path.join(folder, "stdout.txt"), "w") as out,
        open(os.path.join(folder, "stderr.txt"), "w") as err,
    ):
        process = subprocess.Popen(
            run["command"], cwd=folder, env=run["env"], stdout=out, stderr=err
        )
        killed = False
        try:
            returncode = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            returncode = process.wait()
            killed = True
    return {
        "returncode": returncode,
        "seconds": time.monotonic() - started,
        "killed_after": timeout if killed else None,
    }


def end_with_parent(parent):
    """When the pytest session that started us is gone (killed, not ended),
    end the files still running and ourselves: nobody waits for them."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os.killpg(0, signal.SIGKILL)


def main(plan_path):
    with open(plan_path) as handle:
        plan = json.load(handle)
    watcher = threading.Thread(target=end_with_parent, args=(os.getppid(),), daemon=True)
    watcher.start()
    with ThreadPoolExecutor(max_workers=plan["jobs"]) as pool:
        futures = [pool.submit(run_one, run, plan["timeout"]) for run in plan["runs"]]
        for future in futures:
            future.result()  # an error here (a folder gone) ends the supervisor, loudly


if __name__ == "__main__":
    main(sys.argv[1])

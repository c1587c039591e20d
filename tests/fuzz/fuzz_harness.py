"""What every fuzzer in ``tests/fuzz`` shares: how many cases, what counts as a
failure, the session's tally, and running crash-prone cases in a subprocess.

A fuzz case ends in one of three acceptable ways -- a result, or an error of
the caffe2rnn family (:class:`caffe2rnn.errors.Caffe2RNNError`) -- and the
fuzzer then checks its own property (nothing half-written, both kernel paths
agree...). Everything else is counted, and fails the test:

* **crash**: the process died (a segfault in a compiled kernel...);
* **hang**: a case ran past a generous timeout;
* **out-of-family**: an exception that is not a caffe2rnn error;
* **mismatch**: a property of the fuzzer did not hold (a changed workspace
  after a failure, a write outside the destination, two paths disagreeing).

``CAFFE2RNN_FUZZ_EXAMPLES`` scales every fuzzer (the number of examples of a
fuzzer of weight 1; default 8, a few seconds for the whole suite in ``make
test``). ``make fuzz`` sets it so the suite runs at least 10,000 cases, and
``CAFFE2RNN_FUZZ_MIN_CASES`` makes the session fail if fewer ran.

Usage in a fuzz file::

    from fuzz_harness import FUZZ, examples, fuzz_settings, in_family

    @fuzz_settings(weight=2)
    @given(data=st.binary())
    def test_parse(data):
        FUZZ.case()
        outcome = in_family(parse, NetDef, data)   # ("ok", value) or ("error", exc)
        FUZZ.check(outcome[0] == "ok" or ..., "mismatch", "what went wrong")
"""

import json
import os
import pickle
import subprocess
import sys
import traceback

from hypothesis import HealthCheck, settings

from caffe2rnn.errors import Caffe2RNNError

DEFAULT_EXAMPLES = 8
KINDS = ("crashes", "hangs", "out-of-family errors", "mismatches")


def base_examples():
    text = os.environ.get("CAFFE2RNN_FUZZ_EXAMPLES", "").strip()
    return int(text) if text else DEFAULT_EXAMPLES


def examples(weight=1.0):
    """This fuzzer's number of examples: ``weight`` x CAFFE2RNN_FUZZ_EXAMPLES."""
    return max(1, int(round(base_examples() * weight)))


def fuzz_settings(weight=1.0, **overrides):
    """Hypothesis settings for a fuzzer: scaled examples, no deadline (the
    machine is shared; time is not a property), no shrinking-phase surprises."""
    options = dict(
        max_examples=examples(weight),
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        derandomize=os.environ.get("CAFFE2RNN_FUZZ_RANDOM", "") == "",
    )
    options.update(overrides)
    return settings(**options)


class Tally:
    """The session's counts, printed as one line at the end (see conftest)."""

    def __init__(self):
        self.cases = 0
        self.counts = dict.fromkeys(KINDS, 0)
        self.first = {}  # kind -> the first description seen

    def case(self, n=1):
        self.cases += n

    def fail(self, kind, detail):
        """Count one failure of ``kind`` and raise AssertionError with ``detail``."""
        self.note(kind, detail)
        raise AssertionError("%s: %s" % (kind, detail))

    def note(self, kind, detail):
        self.counts[kind] += 1
        self.first.setdefault(kind, detail)

    def check(self, condition, kind, detail):
        if not condition:
            self.fail(kind, detail)

    def summary(self):
        return "fuzz: %d cases, %s" % (
            self.cases,
            ", ".join("%d %s" % (self.counts[k], k) for k in KINDS),
        )


FUZZ = Tally()


def in_family(func, *args, **kwargs):
    """``("ok", result)`` or ``("error", exc)`` for a caffe2rnn error; any other
    exception is counted as out-of-family and fails the case."""
    try:
        return "ok", func(*args, **kwargs)
    except Caffe2RNNError as exc:
        return "error", exc
    except Exception as exc:
        FUZZ.fail(
            "out-of-family errors",
            "%s(%s) raised %s: %s\n%s"
            % (
                getattr(func, "__name__", func),
                _short(args),
                type(exc).__name__,
                exc,
                traceback.format_exc(limit=6),
            ),
        )


def _short(args):
    text = ", ".join(repr(a) for a in args)
    return text if len(text) < 300 else text[:300] + "..."


# -- crash-prone cases, in a subprocess ------------------------------------------------

_WORKER = r"""
import json, pickle, sys, importlib
target, cases = pickle.load(sys.stdin.buffer)
module, _, name = target.partition(":")
func = getattr(importlib.import_module(module), name)
for i, case in enumerate(cases):
    print(json.dumps({"start": i}), flush=True)
    result = func(case)
    print(json.dumps({"done": i, "result": result}), flush=True)
"""


def run_isolated(target, cases, timeout=60.0):
    """Run ``target(case)`` for each case in child processes; the list of results.

    ``target`` is ``"module:function"`` (importable from this folder); it
    returns a JSON-able result, which the caller judges. A case that kills the
    child is counted as a crash (result ``{"crash": signal}``), one that does
    not finish within ``timeout`` seconds of the previous one as a hang
    (``{"hang": True}``); the remaining cases go on in a new child.
    """
    results = [None] * len(cases)
    start = 0
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    while start < len(cases):
        batch = cases[start:]
        proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        payload = pickle.dumps((target, batch))
        hung = False
        try:
            out, err = proc.communicate(payload, timeout=timeout * (1 + len(batch) / 50))
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            hung = True
        started, finished = -1, -1
        for line in out.decode("utf-8", "replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if "start" in record:
                started = record["start"]
            else:
                finished = record["done"]
                results[start + finished] = record["result"]
        if finished == len(batch) - 1 and proc.returncode == 0:
            break
        bad = max(started, finished + 1)
        if bad >= len(batch):  # died after the last case: blame nothing
            break
        where = "%s(%r)" % (target, batch[bad])
        if hung:
            results[start + bad] = {"hang": True}
            FUZZ.note("hangs", where)
        else:
            results[start + bad] = {"crash": proc.returncode, "stderr": err.decode()[-2000:]}
            FUZZ.note("crashes", "%s: exit %s\n%s" % (where, proc.returncode, err.decode()[-2000:]))
        start += bad + 1
    return results


# -- "the workspace is exactly as it was" ----------------------------------------------


def snapshot(ws):
    """Every local blob of a runtime Workspace: (the value object, a copy of a
    tensor's contents, its dtype and shape)."""
    import numpy as np

    state = {}
    for name in ws.local_blob_names():
        value = ws.get_blob(name).value
        if type(value) is np.ndarray:
            state[name] = (value, value.copy(), value.dtype, value.shape)
        else:
            state[name] = (value, None, None, None)
    return state


def changes(ws, before):
    """What differs between ``ws`` now and ``snapshot(ws)`` taken earlier ("" if nothing)."""
    import numpy as np

    now = set(ws.local_blob_names())
    if now != set(before):
        return "blobs %s appeared, %s vanished" % (
            sorted(now - set(before)),
            sorted(set(before) - now),
        )
    for name, (value, contents, dtype, shape) in before.items():
        current = ws.get_blob(name).value
        if current is not value:
            return "blob '%s' holds a different object" % name
        if contents is not None and (
            current.dtype != dtype
            or current.shape != shape
            or not np.array_equal(current, contents, equal_nan=current.dtype.kind in "fc")
        ):
            return "blob '%s' changed contents" % name
    return ""

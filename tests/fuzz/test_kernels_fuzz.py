"""Fuzz the raw kernels on both paths: same result or same error, never a stray write.

Each case is one call of one raw kernel (``kernels.implementation(path).<name>``)
with arguments drawn by Hypothesis: arrays that are fine, read-only, strided,
big-endian, misaligned, of the wrong dtype, ``None``, a list, a read-only
memmap, or a view overlapping another argument; indices from small values to
the edges of 64 bits and beyond, and non-integers. Every array lives inside a
*guard region* of sentinel bytes. The same recipe is materialised afresh for
each path, the call is made, and then:

* each path either returns or raises a :mod:`caffe2rnn.errors` exception
  (anything else is an out-of-family error);
* both paths agree: the same error class and message, or the same result
  (views: same shape, strides and place in the source; arrays: every byte);
* nothing outside a destination changed: guard regions and read-only or
  source arrays are byte-for-byte what they were (failed calls write nothing).

The fuzz loop runs in a child process, so a segfault or a hang in a compiled
kernel is reported as a crash or a hang instead of killing the test session.

``CAFFE2RNN_FUZZ_EXAMPLES`` scales it (default 8: 200 cases, a few seconds;
``make fuzz`` sets 400: 10,000 cases); ``CAFFE2RNN_FUZZ_RANDOM=1`` draws new
cases instead of the fixed, derandomised ones. Run it alone with
``python tests/fuzz/test_kernels_fuzz.py 5000``.
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES_PER_EXAMPLE_UNIT = 25  # cases per unit of CAFFE2RNN_FUZZ_EXAMPLES
GUARD = 16  # sentinel elements on each side of every array
SENTINEL = 0xA5
TIMEOUT = 600.0


def n_cases():
    text = os.environ.get("CAFFE2RNN_FUZZ_EXAMPLES", "").strip()
    return CASES_PER_EXAMPLE_UNIT * (int(text) if text else 8)


# --- recipes: plain data describing one call --------------------------------------------------
VARIANTS = ["ok"] * 14 + [
    "readonly",
    "strided",
    "bigendian",
    "misaligned",
    "int64",
    "none",
    "list",
    "memmap",
    "overlap",
    "scalar",
]
EDGE_INTS = [2**31, 2**62, 2**63 - 1, -(2**63), 2**63, 2**64, -(2**64), -1]
ODD_VALUES = [1.0, 2.5, "1", None, True]


def small_dim():
    return st.integers(0, 4)


def an_index(draw, usual):
    """Mostly a plausible index, sometimes an edge of 64 bits, rarely no integer."""
    kind = draw(st.integers(0, 9))
    if kind < 7:
        return draw(usual)
    if kind < 9:
        return draw(st.sampled_from(EDGE_INTS))
    return draw(st.sampled_from(ODD_VALUES))


def array_spec(draw, shape, dtype="float32", dest=False):
    return {
        "shape": list(shape),
        "dtype": dtype,
        "variant": draw(st.sampled_from(VARIANTS)),
        "dest": dest,
        "seed": draw(st.integers(0, 2**16)),
    }


def perturb(draw, shape):
    """Usually ``shape``; sometimes one dimension one larger or smaller."""
    if not shape or draw(st.integers(0, 5)):
        return shape
    i = draw(st.integers(0, len(shape) - 1))
    shape = list(shape)
    shape[i] = max(0, shape[i] + draw(st.sampled_from([-1, 1])))
    return shape


@st.composite
def recipes(draw):
    """(kernel name, list of argument specs); an array spec is a dict."""
    kernel = draw(
        st.sampled_from(
            [
                "offset_alias",
                "link_view",
                "repeat_copy",
                "accumulate_input_gradient",
                "add_striped_batch",
                "inplace_add",
                "lstm_unit_forward",
                "lstm_unit_backward",
            ]
        )
    )
    dtype = draw(st.sampled_from(["float32", "float64"]))
    r, n, d = draw(small_dim()), draw(st.integers(1, 3)), draw(st.integers(1, 4))
    idx = st.integers(-2, r + 2)
    if kernel == "offset_alias":
        args = [array_spec(draw, (r, n, d), dtype), an_index(draw, idx)]
    elif kernel == "link_view":
        args = [array_spec(draw, (r, n, d), dtype), an_index(draw, idx), an_index(draw, idx)]
    elif kernel == "repeat_copy":
        args = [
            array_spec(draw, (d,), dtype),
            array_spec(draw, perturb(draw, (n, d)), dtype, dest=True),
        ]
    elif kernel == "accumulate_input_gradient":
        args = [
            array_spec(draw, perturb(draw, (r + 1, n, d)), dtype, dest=True),
            array_spec(draw, perturb(draw, (r, n, d)), dtype),
            an_index(draw, idx),
            an_index(draw, st.integers(-1, 2)),
        ]
    elif kernel == "add_striped_batch":
        stripe = d + draw(st.integers(0, 2))
        args = [
            array_spec(draw, perturb(draw, (n, stripe)), dtype),
            array_spec(draw, (d,), dtype, dest=True),
            an_index(draw, st.integers(-1, stripe + 1)),
            an_index(draw, st.integers(-1, n + 1)),
        ]
    elif kernel == "inplace_add":
        args = [
            array_spec(draw, (n, d), dtype, dest=True),
            array_spec(draw, perturb(draw, (n, d)), dtype),
        ]
    else:
        seq = array_spec(draw, perturb(draw, (n,)), "int32")
        t = an_index(draw, st.integers(-1, 4))
        fb = draw(st.sampled_from([0.0, 1.0, -0.5, 0.0, "1"]))
        drop = draw(st.booleans())
        state = lambda dest=False: array_spec(draw, perturb(draw, (n, d)), dtype, dest)  # noqa: E731
        c_prev = array_spec(draw, (n, d), dtype)
        gates = array_spec(draw, perturb(draw, (n, 4 * d)), dtype)
        if kernel == "lstm_unit_forward":
            h_prev = state() if draw(st.booleans()) else None
            args = [h_prev, c_prev, gates, seq, t, fb, drop, state(True), state(True)]
        else:
            dh_prev = state(True) if draw(st.booleans()) else None
            dgates = array_spec(draw, perturb(draw, (n, 4 * d)), dtype, dest=True)
            args = [c_prev, gates, seq, t, state(), state(), state(), fb, drop]
            args += [dh_prev, state(True), dgates]
    return kernel, args


# --- materialising a recipe: every array inside a guarded buffer ------------------------------
class Built:
    """The arguments of one call and the buffers that hold them (with guards)."""

    def __init__(self, recipe, tmp):
        self.kernel, specs = recipe
        self.buffers = []  # (name, whole uint8 buffer, may its body change?)
        self.args = []
        self.last_body = None  # (buffer, start, nbytes) of the last guarded array
        for i, spec in enumerate(specs):
            self.args.append(self.make(i, spec, tmp) if isinstance(spec, dict) else spec)

    def guarded(self, i, count, dtype, fill, writable=False):
        """``count`` elements of ``dtype`` inside a buffer with GUARD sentinels each side
        (one spare byte at the end, for the misaligned variant)."""
        itemsize = np.dtype(dtype).itemsize
        raw = np.full((count + 2 * GUARD) * itemsize + 1, SENTINEL, np.uint8)
        self.buffers.append(("arg %d" % i, raw, writable))
        self.last_body = (raw, GUARD * itemsize, count * itemsize)
        body = raw[GUARD * itemsize : (GUARD + count) * itemsize]
        body.view(dtype)[...] = fill.astype(dtype).reshape(-1)[:count] if count else 0
        return raw

    def make(self, i, spec, tmp):
        shape, dtype, variant = tuple(spec["shape"]), np.dtype(spec["dtype"]), spec["variant"]
        size = int(np.prod(shape))
        rng = np.random.RandomState(spec["seed"])
        fill = (rng.standard_normal(max(size, 1) * 2) * 3).astype(np.float64)
        if dtype == np.int32:
            fill = rng.randint(-1, 5, max(size, 1) * 2)
        if variant == "none":
            return None
        if variant == "list":
            return fill[:size].tolist()
        if variant == "scalar":
            return np.asarray(fill[0], dtype)
        if variant == "memmap":
            path = os.path.join(tmp, "m%d" % len(os.listdir(tmp)))
            fill[: max(size, 1)].astype(dtype).tofile(path)
            return np.memmap(path, dtype=dtype, mode="r", shape=shape) if size else fill[:0]
        if variant == "overlap" and self.last_body and self.last_body[2] and size:
            raw, start, _ = self.last_body  # a view starting in the last array's body
            nbytes = size * dtype.itemsize
            if start + nbytes <= raw.size:
                return raw[start : start + nbytes].view(dtype).reshape(shape)
        if variant == "int64":
            dtype = np.dtype(np.int64)
        if variant == "strided":
            # (a strided array of one element is contiguous, and may be written)
            raw = self.guarded(i, 2 * size, dtype, np.repeat(fill[:size], 2), spec["dest"])
            start = GUARD * dtype.itemsize
            flat = raw[start : start + 2 * size * dtype.itemsize].view(dtype)
            return flat[::2].reshape(shape)
        if variant == "bigendian":
            dtype = dtype.newbyteorder(">")
        start = GUARD * dtype.itemsize + (1 if variant == "misaligned" else 0)
        raw = self.guarded(i, size, dtype, fill, writable=spec["dest"] and variant != "readonly")
        nbytes = size * dtype.itemsize
        if variant == "misaligned":  # move the body one byte up, into the spare byte
            raw[start : start + nbytes] = raw[start - 1 : start - 1 + nbytes].copy()
        a = raw[start : start + nbytes].view(dtype).reshape(shape)
        if variant == "readonly":
            a.flags.writeable = False
        return a

    def snapshot(self):
        return [raw.tobytes() for _, raw, _ in self.buffers]


def describe(result, built):
    """A comparable description of a kernel's return value (None or a view)."""
    if result is None:
        return None
    assert isinstance(result, np.ndarray), type(result)
    src = built.args[0]
    offset = result.__array_interface__["data"][0] - src.__array_interface__["data"][0]
    return [
        list(result.shape),
        list(result.strides),
        offset if result.size else 0,
        result.dtype.str,
    ]


def call(path, recipe, tmp):
    """(outcome, built): outcome is ["ok", description] or ["error", class, message]."""
    from caffe2rnn import errors, kernels

    built = Built(recipe, tmp)
    before = built.snapshot()
    try:
        result = getattr(kernels.implementation(path), built.kernel)(*built.args)
    except errors.Caffe2RNNError as exc:
        outcome = ["error", type(exc).__name__, str(exc)]
        assert built.snapshot() == before, "%s: a refused call changed memory" % path
    except Exception as exc:  # noqa: BLE001 - anything else is the finding
        raise AssertionError(
            "out-of-family: %s %s raised %s: %s" % (path, built.kernel, type(exc).__name__, exc)
        ) from exc
    else:
        outcome = ["ok", describe(result, built)]
    return outcome, built, before


def check_guards(built, before):
    """Only destination bodies may change: guards, sources and read-only arrays stay."""
    for (name, raw, writable), old in zip(built.buffers, before):
        new = raw.tobytes()
        if writable:
            assert _guards(new) == _guards(old), "%s: write outside %s" % (built.kernel, name)
        else:
            assert new == old, "%s: %s (no destination) changed" % (built.kernel, name)


def _guards(data):
    """The sentinel bytes of a guarded buffer: the first and last GUARD * 4 bytes
    (a guard is GUARD elements of at least 4 bytes, plus the spare byte)."""
    n = GUARD * 4
    return data[:n] + data[-n:]


def run(count, random=False):
    """Fuzz ``count`` cases in this process; return the tally."""
    from caffe2rnn import kernels

    paths = ["python", "cython"] if kernels.cython_available() else ["python"]
    tally = {"cases": 0, "ok": 0, "refused": 0, "paths": paths}
    tmp = tempfile.mkdtemp(prefix="kernel-fuzz-")

    @settings(
        max_examples=count,
        deadline=None,
        database=None,
        derandomize=not random,
        suppress_health_check=list(HealthCheck),
    )
    @given(recipe=recipes())
    def case(recipe):
        outcomes = []
        for path in paths:
            outcome, built, before = call(path, recipe, tmp)
            check_guards(built, before)
            outcomes.append((outcome, built.snapshot()))
        if len(outcomes) == 2:
            (a, mem_a), (b, mem_b) = outcomes
            assert a == b, "paths disagree on %s: python %s, cython %s" % (recipe[0], a, b)
            assert mem_a == mem_b, "paths wrote different bytes in %s" % recipe[0]
        tally["cases"] += 1
        tally["ok" if outcomes[0][0][0] == "ok" else "refused"] += 1

    case()
    return tally


def test_kernels_fuzz_in_a_child_process():
    """Run the fuzz loop in a child: a crash or a hang is a finding, not a dead session."""
    count = n_cases()
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("CAFFE2RNN_KERNELS", None)
    try:
        out = subprocess.run(
            [sys.executable, os.path.abspath(__file__), str(count)],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError("hang: the kernel fuzzer ran past %d s" % TIMEOUT) from None
    assert out.returncode >= 0, "crash: the fuzz child died of signal %d\n%s" % (
        -out.returncode,
        out.stderr[-4000:],
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-6000:]
    tally = json.loads(out.stdout.strip().splitlines()[-1])
    assert tally["cases"] >= 0.9 * count and tally["ok"] > 0 and tally["refused"] > 0, tally
    try:  # add to the fuzz suite's summary line when its harness is there
        from fuzz_harness import FUZZ
    except ImportError:
        return
    FUZZ.case(tally["cases"])


if __name__ == "__main__":
    tally = run(
        int(sys.argv[1]) if len(sys.argv) > 1 else n_cases(),
        random=bool(os.environ.get("CAFFE2RNN_FUZZ_RANDOM")),
    )
    print(
        "kernel fuzz: %d cases (%d returned, %d refused alike) on %s"
        % (tally["cases"], tally["ok"], tally["refused"], " and ".join(tally["paths"]))
    )
    print(json.dumps(tally))

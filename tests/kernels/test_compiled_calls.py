"""``compile_calls``: a plan's NumPy calls run through NumPy's inner loops.

The compiled path replaces ``partial(np.add | np.subtract | np.multiply |
np.matmul, a, b, out)`` by a ``LoopCall`` (the ufunc's own loop on the same
pointers) and a compiled LSTM kernel's partial by the kernel bound to its
arrays; the Python twin keeps the partials. Both must compute the same bits,
refuse the same outputs and report floating-point errors as np.errstate says,
in NumPy's words.
"""

import functools
import warnings

import numpy as np
import pytest

from caffe2rnn import kernels
from caffe2rnn.operators.bound_call import BoundCall
from caffe2rnn.operators.rnn import fusion  # noqa: F401  (registers the fused steps' splitters)

PY = kernels.implementation("python")
CY = pytest.importorskip("caffe2rnn._ext.rnn_executor") and kernels.implementation("cython")
LoopCall = pytest.importorskip("caffe2rnn._ext.rnn_executor").LoopCall
BoundLSTMUnit = pytest.importorskip("caffe2rnn._ext.lstm_unit").BoundLSTMUnit


def _matrix(rng, shape, dtype, order="C"):
    return np.asarray(rng.standard_normal(shape), dtype=dtype, order=order)


# name -> (func, a, b, out) built from an rng and a dtype; every one compiles.
CASES = {
    "gemm": lambda r, d: (np.matmul, _matrix(r, (8, 64), d), _matrix(r, (64, 256), d), (8, 256)),
    "gemm, transposed left": lambda r, d: (
        np.matmul,
        _matrix(r, (8, 256), d).T,
        _matrix(r, (8, 64), d),
        (256, 64),
    ),
    "gemm, transposed right": lambda r, d: (
        np.matmul,
        _matrix(r, (16, 32), d),
        _matrix(r, (48, 32), d).T,
        (16, 48),
    ),
    "gemv, a row of ones": lambda r, d: (
        np.matmul,
        np.ones((1, 8), d),
        _matrix(r, (8, 256), d),
        (1, 256),
    ),
    "matrix times a column": lambda r, d: (
        np.matmul,
        _matrix(r, (5, 7), d),
        _matrix(r, (7, 1), d),
        (5, 1),
    ),
    "strided rows (NumPy copies for BLAS)": lambda r, d: (
        np.matmul,
        _matrix(r, (12, 9), d)[::2],
        _matrix(r, (9, 4), d),
        (6, 4),
    ),
    "tiny (NumPy's own loop)": lambda r, d: (
        np.matmul,
        _matrix(r, (1, 1), d),
        _matrix(r, (1, 3), d),
        (1, 3),
    ),
    "add": lambda r, d: (np.add, _matrix(r, (8, 256), d), _matrix(r, (8, 256), d), (8, 256)),
    "subtract, 3-D": lambda r, d: (
        np.subtract,
        _matrix(r, (1, 4, 5), d),
        _matrix(r, (1, 4, 5), d),
        (1, 4, 5),
    ),
    "multiply": lambda r, d: (np.multiply, _matrix(r, (700,), d), _matrix(r, (700,), d), (700,)),
    "add a row to every row": lambda r, d: (
        np.add,
        _matrix(r, (6, 33), d),
        _matrix(r, (33,), d),
        (6, 33),
    ),
    "add to every row of a row": lambda r, d: (
        np.add,
        _matrix(r, (33,), d),
        _matrix(r, (6, 33), d),
        (6, 33),
    ),
    "add a (1, n) row to every row": lambda r, d: (
        np.add,
        _matrix(r, (6, 33), d),
        _matrix(r, (1, 33), d),
        (6, 33),
    ),
    "add a transposed matrix and a row (FC's (W.XT)T layout)": lambda r, d: (
        np.add,
        _matrix(r, (40, 16), d).T,
        _matrix(r, (40,), d),
        (16, 40),
    ),
    "multiply strided vectors": lambda r, d: (
        np.multiply,
        _matrix(r, (30,), d)[::3],
        _matrix(r, (20,), d)[::2],
        (10,),
    ),
}


def _fresh(case, dtype, in_place=False):
    func, a, b, shape = CASES[case](np.random.RandomState(0), dtype)
    if in_place:
        return func, a, b, a
    return func, a, b, np.full(shape, np.nan, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", sorted(CASES))
def test_each_path_computes_numpys_bits(case, dtype):
    func, a, b, out = _fresh(case, dtype)
    func(a, b, out=out)
    for path in (PY, CY):
        f, a2, b2, out2 = _fresh(case, dtype)
        (call,) = path.compile_calls([functools.partial(f, a2, b2, out2)])
        assert (type(call) is LoopCall) == (path is CY)
        call()
        assert out2.tobytes() == out.tobytes(), (case, path.path)
        call()  # a plan runs its calls again and again
        assert out2.tobytes() == out.tobytes(), (case, path.path)


@pytest.mark.parametrize("case", ["add", "subtract, 3-D", "multiply"])
def test_an_output_that_is_an_input_is_computed_in_place(case):
    func, a, b, out = _fresh(case, np.float64, in_place=True)
    expected = func(a, b)
    (call,) = CY.compile_calls([functools.partial(func, a, b, out)])
    assert type(call) is LoopCall
    call()
    assert out.tobytes() == expected.tobytes()


def test_a_loop_call_keeps_the_bound_call_it_replaces():
    a, b, out = np.ones((2, 3)), np.ones((3, 4)), np.empty((2, 4))
    bound = BoundCall.product(a, b, out)
    (call,) = CY.compile_calls([bound])
    assert call.bound is bound and call.func is np.matmul and call.args == (a, b, out)


def _refused():
    """Calls NumPy would dispatch differently (copies, casts, keywords...)."""
    x = np.arange(12.0).reshape(3, 4)
    return {
        "keyword out": functools.partial(np.add, x, x, out=np.empty((3, 4))),
        "overlapping matmul output": functools.partial(np.matmul, x[:, :3], x[:3, :3], x[:, 1:]),
        "partly overlapping add": functools.partial(np.add, x[:, :3], x[:, :3], x[:, 1:]),
        "an input one element ahead of the output": functools.partial(
            np.add, x.reshape(-1)[:6], np.ones(6), x.reshape(-1)[1:7]
        ),
        "a strided input overlapping the output": functools.partial(
            np.add, x.reshape(-1)[::2], np.ones(6), x.reshape(-1)[:6]
        ),
        "non-contiguous add output": functools.partial(np.add, x[:, :2], x[:, :2], x[:, 2:]),
        "int32": functools.partial(
            np.add, np.ones(3, np.int32), np.ones(3, np.int32), np.empty(3, np.int32)
        ),
        "mixed dtypes": functools.partial(np.add, x.astype(np.float32), x, np.empty((3, 4))),
        "a scalar operand": functools.partial(np.add, x, 1.0, np.empty((3, 4))),
        "0-d arrays": functools.partial(np.add, np.ones(()), np.ones(()), np.empty(())),
        "a 0-d operand": functools.partial(np.add, x, np.array(2.0), np.empty((3, 4))),
        "zero-size": functools.partial(
            np.matmul, np.ones((0, 3)), np.ones((3, 2)), np.empty((0, 2))
        ),
        "a column broadcast": functools.partial(np.add, x, np.ones((3, 1)), np.empty((3, 4))),
        "byte-swapped": functools.partial(np.add, x, x.astype(">f8"), np.empty((3, 4))),
        "another function": functools.partial(np.copyto, np.empty((3, 4)), x),
        "not a partial": (lambda: None),
    }


@pytest.mark.parametrize("name", sorted(_refused()))
def test_calls_numpy_would_dispatch_differently_stay_as_they_are(name):
    call = _refused()[name]
    assert CY.compile_calls([call])[0] is call


@pytest.mark.parametrize("case", ["gemm", "add", "add a row to every row"])
def test_a_read_only_output_is_refused_like_numpy(case):
    raised = []
    for path in (PY, CY):
        func, a, b, out = _fresh(case, np.float32)
        (call,) = path.compile_calls([functools.partial(func, a, b, out)])
        out.flags.writeable = False
        with pytest.raises(ValueError) as info:
            call()
        raised.append(str(info.value))
        assert np.isnan(out).all()  # nothing written
    assert raised[0] == raised[1] == "output array is read-only"


def _fp_trouble():
    """A call per floating-point error (and two at once), float32."""
    big = np.full((2, 3), 3e38, np.float32)
    inf = np.full((2, 3), np.inf, np.float32)
    tiny = np.full((2, 3), 1e-30, np.float32)
    return {
        "overflow in add": (np.add, big, big),
        "invalid in subtract": (np.subtract, inf, inf),
        "underflow in multiply": (np.multiply, tiny, tiny),
        "invalid in multiply": (np.multiply, inf, np.zeros((2, 3), np.float32)),
        "overflow in matmul": (np.matmul, big, big.T.copy()),
    }


def _outcome(path, name, mode):
    """What a call does under np.errstate(all=mode): its warnings, error,
    callback calls and output."""
    func, a, b = _fp_trouble()[name]
    out = np.empty((a.shape[0], b.shape[-1]), np.float32)
    (call,) = path.compile_calls([functools.partial(func, a, b, out)])
    seen = []
    with warnings.catch_warnings(record=True) as caught, np.errstate(all=mode):
        warnings.simplefilter("always")
        old = np.seterrcall(lambda text, flags: seen.append((text, flags)))
        try:
            call()
            error = None
        except FloatingPointError as exc:
            error = str(exc)
        finally:
            np.seterrcall(old)
    return [str(w.message) for w in caught], error, seen, out.tobytes()


@pytest.mark.parametrize("mode", ["ignore", "warn", "raise", "call"])
@pytest.mark.parametrize("name", sorted(_fp_trouble()))
def test_floating_point_errors_are_reported_as_numpy_reports_them(name, mode):
    numpy_says = _outcome(PY, name, mode)
    assert _outcome(CY, name, mode) == numpy_says
    if mode == "warn":
        assert numpy_says[0]  # the case does raise the flag it is named after


def _lstm_args(dtype=np.float32, n=3, d=4):
    rng = np.random.RandomState(1)

    def a(*shape):
        return rng.standard_normal(shape).astype(dtype)

    seq = np.array([5, 1, 5], np.int32)[:n]
    forward = (a(n, d), a(n, d), a(n, 4 * d), seq, 2, 0.5, False, a(n, d), a(n, d))
    backward = (a(n, d), a(n, 4 * d), seq, 2, a(n, d), a(n, d), a(n, d), 0.5, False)
    backward += (a(n, d), a(n, d), a(n, 4 * d))
    return {"lstm_unit_forward": forward, "lstm_unit_backward": backward}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", ["lstm_unit_forward", "lstm_unit_backward"])
def test_a_bound_lstm_kernel_is_the_kernel(kernel, dtype):
    expected = [x.copy() if isinstance(x, np.ndarray) else x for x in _lstm_args(dtype)[kernel]]
    getattr(CY, kernel)(*expected)
    args = _lstm_args(dtype)[kernel]
    (call,) = CY.compile_calls([functools.partial(getattr(CY, kernel), *args)])
    assert type(call) is BoundLSTMUnit and call.args == args and call.keywords == {}
    call()
    call()
    for got, want in zip(args, expected):
        if isinstance(want, np.ndarray):
            assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("kernel", ["lstm_unit_forward", "lstm_unit_backward"])
def test_a_bound_lstm_kernel_refuses_what_the_kernel_refuses(kernel):
    args = list(_lstm_args()[kernel])
    args[2 if kernel == "lstm_unit_forward" else 1] = np.ones((3, 5), np.float32)  # gates
    messages = []
    lstm_unit = pytest.importorskip("caffe2rnn._ext.lstm_unit")
    partial = functools.partial(getattr(CY, kernel), *args)
    assert CY.compile_calls([partial])[0] is partial  # refused when compiled: stays
    for call in (
        partial,
        functools.partial(getattr(lstm_unit, "bound_" + kernel), *args),
        functools.partial(getattr(PY, kernel), *args),
    ):
        with pytest.raises(Exception) as info:
            call()
        messages.append((type(info.value), str(info.value)))
    assert messages[0] == messages[1] == messages[2]


@pytest.mark.parametrize("kernel", ["lstm_unit_forward", "lstm_unit_backward"])
def test_an_output_made_read_only_after_binding_is_refused(kernel):
    args = _lstm_args()[kernel]
    (call,) = CY.compile_calls([functools.partial(getattr(CY, kernel), *args)])
    out = args[-1]
    before = out.copy()
    out.flags.writeable = False
    with pytest.raises(Exception) as bound:
        call()
    with pytest.raises(Exception) as direct:
        getattr(PY, kernel)(*args)
    assert (type(bound.value), str(bound.value)) == (type(direct.value), str(direct.value))
    assert "read-only" in str(bound.value) or "writ" in str(bound.value)
    assert out.tobytes() == before.tobytes()


def test_the_compiled_objects_are_made_by_compile_calls_only():
    with pytest.raises(TypeError, match="compile_calls"):
        LoopCall()()
    with pytest.raises(TypeError, match="bound_lstm_unit"):
        BoundLSTMUnit()()


@pytest.mark.parametrize("kernel", ["lstm_unit_forward", "lstm_unit_backward"])
def test_a_kernel_call_refused_when_compiled_stays_a_partial_that_raises(kernel):
    """compile_calls never raises: a kernel call whose checks fail now (an
    output made read-only after the plan was built) stays the partial, which
    raises the kernel's error when the plan runs it, naming its step there."""
    args = _lstm_args()[kernel]
    args[-1].flags.writeable = False
    call = functools.partial(getattr(CY, kernel), *args)
    assert CY.compile_calls([call])[0] is call


def _fused_forward(refused):
    """A fused forward BoundCall over a small step and its parts (FC's product
    and bias, the Sum, LSTMUnit); ``refused``: x (the input projection) is the
    gates themselves, which the fused kernel refuses and the parts compute."""
    rng = np.random.RandomState(7)
    n, d = 2, 3
    f = np.float32
    h, w_t = rng.standard_normal((n, d)).astype(f), rng.standard_normal((d, 4 * d)).astype(f)
    gates = np.zeros((n, 4 * d), f)
    bias = rng.standard_normal(4 * d).astype(f)
    x = gates if refused else rng.standard_normal((n, 4 * d)).astype(f)
    unit = (h, rng.standard_normal((n, d)).astype(f), gates, np.array([5, 5], np.int32))
    unit += (0, 0.0, False, np.zeros((n, d), f), np.zeros((n, d), f))
    parts = [
        BoundCall.product(h, w_t, gates),
        BoundCall.elementwise(np.add, gates, bias, gates),
        BoundCall.elementwise(np.add, gates, x, gates),
        BoundCall.kernel(CY.lstm_unit_forward, "lstm_unit_forward", unit, (), unit[7:], True, 6),
    ]
    args = (h, w_t, gates, False, bias, x, unit)
    fused = BoundCall.kernel(CY.lstm_step_forward, "lstm_step_forward", args, (), (), True, 6)
    fused.part_ops = (0, 1, 2, 3)
    assert [p.describe() for p, _ in fused.parts] == [p.describe() for p in parts]
    return fused, unit


@pytest.mark.parametrize("refused", [False, True])
def test_a_fused_call_the_kernel_refuses_runs_as_its_parts(refused):
    fused, unit = _fused_forward(refused)
    (call,) = CY.compile_calls([fused])
    bound_step = pytest.importorskip("caffe2rnn._ext.lstm_step").BoundLSTMStep
    assert type(call).__name__ == "Parts" if refused else isinstance(call, bound_step)
    call()
    expected, expected_unit = _fused_forward(refused)
    for part, _ in expected.parts:
        part()
    for got, want in zip(unit, expected_unit):
        if isinstance(got, np.ndarray):
            assert got.tobytes() == want.tobytes()


def test_a_part_that_fails_says_how_many_parts_ran():
    fused, unit = _fused_forward(True)
    (call,) = CY.compile_calls([fused])
    unit[7].flags.writeable = False  # h_out: the LSTMUnit part (the 4th) fails
    with pytest.raises(Exception) as info:
        call()
    assert info.value.fused_parts_done == 3


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_bound_accumulate_kernel_is_the_kernel_and_refuses_alike(dtype):
    """compile_calls binds accumulate_input_gradient (g[t + offset] += og[t])
    once: the same sums as the kernel; a g made read-only since, or a bad
    row, is refused with the kernel's (and the twin's) error."""
    from caffe2rnn._ext.accumulate_input_gradient import BoundAccumulate

    rng = np.random.RandomState(3)
    g, og = (
        rng.standard_normal((4, 2, 3)).astype(dtype),
        rng.standard_normal((3, 2, 3)).astype(dtype),
    )
    expected = g.copy()
    CY.accumulate_input_gradient(expected, og, 2, 1)
    CY.accumulate_input_gradient(expected, og, 2, 1)
    (call,) = CY.compile_calls([functools.partial(CY.accumulate_input_gradient, g, og, 2, 1)])
    assert type(call) is BoundAccumulate
    call()
    call()
    assert g.tobytes() == expected.tobytes()
    bad = functools.partial(CY.accumulate_input_gradient, g, og, 3, 1)  # row 4 of 4
    assert CY.compile_calls([bad])[0] is bad  # refused when compiled: stays the partial
    g.flags.writeable = False
    with pytest.raises(Exception) as bound:
        call()
    with pytest.raises(Exception) as twin:
        PY.accumulate_input_gradient(g, og, 2, 1)
    assert (type(bound.value), str(bound.value)) == (type(twin.value), str(twin.value))
    with pytest.raises(TypeError, match="bound_accumulate"):
        BoundAccumulate()()

"""The fused LSTM step: twin and compiled kernel are bit-identical, and both
are bit-identical to the separate calls they replace (the step net's FC, Sum
and LSTMUnit forward; LSTMUnitGradient, FCGradient's products and the Sums
backward), on valid input; on invalid input both refuse alike, before writing."""

import warnings

import numpy as np
import pytest

from caffe2rnn import errors, kernels

PY = kernels.implementation("python")
CY = pytest.importorskip("caffe2rnn._ext.lstm_step") and kernels.implementation("cython")
lstm_step_ext = pytest.importorskip("caffe2rnn._ext.lstm_step")

LAYOUTS = ["x.WT", "x.wT", "(w.xT)T"]


def forward_case(rng, dtype, layout, n=3, d=4, k=5, h_prev=True, fb=0.5, drop=False):
    """The arrays of one forward step, as FC's layout binds them: ``(args, parts)``
    where ``parts`` runs the separate calls on the same arrays."""

    def a(*shape):
        return rng.standard_normal(shape).astype(dtype)

    x2, w2 = a(n, k), a(4 * d, k)
    gates = np.full((1, n, 4 * d), np.nan, dtype)
    g2 = gates.reshape(n, 4 * d)
    bias_vec, x_in = a(4 * d), a(1, n, 4 * d)
    if layout == "x.WT":
        mm_a, mm_b, product, transposed = x2, np.ascontiguousarray(w2.T), g2, False
        bias = np.tile(bias_vec, (n, 1))
    elif layout == "x.wT":
        mm_a, mm_b, product, transposed, bias = x2, w2.T, g2, False, bias_vec
    else:
        mm_a, mm_b, transposed, bias = w2, x2.T, True, bias_vec
        product = np.full((4 * d, n), np.nan, dtype)
    seq = np.resize(np.array([9, 2, 9], np.int32), n)
    unit = (a(n, d) if h_prev else None, a(n, d), g2, seq, 2, fb, drop)
    unit += (np.full((n, d), np.nan, dtype), np.full((n, d), np.nan, dtype))
    args = (mm_a, mm_b, product, transposed, bias, x_in, unit)

    def parts(impl):
        np.matmul(mm_a, mm_b, out=product)
        np.add(product.T if transposed else product, bias, out=g2)
        np.add(gates, x_in, out=gates)
        impl.lstm_unit_forward(*unit)

    return args, parts


def backward_case(rng, dtype, n=3, d=4, h_prev=True, fb=0.5, drop=False):
    """The arrays of one backward step (LSTMUnitGradient, FCGradient, Sums)."""

    def a(*shape):
        return rng.standard_normal(shape).astype(dtype)

    dgates = np.full((n, 4 * d), np.nan, dtype)
    dhp = np.full((n, d), np.nan, dtype) if h_prev else None
    unit = (a(n, d), a(n, 4 * d), np.array([9, 2, 9][:n], np.int32), 2, a(n, d), a(n, d))
    unit += (a(n, d), fb, drop, dhp, np.full((n, d), np.nan, dtype), dgates)
    hp, w, ones = a(n, d), a(4 * d, d), np.ones((1, n), dtype)
    dw_t, db_t, part = (np.full(s, np.nan, dtype) for s in ((4 * d, d), (1, 4 * d), (n, d)))
    products = ((dgates.T, hp, dw_t), (ones, dgates, db_t), (dgates, w, part))
    dw, db = a(4 * d, d), a(1, 4 * d)
    sums = ((dw, dw_t), (db, db_t))
    if h_prev:
        sums = ((dhp, part),) + sums
    args = (unit, products, sums)

    def parts(impl):
        impl.lstm_unit_backward(*unit)
        for x, y, out in products:
            np.matmul(x, y, out=out)
        for dst, src in sums:
            np.add(dst, src, out=dst)

    return args, parts


def arrays(args):
    """Every array among ``args`` (nested tuples included), in order."""
    out = []
    for x in args:
        if isinstance(x, np.ndarray):
            out.append(x)
        elif isinstance(x, tuple):
            out += arrays(x)
    return out


def snapshot(args):
    return [x.tobytes() for x in arrays(args)]


def run_each_way(make, kernel):
    """Bytes of every array after: the separate calls (twin kernels), the twin
    fused kernel, the compiled one, and the compiled one bound (forward:
    called twice; backward accumulates, so once)."""
    results = []
    for how in ("parts", "python", "cython", "bound"):
        args, parts = make()
        if how == "parts":
            parts(PY)
        elif how == "bound":
            bound = getattr(lstm_step_ext, "bound_" + kernel)(*args)
            bound()
            if kernel == "lstm_step_forward":
                bound()  # a plan calls it again and again: the same result
        else:
            getattr(PY if how == "python" else CY, kernel)(*args)
        results.append((how, snapshot(args)))
    return results


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("h_prev,fb,drop", [(True, 0.5, False), (False, 0.0, True)])
def test_forward_is_the_calls_it_replaces_bit_for_bit(dtype, layout, h_prev, fb, drop):
    def make():
        return forward_case(
            np.random.RandomState(0), dtype, layout, h_prev=h_prev, fb=fb, drop=drop
        )

    results = run_each_way(make, "lstm_step_forward")
    for how, got in results[1:]:
        assert got == results[0][1], how


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("h_prev,fb,drop", [(True, 0.5, False), (False, 0.0, True)])
def test_backward_is_the_calls_it_replaces_bit_for_bit(dtype, h_prev, fb, drop):
    def make():
        return backward_case(np.random.RandomState(1), dtype, h_prev=h_prev, fb=fb, drop=drop)

    results = run_each_way(make, "lstm_step_backward")
    for how, got in results[1:]:
        assert got == results[0][1], how


def test_a_wider_step_and_a_square_gates_product():
    """N = 4D: the product's layout is said, not guessed from its shape."""
    for layout in LAYOUTS:

        def make(layout=layout):
            return forward_case(np.random.RandomState(2), np.float32, layout, n=16, d=4, k=16)

        results = run_each_way(make, "lstm_step_forward")
        assert all(got == results[0][1] for _, got in results[1:]), layout


def _forward_corruptions():
    """name -> a change to valid forward args (a list) that must be refused."""

    def put(i, value):
        return lambda args: args.__setitem__(i, value(args))

    def read_only(i):
        def change(args):
            args[i].flags.writeable = False

        return change

    return {
        "a is None": put(0, lambda args: None),
        "b is int32": put(1, lambda args: args[1].astype(np.int32)),
        "b byte-swapped": put(1, lambda args: args[1].astype(args[1].dtype.newbyteorder())),
        "product read-only": read_only(2),
        "product of another shape": put(2, lambda args: np.zeros((2, 2), args[2].dtype)),
        "product not contiguous": put(2, lambda args: np.zeros((6, 16), args[2].dtype)[::2]),
        "product float64": put(2, lambda args: args[2].astype(np.float64)),
        "bias of another size": put(4, lambda args: np.zeros(5, args[4].dtype)),
        "x of another size": put(5, lambda args: np.zeros(7, args[5].dtype)),
        "x overlapping the gates": put(5, lambda args: args[8]),
        "gates read-only": read_only(8),
        "h_out overlapping c_out": put(13, lambda args: args[14]),
        "t not an integer": put(10, lambda args: "2"),
        "empty a": put(0, lambda args: np.zeros((3, 0), args[0].dtype)),
    }


def assert_refused_alike(kernel, flat, pack, change):
    """``change`` applied to the flat arguments ``flat``: both paths and the
    bound kernel refuse with one class and message, naming the kernel, and
    write nothing."""
    outcomes = []
    for impl in (PY, CY, "bound"):
        args = list(flat())
        change(args)
        args = pack(args)
        before = snapshot(args)
        with pytest.raises(Exception) as info:
            if impl == "bound":
                getattr(lstm_step_ext, "bound_" + kernel)(*args)()
            else:
                getattr(impl, kernel)(*args)
        outcomes.append((type(info.value), str(info.value)))
        assert snapshot(args) == before, impl
    assert outcomes[0] == outcomes[1] == outcomes[2]
    assert issubclass(outcomes[0][0], errors.Caffe2RNNError), outcomes[0]
    assert outcomes[0][1].startswith(kernel + ": "), outcomes[0]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(_forward_corruptions()))
def test_forward_refuses_alike_before_writing(name, layout):
    def flat():  # a, b, product, transposed, bias, x, then the LSTM unit's arguments
        args, _ = forward_case(np.random.RandomState(3), np.float32, layout)
        return args[:6] + args[6]

    def pack(flat):
        return tuple(flat[:6]) + (tuple(flat[6:]),)

    assert_refused_alike("lstm_step_forward", flat, pack, _forward_corruptions()[name])


def _backward_corruptions():
    def entries(index, change):
        """A change to the products (index 12) or the sums (13), as lists."""

        def apply(args):
            parts = list(map(list, args[index]))
            change(parts)
            args[index] = tuple(map(tuple, parts))

        return apply

    def products(change):
        return entries(12, change)

    def sums(change):
        return entries(13, change)

    return {
        "a product of another shape": products(
            lambda p: p[0].__setitem__(2, np.zeros((3, 3), p[0][2].dtype))
        ),
        "a product overwriting its operand": products(lambda p: p[2].__setitem__(2, p[2][1][:3])),
        "a sum of another size": sums(lambda s: s[1].__setitem__(1, np.zeros(3, s[1][0].dtype))),
        "a sum partly over its addend": sums(
            lambda s: s.__setitem__(1, (s[1][0][:, 1:], s[1][0][:, :-1]))
        ),
        "a read-only sum": sums(lambda s: s[0][0].flags.__setattr__("writeable", False)),
        "five products": products(lambda p: p.extend([p[0]] * 2)),
        "dgates of another size": lambda args: args.__setitem__(11, np.zeros((3, 5), np.float32)),
    }


@pytest.mark.parametrize("name", sorted(_backward_corruptions()))
def test_backward_refuses_alike_before_writing(name):
    def flat():  # the LSTM unit gradient's arguments, then products, sums
        args, _ = backward_case(np.random.RandomState(4), np.float32)
        return args[0] + args[1:]

    def pack(flat):
        return (tuple(flat[:12]), flat[12], flat[13])

    assert_refused_alike("lstm_step_backward", flat, pack, _backward_corruptions()[name])


def test_an_output_made_read_only_after_binding_is_refused_by_the_full_checks():
    args, _ = forward_case(np.random.RandomState(5), np.float32, "x.WT")
    bound = lstm_step_ext.bound_lstm_step_forward(*args)
    args[6][7].flags.writeable = False  # h_out
    with pytest.raises(errors.MemoryLayoutError, match="lstm_step_forward: h_out is read-only"):
        bound()
    with pytest.raises(TypeError, match="bound_lstm_step"):
        lstm_step_ext.BoundLSTMStep()()


@pytest.mark.parametrize("mode", ["warn", "raise"])
def test_floating_point_errors_of_the_product_and_sums_are_numpys(mode):
    """An overflowing product or sum is reported as NumPy reports it, after
    that part (with ``raise``, the parts after it do not run)."""
    outcomes = []
    for impl in (PY, CY):
        args, _ = forward_case(np.random.RandomState(6), np.float32, "x.wT")
        args[0][:] = 3e38  # the product overflows
        with warnings.catch_warnings(record=True) as caught, np.errstate(over=mode):
            warnings.simplefilter("always")
            try:
                impl.lstm_step_forward(*args)
                error = None
            except FloatingPointError as exc:
                error = str(exc)
        messages = [str(w.message) for w in caught if "matmul" in str(w.message)]
        outcomes.append((messages, error, snapshot(args)))
    assert outcomes[0] == outcomes[1]
    assert "overflow encountered in matmul" in (outcomes[0][1] or outcomes[0][0][0])

"""e^x, σ and tanh as fixed sequences of IEEE operations.

Twin of ``_ext/_activations.pxi`` (bit-identical results).

The LSTM kernels need σ and tanh of every gate, every step. NumPy's ``np.exp``
is a fast vectorised loop, but a compiled kernel cannot reproduce it bit for
bit except by calling it — one call per array, and a pass over memory each
time. So both kernel paths compute e^x the same way instead, written out as
the operations below: the compiled kernel runs them element by element in
one vectorised loop per gate row (the compiler turns them into SIMD
instructions), this twin runs the same operations as ufuncs over whole
arrays. Every operation is an IEEE add, subtract, multiply, divide, compare
or integer shift, which rounds the same way in both (the build forbids
fusing a multiply and an add into one FMA), so the two paths give the same
bits by construction (``tests/kernels/test_activations_parity.py``).

**e^x** (Cody and Waite's range reduction, as in Cephes' ``expf``/``exp``):

1. clamp x to [LO, HI] — so that 2^n below is a normal number (e^x then
   saturates near 1.6e38 in float32, 8e307 in float64, instead of
   overflowing; NaN passes through);
2. n = x·log₂e rounded to the nearest integer, by adding and subtracting
   1.5·2^23 (1.5·2^52 in float64) — which also leaves n in the low bits of
   the sum;
3. r = (x − n·C1) − n·C2, where C1 + C2 = ln 2 and n·C1 is exact, so
   ``|r| ≤ ln(2)/2``;
4. e^r by a polynomial: float32, Cephes' minimax polynomial
   ((((P0·r + P1)·r + P2)·r + P3)·r + P4)·r + P5, then (y·r² + r) + 1;
   float64, the Taylor series to degree 13 by Horner's rule;
5. 2^n from the sum's bits: shifted into the exponent field and biased
   (unsigned integers, wrapping); e^x = e^r · 2^n.

Error against the exact e^x: under 1 ulp in float32 over [−87, 88] (NumPy's
own float32 ``exp`` is within about 2.4 ulp), about 1 ulp in float64.
Neither path reports floating-point errors here (σ of a large −x underflows
to a denormal, a signalling NaN is invalid): the compiled loops do not read
the flags, so the twin runs under ``np.errstate(all="ignore")``.

**σ and tanh** are Caffe2's forms (``caffe2/operators/lstm_unit_op.h`` at
042e8ede4): σ(x) = 1 / (e^(−x) + 1), tanh(x) = 2σ(2x) − 1, computed as
(s + s) − 1 with s = 1 / (e^(x·−2) + 1). The product x·(−2) is exactly
−(x + x); it is the form a compiler may choose for −(x + x) anyway, and the
two differ in one thing only, the sign bit of a NaN — so both paths write
the product.
"""

import numpy as np

from . import contract

#: Per dtype: the clamp, the rounding constant, ln 2 as C1 + C2, log₂e, the
#: polynomial's coefficients (highest degree first), the exponent's bits and bias.
_F32 = dict(
    hi=np.float32(88.0),
    lo=np.float32(-87.0),
    log2e=np.float32(1.4426950216293335),
    magic=np.float32(12582912.0),  # 1.5 * 2**23
    c1=np.float32(0.693359375),
    c2=np.float32(-0.00021219444170128554),
    poly=[
        np.float32(c)
        for c in (
            0.00019875691214110702,
            0.001398199936375022,
            0.008333452045917511,
            0.04166579619050026,
            0.1666666567325592,
            0.5,
        )
    ],
    bits=np.uint32,
    shift=np.uint32(23),
    bias=np.uint32(127 << 23),
)
_F64 = dict(
    hi=np.float64(709.0),
    lo=np.float64(-708.0),
    log2e=np.float64(1.4426950408889634),
    magic=np.float64(6755399441055744.0),  # 1.5 * 2**52
    c1=np.float64(0.693145751953125),
    c2=np.float64(1.4286068203094173e-06),
    poly=[
        np.float64(c)
        for c in (
            1.6059043836821613e-10,  # 1/13!
            2.08767569878681e-09,
            2.505210838544172e-08,
            2.755731922398589e-07,
            2.7557319223985893e-06,
            2.48015873015873e-05,
            0.0001984126984126984,
            0.001388888888888889,
            0.008333333333333333,
            0.041666666666666664,
            0.16666666666666666,
            0.5,
            1.0,  # 1/1!
        )
    ],
    bits=np.uint64,
    shift=np.uint64(52),
    bias=np.uint64(1023 << 52),
)


def _check(kernel, x, out):
    """Contiguous float arrays of one type and size; ``out`` writable, and
    either ``x`` itself or apart from it."""
    contract.array(x, kernel, "x")
    contract.array(out, kernel, "out", writable=True)
    contract.same_dtype(kernel, "x", x, "out", out)
    contract.same_size(kernel, "out", out, x.size)
    if contract.extent(out) != contract.extent(x):  # in place, or apart
        contract.no_overlap(kernel, [("out", out)], [("x", x)])


def exp(x, out):
    """e^x into ``out`` (contiguous, x's size and type; may be ``x``)."""
    _check("exp", x, out)
    return _exp(x, out.reshape(x.shape))


def sigmoid(x, out):
    """σ(x) = 1 / (e^(−x) + 1) into ``out`` (as :func:`exp`)."""
    _check("sigmoid", x, out)
    return _sigmoid(x, out.reshape(x.shape))


def tanh(x, out):
    """tanh(x) = 2σ(2x) − 1 into ``out`` (as :func:`exp`)."""
    _check("tanh", x, out)
    return _tanh(x, out.reshape(x.shape))


# The operations, unchecked (the LSTM kernels call them on arrays they checked).
def _exp(x, out):
    """e^x into ``out`` (x's shape; may be ``x``)."""
    k = _F32 if out.dtype == np.float32 else _F64
    with np.errstate(all="ignore"):  # as the compiled twin, which reports nothing
        np.clip(x, k["lo"], k["hi"], out=out)  # NaN stays NaN
        t = np.multiply(out, k["log2e"])
        t += k["magic"]
        n = t - k["magic"]
        r = n * k["c1"]
        np.subtract(out, r, out=r)
        n *= k["c2"]
        r -= n
        y = np.multiply(r, k["poly"][0])
        if out.dtype == np.float32:
            for c in k["poly"][1:-1]:
                y += c
                y *= r
            y += k["poly"][-1]
            np.multiply(r, r, out=n)
            y *= n
            y += r
            y += np.float32(1)
        else:
            for c in k["poly"][1:]:
                y += c
                y *= r
            y += np.float64(1)
        scale = t.view(k["bits"])  # t is not needed any more: 2^n in place
        np.left_shift(scale, k["shift"], out=scale)
        scale += k["bias"]  # wraps modulo 2^32 (2^64), as the compiled code's unsigned add
        np.multiply(y, scale.view(out.dtype), out=out)
    return out


def _sigmoid(x, out):
    """σ(x) = 1 / (e^(−x) + 1) into ``out`` (may be ``x``)."""
    with np.errstate(all="ignore"):  # σ of a large −x underflows: not reported
        np.negative(x, out=out)
        _exp(out, out)
        out += 1
        np.reciprocal(out, out=out)
    return out


def _tanh(x, out):
    """tanh(x) = (s + s) − 1, s = 1 / (e^(x·−2) + 1), into ``out`` (may be ``x``)."""
    with np.errstate(all="ignore"):
        np.multiply(x, -2, out=out)
        _exp(out, out)
        out += 1
        np.reciprocal(out, out=out)
        out += out
        out -= 1
    return out

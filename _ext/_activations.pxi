# e^x, σ and tanh as fixed sequences of IEEE operations, one element at a time,
# so that the compiler vectorises every loop that calls them (no function call,
# no table: multiplies, adds, a division, two compares and two integer ops).
# Twin: caffe2rnn/kernels/activations.py runs the very same operations as
# NumPy ufuncs over arrays; the build forbids FMA contraction
# (-ffp-contract=off), so each operation rounds once, as each ufunc does, and
# the two are bit-identical (tests/kernels/test_activations_parity.py).
#
# e^x (Cody and Waite's range reduction, as Cephes' expf/exp):
#   x is clamped to [LO, HI] (so that 2^n below is a normal number: e^x
#   saturates near 1.6e38 / 8e307 instead of overflowing, and never reaches
#   the denormals' 2^n; NaN passes the clamps unchanged);
#   n = round-to-nearest(x · log2 e), made by adding and subtracting
#   1.5 · 2^23 (2^52 for float64): n then also sits in the sum's low bits;
#   r = (x − n · C1) − n · C2, ln 2 = C1 + C2 with n · C1 exact;
#   e^r by a polynomial (float32: Cephes' expf minimax polynomial,
#   ((((P0 r + P1) r + P2) r + P3) r + P4) r + P5, then (y r² + r) + 1;
#   float64: Taylor to degree 13 by Horner's rule, (((c13 r + c12) r ...) r + 1);
#   2^n built from the sum's bits: (bits << 23) + (127 << 23), as unsigned
#   integers that wrap (<< 52 and 1023 for float64);
#   e^x = e^r · 2^n.
# Largest error against the exact e^x: under 1 ulp (float32, measured over
# [−87, 88]), about 1 ulp (float64).
#
# σ(x) = 1 / (e^(−x) + 1) and tanh(x) = 2σ(2x) − 1, the forms Caffe2's LSTMUnit
# used (caffe2/operators/lstm_unit_op.h at 042e8ede4: sigmoid and host_tanh),
# computed as (s + s) − 1 with s = 1 / (e^(x · −2) + 1). x · −2 is −(x + x)
# exactly; it is written as a product because a compiler may turn −(x + x)
# into that product anyway, which leaves a NaN's sign bit where the negation
# would have flipped it, and then the twin (which negates) would differ.
from libc.stdint cimport uint32_t, uint64_t


# A number's bits as an unsigned integer: a union, which the compiler keeps in
# a register (a vector register once the loop is vectorised).
cdef union Bits32:
    float f
    uint32_t u


cdef union Bits64:
    double f
    uint64_t u


cdef inline real _exp(real x) noexcept nogil:
    """e^x (see the top of this file)."""
    cdef real t, n, r, y
    cdef Bits32 b32
    cdef Bits64 b64
    if real is float:
        x = <float>88.0 if x > <float>88.0 else x  # NaN stays NaN
        x = <float>-87.0 if x < <float>-87.0 else x
        t = x * <float>1.4426950216293335
        t = t + <float>12582912.0
        n = t - <float>12582912.0
        r = x - n * <float>0.693359375
        r = r - n * <float>-0.00021219444170128554
        y = <float>0.00019875691214110702 * r
        y = (y + <float>0.001398199936375022) * r
        y = (y + <float>0.008333452045917511) * r
        y = (y + <float>0.04166579619050026) * r
        y = (y + <float>0.1666666567325592) * r
        y = y + <float>0.5
        y = y * (r * r)
        y = y + r
        y = y + <float>1.0
        b32.f = t
        b32.u = (b32.u << 23) + (<uint32_t>127 << 23)
        return y * b32.f
    else:
        x = 709.0 if x > 709.0 else x
        x = -708.0 if x < -708.0 else x
        t = x * 1.4426950408889634
        t = t + 6755399441055744.0
        n = t - 6755399441055744.0
        r = x - n * 0.693145751953125
        r = r - n * 1.4286068203094173e-06
        y = 1.6059043836821613e-10 * r  # 1/13!
        y = (y + 2.08767569878681e-09) * r  # 1/12!
        y = (y + 2.505210838544172e-08) * r  # 1/11!
        y = (y + 2.755731922398589e-07) * r  # 1/10!
        y = (y + 2.7557319223985893e-06) * r  # 1/9!
        y = (y + 2.48015873015873e-05) * r  # 1/8!
        y = (y + 0.0001984126984126984) * r  # 1/7!
        y = (y + 0.001388888888888889) * r  # 1/6!
        y = (y + 0.008333333333333333) * r  # 1/5!
        y = (y + 0.041666666666666664) * r  # 1/4!
        y = (y + 0.16666666666666666) * r  # 1/3!
        y = (y + 0.5) * r
        y = (y + 1.0) * r
        y = y + 1.0
        b64.f = t
        b64.u = (b64.u << 52) + (<uint64_t>1023 << 52)
        return y * b64.f


cdef inline real _sigmoid(real x) noexcept nogil:
    """σ(x) = 1 / (e^(−x) + 1)."""
    cdef real one = 1
    return one / (_exp(-x) + one)


cdef inline real _tanh(real x) noexcept nogil:
    """tanh(x) = (s + s) − 1 with s = σ(2x) = 1 / (e^(x · −2) + 1)."""
    cdef real one = 1, minus_two = -2
    cdef real s = one / (_exp(x * minus_two) + one)
    return (s + s) - one

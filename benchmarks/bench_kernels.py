"""Time each RNN kernel on its Python twin and its Cython build.

Run from the repository root, after `python setup.py build_ext --inplace`:

    python benchmarks/bench_kernels.py

For every kernel and a few small shapes (N x D rows, float32; for the LSTM
unit kernels D is the state size, the gates are N x 4D) it prints the
median time per call of the raw kernel on each path and the speed-up, then
checks that creating a view (link or alias) costs the same for T = 10 and
T = 10,000 (views are O(1) in T). Validation (kernels.checked) is shared by
both paths and not included in the kernel columns; the last table shows the
checked entry points the operators call.

The last table is why the kernels take ``cnp.ndarray`` and loop over the raw
data pointer instead of typed memoryviews (``float[::1]``): it compiles the
same 64-float in-place add both ways (in a temporary directory) and times one
call of each. Acquiring a memoryview's buffer is a fixed cost per argument per
call, larger than the whole loop at the row sizes a step net works on.
"""

import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_blas  # noqa: E402  (benchmarks/cpu_blas.py: the CPU's own BLAS kernels)

if __name__ == "__main__":
    cpu_blas.use_the_cpus_own_kernels()  # before NumPy loads its OpenBLAS
import subprocess
import tempfile
import time
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from caffe2rnn import kernels  # noqa: E402
from caffe2rnn.kernels import checked  # noqa: E402

SHAPES = [(4, 16), (8, 64), (32, 256)]  # N x D, all with N * D <= 8192
T = 16


def per_call_us(fn, number=2000, repeat=7):
    """Median over ``repeat`` runs of ``number`` calls, in CPU microseconds of
    this thread (a call waiting for a core on a shared machine is not counted)."""
    times = sorted(timeit.repeat(fn, timer=time.thread_time, number=number, repeat=repeat))
    return times[len(times) // 2] / number * 1e6


def cases(n, d):
    """(kernel, description, callable taking a path) for one N x D."""
    rng = np.random.RandomState(0)
    states = rng.standard_normal((T + 1, n, d)).astype(np.float32)
    grad = rng.standard_normal((T, n, d)).astype(np.float32)
    row = rng.standard_normal(d).astype(np.float32)
    block = np.empty((n, d), np.float32)
    other = states[3]
    acc = np.zeros(d, np.float32)
    # LSTMUnit: N x D states, N x 4D gates (the D of the table is the state size)
    gates = rng.standard_normal((n, 4 * d)).astype(np.float32)
    seq = np.full(n, T, np.int32)
    h_out, c_out = np.empty((n, d), np.float32), np.empty((n, d), np.float32)
    dgates = np.empty((n, 4 * d), np.float32)
    return [
        ("repeat_copy", lambda k: k.repeat_copy(row, block)),
        ("accumulate_input_gradient", lambda k: k.accumulate_input_gradient(states, grad, 5, 1)),
        ("add_striped_batch", lambda k: k.add_striped_batch(block, acc, d, n)),
        ("inplace_add", lambda k: k.inplace_add(block, other)),
        ("link_view", lambda k: k.link_view(states, 4, 1)),
        ("offset_alias", lambda k: k.offset_alias(states, 1)),
        (
            "lstm_unit_forward",
            lambda k: k.lstm_unit_forward(
                block, states[1], gates, seq, 5, 0.0, False, h_out, c_out
            ),
        ),
        (
            "lstm_unit_backward",
            lambda k: k.lstm_unit_backward(
                states[1],
                gates,
                seq,
                5,
                states[2],
                states[3],
                states[4],
                0.0,
                False,
                h_out,
                c_out,
                dgates,
            ),
        ),
    ]


def kernel_table():
    py, cy = kernels.implementation("python"), kernels.implementation("cython")
    print("%-27s %-10s %11s %11s %9s" % ("kernel", "N x D", "python us", "cython us", "speed-up"))
    for n, d in SHAPES:
        for name, call in cases(n, d):
            tp = per_call_us(lambda: call(py))
            tc = per_call_us(lambda: call(cy))
            print("%-27s %-10s %11.3f %11.3f %8.1fx" % (name, "%dx%d" % (n, d), tp, tc, tp / tc))


def view_table():
    print("\nview creation vs T (checked entry points, N x D = 8x64, float32)")
    print("%-14s %-7s %12s %12s %7s" % ("view", "path", "T=10 us", "T=10000 us", "ratio"))
    for path in ("python", "cython"):
        with kernels.use(path):
            for name, make in [
                ("link_view", lambda s: checked.link_view(s, 7, 1, 1)),
                ("offset_alias", lambda s: checked.offset_alias(s, -1)),
            ]:
                small = np.zeros((11, 8, 64), np.float32)
                large = np.zeros((10001, 8, 64), np.float32)
                ts = per_call_us(lambda: make(small))
                tl = per_call_us(lambda: make(large))
                print("%-14s %-7s %12.3f %12.3f %6.2fx" % (name, path, ts, tl, tl / ts))


MEMORYVIEW_PYX = """
# cython: language_level=3, boundscheck=False, wraparound=False
cimport numpy as cnp
cnp.import_array()

def add_memoryview(float[::1] dst, const float[::1] src):
    cdef Py_ssize_t i
    for i in range(dst.shape[0]):
        dst[i] = dst[i] + src[i]

def add_pointer(cnp.ndarray dst, cnp.ndarray src):
    cdef float* d = <float*>cnp.PyArray_DATA(dst)
    cdef const float* s = <const float*>cnp.PyArray_DATA(src)
    cdef Py_ssize_t i
    for i in range(cnp.PyArray_SIZE(dst)):
        d[i] = d[i] + s[i]
"""

MEMORYVIEW_SETUP = """
import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
setup(ext_modules=cythonize([Extension("mv_bench", ["mv_bench.pyx"],
      include_dirs=[numpy.get_include()], extra_compile_args=["-O3"])], quiet=True))
"""


def memoryview_table(n=64):
    """Per-call cost of a typed-memoryview kernel vs a raw-pointer one (n floats)."""
    print("\ntyped memoryview vs raw pointer: dst += src, %d float32, per call" % n)
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in [("mv_bench.pyx", MEMORYVIEW_PYX), ("setup.py", MEMORYVIEW_SETUP)]:
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        subprocess.run(
            [sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
            cwd=tmp,
            check=True,
            capture_output=True,
        )
        sys.path.insert(0, tmp)
        try:
            bench = importlib.import_module("mv_bench")
        finally:
            sys.path.remove(tmp)
        dst, src = np.zeros(n, np.float32), np.ones(n, np.float32)
        times = {}
        for fn in (bench.add_memoryview, bench.add_pointer):
            times[fn.__name__] = per_call_us(lambda: fn(dst, src), number=20000)
            print("%-16s %8.3f us" % (fn.__name__, times[fn.__name__]))
        ratio = times["add_memoryview"] / times["add_pointer"]
        print("memoryview / pointer: %.1fx" % ratio)


def main():
    if not kernels.cython_available():
        sys.exit("the Cython kernels are not built: run `python setup.py build_ext --inplace`")
    print("caffe2rnn kernel benchmark (median per call; numpy %s)" % np.__version__)
    print(cpu_blas.header() + "\n")
    kernel_table()
    view_table()
    memoryview_table()
    print("\nreproduce: python benchmarks/bench_kernels.py")


if __name__ == "__main__":
    main()

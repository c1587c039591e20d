"""Which BLAS the fused LSTM step calls: NumPy's matmul loop or SciPy's sgemm, timed.

Run from the repository root (needs Cython, a C compiler and, for the SciPy
rows, scipy):

    python benchmarks/bench_blas_choice.py            # the step shapes of bench_lstm
    python benchmarks/bench_blas_choice.py --quick

The fused LSTM step (``_ext/lstm_step.pyx``) must call BLAS from Cython with
no NumPy call per product. Two ways are at hand: NumPy's own matmul inner
loop, taken from ``np.matmul``'s loop table (it calls the OpenBLAS NumPy
ships), and ``scipy.linalg.cython_blas.sgemm`` (the OpenBLAS SciPy ships,
another build). This script compiles both callers once (into a temporary
folder) and times, at each (N, H) of ``benchmarks/bench_lstm.py``, the four
products of an LSTM step as caffe2rnn forms them: the recurrent product
``h · Wᵀ`` (N x H by H x 4H, in each FC layout), and backward dW, dX (and,
for sgemm, dW accumulated in place with beta = 1). Interleaved rounds, one
thread, median CPU µs per product (``time.process_time``: robust on a shared
machine).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_blas  # noqa: E402  (benchmarks/cpu_blas.py: the CPU's own BLAS kernels)

if __name__ == "__main__":
    cpu_blas.use_the_cpus_own_kernels()  # before NumPy loads its OpenBLAS

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402

SOURCE = r"""
# cython: language_level=3
cimport numpy as cnp
import time
import numpy as np
cnp.import_array()
cnp.import_ufunc()
ctypedef void (*inner_loop)(char **args, cnp.npy_intp *dims, cnp.npy_intp *steps,
                            void *data) noexcept nogil

def time_matmul_loop(cnp.ndarray x, cnp.ndarray y, cnp.ndarray o, int reps):
    cdef cnp.ufunc u = np.matmul
    cdef int k, j
    cdef inner_loop fn = NULL
    cdef void* data = NULL
    for k in range(u.ntypes):
        if all(u.types[k * u.nargs + j] == cnp.NPY_FLOAT32 for j in range(3)):
            fn = <inner_loop><void*>u.functions[k]
            data = u.data[k]
            break
    cdef cnp.npy_intp dims[4]
    cdef cnp.npy_intp steps[9]
    cdef char* args[3]
    dims[0], dims[1], dims[2], dims[3] = 1, x.shape[0], x.shape[1], y.shape[1]
    steps[0] = steps[1] = steps[2] = 0
    steps[3], steps[4], steps[5] = x.strides[0], x.strides[1], y.strides[0]
    steps[6], steps[7], steps[8] = y.strides[1], o.strides[0], o.strides[1]
    cdef int r
    start = time.process_time()
    for r in range(reps):
        args[0] = <char*>cnp.PyArray_DATA(x)
        args[1] = <char*>cnp.PyArray_DATA(y)
        args[2] = <char*>cnp.PyArray_DATA(o)
        fn(args, dims, steps, data)
    return (time.process_time() - start) / reps * 1e6
"""

SGEMM = r"""
from scipy.linalg.cython_blas cimport sgemm

def time_sgemm(cnp.ndarray a, cnp.ndarray b, cnp.ndarray c, str ta, str tb, int m, int n,
               int k, int lda, int ldb, int ldc, float beta, int reps):
    cdef char cta = ord(ta[0]), ctb = ord(tb[0])
    cdef float alpha = 1.0
    cdef int r
    cdef float* A = <float*>cnp.PyArray_DATA(a)
    cdef float* B = <float*>cnp.PyArray_DATA(b)
    cdef float* C = <float*>cnp.PyArray_DATA(c)
    start = time.process_time()
    with nogil:
        for r in range(reps):
            sgemm(&cta, &ctb, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc)
    return (time.process_time() - start) / reps * 1e6
"""


def build(with_scipy):
    """Compile the callers into a temporary folder and import them."""
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension

    folder = tempfile.mkdtemp(prefix="bench_blas_")
    path = os.path.join(folder, "blas_callers.pyx")
    with open(path, "w") as f:
        f.write(SOURCE + (SGEMM if with_scipy else ""))
    ext = Extension("blas_callers", [path], include_dirs=[np.get_include()])
    dist = Distribution({"ext_modules": cythonize([ext], quiet=True)})
    cmd = dist.get_command_obj("build_ext")
    cmd.build_lib = cmd.build_temp = folder
    cmd.ensure_finalized()
    cmd.run()
    built = cmd.get_ext_fullpath("blas_callers")
    spec = importlib.util.spec_from_file_location("blas_callers", built)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cases(m, N, H, with_scipy):
    """name -> a zero-argument timing of one product at batch N, hidden H."""
    rng = np.random.default_rng(0)
    f = np.float32
    h = rng.standard_normal((N, H)).astype(f)
    w = rng.standard_normal((4 * H, H)).astype(f)
    wt = np.ascontiguousarray(w.T)
    dg = rng.standard_normal((N, 4 * H)).astype(f)
    g, gt = np.empty((N, 4 * H), f), np.empty((4 * H, N), f)
    dw, dx = np.zeros((4 * H, H), f), np.empty((N, H), f)
    reps = max(10, 100000 // (N * H * 4))
    out = {
        "fwd  NumPy loop, h.W^T (cached W^T)": lambda: m.time_matmul_loop(h, wt, g, reps),
        "fwd  NumPy loop, h.W^T (view)": lambda: m.time_matmul_loop(h, w.T, g, reps),
        "fwd  NumPy loop, (W.h^T)^T": lambda: m.time_matmul_loop(w, h.T, gt, reps),
        "dW   NumPy loop": lambda: m.time_matmul_loop(dg.T, h, dw, reps),
        "dX   NumPy loop": lambda: m.time_matmul_loop(dg, w, dx, reps),
    }
    if with_scipy:
        H4 = 4 * H
        out.update(
            {
                "fwd  sgemm, W transposed": lambda: m.time_sgemm(
                    w, h, g, "T", "N", H4, N, H, H, H, H4, 0.0, reps
                ),
                "fwd  sgemm, cached W^T": lambda: m.time_sgemm(
                    wt, h, g, "N", "N", H4, N, H, H4, H, H4, 0.0, reps
                ),
                "dW   sgemm": lambda: m.time_sgemm(
                    h, dg, dw, "N", "T", H, H4, N, H, H4, H, 0.0, reps
                ),
                "dW   sgemm, beta=1 (accumulate)": lambda: m.time_sgemm(
                    h, dg, dw, "N", "T", H, H4, N, H, H4, H, 1.0, reps
                ),
                "dX   sgemm": lambda: m.time_sgemm(
                    w, dg, dx, "N", "N", H, N, H4, H, H4, H, 0.0, reps
                ),
            }
        )
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="two small shapes, few rounds")
    args = parser.parse_args(argv)
    try:
        import scipy.linalg.cython_blas  # noqa: F401

        with_scipy = True
    except ImportError:
        with_scipy = False
    m = build(with_scipy)
    shapes = [(8, 64), (16, 128)] if args.quick else [(8, 64), (16, 128), (32, 256), (64, 512)]
    rounds = 3 if args.quick else 9
    print(
        "BLAS for the fused LSTM step: CPU us per product, median of %d interleaved rounds" % rounds
    )
    print(cpu_blas.header())
    if not with_scipy:
        print("(scipy not installed: NumPy's loop only)")
    for N, H in shapes:
        timed = cases(m, N, H, with_scipy)
        times = {name: [] for name in timed}
        for _ in range(rounds):
            for name, fn in timed.items():
                times[name].append(fn())
        print("\nN, H = %d, %d" % (N, H))
        for name, ts in times.items():
            print("  %-40s %10.2f" % (name, statistics.median(ts)))
    print(
        "\nreproduce: python benchmarks/bench_blas_choice.py%s"
        % " ".join([""] + (argv if argv is not None else sys.argv[1:]))
    )


if __name__ == "__main__":
    main()

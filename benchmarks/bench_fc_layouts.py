"""FC's three ways to form ``X₂ · W₂ᵀ`` and the fixed rule that picks one.

Run from the repository root:

    python benchmarks/bench_fc_layouts.py            # median of 7 rounds
    python benchmarks/bench_fc_layouts.py --quick    # a fast smoke run

For each (M, K, N) — M rows of X, K inputs, N outputs; the step-net shapes
of ``bench_lstm.py`` and a few around them — it times, inside a recurrent
op's loop, each layout of :mod:`caffe2rnn.operators.fc_layout` (the product
plus the bias add, float32, one thread, contenders interleaved, best of each
round, median over rounds), prints which one the rule picks and how far that
is from the fastest, and whether the layouts agree to the last bit. The rule
is fixed (never timed at run time) so that every process computes the same
bits; this table is what it was read from, and what shows its cost on
another machine's BLAS.
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
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from caffe2rnn.operators import fc_layout  # noqa: E402

SHAPES = [
    (1, 64, 256),
    (8, 32, 128),
    (8, 64, 256),
    (16, 64, 256),
    (16, 128, 512),
    (32, 128, 512),
    (32, 256, 1024),
    (64, 64, 256),
    (64, 256, 1024),
    (64, 512, 2048),
    (128, 128, 512),
    (256, 64, 256),
]
QUICK_SHAPES = [(8, 32, 128), (16, 128, 512)]


def candidates(m, k, n):
    """Each layout as a zero-argument call on fixed arrays, and its result."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    wt = np.ascontiguousarray(w.T)
    out = {name: np.empty((m, n), np.float32) for name in ("x.wT", "(w.xT)T", "x.WT")}
    yt = np.empty((n, m), np.float32)

    def view():
        np.matmul(x, w.T, out=out["x.wT"])
        np.add(out["x.wT"], b, out=out["x.wT"])

    def transposed_product():
        np.matmul(w, x.T, out=yt)
        np.add(yt.T, b, out=out["(w.xT)T"])

    def cached_transpose():
        np.matmul(x, wt, out=out["x.WT"])
        np.add(out["x.WT"], b, out=out["x.WT"])

    return {"x.wT": view, "(w.xT)T": transposed_product, "x.WT": cached_transpose}, out


def time_shape(m, k, n, rounds):
    calls, out = candidates(m, k, n)
    repeat = max(5, int(2e7 // (m * k * n)))
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():  # interleaved: load hits all alike
            call()
            start = time.perf_counter()
            for _ in range(repeat):
                call()
            times[name].append((time.perf_counter() - start) / repeat * 1e6)
    medians = {name: statistics.median(t) for name, t in times.items()}
    same = all(np.array_equal(out["x.wT"], y) for y in out.values())
    return medians, same


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="two shapes, three rounds")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 7, quick 3)")
    args = parser.parse_args(argv)
    rounds = args.rounds or (3 if args.quick else 7)
    title = "FC inside a step loop: us per product + bias add, float32, 1 thread, median of %d"
    print(title % rounds)
    print("numpy %s; %s" % (np.__version__, cpu_blas.header()))
    print()
    header = "  %-16s %9s %9s %9s   %-8s %9s  %s"
    print(header % ("M x K x N", "x.wT", "(w.xT)T", "x.WT", "rule", "vs best", "same bits"))
    worst = 1.0
    for m, k, n in QUICK_SHAPES if args.quick else SHAPES:
        medians, same = time_shape(m, k, n, rounds)
        with fc_layout.step_loop():
            pick = fc_layout.layout(m, k, n)
        ratio = medians[pick] / min(medians.values())
        worst = max(worst, ratio)
        print(
            "  %-16s %9.2f %9.2f %9.2f   %-8s %8.2fx  %s"
            % ("%dx%dx%d" % (m, k, n), *medians.values(), pick, ratio, "yes" if same else "NO")
        )
    print()
    print("the rule's pick is at most %.2fx the fastest layout here" % worst)
    print("reproduce: python benchmarks/bench_fc_layouts.py" + (" --quick" if args.quick else ""))


if __name__ == "__main__":
    main()

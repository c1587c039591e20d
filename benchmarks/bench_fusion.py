"""What the fused LSTM step buys: the executor's plan with and without fusion.

Run from the repository root, after `python setup.py build_ext --inplace`:

    python benchmarks/bench_fusion.py            # 1000,8,64,64 and 100,16,128,128
    python benchmarks/bench_fusion.py --quick

Two copies of benchmarks/bench_lstm.py's model in one workspace, both with
the RNN executor on (one thread): one whose plans fuse each LSTM step into
one call (the default, ``caffe2rnn.operators.rnn.fusion``), one built with
fusion switched off (the step's calls one by one: FC, Sum, LSTMUnit forward;
LSTMUnitGradient, FCGradient, Sums backward). Both compute the same bits
(checked here). Interleaved rounds; CPU milliseconds of this thread per
forward and per forward+backward (``time.thread_time``: robust on a machine
shared with other jobs), median and minimum.
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
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_lstm import Caffe2RNNLSTM, make_problem  # noqa: E402

from caffe2rnn import kernels  # noqa: E402
from caffe2rnn.operators.rnn import fusion  # noqa: E402


def models(shape):
    """``(fused, unfused)``: the model twice, plans built (and checked equal)."""
    p = make_problem(*shape)
    # Each model resets the workspace when it is made; its nets keep their
    # blobs, so the first keeps running on its own after the second is made.
    fused = Caffe2RNNLSTM(p).use_executor(True)
    for _ in range(3):
        fused.forward_backward()
    expected = {key: value.copy() for key, value in fused.results().items()}
    fuse = fusion.fuse
    fusion.fuse = lambda step, backward=True: step
    try:
        unfused = Caffe2RNNLSTM(p).use_executor(True)
        unfused.forward_backward()  # the build: unfused plans
    finally:
        fusion.fuse = fuse
    for _ in range(2):
        unfused.forward_backward()
    for key, value in unfused.results().items():
        np.testing.assert_array_equal(value, expected[key], err_msg=key)
    return fused, unfused


def cpu_ms(fns, rounds):
    """Median and minimum CPU ms of each of ``fns`` over interleaved rounds."""
    times = [[] for _ in fns]
    for _ in range(rounds):
        for fn, ts in zip(fns, times):
            start = time.thread_time()
            fn()
            ts.append((time.thread_time() - start) * 1e3)
    return [(sorted(ts)[len(ts) // 2], min(ts)) for ts in times]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small shapes, few rounds")
    args = parser.parse_args(argv)
    shapes = [(50, 4, 16, 16)] if args.quick else [(1000, 8, 64, 64), (100, 16, 128, 128)]
    rounds = 3 if args.quick else 25
    print("fused LSTM step vs the same plan unfused, executor on, %s kernels" % kernels.active())
    print(cpu_blas.header())
    print("CPU ms per run, median (min) of %d interleaved rounds" % rounds)
    print(
        "%-18s %-22s %-22s %-22s %-22s"
        % ("T,N,D,H", "fwd fused", "fwd unfused", "fwd+bwd fused", "fwd+bwd unfused")
    )
    for shape in shapes:
        fused, unfused = models(shape)
        fns = [fused.forward, unfused.forward, fused.forward_backward, unfused.forward_backward]
        cells = ["%8.2f (%8.2f)" % pair for pair in cpu_ms(fns, rounds)]
        print("%-18s %s" % (",".join(map(str, shape)), " ".join("%-22s" % c for c in cells)))
    print(
        "\nreproduce: python benchmarks/bench_fusion.py%s"
        % " ".join([""] + (argv if argv is not None else sys.argv[1:]))
    )


if __name__ == "__main__":
    main()

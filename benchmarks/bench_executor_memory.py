"""Memory the RNN executor keeps per timestep, against the op-by-op loop.

Run from the repository root:

    python benchmarks/bench_executor_memory.py            # T,N,D,H = 1000,8,64,64
    python benchmarks/bench_executor_memory.py --quick    # T = 100

For each mode (``enable_rnn_executor=0``, ``=1``, ``=1`` with
``rnn_executor.num_threads=2``) it builds ``bench_lstm.py``'s LSTM layer in a
fresh workspace, runs forward+backward twice and reports what stays allocated
afterwards (``tracemalloc``, after a garbage collection), divided by T: the
step workspaces' blobs, the step nets' operators (the op-by-op loop keeps one
instance per step), and the executor's plan (its bound calls and views). The
inputs, parameters and state tensors are made before the measurement starts,
the same for every mode.
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
import gc  # noqa: E402
import tracemalloc  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_lstm  # noqa: E402

MODES = (("executor off (op by op)", False), ("executor on", True), ("executor, 2 threads", 2))


def kept_per_step(shape, mode):
    """Bytes per timestep still allocated after two forward+backward runs."""
    T = shape[0]
    problem = bench_lstm.make_problem(*shape)
    gc.collect()
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        model = bench_lstm.Caffe2RNNLSTM(problem)
        model.use_executor(mode)
        model.forward_backward()
        model.forward_backward()
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del model
    return (kept - base) / T


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="T = 100")
    args = parser.parse_args(argv)
    shape = (100, 8, 64, 64) if args.quick else (1000, 8, 64, 64)
    print("memory kept per timestep after forward+backward, T,N,D,H = %d,%d,%d,%d" % shape)
    print(cpu_blas.header())
    off = None
    for name, mode in MODES:
        kb = kept_per_step(shape, mode) / 1024
        off = kb if off is None else off
        print("  %-28s %8.1f KB per step  %6.2fx" % (name, kb, kb / off))
    print(
        "\nreproduce: python benchmarks/bench_executor_memory.py"
        + (" --quick" if args.quick else "")
    )


if __name__ == "__main__":
    main()

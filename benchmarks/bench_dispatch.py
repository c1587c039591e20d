"""Per-operator dispatch outside recurrent nets: a plain net of 100 small ops.

Run from the repository root:

    python benchmarks/bench_dispatch.py            # median of 21 rounds
    python benchmarks/bench_dispatch.py --quick    # a fast smoke run

The net chains 100 element-wise ops (Relu, Tanh, Add, Mul, Scale, Sum, in
turn) on (8, 8) float32 tensors, so each op's NumPy work is a fraction of a
microsecond and what is timed is mostly the framework: the net's loop, the
operator's input checks and output resize. It prints microseconds per op for

* ``net.run()`` — a created net (``workspace.CreateNet`` then ``RunNet``'s
  loop, without the name lookup);
* ``workspace.RunNet(name)`` — what a program calls: the lookup and the
  rollback journal around the loop (a copy of each output tensor, so that a
  failing run leaves the workspace as it was);
* the floor: the same NumPy calls on the same arrays, in a Python loop with
  no framework at all;

and their difference, the dispatch cost per op. One thread; contenders
interleaved, medians of the CPU time of this thread (a shared machine's other
jobs do not inflate it).
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

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from caffe2rnn import core, workspace  # noqa: E402

N_OPS = 100
CYCLE = ("Relu", "Tanh", "Add", "Mul", "Scale", "Sum")


def build_net(shape=(8, 8)):
    """The 100-op net (every op reads the previous output) and its NumPy floor."""
    workspace.ResetWorkspace()
    rng = np.random.default_rng(0)
    workspace.FeedBlob("x0", rng.uniform(-1, 1, shape).astype(np.float32))
    workspace.FeedBlob("c", rng.uniform(0.5, 1, shape).astype(np.float32))
    net = core.Net("dispatch")
    for i in range(N_OPS):
        kind = CYCLE[i % len(CYCLE)]
        src, dst = "x%d" % i, "x%d" % (i + 1)
        if kind in ("Add", "Mul", "Sum"):
            getattr(net, kind)([src, "c"], dst)
        elif kind == "Scale":
            net.Scale(src, dst, scale=0.5)
        else:
            getattr(net, kind)(src, dst)
    workspace.CreateNet(net)
    instance = workspace.C_Workspace().get_net("dispatch")
    instance.run()
    arrays = [workspace.C_Workspace().get_blob("x%d" % i).value for i in range(N_OPS + 1)]
    c = workspace.C_Workspace().get_blob("c").value
    calls = []
    for i in range(N_OPS):
        kind = CYCLE[i % len(CYCLE)]
        x, y = arrays[i], arrays[i + 1]
        if kind == "Relu":
            calls.append(lambda x=x, y=y: np.maximum(x, 0, out=y))
        elif kind == "Tanh":
            calls.append(lambda x=x, y=y: np.tanh(x, out=y))
        elif kind in ("Add", "Sum"):
            calls.append(lambda x=x, y=y: np.add(x, c, out=y))
        elif kind == "Mul":
            calls.append(lambda x=x, y=y: np.multiply(x, c, out=y))
        else:
            calls.append(lambda x=x, y=y: np.multiply(x, 0.5, out=y))

    def floor():
        for call in calls:
            call()

    return instance.run, lambda: workspace.RunNet("dispatch"), floor


def interleaved_medians(fns, rounds, inner):
    """CPU µs per op of each of ``fns`` (each runs all ``N_OPS`` ops once per call)."""
    times = [[] for _ in fns]
    for _ in range(rounds):
        for fn, ts in zip(fns, times):
            start = time.thread_time()
            for _ in range(inner):
                fn()
            ts.append((time.thread_time() - start) / inner / N_OPS * 1e6)
    return [sorted(ts)[len(ts) // 2] for ts in times]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="few rounds")
    args = parser.parse_args(argv)
    rounds, inner = (3, 20) if args.quick else (21, 200)
    run, run_net, floor = build_net()
    net_us, run_net_us, floor_us = interleaved_medians([run, run_net, floor], rounds, inner)
    print(
        "caffe2rnn dispatch benchmark: a net of %d small ops (%s on 8x8 float32)"
        % (N_OPS, ", ".join(CYCLE))
    )
    print(cpu_blas.header())
    print("  %-44s %8.2f us per op" % ("net.run()", net_us))
    print("  %-44s %8.2f us per op" % ("workspace.RunNet(name), with its journal", run_net_us))
    print("  %-44s %8.2f us per op" % ("the same NumPy calls, no framework", floor_us))
    row = "  %-44s %8.2f us per op"
    print(row % ("dispatch of net.run() (the difference)", net_us - floor_us))
    print(row % ("dispatch of RunNet (the difference)", run_net_us - floor_us))
    print(
        "\nreproduce: python benchmarks/bench_dispatch.py%s"
        % " ".join([""] + (argv if argv is not None else sys.argv[1:]))
    )
    return net_us, floor_us


if __name__ == "__main__":
    main()

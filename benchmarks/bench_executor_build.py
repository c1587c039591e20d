"""What the RNN executor's plan costs to build, against the runs it saves.

Run from the repository root, after `python setup.py build_ext --inplace`:

    python benchmarks/bench_executor_build.py            # T = 1,000 and 10,000
    python benchmarks/bench_executor_build.py --quick    # a fast smoke run
    python benchmarks/bench_executor_build.py --once     # ops created per run

``--once`` times what a gradient check does: the net run once by
``workspace.RunNetOnce``, which creates its operators (and so a new
executor) every time, at T = 2, 4 and 5 (N, D, H = 3, 3, 3), executor off
and on, interleaved rounds, median CPU ms per run. A loop of fewer than
five steps runs op by op on its executor's first run (building would cost
more than the loop; operators/rnn/executor.py, BUILD_ON_FIRST_RUN_FROM).

One LSTM layer (N, D, H = 8, 64, 64, forward+backward, as benchmarks/bench_lstm.py
builds it), in a fresh workspace per mode, seconds per run:

* op by op (``enable_rnn_executor=0``): the first run (which creates the T
  step nets) and a later run;
* the executor: the first run (steps 1-3 op by op, binding each op's calls;
  the later steps from calls derived from theirs, run as a later run runs
  them: the *build*), the second run (works out which calls later runs make,
  compiles the rest, runs them: the *preparation*) and a later run.

Times are this process's CPU seconds (``time.process_time``; BLAS runs on
this one thread): on a machine shared with other jobs, wall time also
counts the time the process waited for a core.

"plan building" is everything the executor's first two runs cost beyond two
later runs: (1st − later) + (2nd − later). It no longer needs the op-by-op
first run to hide in: the first run is now cheaper than the loop's
(operators/rnn/derive.py).
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
import time  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_lstm import Caffe2RNNLSTM, make_problem  # noqa: E402

from caffe2rnn import kernels, workspace  # noqa: E402


def runs(T, on, later=3):
    """Seconds of the first, second and (median) later runs of a fresh model.

    The previous model's garbage is collected first: a model's T step nets
    and step workspaces are cyclic (each op knows its workspace), so without
    a collection here the next model's first run would pay for going over
    them (a full collection of the op-by-op loop's 10,000 step nets: 1 s)."""
    gc.collect()
    model = Caffe2RNNLSTM(make_problem(T, 8, 64, 64)).use_executor(on)
    times = []
    for _ in range(2 + later):
        start = time.process_time()
        model.forward_backward()
        times.append(time.process_time() - start)
    return times[0], times[1], sorted(times[2:])[later // 2]


def once(T, rounds=15, per_round=10):
    """Median CPU ms of ``RunNetOnce`` of the training net (fresh operators
    each time), executor off and on, in interleaved rounds."""
    model = Caffe2RNNLSTM(make_problem(T, 3, 3, 3))
    nets = {on: model.nets[on].proto for on in (False, True)}
    times = {False: [], True: []}
    for _ in range(rounds):
        for on in (False, True):
            start = time.process_time()
            for _ in range(per_round):
                workspace.RunNetOnce(nets[on])
            times[on].append((time.process_time() - start) / per_round)
    return [1e3 * sorted(times[on])[rounds // 2] for on in (False, True)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small T")
    parser.add_argument("--once", action="store_true", help="RunNetOnce at T = 2, 4, 5")
    args = parser.parse_args(argv)
    if args.once:
        print("RunNetOnce of an LSTM, N,D,H = 3,3,3, fwd+bwd, %s kernels" % kernels.active())
        print(cpu_blas.header())
        print("%7s %14s %14s" % ("T", "executor off", "executor on"))
        for T in (2, 4, 5):
            print("%7d %12.2fms %12.2fms" % ((T,) + tuple(once(T))))
        print("load average: %.1f %.1f %.1f" % os.getloadavg())
        print("\nreproduce: python benchmarks/bench_executor_build.py --once")
        return
    lengths = (100, 500) if args.quick else (1000, 10000)
    print(
        "RNN executor plan building, LSTM N,D,H = 8,64,64, fwd+bwd, %s kernels" % kernels.active()
    )
    print(cpu_blas.header())
    print(
        "%7s %14s %14s %15s %15s %14s %14s"
        % (
            "T",
            "off: 1st run",
            "off: later",
            "on: 1st (build)",
            "on: 2nd (prep)",
            "on: later",
            "plan building",
        )
    )
    for T in lengths:
        off_first, _, off_later = runs(T, False)
        on_first, on_second, on_later = runs(T, True)
        building = (on_first - on_later) + (on_second - on_later)
        print(
            "%7d %13.3fs %13.3fs %14.3fs %14.3fs %13.3fs %13.3fs"
            % (T, off_first, off_later, on_first, on_second, on_later, building)
        )
    print(
        "\nreproduce: python benchmarks/bench_executor_build.py%s"
        % " ".join([""] + (argv if argv is not None else sys.argv[1:]))
    )


if __name__ == "__main__":
    main()

"""Where ``workspace.RunNet``'s extra time goes: the rollback journal, blob by blob.

Run from the repository root, after `python setup.py build_ext --inplace`:

    python benchmarks/bench_journal.py            # bench_lstm.py's shapes but T = 10,000
    python benchmarks/bench_journal.py --quick    # a fast smoke run

``RunNet`` runs a created net inside a rollback journal
(``caffe2rnn.runtime.rollback``): before the run it copies every tensor the
run will write into, so that a failing run leaves the workspace as it was.
For benchmarks/bench_lstm.py's LSTM layer (the same model: a
``forward_only=True`` net for the forward, the training net for
forward+backward, executor on, one thread) this prints, per shape, the CPU
milliseconds (median of interleaved rounds: each contender once per round) of

* ``RunNet`` — what a Caffe2 program calls: its journal swaps FC's output
  (written whole before anything reads it) for a spare array instead of
  copying it;
* ``RunNet``, copying — the same with swaps off (``rollback.swapping =
  False``): every blob copied, as before swaps;
* ``net.run()`` — the same created net's run, without the journal;
* "journal alone" — only what the journal does before a run: note the net's
  outputs and what its recurrent ops note when they start
  (``Workspace.note_writes``), copying into the net's spare arrays as
  ``RunNet`` does — and nothing of the run;

then, for each shape, what the journal keeps blob by blob: how many bytes,
copied or swapped, which op writes the blob, and whether a
recurrent op reads or writes it (its executor keeps a plan per array it
binds, so a swap there costs a second plan, docs/concepts/performance.md). If
"journal alone" is most of RunNet − net.run(), the copies are the cost.
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
from bench_lstm import SHAPES, Caffe2RNNLSTM, make_problem  # noqa: E402

from caffe2rnn import workspace  # noqa: E402
from caffe2rnn.runtime import rollback  # noqa: E402

QUICK_SHAPES = [(50, 4, 16, 16)]


def journal_alone(net):
    """Do what ``RunNet`` does before running ``net`` (a created
    ``NetInstance``) and return its journal: the net's outputs noted, and
    what each recurrent op notes when it starts, copied into the net's spare
    arrays. Nothing fails, so nothing is put back."""
    ws = net.ws
    spares, net.journal_spares = net.journal_spares or {}, None
    if net.journal_swaps is None:
        net.journal_swaps = rollback.swappable(net.ops)
    try:
        with ws.rolling_back(spares) as journal:
            if rollback.swapping:
                journal.swap(net.journal_swaps)
            journal.note_outputs(net.ops)
            for op in net.ops:
                names = getattr(op, "written_through", None)
                if names:
                    op.ws.note_writes(names)
        for blob, value, _ in journal.swapped:  # nothing ran: each gets its array back
            blob.value = value
    finally:
        net.journal_spares = spares
    return journal


def copies(net):
    """``(bytes, blob name, writer, touched by a recurrent op, how kept)``
    per tensor the journal keeps before a run of ``net`` (copied or
    swapped), largest first."""
    writer, recurrent = {}, set()
    for op in net.ops:
        for blob in op.outputs:
            writer.setdefault(id(blob), op.def_.type)
        if op.def_.type.startswith("RecurrentNetwork"):
            names = list(op.def_.input) + list(op.def_.output) + op.written_through
            recurrent.update(id(b) for b in map(op.ws.get_blob, names) if b is not None)
            for blob in map(op.ws.get_blob, op.written_through):
                if blob is not None:
                    writer.setdefault(id(blob), op.def_.type + " (through)")
    journal = journal_alone(net)
    kept = [(c.nbytes, b, "copied") for b, _, _, c in journal.saved.values() if c is not None]
    kept += [(value.nbytes, b, "swapped") for b, value, _ in journal.swapped]
    rows = [
        (nbytes, b.name, writer.get(id(b), "?"), id(b) in recurrent, how) for nbytes, b, how in kept
    ]
    return sorted(rows, reverse=True)


def interleaved_ms(fns, rounds):
    """Median CPU ms of each of ``fns`` (after a warm-up call each), every
    round calling each once."""
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(rounds):
        for fn, ts in zip(fns, times):
            start = time.process_time()
            fn()
            ts.append((time.process_time() - start) * 1e3)
    return [sorted(ts)[len(ts) // 2] for ts in times]


def copying(run):
    """``run`` with the journal's swaps off (every blob copied)."""

    def timed():
        rollback.swapping = False
        try:
            run()
        finally:
            rollback.swapping = True

    return timed


def measure(shape, rounds):
    """``[(net label, RunNet ms, RunNet-copying ms, net.run() ms,
    journal-alone ms, copies)]`` for the inference net and the training net
    of one shape."""
    model = Caffe2RNNLSTM(make_problem(*shape)).use_executor(True)
    ws = workspace.C_Workspace()
    nets = [("fwd", ws.get_net(model.inference_name())), ("fwd+bwd", model.net)]
    for _, net in nets:  # the plans built, their steady calls known
        for _ in range(2):
            net.run()
    fns = []
    for _, net in nets:
        name = net.name
        run_net = lambda name=name: workspace.RunNet(name)  # noqa: E731
        fns += [run_net, copying(run_net), net.run, lambda net=net: journal_alone(net)]
    ms = interleaved_ms(fns, rounds)
    return [
        (label,) + tuple(ms[4 * i : 4 * i + 4]) + (copies(net),)
        for i, (label, net) in enumerate(nets)
    ]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small shape, few rounds")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 9, quick 3)")
    args = parser.parse_args(argv)
    shapes = QUICK_SHAPES if args.quick else [s for s in SHAPES if s[0] < 10000]
    rounds = args.rounds or (3 if args.quick else 9)
    print("RunNet's rollback journal: LSTM layer, executor on, float32, 1 thread")
    print("CPU ms, median of %d interleaved rounds" % rounds)
    print("numpy %s; %s" % (np.__version__, cpu_blas.header()))
    print("load average: %.2f %.2f %.2f (1, 5, 15 min)" % os.getloadavg())
    results = [(shape, measure(shape, rounds)) for shape in shapes]
    print(
        "\n%-16s %-8s %8s %9s %10s %8s %11s %11s %11s %9s"
        % (
            "T,N,D,H",
            "net",
            "RunNet",
            "(copying)",
            "net.run()",
            "journal",
            "RunNet/run",
            "(copying)",
            "journal/run",
            "MB copied",
        )
    )
    for shape, rows in results:
        for label, run_net, run_copying, run, journal, kept in rows:
            print(
                "%-16s %-8s %8.2f %9.2f %10.2f %8.2f %10.2fx %10.2fx %10.2fx %9.2f"
                % (
                    ",".join(map(str, shape)),
                    label,
                    run_net,
                    run_copying,
                    run,
                    journal,
                    run_net / run,
                    run_copying / run,
                    journal / run,
                    sum(k[0] for k in kept if k[4] == "copied") / 1e6,
                )
            )
    for shape, rows in results:
        print("\nwhat the journal keeps, T,N,D,H = %s" % ",".join(map(str, shape)))
        print(
            "  %-8s %-36s %7s %7s  %-8s %-34s %s"
            % ("net", "blob", "MB", "share", "kept", "written by", "recurrent op")
        )
        for label, *_, kept in rows:
            total = sum(k[0] for k in kept) or 1
            for nbytes, name, writer, recurrent, how in kept:
                if nbytes * 100 < total:
                    continue  # under 1 % of the bytes kept
                print(
                    "  %-8s %-36s %7.2f %6.0f%%  %-8s %-34s %s"
                    % (
                        label,
                        name,
                        nbytes / 1e6,
                        100 * nbytes / total,
                        how,
                        writer,
                        "yes" if recurrent else "no",
                    )
                )
    print("load average: %.2f %.2f %.2f (1, 5, 15 min)" % os.getloadavg())
    print(
        "\nreproduce: python benchmarks/bench_journal.py%s"
        % " ".join([""] + (argv if argv is not None else sys.argv[1:]))
    )


if __name__ == "__main__":
    main()

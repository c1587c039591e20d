"""Peak memory of a forward-only LSTM RecurrentNetwork: T = 1,000 vs T = 100.

Run from the repository root:

    python benchmarks/bench_forward_only_memory.py

Without a backward step net the op cycles over ``num_workspaces`` (2) step
workspaces, so the step workspaces do not grow with T: the memory that does
is the (T + 1)-row state tensors, and — with the RNN executor on (the
default) — its plan, a few bound calls per step. The script measures the
peak of Python/NumPy allocations (tracemalloc) during one run of the op in a
fresh workspace, subtracts the two state tensors, and compares T = 1,000 with
T = 100: op by op (target: within 1.2x), and with the executor, whose plan's
bytes per step it prints.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_blas  # noqa: E402  (benchmarks/cpu_blas.py: the CPU's own BLAS kernels)

if __name__ == "__main__":
    cpu_blas.use_the_cpus_own_kernels()  # before NumPy loads its OpenBLAS
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from caffe2rnn.proto import caffe2_pb2  # noqa: E402
from caffe2rnn.runtime import Workspace  # noqa: E402
from caffe2rnn.utils import MakeArgument  # noqa: E402

N, D = 8, 64


def op(op_type, inputs, outputs, **args):
    o = caffe2_pb2.OperatorDef(type=op_type, input=inputs, output=outputs)
    o.arg.extend(MakeArgument(k, v) for k, v in args.items())
    return o


def lstm_forward_only():
    """Caffe2's LSTM step net (FC on h_{t-1}, + x_t, LSTMUnit), no backward net."""
    step = caffe2_pb2.NetDef(
        name="lstm_step",
        external_input=[
            "hidden_t_prev",
            "cell_t_prev",
            "input_t",
            "gates_w",
            "gates_b",
            "seq_lengths",
        ],
    )
    step.op.extend(
        [
            op("FC", ["hidden_t_prev", "gates_w", "gates_b"], ["gates_t"], axis=2),
            op("Sum", ["gates_t", "input_t"], ["gates_t"]),
            op(
                "LSTMUnit",
                ["hidden_t_prev", "cell_t_prev", "gates_t", "seq_lengths", "timestep"],
                ["hidden_t", "cell_t"],
            ),
        ]
    )
    links = [
        ("hidden_t_prev", "hidden", 0),
        ("hidden_t", "hidden", 1),
        ("cell_t_prev", "cell", 0),
        ("cell_t", "cell", 1),
        ("input_t", "input", 0),
    ]
    return op(
        "RecurrentNetwork",
        ["input", "h0", "c0", "gates_w", "gates_b", "seq_lengths"],
        ["hidden_all", "hidden_last", "cell_all", "cell_last", "step_workspaces"],
        step_net=str(step),
        recurrent_states=["hidden", "cell"],
        initial_recurrent_state_ids=[1, 2],
        link_internal=[l[0] for l in links],
        link_external=[l[1] for l in links],
        link_offset=[l[2] for l in links],
        alias_src=["hidden", "hidden", "cell", "cell"],
        alias_dst=["hidden_all", "hidden_last", "cell_all", "cell_last"],
        alias_offset=[1, -1, 1, -1],
    )


def peak_bytes(seq_len, executor=True):
    """(peak bytes during one run, bytes of the two state tensors)."""
    rng = np.random.RandomState(0)
    ws = Workspace()
    ws.feed("input", rng.standard_normal((seq_len, N, 4 * D)).astype(np.float32))
    ws.feed("h0", np.zeros((N, D), np.float32))
    ws.feed("c0", np.zeros((N, D), np.float32))
    ws.feed("gates_w", (rng.standard_normal((4 * D, D)) * 0.1).astype(np.float32))
    ws.feed("gates_b", np.zeros(4 * D, np.float32))
    ws.feed("seq_lengths", np.full(N, seq_len, np.int32))
    op_def = lstm_forward_only()
    if not executor:  # (on is the default; =1 would also mean 4 step workspaces, as in Caffe2)
        op_def.arg.extend([MakeArgument("enable_rnn_executor", 0)])
    tracemalloc.start()
    ws.run_operator_once(op_def)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    states = ws.blob("hidden").value.nbytes + ws.blob("cell").value.nbytes
    assert len(ws.blob("step_workspaces").value.step_workspaces) == 2
    return peak, states


def main():
    print("forward-only LSTM, N=%d, D=%d, float32, num_workspaces=2 (default)" % (N, D))
    print(cpu_blas.header() + "\n")
    peak_bytes(10)  # warm-up: one-time imports and caches are not the op's memory
    for executor in (False, True):
        print("executor %s" % ("on (its plan included)" if executor else "off (op by op)"))
        print("%6s %14s %16s %18s" % ("T", "peak bytes", "state tensors", "peak - states"))
        rows = {}
        for seq_len in (100, 1000):
            peak, states = peak_bytes(seq_len, executor)
            rows[seq_len] = peak - states
            print("%6d %14d %16d %18d" % (seq_len, peak, states, peak - states))
        ratio = rows[1000] / rows[100]
        if executor:
            per_step = (rows[1000] - rows[100]) / 900
            print(
                "  the plan: about %.1f KB per step (T=1000 / T=100: %.2fx)\n"
                % (per_step / 1e3, ratio)
            )
        else:
            print("  (peak - states) at T=1000 / at T=100: %.3fx (target <= 1.2x)\n" % ratio)
    print("\nreproduce: python benchmarks/bench_forward_only_memory.py")


if __name__ == "__main__":
    main()

"""Caffe2's one zeroed states-gradient row, with k > 1 initial rows.

The gradient op zeroes only the last row of ``<state>_grad`` before the
backward loop (Caffe2 042e8ede4, kept by PyTorch: "Fill the last timestep with
zeros for the gradient"). With k initial rows and a window link, rows
T .. T + k - 2 are read before anything writes them, so a second backward run
adds the first run's values again. caffe2rnn follows Caffe2; the op argument
``caffe2rnn_zero_tail_rows=1`` zeroes all k rows. :func:`tail_rows_second_run`
measures both (``BUGS["tail_rows"]`` in :mod:`.bugs`).
"""

import numpy as np

from .. import workspace
from ..operators.gradient_maker import get_gradient_for_op
from ..proto import caffe2_pb2
from ..utils import MakeArgument
from . import cells
from .sandbox import sandbox


def window_op(zero_tail_rows):
    """``h_t = x_t * (h_{t-2} + h_{t-1})``: a window-2 link over k = 2 initial
    rows (the layout of Caffe2's stateful-convolution test), hand-built."""

    def netdef(name, ops, inputs):
        n = caffe2_pb2.NetDef(name=name, external_input=inputs)
        for op_type, op_inputs, op_outputs in ops:
            o = n.op.add(type=op_type, input=op_inputs, output=op_outputs)
            if op_type == "Mul" and op_inputs[1] == "window_sum_t":
                o.arg.add().CopyFrom(MakeArgument("broadcast", 1))
        return n

    step = netdef(
        "window_step",
        [
            ("ReduceFrontSum", ["window_t"], ["window_sum_t"]),
            ("Mul", ["input_t", "window_sum_t"], ["hidden_t"]),
        ],
        ["input_t", "window_t"],
    )
    # Backward: row t is first reached as window row 0 (written); row t + 1
    # was written by step t + 1 and is accumulated into.
    backward = netdef(
        "window_step_backward",
        [
            ("Mul", ["hidden_t_grad", "window_sum_t"], ["input_t_grad"]),
            ("Mul", ["hidden_t_grad", "input_t"], ["window_sum_t_grad"]),
            ("Copy", ["window_sum_t_grad"], ["window_row0_grad"]),
            ("Sum", ["window_row1_grad", "window_sum_t_grad"], ["window_row1_grad"]),
        ],
        ["hidden_t_grad", "window_sum_t", "input_t"],
    )
    op = caffe2_pb2.OperatorDef(
        type="RecurrentNetwork",
        input=["input", "h0"],
        output=["hidden_all", "hidden_last", "step_workspaces"],
    )
    arguments = {
        "step_net": str(step),
        "backward_step_net": str(backward),
        "recurrent_states": ["hidden"],
        "initial_recurrent_state_ids": [1],
        "link_internal": ["window_t", "hidden_t", "input_t"],
        "link_external": ["hidden", "hidden", "input"],
        "link_offset": [0, 2, 0],
        "link_window": [2, 1, 1],
        "backward_link_internal": [
            "window_row0_grad",
            "window_row1_grad",
            "hidden_t_grad",
            "input_t_grad",
        ],
        "backward_link_external": ["hidden_grad", "hidden_grad", "hidden_grad", "input_grad"],
        "backward_link_offset": [0, 1, 2, 0],
        "alias_src": ["hidden", "hidden"],
        "alias_dst": ["hidden_all", "hidden_last"],
        "alias_offset": [2, -1],
        "param": [],
        "outputs_with_grads": [1],
    }
    if zero_tail_rows:
        arguments["caffe2rnn_zero_tail_rows"] = 1
    op.arg.extend(MakeArgument(k, v) for k, v in arguments.items())
    return op


def tail_rows_second_run(seed=0):
    """Two backward runs of :func:`window_op` (gradient on ``hidden_last``).

    Returns ``{"caffe2"|"option": (first h0 gradient, second), "reference":
    the NumPy h0 gradient}``. The states gradient starts zeroed so the first
    run is defined; with Caffe2's rule row T keeps the first run's value and
    the second run adds it again.
    """
    rng = np.random.default_rng(seed)
    T, N, D = cells.T, cells.N, cells.D
    x, h0 = rng.uniform(0.5, 1.1, (T, N, D)), rng.standard_normal((2, N, D))
    g_last = rng.standard_normal((1, N, D))
    outcome = {}
    for label in ("caffe2", "option"):
        op = window_op(zero_tail_rows=label == "option")
        grad_ops, g_input = get_gradient_for_op(op, [None, "hidden_last_grad", None])
        with sandbox():
            for name, value in {"input": x, "h0": h0, "hidden_last_grad": g_last}.items():
                workspace.FeedBlob(name, value)
            workspace.FeedBlob("hidden_grad", np.zeros((T + 2, N, D)))
            workspace.RunOperatorOnce(op)
            runs = []
            for _ in range(2):
                for grad_op in grad_ops:
                    workspace.RunOperatorOnce(grad_op)
                runs.append(workspace.FetchBlob(g_input[1]))
            outcome[label] = tuple(runs)
    h = list(h0)
    for t in range(T):
        h.append(x[t] * (h[t] + h[t + 1]))
    gh = np.zeros((T + 2, N, D))
    gh[-1] = g_last[0]
    for t in range(T - 1, -1, -1):
        gh[t] += gh[t + 2] * x[t]
        gh[t + 1] += gh[t + 2] * x[t]
    outcome["reference"] = gh[:2]
    return outcome

"""Time one LSTM layer, forward and forward+backward: caffe2rnn against its floor and torch.

Run from the repository root, after `python setup.py build_ext --inplace`:

    python benchmarks/bench_lstm.py            # the issue's shapes, T = 10,000 too
    python benchmarks/bench_lstm.py --quick    # a fast smoke run

For each (T, N, D, H) it prints milliseconds per forward and per
forward+backward (median of interleaved rounds — every contender once per
round — one thread) of

* caffe2rnn: ``recurrent.LSTM`` built on a CNNModelHelper, its gradient from
  ``AddGradientOperators`` with an explicit given gradient of ``hidden_all``;
  "forward" runs only the forward ops. With the RNN executor off
  (``enable_rnn_executor=0``: the op-by-op loop) and on (the plan), with the
  Cython kernels, and on with the Python twins (``kernels.use``);
* the NumPy floor: a hand-written LSTM with no framework at all (one GEMM for
  the input projection of every step, per step one GEMM plus the gates and
  the cell update, backward through time by hand with the weight gradients
  batched into one GEMM after the loop). It is what a NumPy framework can
  reach; its outputs and gradients are checked against caffe2rnn's;
* caffe2rnn with the executor on and ``rnn_executor.num_threads=2``: the
  plan's independent calls on two threads (BLAS still one thread each);
* caffe2rnn as a Caffe2 user runs it: ``workspace.RunNet`` (which keeps the
  rollback journal) of the training net, and, forward, of a
  ``forward_only=True`` net (inference: its own step workspaces, cycled) —
  and the same two nets' own ``net.run()``, without the journal;
* torch.nn.LSTM (one thread, and two for the threaded comparison) and a
  per-step torch.nn.LSTMCell Python loop, if torch imports;
* "its BLAS products alone": every product caffe2rnn's net makes in one run
  (outside the loop and in the executor's plans — inside the fused LSTM
  steps too — on the very same arrays, through the same NumPy matmul loop),
  with nothing between them: the part of caffe2rnn's time no dispatch or
  kernel work can remove while the step net computes what Caffe2's does
  (:func:`blas_products`);
* "its products and cell alone": those products and, in their places, the
  LSTM cell's kernels (forward: σ, tanh and the state update of every step;
  backward: their gradients): the work any run that gives caffe2rnn's bits
  does — the products through NumPy's BLAS, the cell by the operations of
  its Python twin — with nothing else (:func:`products_and_cell`). Where it
  takes longer than torch.nn.LSTM, no dispatch, fusion or copy saved can
  bring caffe2rnn to torch's time;

each also as a ratio to the floor and to torch.nn.LSTM (``--clock cpu``: CPU
time of this process instead of wall time, without the two-thread rows). A summary gives, per
shape, the user's path against torch.nn.LSTM and against its own nets'
``net.run()`` (what the journal costs), the executor against its BLAS
products, and its products and cell against torch.nn.LSTM. A last table
gives the per-operator dispatch cost: microseconds per run of each operator
inside the step nets (of the op-by-op loop). The load
average of the machine is printed before and after: the machine this was
written on is shared, and every number drifts with it.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_blas  # noqa: E402  (benchmarks/cpu_blas.py: the CPU's own BLAS kernels)

if __name__ == "__main__":
    cpu_blas.use_the_cpus_own_kernels()  # before NumPy loads its OpenBLAS

# One thread everywhere, before NumPy (and its BLAS) is first imported.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import copy  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from caffe2rnn import kernels, recurrent, workspace  # noqa: E402
from caffe2rnn.cnn import CNNModelHelper  # noqa: E402

SHAPES = [
    (32, 32, 256, 256),
    (100, 16, 128, 128),
    (20, 64, 512, 512),
    (1000, 8, 64, 64),
    (10000, 8, 64, 64),
]
#: From this T on the per-step torch.nn.LSTMCell Python loop is not timed (seconds per run).
CELL_LOOP_MAX_T = 2000
QUICK_SHAPES = [(8, 4, 16, 16), (50, 4, 8, 8)]
STEP_NET = "(whole step net)"
#: rnn_executor.num_threads of the threaded contender (BLAS stays at 1 thread).
THREADS = 2
#: The contender run as a Caffe2 user runs it (executor on, the default):
#: forward, RunNet of a forward_only=True net; forward+backward, RunNet of the
#: training net.
RUN_NET = "caffe2rnn workspace.RunNet (user)"
#: The same nets' own runs (``net.run()``: no rollback journal), to see
#: what RunNet's journal costs.
NET_RUN = "caffe2rnn net.run(), no journal"
#: Every matrix product of one run, alone (:func:`blas_products`).
BLAS_ALONE = "its BLAS products alone"
#: The products and the LSTM cell's kernels, alone (:func:`products_and_cell`).
PRODUCTS_AND_CELL = "its products and cell alone"
#: The contender whose parameter gradients are batched over time (a caffe2rnn
#: option, recurrent.set_batch_param_gradients; equal up to float rounding).
BATCHED = "batched"


def median_ms(fn, repeat):
    """Median wall time of ``fn()`` over ``repeat`` calls, after one warm-up."""
    return interleaved_medians([fn], repeat)[0]


#: The clock contenders are timed with: wall time (``perf_counter``), or with
#: ``--clock cpu`` this process's CPU time (``process_time``), which a shared
#: machine's other jobs do not inflate — for contenders on one thread only.
CLOCK = {"clock": time.perf_counter}


def interleaved_medians(fns, repeat):
    """Median ms of each of ``fns`` over ``repeat`` rounds, each round calling
    every one once (after one warm-up call each): drifts of the machine then
    affect all contenders alike."""
    clock = CLOCK["clock"]
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, ts in zip(fns, times):
            start = clock()
            fn()
            ts.append(clock() - start)
    return [sorted(ts)[len(ts) // 2] * 1e3 for ts in times]


def threaded():
    """Whether contenders on several threads are timed (not under CPU time)."""
    return CLOCK["clock"] is time.perf_counter


# --- the data every contender gets ----------------------------------------
def make_problem(T, N, D, H, seed=0, dtype=np.float32):
    """Inputs, weights (Caffe2 layout: gates i, f, o, g; W is out x in) and the
    given gradient of every hidden output."""
    rng = np.random.RandomState(seed)
    scale = 1.0 / np.sqrt(H)

    def u(*shape):
        return rng.uniform(-scale, scale, shape).astype(dtype)

    return dict(
        x=rng.standard_normal((T, N, D)).astype(dtype),
        h0=u(1, N, H),
        c0=u(1, N, H),
        w_x=u(4 * H, D),
        b_x=u(4 * H),
        w_h=u(4 * H, H),
        b_h=u(4 * H),
        dy=rng.standard_normal((T, N, H)).astype(dtype),
    )


# --- the NumPy floor -------------------------------------------------------
class NumpyLSTM:
    """The fastest plain NumPy LSTM layer we know how to write (no masking).

    Buffers are allocated once; ``forward`` keeps the activated gates and
    tanh(c) of every step for ``backward``. The recurrent GEMM is written the
    faster of two ways for this shape, timed once (``h @ W_hᵀ`` with W_hᵀ
    stored contiguously, or ``(W_h @ hᵀ)ᵀ``: BLAS kernels favour one or the
    other depending on the sizes).
    """

    def __init__(self, p):
        self.p = p
        T, N, D = p["x"].shape
        H = p["w_h"].shape[1]
        self.T, self.N, self.D, self.H = T, N, D, H
        dt = p["x"].dtype
        self.w_h_t = np.ascontiguousarray(p["w_h"].T)  # h @ W_hᵀ as a plain GEMM
        self.bias = p["b_x"] + p["b_h"]
        self.acts = np.empty((T, N, 4 * H), dt)
        self.hs = np.empty((T + 1, N, H), dt)
        self.cs = np.empty((T + 1, N, H), dt)
        self.tanh_c = np.empty((T, N, H), dt)
        self.tmp = np.empty((N, H), dt)
        self.dgates = np.empty((T, N, 4 * H), dt)
        self.dh = np.empty((N, H), dt)
        self.dc = np.empty((N, H), dt)
        self.work = np.empty((N, H), dt)
        h = p["h0"][0]
        candidates = [lambda h: np.dot(h, self.w_h_t), lambda h: np.dot(p["w_h"], h.T).T]
        self.recurrent_gemm = min(candidates, key=lambda gemm: median_ms(lambda: gemm(h), 21))

    def forward(self):
        p, H, T = self.p, self.H, self.T
        x2 = p["x"].reshape(-1, self.D)
        np.dot(x2, p["w_x"].T, out=self.acts.reshape(-1, 4 * H))
        self.acts += self.bias
        self.hs[0] = p["h0"][0]
        self.cs[0] = p["c0"][0]
        acts, hs, cs, tanh_c, tmp, gemm = (
            self.acts,
            self.hs,
            self.cs,
            self.tanh_c,
            self.tmp,
            self.recurrent_gemm,
        )
        for t in range(T):
            a = acts[t]
            a += gemm(hs[t])
            s = a[:, : 3 * H]  # σ(x) = 0.5 tanh(0.5 x) + 0.5
            s *= 0.5
            np.tanh(s, out=s)
            s *= 0.5
            s += 0.5
            g = a[:, 3 * H :]
            np.tanh(g, out=g)
            c = cs[t + 1]
            np.multiply(a[:, H : 2 * H], cs[t], out=c)
            np.multiply(a[:, :H], g, out=tmp)
            c += tmp
            np.tanh(c, out=tanh_c[t])
            np.multiply(a[:, 2 * H : 3 * H], tanh_c[t], out=hs[t + 1])
        return hs[1:]

    def backward(self):
        """Gradients of sum(hidden_all * dy): dx, dh0, dc0, dW_x, db, dW_h."""
        p, H, T, N = self.p, self.H, self.T, self.N
        dy, w_h = p["dy"], p["w_h"]
        acts, cs, tanh_c, dgates = self.acts, self.cs, self.tanh_c, self.dgates
        dh, dc, work = self.dh, self.dc, self.work
        dh.fill(0)
        dc.fill(0)
        for t in range(T - 1, -1, -1):
            a, dg_all, tc = acts[t], dgates[t], tanh_c[t]
            i, f, o, g = a[:, :H], a[:, H : 2 * H], a[:, 2 * H : 3 * H], a[:, 3 * H :]
            dh += dy[t]
            # do = dh tanh(c) o (1 - o)
            np.subtract(1, o, out=work)
            work *= o
            work *= tc
            np.multiply(work, dh, out=dg_all[:, 2 * H : 3 * H])
            # dc += dh o (1 - tanh²c)
            np.multiply(tc, tc, out=work)
            np.subtract(1, work, out=work)
            work *= o
            work *= dh
            dc += work
            # di = dc g i (1 - i)
            np.subtract(1, i, out=work)
            work *= i
            work *= g
            np.multiply(work, dc, out=dg_all[:, :H])
            # df = dc c_prev f (1 - f)
            np.subtract(1, f, out=work)
            work *= f
            work *= cs[t]
            np.multiply(work, dc, out=dg_all[:, H : 2 * H])
            # dg = dc i (1 - g²)
            np.multiply(g, g, out=work)
            np.subtract(1, work, out=work)
            work *= i
            np.multiply(work, dc, out=dg_all[:, 3 * H :])
            dc *= f
            np.dot(dg_all, w_h, out=dh)
        dg2 = dgates.reshape(T * N, 4 * H)
        x2 = p["x"].reshape(T * N, self.D)
        return dict(
            dx=np.dot(dg2, p["w_x"]).reshape(p["x"].shape),
            dh0=dh.copy(),
            dc0=dc.copy(),
            dw_x=np.dot(dg2.T, x2),
            db=dg2.sum(axis=0),
            dw_h=np.dot(dg2.T, self.hs[:-1].reshape(T * N, H)),
        )


# --- caffe2rnn -------------------------------------------------------------
class Caffe2RNNLSTM:
    """``recurrent.LSTM`` on a CNNModelHelper, gradients by AddGradientOperators.

    The loss is implicit: ``hidden_all``'s gradient is the given blob ``dy``.
    """

    def __init__(self, p, scope="bench_lstm"):
        T, N, D = p["x"].shape
        H = p["w_h"].shape[1]
        workspace.ResetWorkspace()
        model = CNNModelHelper(name="bench_lstm")
        seq = model.net.AddExternalInput("seq_lengths")
        outputs = recurrent.LSTM(model, "x", seq, ("h0", "c0"), D, H, scope=scope)
        self.hidden_all = str(outputs[0])
        model.net.AddExternalInput("dy")
        self.n_forward_ops = len(model.net.Proto().op)
        model.AddGradientOperators({outputs[0]: "dy"})
        workspace.RunNetOnce(model.param_init_net)
        feeds = {
            "x": p["x"],
            "h0": p["h0"],
            "c0": p["c0"],
            "dy": p["dy"],
            "seq_lengths": np.full(N, T, np.int32),
            scope + "/i2h_w": p["w_x"],
            scope + "/i2h_b": p["b_x"],
            scope + "/gates_t_w": p["w_h"],
            scope + "/gates_t_b": p["b_h"],
        }
        for name, value in feeds.items():
            workspace.FeedBlob(name, value)
        self.scope = scope
        self.problem, self.inference = p, None  # the forward-only net, made on first use
        # Three instances of the net on the same blobs: the recurrent ops with
        # the executor off, on, and on with THREADS threads.
        self.nets = {}
        for mode in (False, True, THREADS, BATCHED):
            netdef = with_rnn_executor(model.net.Proto(), mode)
            netdef.name += "_executor_%s" % {False: "off", True: "on", BATCHED: "batched"}.get(
                mode, "threaded"
            )
            workspace.CreateNet(netdef)
            self.nets[mode] = workspace.C_Workspace().get_net(netdef.name)
        self.use_executor(True)

    @staticmethod
    def _inference_net(p, name, scope="bench_inference"):
        """A ``forward_only=True`` LSTM on the same inputs and weights (its own
        parameter blobs and outputs, so the training net's plans are not
        disturbed), created in the workspace: its name."""
        T, N, D = p["x"].shape
        H = p["w_h"].shape[1]
        model = CNNModelHelper(name=name)
        recurrent.LSTM(
            model, "x", "seq_lengths", ("h0", "c0"), D, H, scope=scope, forward_only=True
        )
        workspace.RunNetOnce(model.param_init_net)
        for blob, key in (("i2h_w", "w_x"), ("i2h_b", "b_x"), ("gates_t_w", "w_h")):
            workspace.FeedBlob(scope + "/" + blob, p[key])
        workspace.FeedBlob(scope + "/gates_t_b", p["b_h"])
        workspace.CreateNet(model.net)
        return model.net.Proto().name

    def run_net(self):
        """The training net as a user runs it: ``workspace.RunNet``."""
        workspace.RunNet(self.net.name)

    def run_inference(self):
        """The forward-only net, ``workspace.RunNet``."""
        workspace.RunNet(self.inference_name())

    def inference_name(self):
        if self.inference is None:
            self.inference = self._inference_net(self.problem, "bench_lstm_inference")
        return self.inference

    def run_inference_net(self):
        """The forward-only net's own run (``net.run()``: no rollback journal)."""
        workspace.C_Workspace().get_net(self.inference_name()).run()

    def use_executor(self, on):
        """Run the net whose recurrent ops have ``enable_rnn_executor=on``
        (``on`` an int > 1: on, with that many ``rnn_executor.num_threads``;
        BATCHED: on, with the parameter gradients batched over time)."""
        self.net = self.nets[on]
        self.forward_ops = self.net.ops[: self.n_forward_ops]
        return self

    def forward(self):
        for op in self.forward_ops:
            op.run()

    def forward_backward(self):
        self.net.run()

    def results(self):
        s = self.scope + "/"
        fetch = workspace.FetchBlob
        return dict(
            h=fetch(self.hidden_all),
            dx=fetch("x_grad"),
            dh0=fetch("h0_grad"),
            dc0=fetch("c0_grad"),
            dw_x=fetch(s + "i2h_w_grad"),
            db=fetch(s + "i2h_b_grad"),
            db_h=fetch(s + "gates_t_b_grad"),
            dw_h=fetch(s + "gates_t_w_grad"),
        )


#: The LSTM cell's kernels in a plan's calls (inside a fused step: its unit part).
CELL_KERNELS = ("lstm_unit_forward", "lstm_unit_backward")


def _plan_parts(model):
    """``(forward, part)`` for every call one run of ``model``'s net makes,
    in order, a fused call as its parts (``forward``: made by a forward op).

    The outer FC and FCGradient give theirs by ``bind()`` (what their last run
    computed, on the same arrays); each recurrent op gives the calls of its
    executor's plan. Run after the net has run twice with the executor on
    (thrice for a loop of fewer than five steps: it builds on its second
    run), so that the plans are built and steady."""
    for i, op in enumerate(model.net.ops):  # the forward ops come first
        executor = getattr(op, "executor", None)
        calls = executor.plan.steady_bound if executor is not None else op.bind() or []
        for call in calls:
            for part in [q for q, _ in call.parts] if call.parts else [call]:
                yield i < model.n_forward_ops, part


def _compiled(pairs):
    """``(forward calls, all calls)`` of ``(forward, call)`` pairs, compiled as
    the plan compiles them (NumPy's matmul loop and the bound kernels, on
    the compiled path)."""
    both = kernels.current().compile_calls([call for _, call in pairs])
    return both[: sum(forward for forward, _ in pairs)], both


def blas_products(model):
    """The matrix products of one run of ``model``'s net, as zero-argument
    calls: ``(forward, forward and backward)`` — per timestep the hidden FC
    forward, dW, db and dX backward, inside the fused LSTM steps too, and the
    outer FC's and FCGradient's."""
    return _compiled([(f, c) for f, c in _plan_parts(model) if c.name == "matmul"])


def products_and_cell(model):
    """:func:`blas_products` and, in their places, the LSTM cell's kernels —
    σ, tanh and the state update of every step forward, their gradients
    backward: the work of any run that gives caffe2rnn's bits (the same
    products through NumPy's BLAS, the cell by its Python twin's
    operations), and nothing else.

    Each cell kernel reads the run's arrays but writes scratch arrays of its
    outputs' shapes, one set shared by every step: run without the sums and
    adds between them, the kernels would otherwise feed each other values
    no run computes (subnormal numbers among them, which slow every product
    that reads them). Scratch that stays in the cache makes this a floor
    that is, if anything, too low."""
    scratch, pairs = {}, []
    for forward, call in _plan_parts(model):
        if call.name == "matmul":
            pairs.append((forward, call))
        elif call.name in CELL_KERNELS:
            pairs.append((forward, _writing_scratch(call, scratch)))
    return _compiled(pairs)


def _writing_scratch(call, scratch):
    """A copy of the bound ``call`` whose arguments that it declares it writes
    (``call.writes``) are arrays of ``scratch``, one per position, shape and
    dtype."""
    written = {id(a) for a in call.writes}
    args = list(call.args)
    for k, a in enumerate(args):
        if id(a) in written:
            key = (k, a.shape, a.dtype.str)
            if key not in scratch:
                scratch[key] = np.zeros_like(a)
            args[k] = scratch[key]
    private = copy.copy(call)
    private.args = tuple(args)
    return private


def with_rnn_executor(netdef, on):
    """A copy of ``netdef`` whose recurrent ops have ``enable_rnn_executor=on``
    (``on`` an int > 1: also ``rnn_executor.num_threads=on``; BATCHED: on,
    and ``recurrent.set_batch_param_gradients``)."""
    net = type(netdef)()
    net.CopyFrom(netdef)
    batched = on == BATCHED
    on = True if batched else on
    for op in net.op:
        if op.type in ("RecurrentNetwork", "RecurrentNetworkGradient"):
            recurrent.set_rnn_executor_config(op, num_threads=on if on > 1 else None)
            if batched:
                recurrent.set_batch_param_gradients(op)
            arg = next((a for a in op.arg if a.name == "enable_rnn_executor"), None) or op.arg.add()
            arg.name, arg.i = "enable_rnn_executor", int(bool(on))
    return net


def check_against_floor(p, floor, model, rtol=2e-3, atol=2e-4):
    """caffe2rnn's outputs and gradients equal the floor's (float32 tolerance)."""
    model.forward_backward()
    got = model.results()
    want = dict(h=floor.forward().copy(), **floor.backward())
    want["db_h"] = want["db"]
    for key, value in want.items():
        np.testing.assert_allclose(
            got[key].reshape(value.shape),
            value,
            rtol=rtol,
            atol=atol,
            err_msg="caffe2rnn vs NumPy floor: " + key,
        )


# --- per-operator dispatch cost ---------------------------------------------
def step_op_costs(model, repeat=200):
    """µs per run of each operator of the forward and backward step nets.

    Each op of the step net instance of one step workspace is run ``repeat``
    times in a row (after a full forward+backward pass set every blob up),
    then the whole step net (key ``(net, STEP_NET)``): the difference to the
    sum of its ops is the net's own loop. The accumulating ops then hold
    nonsense, so call this last.
    """
    model.forward_backward()
    recurrent_ops = [
        op for op in model.net.ops if op.op_type in ("RecurrentNetwork", "RecurrentNetworkGradient")
    ]
    costs = {}
    for op in recurrent_ops:
        scratch = op.outputs[-1].value if op.op_type == "RecurrentNetwork" else op.inputs[-1].value
        step_ws = scratch.step(0)
        net = step_ws.get_net(op.step_net.name)
        for step_op in net.ops:
            run = step_op.run
            start = time.perf_counter()
            for _ in range(repeat):
                run()
            us = (time.perf_counter() - start) / repeat * 1e6
            costs.setdefault((op.op_type, step_op.op_type), []).append(us)
        start = time.perf_counter()
        for _ in range(repeat):
            net.run()
        costs[(op.op_type, STEP_NET)] = [(time.perf_counter() - start) / repeat * 1e6]
    return costs


# --- torch (optional) --------------------------------------------------------
def torch_contenders(p):
    """``{name: (forward, forward_backward)}`` for torch, or {} without torch."""
    try:
        import torch
    except ImportError:
        return {}
    torch.set_num_threads(1)
    T, N, D = p["x"].shape
    H = p["w_h"].shape[1]
    x = torch.tensor(p["x"], requires_grad=True)
    h0, c0 = torch.tensor(p["h0"]), torch.tensor(p["c0"])
    dy = torch.tensor(p["dy"])
    # torch's gate order is i, f, g, o; Caffe2's i, f, o, g.
    order = np.r_[0 : 2 * H, 3 * H : 4 * H, 2 * H : 3 * H]
    lstm = torch.nn.LSTM(D, H)
    cell = torch.nn.LSTMCell(D, H)
    with torch.no_grad():
        for mod, suffix in ((lstm, "_l0"), (cell, "")):
            getattr(mod, "weight_ih" + suffix).copy_(torch.tensor(p["w_x"][order]))
            getattr(mod, "weight_hh" + suffix).copy_(torch.tensor(p["w_h"][order]))
            getattr(mod, "bias_ih" + suffix).copy_(torch.tensor(p["b_x"][order]))
            getattr(mod, "bias_hh" + suffix).copy_(torch.tensor(p["b_h"][order]))

    def lstm_forward():
        return lstm(x, (h0, c0))[0]

    def cell_forward():
        h, c = h0[0], c0[0]
        out = []
        for t in range(T):
            h, c = cell(x[t], (h, c))
            out.append(h)
        return torch.stack(out)

    def with_backward(forward):
        def run():
            x.grad = None
            lstm.zero_grad()
            cell.zero_grad()
            forward().backward(dy)

        return run

    def no_grad(forward):
        def run():
            with torch.no_grad():
                forward()

        return run

    def threads(n, run):
        def timed():
            torch.set_num_threads(n)
            try:
                run()
            finally:
                torch.set_num_threads(1)

        return timed

    with torch.no_grad():
        h_lstm = lstm_forward().numpy()
        h_cell = cell_forward().numpy()
    fwd, fwd_bwd = no_grad(lstm_forward), with_backward(lstm_forward)
    return {
        "torch.nn.LSTM": (fwd, fwd_bwd, h_lstm),
        "torch.nn.LSTM, %d threads" % THREADS: (
            threads(THREADS, fwd),
            threads(THREADS, fwd_bwd),
            h_lstm,
        ),
        "torch LSTMCell loop": (no_grad(cell_forward), with_backward(cell_forward), h_cell),
    }


# --- the report ----------------------------------------------------------------
def time_shape(shape, repeat, with_torch=True):
    """Rows ``(contender, forward ms, forward+backward ms)`` for one shape,
    every contender timed in the same interleaved rounds."""
    p = make_problem(*shape)
    floor = NumpyLSTM(p)
    model = Caffe2RNNLSTM(p)
    for on in (False, True, THREADS, BATCHED):
        check_against_floor(p, floor, model.use_executor(on))
    contenders = [
        ("NumPy floor", floor.forward, lambda: (floor.forward(), floor.backward())),
    ]

    def caffe2rnn(on, path):
        def run(method):
            def timed():
                with kernels.use(path):
                    getattr(model.use_executor(on), method)()

            return timed

        return run("forward"), run("forward_backward")

    def users_path(path, journal=True):
        def forward():
            with kernels.use(path):
                if journal:
                    model.run_inference()
                else:
                    model.run_inference_net()

        def forward_backward():
            with kernels.use(path):
                if journal:
                    model.use_executor(True).run_net()
                else:
                    model.use_executor(True).forward_backward()

        return forward, forward_backward

    paths = ["cython"] if kernels.cython_available() else []
    for path in paths + ["python"]:
        for on in (False, True):
            if path == "python" and not on and paths:
                continue  # the Python twins are timed with the executor only
            name = "caffe2rnn executor %s (%s)" % ("on" if on else "off", path)
            contenders.append((name,) + caffe2rnn(on, path))
        if path == "cython":
            if threaded():
                name = "caffe2rnn executor, %d threads" % THREADS
                contenders.append((name,) + caffe2rnn(THREADS, path))
            contenders.append(("caffe2rnn executor, batched dW",) + caffe2rnn(BATCHED, path))
            contenders.append((RUN_NET,) + users_path(path))
            contenders.append((NET_RUN,) + users_path(path, journal=False))
    with kernels.use(paths[0] if paths else "python"):
        model.use_executor(True).forward_backward()
        model.forward_backward()
        forward, both = blas_products(model)
        forward_cell, both_cell = products_and_cell(model)
        run_step_plan = kernels.current().run_step_plan  # the loop of the path that built them
    contenders.append(
        (
            BLAS_ALONE,
            lambda: run_step_plan(forward, 0, []),
            lambda: run_step_plan(both, 0, []),
        )
    )
    contenders.append(
        (
            PRODUCTS_AND_CELL,
            lambda: run_step_plan(forward_cell, 0, []),
            lambda: run_step_plan(both_cell, 0, []),
        )
    )
    if with_torch:
        for name, (fwd, fwd_bwd, h) in torch_contenders(p).items():
            np.testing.assert_allclose(
                h, floor.forward(), rtol=1e-3, atol=1e-4, err_msg=name + " vs NumPy floor"
            )
            if name == "torch LSTMCell loop" and shape[0] > CELL_LOOP_MAX_T:
                continue
            if "threads" in name and not threaded():
                continue
            contenders.append((name, fwd, fwd_bwd))
    forward = interleaved_medians([c[1] for c in contenders], repeat)
    backward = interleaved_medians([c[2] for c in contenders], repeat)
    rows = [(c[0], f, fb) for c, f, fb in zip(contenders, forward, backward)]
    return rows, model.use_executor(False)


STACKED_SHAPE = (50, 32, 256, 256)  # T, N, D, H of each of the two layers
QUICK_STACKED_SHAPE = (6, 4, 8, 8)


def time_stacked(shape, repeat, with_torch=True):
    """Two stacked LSTM layers in one step net (``rnn_cell.LSTM`` with two
    dims, Caffe2's MultiRNNCell): rows ``(contender, fwd+bwd ms)`` for the
    executor on one thread and on THREADS, whose lanes run layer 2 at t
    beside layer 1 at t + 1; results checked equal bit for bit."""
    from caffe2rnn import rnn_cell

    T, N, D, H = shape
    rng = np.random.default_rng(0)
    workspace.ResetWorkspace()
    model = CNNModelHelper(name="bench_stacked")
    states = ("h0_0", "c0_0", "h0_1", "c0_1")
    outputs = rnn_cell.LSTM(model, "x", "seq_lengths", states, D, [H, H], scope="stacked")
    model.net.AddExternalInput("dy")
    model.AddGradientOperators({outputs[0]: "dy"})
    workspace.RunNetOnce(model.param_init_net)
    for op in model.param_init_net.Proto().op:
        for name in op.output:
            shape_ = workspace.FetchBlob(name).shape
            workspace.FeedBlob(name, rng.uniform(-0.1, 0.1, shape_).astype(np.float32))
    workspace.FeedBlob("x", rng.standard_normal((T, N, D)).astype(np.float32))
    workspace.FeedBlob("seq_lengths", np.full(N, T, np.int32))
    workspace.FeedBlob("dy", rng.standard_normal((T, N, H)).astype(np.float32))
    for name in states:
        workspace.FeedBlob(name, rng.standard_normal((1, N, H)).astype(np.float32))
    contenders, results = [], []
    for mode in (True, THREADS):
        netdef = with_rnn_executor(model.net.Proto(), mode)
        netdef.name += "_%s" % mode
        workspace.CreateNet(netdef)
        net = workspace.C_Workspace().get_net(netdef.name)
        net.run()
        results.append(workspace.FetchBlob("x_grad").copy())
        name = "caffe2rnn executor on" if mode is True else "caffe2rnn executor, %d threads" % mode
        contenders.append((name, net.run))
    np.testing.assert_array_equal(results[0], results[1], err_msg="threaded vs sequential")
    if with_torch:
        try:
            import torch
        except ImportError:
            torch = None
        if torch is not None:
            torch.set_num_threads(1)
            lstm = torch.nn.LSTM(D, H, num_layers=2)
            x = torch.tensor(rng.standard_normal((T, N, D)).astype(np.float32), requires_grad=True)
            dy = torch.tensor(rng.standard_normal((T, N, H)).astype(np.float32))

            def torch_run():
                x.grad = None
                lstm.zero_grad()
                lstm(x)[0].backward(dy)

            contenders.append(("torch.nn.LSTM, 2 layers", torch_run))
    times = interleaved_medians([run for _, run in contenders], repeat)
    return [(name, ms) for (name, _), ms in zip(contenders, times)]


def print_stacked(shape, rows):
    print("\ntwo stacked layers in one step net (rnn_cell.LSTM), T,N,D,H = %d,%d,%d,%d" % shape)
    first = rows[0][1]
    print("  %-32s %12s %8s" % ("", "fwd+bwd ms", "x on"))
    for name, ms in rows:
        print("  %-32s %12.2f %7.2fx" % (name, ms, ms / first))


def print_timings(shape, rows):
    floor_f, floor_fb = rows[0][1], rows[0][2]
    torch_row = next((r for r in rows if r[0] == "torch.nn.LSTM"), None)
    print("\nT,N,D,H = %d,%d,%d,%d" % shape)
    header = "  %-32s %9s %8s %12s %8s" % ("", "fwd ms", "x floor", "fwd+bwd ms", "x floor")
    if torch_row:
        print("  %-32s %9s %8s %12s %8s  %17s" % ("", "", "", "", "", "x torch.nn.LSTM"))
    print(header + ("  %8s %8s" % ("fwd", "fwd+bwd") if torch_row else ""))
    for name, f, fb in rows:
        line = "  %-32s %9.2f %7.2fx %12.2f %7.2fx" % (name, f, f / floor_f, fb, fb / floor_fb)
        if torch_row:
            line += "  %7.2fx %7.2fx" % (f / torch_row[1], fb / torch_row[2])
        print(line)


def print_summary(summary):
    """Per shape, fwd / fwd+bwd: the user's path (RunNet) against torch.nn.LSTM
    and against the same nets' net.run(), the executor on against its
    BLAS products alone, and its products and cell alone against
    torch.nn.LSTM (above 1: no run that gives caffe2rnn's bits through
    NumPy's BLAS reaches torch there)."""
    print("\nsummary, fwd / fwd+bwd (ratios of medians of the same rounds)")
    print(
        "  %-16s %-24s %-24s %-24s %-24s"
        % (
            "T,N,D,H",
            "RunNet / torch.nn.LSTM",
            "RunNet / net.run()",
            "on / BLAS alone",
            "products+cell / torch",
        )
    )
    on = "caffe2rnn executor on (cython)"
    for shape, rows in summary:
        times = {name: (f, fb) for name, f, fb in rows}
        on = on if on in times else "caffe2rnn executor on (python)"

        def ratio(a, b):
            if a not in times or b not in times:
                return "-"
            return "%.2fx / %.2fx" % (times[a][0] / times[b][0], times[a][1] / times[b][1])

        print(
            "  %-16s %-24s %-24s %-24s %-24s"
            % (
                ",".join(map(str, shape)),
                ratio(RUN_NET, "torch.nn.LSTM"),
                ratio(RUN_NET, NET_RUN),
                ratio(on, BLAS_ALONE),
                ratio(PRODUCTS_AND_CELL, "torch.nn.LSTM"),
            )
        )


def print_op_costs(shape, costs):
    print(
        "\nper-operator cost inside the step nets, T,N,D,H = %d,%d,%d,%d "
        "(us per run, median of the op's instances)" % shape
    )
    total = {}
    for (net, op_type), values in costs.items():
        if op_type == STEP_NET:
            continue
        us = sorted(values)[len(values) // 2]
        ops_us, count = total.get(net, (0.0, 0))
        total[net] = (ops_us + us * len(values), count + len(values))
        print("  %-26s %-40s %3dx %8.2f" % (net, op_type, len(values), us))
    for net, (ops_us, count) in total.items():
        step_us = costs[(net, STEP_NET)][0]
        print(
            "  %-26s %d ops per step: %.2f us per op on average; one step %.1f us,"
            " of which %.2f us per op is the net's own loop"
            % (net, count, ops_us / count, step_us, (step_us - ops_us) / count)
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny shapes, few repeats")
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="repetitions per timing (median; default 7, quick 3)",
    )
    parser.add_argument("--no-torch", action="store_true", help="skip torch")
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall time (default), or this process's CPU time: steadier on a shared "
        "machine; the contenders on two threads are then left out",
    )
    args = parser.parse_args(argv)
    CLOCK["clock"] = time.perf_counter if args.clock == "wall" else time.process_time
    shapes = QUICK_SHAPES if args.quick else SHAPES
    repeat = args.repeat or (3 if args.quick else 7)
    print(
        "caffe2rnn LSTM benchmark: one layer, float32, 1 thread, median of %d runs, %s time"
        % (repeat, "wall" if args.clock == "wall" else "CPU")
    )
    print("numpy %s; %s" % (np.__version__, cpu_blas.header()))
    print(
        "kernels: %s"
        % (
            "cython and python"
            if kernels.cython_available()
            else "python only (Cython kernels not built)"
        )
    )
    print("load average: %.2f %.2f %.2f (1, 5, 15 min)" % os.getloadavg())
    model, summary = None, []
    for shape in shapes:
        rows, model = time_shape(shape, repeat, with_torch=not args.no_torch)
        print_timings(shape, rows)
        summary.append((shape, rows))
    print_summary(summary)
    print("load average: %.2f %.2f %.2f (1, 5, 15 min)" % os.getloadavg())
    stacked = QUICK_STACKED_SHAPE if args.quick else STACKED_SHAPE
    if threaded():  # the stacked layers compare one thread with two
        print_stacked(stacked, time_stacked(stacked, repeat, with_torch=not args.no_torch))
    print_op_costs(shapes[-1], step_op_costs(model, repeat=20 if args.quick else 200))
    print(
        "\nreproduce: python benchmarks/bench_lstm.py%s"
        % " ".join([""] + (argv if argv is not None else sys.argv[1:]))
    )


if __name__ == "__main__":
    main()

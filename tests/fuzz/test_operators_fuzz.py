"""Fuzzing every registered operator: random inputs (count, shape, dtype),
random arguments (names the operators read, values of every kind), outputs
that already exist or are written in place.

Each case must end in a result or a caffe2rnn error. When it fails:

* through ``run_operator_once`` (what ``workspace.RunOperatorOnce`` calls) the
  workspace is exactly as it was (names, objects, contents);
* run directly (``op.run()``, no rollback journal: how ops run inside nets and
  step nets) no output that existed was written: operators validate before
  they touch any output.

Operators that call compiled kernels run in a subprocess (a crash there is
counted, not fatal); the others run in-process under Hypothesis.
"""

import atexit
import contextlib
import os
import re
import shutil
import tempfile

import numpy as np
from fuzz_harness import FUZZ, changes, examples, fuzz_settings, in_family, run_isolated, snapshot
from hypothesis import given
from hypothesis import strategies as st

import caffe2rnn.operators
from caffe2rnn import core
from caffe2rnn.errors import Caffe2RNNError
from caffe2rnn.runtime import Workspace, registry, settings
from caffe2rnn.runtime.net import create_operator

OPS_DIR = os.path.dirname(caffe2rnn.operators.__file__)
KERNEL_OPS = {
    "LSTMUnit",
    "LSTMUnitGradient",
    "RecurrentNetwork",
    "RecurrentNetworkGradient",
    "RecurrentNetworkBlobFetcher",
    "rnn_internal_apply_link",
    "rnn_internal_accumulate_gradient_input",
    "rnn_history_accumulate_param_gradient",
}
OPS = registry.registered_operators()
PLAIN_OPS = [op for op in OPS if op not in KERNEL_OPS]


def _argument_names():
    """Every argument name an operator reads (scanned from their sources)."""
    pattern = re.compile(r"""args\.(?:single|repeated|has|require)\(\s*["'](\w+)["']""")
    names = set()
    for folder, _, files in os.walk(OPS_DIR):
        for file in files:
            if file.endswith(".py"):
                with open(os.path.join(folder, file)) as source:
                    names.update(pattern.findall(source.read()))
    return sorted(names | {"kernel", "kernels", "stride", "strides", "pad", "order"})


ARG_NAMES = _argument_names()
#: Arguments some operators cannot run without, with plausible values: the
#: fuzzer gives them most of the time so the cases also reach the computing
#: code (and its late failures), not only the argument checks.
HINTS = {
    "Squeeze": {"dims": [0]},
    "ExpandDims": {"dims": [0]},
    "LearningRate": {"base_lr": -0.1, "policy": "fixed"},
    "Concat": {"axis": 0},
    "Split": {"axis": 0},
    "Reshape": {"shape": [-1]},
    "Conv": {"kernel": 1, "order": "NCHW"},
    "ConvGradient": {"kernel": 1, "order": "NCHW"},
    "LRN": {"size": 1, "alpha": 1e-3, "beta": 0.75},
    "LRNGradient": {"size": 1, "alpha": 1e-3, "beta": 0.75},
    "CreateBlobsQueue": {"capacity": 2, "num_blobs": 1},
    "Adam": {"beta1": 0.9},
    "AveragedLoss": {},
    "Tile": {"tiles": 2, "axis": 0},
    "TileGradient": {"tiles": 2, "axis": 0},
    "TopK": {"k": 1},
    "Cast": {"to": "int32"},
    "TT": {"inp_sizes": [2, 2], "out_sizes": [2, 2], "tt_ranks": [1, 2, 1]},
}
for _pool in ("MaxPool", "AveragePool", "LpPool"):  # and the pooling gradients
    HINTS[_pool] = HINTS[_pool + "Gradient"] = {"kernel": 1, "order": "NCHW"}
DTYPES = [np.float32] * 4 + [np.float64, np.int32, np.int64, np.bool_, object]
ROOT = tempfile.mkdtemp(prefix="caffe2rnn-fuzz-")  # where Print(to_file=1) may write
atexit.register(shutil.rmtree, ROOT, ignore_errors=True)  # each process that imports us


def _tensor(rng, shape, plausible=False):
    dtype = np.float32 if plausible and rng.random() < 0.8 else DTYPES[rng.integers(len(DTYPES))]
    if dtype is object:
        values = np.array(["s%d" % v for v in rng.integers(0, 9, int(np.prod(shape)))], object)
        return values.reshape(shape)
    if dtype is np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-2, 6, shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def _shape(rng, base, plausible=False):
    if rng.random() < (0.9 if plausible else 0.6):
        return base
    return tuple(int(d) for d in rng.integers(0, 5, rng.integers(0, 4)))


def _arg_value(rng):
    kind = rng.integers(8)
    if kind == 0:
        return int(rng.integers(-2, 7))
    if kind == 1:
        return int(rng.choice([0, 1, 2**31, -(2**40), 2**62]))
    if kind == 2:
        return float(rng.choice([0.0, 0.5, -1.0, 1e30, np.nan, np.inf]))
    if kind == 3:
        return [int(v) for v in rng.integers(-1, 5, rng.integers(0, 4))]
    if kind == 4:
        return [float(v) for v in rng.normal(size=rng.integers(0, 4))]
    if kind == 5:
        return str(rng.choice(["", "x", "NCHW", "NHWC", "in0", "sum", "\u00e9"]))
    if kind == 6:
        return [str(v) for v in rng.choice(["in0", "out0", "a", ""], rng.integers(0, 3))]
    return float(rng.normal())


def make_case(op_type, seed):
    """(OperatorDef, {blob: value} to feed first) for one fuzz case."""
    rng = np.random.default_rng(seed)
    if op_type in RECIPES and rng.random() < 0.6:
        return _from_recipe(op_type, rng)
    schema = registry.schema(op_type)
    lo, hi = schema.inputs
    n_in = int(rng.integers(lo, (lo + 3 if hi is None else min(hi, lo + 3)) + 1))
    lo, hi = schema.outputs
    n_out = int(rng.integers(lo, (lo + 2 if hi is None else min(hi, lo + 2)) + 1))
    base = tuple(int(d) for d in rng.integers(1, 4, rng.integers(1, 4)))
    inputs = ["in%d" % i for i in range(n_in)]
    outputs = ["out%d" % i for i in range(n_out)]
    feeds = {}
    plausible = rng.random() < 0.5  # mostly float32 of one shape: more cases get far
    for name in inputs:
        feeds[name] = (
            _tensor(rng, _shape(rng, base, plausible), plausible)
            if rng.random() < 0.95
            else b"bytes"
        )
    for i, name in enumerate(outputs):
        if n_in and rng.random() < 0.3:  # in place
            outputs[i] = inputs[int(rng.integers(n_in))]
        elif rng.random() < 0.5:  # an output that already holds a tensor
            feeds[name] = _tensor(rng, _shape(rng, base))
    n_args = rng.integers(0, 2 if plausible else 4)
    args = {str(k): _arg_value(rng) for k in rng.choice(ARG_NAMES, n_args)}
    if rng.random() < 0.7:
        args.update(HINTS.get(op_type, {}))
    if schema.verify(core.CreateOperator(op_type, inputs, outputs)) and rng.random() < 0.8:
        outputs = ["out%d" % i for i in range(n_out)]  # in place where it is not allowed
    try:
        op = core.CreateOperator(op_type, inputs, outputs, **args)
    except Caffe2RNNError:
        op = core.CreateOperator(op_type, inputs, outputs)
    return op, feeds


def _f(rng, *shape):
    return rng.normal(size=shape).astype(np.float32)


def _labels(rng, n, d):
    return rng.integers(0, d, n).astype(np.int32)


def _recipes():
    """Well-formed inputs (names, arrays) and outputs for operators whose
    inputs must fit together; cases start from them and often perturb one."""

    def fc(rng, n=2, k=3, m=4):
        return [_f(rng, n, k), _f(rng, m, k), _f(rng, m)], ["out0"]

    def xent(rng, n=3, d=4):
        p = np.abs(_f(rng, n, d)) + 0.1
        return [p / p.sum(1, keepdims=True), _labels(rng, n, d)], ["out0"]

    def xent_grad(rng, n=3, d=4):
        (x, t), _ = xent(rng, n, d)
        return [x, t, _f(rng, n)], ["out0"]

    def swl(rng, n=3, d=4):
        return [_f(rng, n, d), _labels(rng, n, d)], ["out0", "out1"]

    def swl_grad(rng, n=3, d=4):
        x, t = _f(rng, n, d), _labels(rng, n, d)
        p = np.exp(x) / np.exp(x).sum(1, keepdims=True)
        return [x, t, p, np.ones((), np.float32)], ["out0"]

    def conv(rng):
        return [_f(rng, 1, 2, 3, 3), _f(rng, 2, 2, 1, 1), _f(rng, 2)], ["out0"]

    def conv_grad(rng):
        return [_f(rng, 1, 2, 3, 3), _f(rng, 2, 2, 1, 1), _f(rng, 1, 2, 3, 3)], ["d0", "d1", "d2"]

    def lrn(rng):
        return [_f(rng, 1, 3, 2, 2)], ["out0", "out1"]

    def front_grad(rng):
        return [_f(rng, 3), np.array([2, 3], np.int64)], ["out0"]

    def back_grad(rng):
        return [_f(rng, 2), np.array([2, 3], np.int64)], ["out0"]

    def adam(rng):
        w, m1, m2, g = (_f(rng, 3) for _ in range(4))
        inputs = [w, np.abs(m1), np.abs(m2), g, np.array([-0.1], np.float32)]
        return inputs + [np.array([0], np.int64)], ["in0", "in1", "in2"]

    def sparse_adagrad(rng):
        w, h, g = _f(rng, 4, 2), np.abs(_f(rng, 4, 2)), _f(rng, 2, 2)
        return [w, h, np.array([0, 3], np.int64), g, np.array([-0.1], np.float32)], ["in0", "in1"]

    def sparse_adam(rng):
        w, m1, m2, g = _f(rng, 4, 2), _f(rng, 4, 2), np.abs(_f(rng, 4, 2)), _f(rng, 2, 2)
        idx, lr = np.array([1, 2], np.int32), np.array([-0.1], np.float32)
        return [w, m1, m2, idx, g, lr, np.array([0], np.int64)], ["in0", "in1", "in2"]

    def matmul(rng):
        return [_f(rng, 2, 3), _f(rng, 3, 4)], ["out0"]

    def prelu(rng):
        return [_f(rng, 2, 3, 2), _f(rng, 3)], ["out0"]

    def prelu_grad(rng):
        x = _f(rng, 2, 3)
        return [x, _f(rng, 2, 3), x.copy(), _f(rng, 1)], ["out0", "out1"]

    def pool(rng):
        return [_f(rng, 1, 2, 3, 3)], ["out0"]

    def pool_grad(rng):
        return [_f(rng, 1, 2, 3, 3), _f(rng, 1, 2, 3, 3), _f(rng, 1, 2, 3, 3)], ["out0"]

    def scatter(rng):
        one = np.ones(1, np.float32)
        return [_f(rng, 4, 2), one, np.array([0, 2], np.int64), _f(rng, 2, 2), one], ["in0"]

    return {
        "FC": fc,
        "LabelCrossEntropy": xent,
        "LabelCrossEntropyGradient": xent_grad,
        "SoftmaxWithLoss": swl,
        "SoftmaxWithLossGradient": swl_grad,
        "Conv": conv,
        "ConvGradient": conv_grad,
        "LRN": lrn,
        "ReduceFrontSumGradient": front_grad,
        "ReduceBackSumGradient": back_grad,
        "Adam": adam,
        "SparseAdagrad": sparse_adagrad,
        "SparseAdam": sparse_adam,
        "ScatterWeightedSum": scatter,
        "MatMul": matmul,
        "PRelu": prelu,
        "PReluGradient": prelu_grad,
        "MaxPool": pool,
        "AveragePool": pool,
        "LpPool": pool,
        "MaxPoolGradient": pool_grad,
        "AveragePoolGradient": pool_grad,
        "LpPoolGradient": pool_grad,
    }


def _indexing_recipes():
    """Gather, segments, padding, one-hots...: int indices, ids and lengths that
    fit their data (the indexing and shape operators of issue 24)."""

    def ids(*v):
        return np.array(v, np.int32)

    def gather(rng):
        return [_f(rng, 4, 2), rng.integers(0, 4, (2, 3)).astype(np.int32)], ["out0"]

    def sparse_to_dense(rng):
        return [np.array([3, 0, 3], np.int64), _f(rng, 3, 2)], ["out0"]

    def top_k_grad(rng):
        return [_f(rng, 2, 1), np.array([[1], [0]], np.int64), _f(rng, 2, 3)], ["out0"]

    def one_hot(rng):
        return [np.array([2, 0], np.int64), np.array([3], np.int64)], ["out0"]

    def segment_one_hot(rng):
        return [ids(1, 0, 2), np.array([0, 2, 1], np.int64), np.array([3], np.int64)], ["out0"]

    def batch_one_hot(rng):
        return [ids(1, 2, 3, 1).reshape(2, 2), ids(1, 2), ids(1, 2, 3)], ["out0"]

    def reverse(rng):
        return [_f(rng, 3, 2, 2), ids(3, 1)], ["out0"]

    def padding(rng):
        return [_f(rng, 5, 2), ids(2, 3)], ["out0", "out1"]

    def ranges(rng):
        return [_f(rng, 4, 2), ids(0, 0, 1, 2)], ["out0"]

    def range_grad(rng):
        return [_f(rng, 4, 2), _f(rng, 3, 2), _f(rng, 3, 2), ids(0, 0, 1, 2)], ["out0"]

    def lengths(rng):
        return [_f(rng, 4, 2), ids(1, 0, 3)], ["out0"]

    def sparse_segments(rng):
        return [_f(rng, 4, 2), np.array([3, 0, 0], np.int64), ids(0, 1, 1)], ["out0"]

    def segment_grad(rng):
        return [_f(rng, 3, 2), ids(0, 1, 1, 2)], ["out0"]

    def accuracy(rng):
        return [_f(rng, 3, 4), _labels(rng, 3, 4)], ["out0"]

    def conditional(rng):
        return [np.array([True, False]), _f(rng, 2, 3), _f(rng, 2, 3)], ["out0"]

    def compare(rng):
        return [rng.integers(0, 3, (2, 3)).astype(np.int32)] * 2, ["out0"]

    def logic(rng):
        return [rng.integers(0, 2, (2, 3)).astype(bool)] * 2, ["out0"]

    recipes = {
        "Gather": gather,
        "SparseToDense": sparse_to_dense,
        "TopKGradient": top_k_grad,
        "OneHot": one_hot,
        "SegmentOneHot": segment_one_hot,
        "BatchOneHot": batch_one_hot,
        "ReversePackedSegs": reverse,
        "AddPadding": padding,
        "RemovePadding": padding,
        "GatherPadding": padding,
        "Accuracy": accuracy,
        "Conditional": conditional,
        "EQ": compare,
        "Unique": lambda rng: ([np.array([3, 1, 3], np.int64)], ["out0", "out1"]),
        "LengthsRangeFill": lambda rng: ([ids(2, 0, 3)], ["out0"]),
        "LengthsToShape": lambda rng: ([ids(2, 2)], ["out0"]),
        "LengthsToSegmentIds": lambda rng: ([ids(2, 0, 1)], ["out0"]),
        "LengthsToRanges": lambda rng: ([ids(2, 0, 1)], ["out0"]),
        "LengthsToWeights": lambda rng: ([ids(2, 0, 1)], ["out0"]),
        "SegmentIdsToLengths": lambda rng: ([ids(0, 0, 2)], ["out0"]),
        "SegmentIdsToRanges": lambda rng: ([ids(0, 0, 2)], ["out0"]),
        "LengthsGather": lambda rng: ([_f(rng, 4, 2), ids(1, 3), ids(1, 0)], ["out0"]),
        "PackSegments": lambda rng: ([ids(1, 3), _f(rng, 4, 2)], ["out0"]),
        "UnpackSegments": lambda rng: ([ids(1, 3), _f(rng, 2, 3, 2)], ["out0"]),
        "RemoveDataBlocks": lambda rng: ([_f(rng, 4, 2), ids(3, 0)], ["out0"]),
        "Where": lambda rng: (
            [rng.integers(0, 2, (2, 3)).astype(bool), _f(rng, 2, 3), _f(rng, 2, 3)],
            ["out0"],
        ),
    }
    for op in ("And", "Or", "Xor"):
        recipes[op] = logic
    for reducer in ("Sum", "LogSumExp", "LogMeanExp", "Mean", "Max"):
        recipes["SortedSegmentRange" + reducer] = ranges
        recipes["SortedSegmentRange%sGradient" % reducer] = range_grad
    for reducer in ("Sum", "Mean"):
        for layout in ("SortedSegment", "UnsortedSegment"):
            recipes[layout + reducer] = ranges
            recipes["Sparse" + layout + reducer] = sparse_segments
            recipes[layout + reducer + "Gradient"] = segment_grad
        recipes["Lengths" + reducer] = lengths
        recipes["SparseLengths" + reducer] = lambda rng: (
            [_f(rng, 4, 2), np.array([3, 0, 0], np.int64), ids(2, 1)],
            ["out0"],
        )
        for prefix in ("", "Sparse"):
            recipes[prefix + "Lengths%sGradient" % reducer] = lambda rng: (
                [_f(rng, 2, 2), ids(2, 1)],
                ["out0"],
            )
    return recipes


RECIPES = dict(_recipes(), **_indexing_recipes())


def _from_recipe(op_type, rng):
    arrays, outputs = RECIPES[op_type](rng)
    feeds = {"in%d" % i: a for i, a in enumerate(arrays)}
    if rng.random() < 0.5:  # perturb one input: shape, dtype or content
        name = "in%d" % rng.integers(len(arrays))
        feeds[name] = _tensor(rng, _shape(rng, feeds[name].shape, plausible=True))
    for name in outputs:
        if name not in feeds and rng.random() < 0.5:
            feeds[name] = _tensor(rng, _shape(rng, arrays[0].shape))
    args = dict(HINTS.get(op_type, {}))
    if rng.random() < 0.3:
        name = str(rng.choice(ARG_NAMES))
        args[name] = _arg_value(rng)
    inputs = ["in%d" % i for i in range(len(arrays))]
    try:
        return core.CreateOperator(op_type, inputs, outputs, **args), feeds
    except Caffe2RNNError:
        return core.CreateOperator(op_type, inputs, outputs, **HINTS.get(op_type, {})), feeds


def _workspace(feeds):
    ws = Workspace(root_folder=ROOT)
    for name, value in feeds.items():
        ws.feed(name, value)
    return ws


def check_case(case):
    """Run one case both ways; "ok", "error" or {"failure": ...} (JSON-able)."""
    op_type, seed = case
    op_def, feeds = make_case(op_type, seed)
    with np.errstate(all="ignore"):  # 0/0 in a mean of nothing is nan, as in Caffe2
        return _check(op_def, feeds, "%s seed=%d\n%s" % (op_type, seed, op_def))


def _check(op_def, feeds, where):
    try:
        ws = _workspace(feeds)
        before = snapshot(ws)
        outcome, error = in_family(ws.run_operator_once, op_def)
        if outcome == "error":
            diff = changes(ws, before)
            FUZZ.check(not diff, "mismatches", "RunOperatorOnce left %s: %s" % (diff, where))
            # Directly, without the journal: no existing output may be written.
            ws = _workspace(feeds)
            before = snapshot(ws)
            made, op = in_family(create_operator, op_def, ws)
            if made == "ok":
                # NetInstance puts what op.run() raises in the family (with context).
                with contextlib.suppress(Exception):
                    op.run()
            kept = {n: v for n, v in before.items() if n in set(op_def.output)}
            diff = changes_to(ws, kept)
            FUZZ.check(
                not diff,
                "mismatches",
                "a failing op wrote its output first (%s): %s" % (diff, where),
            )
        return outcome
    except AssertionError as exc:
        return {"failure": str(exc)[:1500]}


def changes_to(ws, kept):
    """``changes`` restricted to the blobs in ``kept`` (a partial snapshot)."""
    for name, (value, contents, _, _) in kept.items():
        blob = ws.get_blob(name)
        if blob is None or blob.value is not value:
            return "blob '%s' was replaced" % name
        if contents is not None and not np.array_equal(
            blob.value, contents, equal_nan=contents.dtype.kind in "fc"
        ):
            return "blob '%s' was written" % name
    return ""


def _judge(result):
    if isinstance(result, dict) and "failure" in result:
        kind = result["failure"].partition(":")[0]
        raise AssertionError(result["failure"]) if kind in FUZZ.counts else AssertionError(result)


@fuzz_settings(weight=12)
@given(op_type=st.sampled_from(PLAIN_OPS), seed=st.integers(0, 2**32 - 1))
def test_every_operator_returns_or_fails_cleanly(op_type, seed):
    FUZZ.case()
    old = settings.set_max_alloc_bytes(16 << 20)
    try:
        _judge(check_case((op_type, seed)))
    finally:
        settings.set_max_alloc_bytes(old)


def test_kernel_operators_in_a_subprocess_never_crash_or_hang():
    kernel_ops = sorted(KERNEL_OPS & set(OPS))
    cases = [(op, seed) for seed in range(examples(weight=0.5)) for op in kernel_ops]
    results = run_isolated("test_operators_fuzz:check_case", cases)
    FUZZ.case(len(cases))
    failures = [(c, r) for c, r in zip(cases, results) if not isinstance(r, str)]
    for _, result in failures:
        if "failure" in result:
            kind = result["failure"].partition(":")[0]
            FUZZ.note(kind if kind in FUZZ.counts else "mismatches", result["failure"])
    assert not failures, failures[:3]

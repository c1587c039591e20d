"""Training-loop operators: WeightedSum, ScatterWeightedSum, Scale, Iter,
AtomicIter, LearningRate, Dropout.

Caffe2 wrote plain SGD as ops inside the training net::

    ITER = init_net.ConstantFill([], "iter", shape=[1], value=0,
                                 dtype=core.DataType.INT64)
    ONE  = init_net.ConstantFill([], "ONE", shape=[1], value=1.0)
    net.Iter(ITER, ITER)                              # iter += 1
    LR = net.LearningRate(ITER, "LR", base_lr=-0.1, policy="step",
                          stepsize=10, gamma=0.9)     # a negative rate...
    net.WeightedSum([w, ONE, w_grad, LR], w)          # ...so w = w·1 + g·lr

Caffe2: utility_ops.{h,cc} (WeightedSum, ScatterWeightedSum), scale_op.{h,cc},
sgd/iter_op.{h,cc}, sgd/learning_rate_op.{h,cc}, sgd/learning_rate_functors.h,
dropout_op.{h,cc}. The optimizers that emit these ops are in
:mod:`caffe2rnn.optimizer`; their update ops in :mod:`caffe2rnn.operators.sgd`.
"""

import warnings

import numpy as np

from .. import eras
from ..errors import ArgumentError, DTypeError, EnforceNotMet, ShapeError
from ..runtime.registry import register, register_gradient
from . import rng
from .atomic import mutex_input
from .base import Operator
from .gradient_maker import GradientMaker, NoGradient, ShouldNotDoGradient

_INT64_MAX = np.iinfo(np.int64).max


def _pairs(n_in, n_out):
    """an even number of inputs (X_0, w_0, X_1, w_1, ...)"""
    return n_in > 0 and n_in % 2 == 0


def _scatter_pairs(n_in, n_out):
    """X_0, w_0, INDICES, then pairs (X_1, w_1, ...): 5, 7, 9... inputs"""
    return n_in > 3 and (n_in - 3) % 2 == 0


@register("WeightedSum", inputs=(2, None), outputs=1, inplace=[(0, 0)], counts=_pairs)
class WeightedSum(Operator):
    """``Y = Σ_k X_k · w_k`` for inputs ``X_0, w_0, X_1, w_1, ...``.

    Every ``X_k`` has the size of ``X_0``; every ``w_k`` is a 1-element float
    tensor. Usually in place on ``X_0`` (the parameter SGD updates).
    """

    def setup(self):
        if len(self.inputs) % 2:
            raise EnforceNotMet(
                "WeightedSum takes an even number of inputs "
                "(X_0, weight_0, X_1, weight_1, ...); got %d" % len(self.inputs)
            )

    def run(self):
        x0 = self.float_input(0)
        terms = []
        for k in range(0, len(self.inputs), 2):
            x, w = self.float_input(k), self.float_input(k + 1)
            if x.dtype != x0.dtype or x.size != x0.size:
                raise self.shape_error(k, "%s of %d elements (like input 0)" % (x0.dtype, x0.size))
            if w.size != 1:
                raise self.shape_error(k + 1, "a 1-element weight")
            terms.append((x, float(w.reshape(-1)[0])))
        y = self.output(0, x0.shape, x0.dtype)
        np.multiply(x0, terms[0][1], out=y)
        for x, w in terms[1:]:
            y += x.reshape(y.shape) * w


register_gradient("WeightedSum")(ShouldNotDoGradient)


def index_input(op, i, bound):
    """Input ``i``: int32/int64 indices, each in ``[0, bound)``, flattened."""
    indices = op.input(i)
    if indices.dtype not in (np.int32, np.int64):
        raise DTypeError(
            "input %d ('%s') has type %s; expected int32 or int64 indices"
            % (i, op.input_name(i), indices.dtype)
        )
    flat = indices.reshape(-1)
    if flat.size and (flat.min() < 0 or flat.max() >= bound):
        raise ShapeError(
            "input %d ('%s') holds indices from %d to %d; expected them in [0, %d)"
            % (i, op.input_name(i), flat.min(), flat.max(), bound)
        )
    return flat


@register(
    "ScatterWeightedSum",
    inputs=(5, None),
    outputs=1,
    enforce_inplace=[(0, 0)],
    counts=_scatter_pairs,
)
class ScatterWeightedSum(Operator):
    """WeightedSum on the rows of ``X_0`` picked by ``INDICES``, in place.

    Inputs ``X_0, w_0, INDICES, X_1, w_1, ...``: for every k, row
    ``INDICES[k]`` of ``X_0`` (its first dimension; rows of ``X_0.size / N``
    values) becomes ``w_0 · row + Σ_j w_j · X_j[k]``. ``X_j`` is read as ``K``
    rows whatever its shape. A repeated index is scaled and added once per
    occurrence, as Caffe2 applied the updates one after the other.
    """

    def setup(self):
        if (len(self.inputs) - 3) % 2:
            raise EnforceNotMet(
                "ScatterWeightedSum takes X_0, w_0, INDICES and then pairs "
                "(X_j, w_j); got %d inputs" % len(self.inputs)
            )

    def run(self):
        x0 = self.float_input(0)
        if x0.ndim == 0 or x0.shape[0] == 0:
            raise self.shape_error(0, "a tensor with at least one row")
        n = x0.shape[0]
        block = x0.size // n
        indices = index_input(self, 2, n)
        k = indices.size
        weights = {}
        for j in [1] + list(range(4, len(self.inputs), 2)):
            weights[j] = self.float_input(j)
            if weights[j].size != 1:
                raise self.shape_error(j, "a 1-element weight")
        terms = []
        for j in range(3, len(self.inputs), 2):
            x = self.float_input(j)
            if x.size != k * block or x.dtype != x0.dtype:
                raise self.shape_error(
                    j, "%s of %d x %d values (one row per index)" % (x0.dtype, k, block)
                )
            terms.append((float(weights[j + 1].reshape(-1)[0]), x.reshape(k, block)))
        rows = x0.reshape(n, block)
        w0 = float(weights[1].reshape(-1)[0])
        if w0 != 1.0:  # Caffe2 skipped the scaling for the usual w_0 = 1 too
            hit, counts = np.unique(indices, return_counts=True)
            rows[hit] *= (w0**counts)[:, None].astype(x0.dtype)
        for w, x in terms:
            np.add.at(rows, indices, x * w)


register_gradient("ScatterWeightedSum")(ShouldNotDoGradient)


@register("Scale", inputs=1, outputs=1, inplace=[(0, 0)])
class Scale(Operator):
    """``Y = scale · X`` (argument ``scale``, default 1.0)."""

    def setup(self):
        self.scale = self.args.single("scale", 1.0, float)

    def run(self):
        x = self.float_input(0)
        np.multiply(x, self.scale, out=self.output(0, x.shape, x.dtype))


@register_gradient("Scale")
class GetScaleGradient(GradientMaker):
    """dX = scale · dY: a Scale op; the copied arguments carry ``scale``."""

    def get_gradient_defs(self):
        return [self.op_def("Scale", [self.GO(0)], [self.GI(0)])]


#: The warnings registry of the re-typed counters (which messages were shown).
_RETYPE_WARNINGS: dict = {}


class RetypedCounterWarning(UserWarning):
    """An ``Iter``/``AtomicIter`` counter that was not int64 was made a new int64 counter."""


def _increment(op):
    """Add 1 to output 0, the int64 iteration counter (shared by Iter and AtomicIter).

    Caffe2's ``IncrementIter`` (sgd/iter_op.h) checked the size (1 element)
    and then took ``mutable_data<int64_t>()``: a counter of another type
    (Caffe2's own Toy_Regression tutorial made ``ITER`` int32) was
    reallocated as int64 -- fresh memory nothing had written -- and counted
    on from whatever it held. Here the new int64 counter holds 0, so the
    count restarts deterministically at 1, and a :class:`RetypedCounterWarning`
    names the blob (shown once per blob name and type).
    """
    counter = op.outputs[0].value
    name = op.outputs[0].name
    if type(counter) is not np.ndarray:
        raise DTypeError(
            "iteration blob '%s' must be an int64 tensor of 1 "
            "element; it is %s" % (name, op.outputs[0].type_name())
        )
    if counter.size != 1:
        raise ShapeError(
            "The output of IterOp exists, but not of the right "
            "size: blob '%s' has shape %s; expected 1 element" % (name, counter.shape)
        )
    if counter.dtype != np.int64:
        # Shown as "<operator Iter>:0: RetypedCounterWarning: ...", once per message.
        warnings.warn_explicit(
            "iteration blob '%s' is %s; like Caffe2's IterOp (mutable_data<int64_t>) "
            "it becomes a new int64 counter, which starts from 0 here (Caffe2's counted on "
            "from uninitialised memory)" % (name, counter.dtype),
            RetypedCounterWarning,
            "<operator %s>" % op.def_.type,
            0,
            module=__name__,
            registry=_RETYPE_WARNINGS,
        )
        counter = op.outputs[0].value = np.zeros(counter.shape, dtype=np.int64)
    value = counter.reshape(-1)
    if value[0] < 0:
        raise EnforceNotMet(
            "Previous iteration number is negative (blob '%s' holds %d)." % (name, value[0])
        )
    if value[0] == _INT64_MAX:
        raise EnforceNotMet("Overflow will happen! (blob '%s')" % name)
    value[0] += 1


@register("Iter", inputs=(0, 1), outputs=1, enforce_inplace=[(0, 0)])
class Iter(Operator):
    """Add 1 to the int64 iteration counter, in place.

    The old 0-input form (``net.Iter([], "iter")``) starts the counter at 0
    when the op is created, if the blob does not hold a tensor yet.
    """

    def setup(self):
        blob = self.outputs[0]
        if not self.inputs and not blob.is_tensor():
            blob.value = np.zeros(1, dtype=np.int64)

    def run(self):
        _increment(self)


@register("AtomicIter", inputs=2, outputs=1, enforce_inplace=[(1, 0)])
class AtomicIter(Operator):
    """``Iter`` under the mutex of input 0: ``AtomicIter([mutex, iter] → iter)``.

    Caffe2's optimizers use this form so that nets run from several threads
    on one workspace count every iteration exactly once.
    """

    def run(self):
        with mutex_input(self, 0):
            _increment(self)


def _step(op):
    stepsize = op.args.single("stepsize", 0, int)
    gamma = op.args.single("gamma", 0.0, float)
    if stepsize <= 0 or gamma <= 0:
        raise ArgumentError(
            "policy 'step' needs stepsize > 0 and gamma > 0; got "
            "stepsize=%d, gamma=%g" % (stepsize, gamma)
        )
    return lambda it: gamma ** (it // stepsize)


def _exp(op):
    gamma = op.args.single("gamma", 0.0, float)
    if gamma <= 0:
        raise ArgumentError("policy 'exp' needs gamma > 0; got %g" % gamma)
    return lambda it: gamma**it


def _inv(op):
    gamma = op.args.single("gamma", 0.0, float)
    power = op.args.single("power", 0.0, float)
    if gamma <= 0 or power <= 0:
        raise ArgumentError(
            "policy 'inv' needs gamma > 0 and power > 0; got gamma=%g, power=%g" % (gamma, power)
        )
    return lambda it: (1.0 + gamma * it) ** -power


def _poly(op):
    power = op.args.single("power", 0.0, float)
    max_iter = op.args.single("max_iter", -1, int)
    if power <= 0 or max_iter <= 0:
        raise ArgumentError(
            "policy 'poly' needs power > 0 and max_iter > 0; got power=%g, max_iter=%d"
            % (power, max_iter)
        )

    def multiplier(it):
        if it > max_iter:  # Caffe2 computed pow(negative, power): NaN
            raise EnforceNotMet(
                "iteration %d is past max_iter=%d of learning rate policy 'poly'" % (it, max_iter)
            )
        return (1.0 - it / max_iter) ** power

    return multiplier


def _linear_warmup(op):
    """E6: ``start_multiplier + (1 − start_multiplier) · iter / num_iter`` until
    ``num_iter``, then 1 (LinearWarmupLearningRate, 042e8ede4)."""
    start = op.args.single("start_multiplier", 0.0, float)
    num_iter = op.args.single("num_iter", 0, int)
    return lambda it: 1.0 if it >= num_iter else start + (1.0 - start) * it / num_iter


def _constant_warmup(op):
    """E6: ``multiplier`` until ``num_iter``, then 1 (ConstantWarmupLearningRate)."""
    multiplier = op.args.single("multiplier", 0.5, float)
    num_iter = op.args.single("num_iter", 0, int)
    return lambda it: 1.0 if it >= num_iter else multiplier


#: policy name → builder of ``multiplier(iter)`` from the op's arguments.
_POLICIES = {
    "fixed": lambda op: lambda it: 1.0,
    "step": _step,
    "exp": _exp,
    "inv": _inv,
    "poly": _poly,
}
#: the policies that came by 042e8ede4 (the era's ``warmup_lr_policies``)
_WARMUP_POLICIES = {
    "linearWarmup": _linear_warmup,
    "constantWarmup": _constant_warmup,
}


@register("LearningRate", inputs=1, outputs=1)
class LearningRate(Operator):
    """``lr = base_lr · policy(iter)``, a 0-d float32 tensor.

    Policies: ``fixed`` (1), ``step`` (``gamma ** (iter // stepsize)``),
    ``exp`` (``gamma ** iter``), ``inv`` (``(1 + gamma·iter) ** −power``),
    ``poly`` (``(1 − iter / max_iter) ** power``), and from 042e8ede4 (E6,
    today's) ``linearWarmup`` (``start_multiplier`` rising linearly to 1 over
    ``num_iter`` iterations) and ``constantWarmup`` (``multiplier`` for
    ``num_iter`` iterations, then 1).
    ``base_lr`` and ``policy`` are required; SGD uses a negative base_lr.
    """

    def setup(self):
        if not self.args.has("base_lr"):
            raise ArgumentError("Base learning rate must be set (argument base_lr).")
        self.base_lr = self.args.single("base_lr", kind=float)
        policy = self.args.single("policy", "", str)
        if not policy:
            raise ArgumentError(
                "Must specify a learning rate policy (argument "
                "policy: one of %s)." % ", ".join(_POLICIES)
            )
        known = dict(_POLICIES)
        if self.era is None or eras.get(self.era).warmup_lr_policies:
            known.update(_WARMUP_POLICIES)
        if policy not in known:
            raise ArgumentError(
                "Unknown learning rate policy: %s (known: %s)" % (policy, ", ".join(known))
            )
        self.multiplier = known[policy](self)

    def run(self):
        it = self.input(0)
        if it.dtype != np.int64 or it.size < 1:
            raise DTypeError(
                "input 0 ('%s') is %s %s; expected the int64 iteration "
                "counter" % (self.input_name(0), it.dtype, it.shape)
            )
        lr = self.base_lr * self.multiplier(int(it.reshape(-1)[0]))
        self.output(0, (), np.float32)[...] = lr


for _op_type in ("Iter", "AtomicIter", "LearningRate"):
    register_gradient(_op_type)(NoGradient)


def _dropout_ratio(op):
    ratio = op.args.single("ratio", 0.5, float)
    if not 0 <= ratio < 1:
        raise ArgumentError("argument ratio is %g; it must be in [0, 1)" % ratio)
    return ratio


@register("Dropout", inputs=1, outputs=(1, 2), inplace=[(0, 0)])
class Dropout(Operator):
    """Training: zero each element with probability ``ratio`` and scale the
    rest by ``1 / (1 − ratio)``; ``mask`` (bool) records the kept ones.

    ``is_test=1``: ``Y = X`` and the mask output is not written. Scaling at
    training time is what lets the test net skip dropout entirely.
    """

    def setup(self):
        self.ratio = _dropout_ratio(self)
        self.is_test = self.args.single("is_test", False, bool)
        self.random = rng.OpRandom(self.def_)
        if not self.is_test and len(self.outputs) < 2:
            raise EnforceNotMet("Dropout with is_test=0 needs the mask output (outputs: Y, mask)")

    def run(self):
        x = self.float_input(0)
        if self.is_test:
            y = self.output(0, x.shape, x.dtype)
            if y is not x:
                np.copyto(y, x)
            return
        keep = self.random.generator.random(x.shape) >= self.ratio
        np.copyto(self.output(1, x.shape, np.bool_), keep)
        y = self.output(0, x.shape, x.dtype)
        np.multiply(x, keep, out=y)
        y *= 1.0 / (1.0 - self.ratio)


@register("DropoutGrad", inputs=(1, 2), outputs=1, inplace=[(0, 0)])
class DropoutGrad(Operator):
    """dX = dY · mask / (1 − ratio); with ``is_test`` dX = dY."""

    def setup(self):
        self.ratio = _dropout_ratio(self)
        self.is_test = self.args.single("is_test", False, bool)
        if not self.is_test and len(self.inputs) < 2:
            raise EnforceNotMet(
                "DropoutGrad with is_test=0 needs the mask input (inputs: dY, mask)"
            )

    def run(self):
        dy = self.float_input(0)
        if self.is_test:
            dx = self.output(0, dy.shape, dy.dtype)
            if dx is not dy:
                np.copyto(dx, dy)
            return
        mask = self.input(1)
        if mask.dtype != np.bool_ or mask.shape != dy.shape:
            raise DTypeError(
                "input 1 ('%s') is %s %s; expected the bool mask of "
                "shape %s" % (self.input_name(1), mask.dtype, mask.shape, dy.shape)
            )
        dx = self.output(0, dy.shape, dy.dtype)
        np.multiply(dy, mask, out=dx)
        dx *= 1.0 / (1.0 - self.ratio)


@register_gradient("Dropout")
class GetDropoutGradient(GradientMaker):
    """DropoutGrad([GO0, mask] → GI0), or [GO0] alone when is_test; args copied."""

    def get_gradient_defs(self):
        inputs = [self.GO(0)] if self.arg("is_test", 0) else [self.GO(0), self.O(1)]
        return [self.op_def("DropoutGrad", inputs, [self.GI(0)])]

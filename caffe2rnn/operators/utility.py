"""Utility ops: Sum, Copy, Alias, Stop/ZeroGradient, Print, Shape, Size, HasElements, NanCheck.

These are the plumbing of a Caffe2 net (``caffe2/operators/utility_ops.h``).
Two matter in every recurrent step: ``Sum`` (it adds the input projection to
the recurrent gates, and it is how the gradient machinery accumulates the
gradients of a blob read by several ops, always *in place* on input 0) and
``Copy``. Both write into the output's existing memory whenever the size
matches, so a step net can write straight into a row of a states tensor.
"""

import os

import numpy as np

from .. import eras
from ..errors import ArgumentError, DTypeError, EnforceNotMet, FileAccessError
from ..runtime import settings
from ..runtime.registry import register, register_gradient
from .base import Operator
from .bound_call import BoundCall
from .gradient_maker import GradientMaker, NoGradient, ShouldNotDoGradient, single_op_gradient

_SUM_TYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int32))


@register("Sum", inputs=(1, None), outputs=1, inplace=[(0, 0)])
class Sum(Operator):
    """``out = in0 + in1``, then ``out += in_i`` for i ≥ 2 (float or int32).

    All inputs must have input 0's shape and type. The addition order is
    Caffe2's, which is why the output may share memory with input 0 (the
    gradient accumulation ``Sum([g, g_autosplit_0]) → g``) but an alias of an
    input with index ≥ 2 would be overwritten before it is read. One input:
    the output is a copy.
    """

    def setup(self):
        self.others = self.inputs[1:]

    def run(self):
        x0 = self.inputs[0].value
        if type(x0) is not np.ndarray or x0.dtype not in _SUM_TYPES:
            raise self.bad_first_input()
        dtype, shape = x0.dtype, x0.shape
        for i, blob in enumerate(self.others, 1):
            x = blob.value
            if type(x) is not np.ndarray or x.dtype != dtype or x.shape != shape:
                raise self.mismatch(i, x0)
        out = self.outputs[0].value
        if out is not x0:  # in place (gradient accumulation) needs no resize
            out = self.outputs[0].resize(shape, dtype)
        others = self.others
        if not others:
            if out is not x0:
                np.copyto(out, x0)
            return
        np.add(x0, others[0].value, out=out)
        for blob in others[1:]:
            np.add(out, blob.value, out=out)

    def bind(self):
        """The adds of :meth:`run` on this run's arrays (for the RNN executor)."""
        x0, out = self.inputs[0].value, self.outputs[0].value
        if not self.others:
            return [] if out is x0 else [BoundCall.copy(out, x0)]
        calls = [BoundCall.elementwise(np.add, x0, self.others[0].value, out)]
        calls += [BoundCall.elementwise(np.add, out, b.value, out) for b in self.others[1:]]
        return calls

    def bad_first_input(self):
        x0 = self.input(0)  # raises for a non-tensor
        return DTypeError(
            "input 0 ('%s') has type %s; expected float32, float64 "
            "or int32" % (self.input_name(0), x0.dtype)
        )

    def mismatch(self, i, x0):
        x = self.input(i)  # raises for a non-tensor
        if x.dtype != x0.dtype:
            return DTypeError(
                "input %d ('%s') has type %s; expected %s like input 0 "
                "('%s')" % (i, self.input_name(i), x.dtype, x0.dtype, self.input_name(0))
            )
        return self.shape_error(i, "%s like input 0 ('%s')" % (x0.shape, self.input_name(0)))


@register_gradient("Sum")
class GetSumGradient(GradientMaker):
    """Every input's gradient is the output's gradient: no ops."""

    def get_gradient_defs(self):
        for i in range(len(self.def_.input)):
            self.SetDense(i, self.GO(0))
        return []


@register("Copy", inputs=1, outputs=1)
class Copy(Operator):
    """A deep copy of the input, written into the output's memory when sizes match."""

    def run(self):
        self.copy_to_output(0, self.input(0))


@register_gradient("Copy")
class GetCopyGradient(GradientMaker):
    """``CopyOnDeviceLike([GO0, I0] → GI0)``: copy dY to X's device (args copied)."""

    def get_gradient_defs(self):
        return [self.op_def("CopyOnDeviceLike", [self.GO(0), self.I(0)], [self.GI(0)])]


@register("CopyOnDeviceLike", inputs=2, outputs=1)
class CopyOnDeviceLike(Operator):
    """A copy of input 0 placed on input 1's device; one device (CPU) here."""

    def run(self):
        self.input(1)  # must exist as a tensor, as the device reference
        self.copy_to_output(0, self.input(0))


@register("EnsureCPUOutput", inputs=1, outputs=1)
class EnsureCPUOutput(Copy):
    """A copy that is always a CPU tensor (Caffe2 042e8ede4, utility_ops.cc;
    the optimizer's gradient clipping moves norms to the CPU with it). On the
    CPU it is ``Copy``. No gradient, as in Caffe2."""


@register("CopyFromCPUInput", inputs=1, outputs=1)
class CopyFromCPUInput(Copy):
    """A CPU tensor copied to the op's device (Caffe2 042e8ede4, utility_ops.cc;
    the optimizer's learning-rate multiplier). On the CPU it is ``Copy``."""


@register("GetAllBlobNames", inputs=0, outputs=1)
class GetAllBlobNames(Operator):
    """A 1-D string tensor of the names of the workspace's blobs (with the
    parents' unless ``include_shared=0``). Caffe2: workspace_ops.cc."""

    def setup(self):
        self.include_shared = self.args.single("include_shared", 1, int) != 0

    def run(self):
        names = self.ws.blobs() if self.include_shared else self.ws.local_blob_names()
        out = np.empty(len(names), dtype=object)
        out[:] = list(names)  # str, like the other string tensors here
        self.set_output(0, out)


@register("Alias", inputs=1, outputs=1)
class Alias(Operator):
    """The output *is* the input's storage: writes through either name show in both.

    The sharing lasts until one of the two blobs is resized to a different
    number of elements (a new buffer), as with Caffe2's ``ShareData``.
    """

    def run(self):
        self.set_output(0, self.input(0))


@register_gradient("Alias")
class GetAliasGradient(GradientMaker):
    def get_gradient_defs(self):
        self.SetDense(0, self.GO(0))
        return []


@register("StopGradient", inputs=1, outputs=1, inplace=[(0, 0)])
class StopGradient(Operator):
    """Identity on the forward pass (a copy unless in place); no gradient flows back."""

    def run(self):
        self.copy_to_output(0, self.input(0))


register_gradient("StopGradient")(NoGradient)


@register("ZeroGradient", inputs=1, outputs=0)
class ZeroGradient(Operator):
    """Does nothing when run; its gradient makes the input's gradient zeros.

    Used (from 2017-06) to give a recurrent output that nothing reads a
    gradient of the right shape: ``ConstantFill([X] → X_grad, value=0.0)``.
    """

    def run(self):
        pass


@register_gradient("ZeroGradient")
class GetZeroGradientGradient(GradientMaker):
    def get_gradient_defs(self):
        return [self.op_def("ConstantFill", [self.I(0)], [self.GI(0)], value=0.0)]


@register("Print", inputs=1, outputs=0)
class Print(Operator):
    """Print a blob: its name, type, dims and (up to ``limit``; 0, the
    default, means 1000) values. From E6 (042e8ede4) ``every_n`` (>= 1) prints
    on the first run and every n-th after it.

    With ``to_file=1`` the text is appended to ``<blob name>.log`` (``/`` in
    the name becomes ``_``) in the log folder: ``logs`` under the workspace's
    root folder unless :func:`caffe2rnn.runtime.settings.set_log_dir` (or
    ``CAFFE2RNN_LOG_DIR``) says otherwise; :attr:`log_path` is the file.
    Caffe2 wrote into its root folder (``RootFolder()/<blob>.log``); with the
    default root ``"."`` that was the current directory, a place nobody asked
    for log files.
    """

    def setup(self):
        self.to_file = self.args.single("to_file", 0, int) != 0
        # TensorPrinter: limit 0 (the default) means k_limit_default_ (1000)
        self.limit = self.args.single("limit", 0, int) or 1000
        self.every_n = 1
        if self.era is None or eras.get(self.era).print_every_n:
            self.every_n = self.args.single("every_n", 1, int)
            if self.every_n < 1:
                raise ArgumentError("Print: every_n must be >= 1, got %d" % self.every_n)
        self.occurrences = 0  # PrintOp's occurrences_mod_n_
        self.log_path = None
        if self.to_file:
            name = self.input_name(0)
            for sep in {"/", "\\", os.sep, "\0"}:
                name = name.replace(sep, "_")
            self.log_path = os.path.join(settings.log_dir(_root_folder(self.ws)), name + ".log")

    def run(self):
        self.occurrences += 1
        if self.occurrences > self.every_n:
            self.occurrences -= self.every_n
        if self.occurrences != 1:
            return
        blob = self.inputs[0]
        value = blob.value
        if type(value) is np.ndarray:
            text = "Tensor %s of type %s. Dims: (%s): %s" % (
                blob.name,
                value.dtype,
                ",".join(str(d) for d in value.shape),
                ",".join(str(v) for v in value.reshape(-1)[: max(self.limit, 0)].tolist()),
            )
        else:
            text = "Blob %s holds %s" % (blob.name, blob.type_name())
        if self.to_file:
            try:
                os.makedirs(os.path.dirname(self.log_path), exist_ok=True)
                with open(self.log_path, "a") as log:
                    log.write(text + "\n")
            except OSError as exc:
                raise FileAccessError(
                    "cannot append blob '%s' to %s: %s" % (blob.name, self.log_path, exc)
                ) from exc
        else:
            print(text)


def _root_folder(ws):
    """The root folder a user gave: a step net's workspace (root ``"."``, as in
    Caffe2) logs where the workspace that owns it does."""
    while ws.root_folder == "." and ws.parent is not None:
        ws = ws.parent
    return ws.root_folder


register_gradient("Print")(ShouldNotDoGradient)


@register("Shape", inputs=1, outputs=1)
class Shape(Operator):
    """A 1-D int64 tensor holding the input's dims (reduction gradients read it)."""

    def run(self):
        x = self.input(0)
        self.output(0, (x.ndim,), np.int64)[:] = x.shape


register_gradient("Shape")(ShouldNotDoGradient)


@register("Size", inputs=1, outputs=1)
class Size(Operator):
    """A 0-d int64 tensor: the number of elements of the input (``SizeOp``)."""

    def run(self):
        self.output(0, (), np.int64)[...] = self.input(0).size


register_gradient("Size")(NoGradient)


class _Emptiness(Operator):
    """A 0-d bool: whether the input has elements (``HasElements``) or none
    (``IsEmpty``). Caffe2: utility_ops.{h,cc} at 0cdd09da6."""

    has_elements = True

    def run(self):
        self.output(0, (), np.bool_)[...] = (self.input(0).size > 0) == self.has_elements


for _name, _has in (("HasElements", True), ("IsEmpty", False)):
    register(_name, inputs=1, outputs=1)(
        type(_name, (_Emptiness,), {"has_elements": _has, "__module__": __name__})
    )
    register_gradient(_name)(ShouldNotDoGradient)


@register("NanCheck", inputs=(1, None), outputs=1, inplace=[(0, 0)])
class NanCheck(Operator):
    """A copy of input 0 if all its values are finite; else an error naming the
    blobs and the positions of their NaN and inf values (Caffe2 printed them
    and failed the net). Its gradient checks the output gradient the same way."""

    def run(self):
        x = self.float_input(0)
        if not np.isfinite(x).all():
            where = []
            for i in range(len(self.inputs)):
                values = self.float_input(i).reshape(-1)
                bad = np.flatnonzero(~np.isfinite(values))
                where.append("'%s' at %s" % (self.input_name(i), bad[:10].tolist()))
            raise EnforceNotMet(
                "Tensor contained NaN or inf: [%s]; %s" % (self.input_name(0), "; ".join(where))
            )
        self.copy_to_output(0, x)


single_op_gradient("NanCheck", "NanCheck", ["GO0"])


def _same_number(n_in, n_out):
    """as many outputs as inputs"""
    return n_in == n_out


def _one_to_one(i, j):
    return i == j


@register(
    "Free",
    inputs=(1, None),
    outputs=(1, None),
    counts=_same_number,
    enforce_inplace=_one_to_one,
)
class Free(Operator):
    """Empty every output blob (the blob stays; its content is dropped).

    Inputs and outputs are the same blobs, one to one: Caffe2 took the blobs
    as inputs too only so that a scheduler would run Free after the ops that
    produce them.
    """

    def setup(self):
        if list(self.def_.input) != list(self.def_.output):
            raise EnforceNotMet(
                "Free frees its inputs in place: outputs %s must be the inputs %s, "
                "one to one" % (list(self.def_.output), list(self.def_.input))
            )

    def run(self):
        for blob in self.outputs:
            blob.value = None


register_gradient("Free")(ShouldNotDoGradient)

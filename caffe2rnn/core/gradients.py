"""Building the backward pass: ``GradientRegistry`` and the ``IR`` behind it.

Caffe2 wrote backward ops in Python (``caffe2/python/core.py``), one forward
op at a time, from the *last* op to the first:

1. **Play forward.** :class:`IR` numbers every blob write. A blob's first
   write is version 0 (unlike :func:`get_ssa`, where it is 1); a blob already
   seen, as input or output, goes to its version + 1. For each version it
   remembers which ops read it (``input_usages``).
2. **Sweep backward.** Each op's gradient maker (C++ first, then a Python one
   registered with :meth:`GradientRegistry.RegisterGradient`) turns the
   gradients of its outputs (``g_output``) into gradient ops and the
   gradients of its inputs (``g_input``). Every blob a gradient op reads is
   checked against the versions of the forward pass: an op whose input was
   overwritten later cannot get its gradient (an in-place pitfall).
3. **Accumulate.** A blob version read by several ops gets one gradient from
   each reader ("generators"). When the sweep reaches its *first* reader, the
   generators' outputs are renamed ``_<grad>_autosplit_<i>`` inside the
   already-emitted gradient ops and a ``Sum`` (dense) or a pair of ``Concat``
   (sparse ``GradientSlice``) joins them (:mod:`.gradient_accumulation`).

The rules changed between eras (:mod:`caffe2rnn.eras`); this module asks
:func:`caffe2rnn.eras.current` for each policy. Where Caffe2 iterated a
``set`` (accumulation over ``set(op.input)``) the first-occurrence order is
used, so the result is the same in every process.
"""

import collections

from .. import eras
from ..errors import GradientError, GradientUsageError
from ..operators import gradient_maker as _native
from ..proto import caffe2_pb2
from .blob import BlobReference, GradientSlice
from .gradient_accumulation import (
    GradGenMeta,
    SparseGradGenMeta,
    make_sum_ops,
    merge_sparse,
    needs_sum,
)
from .operator import CreateOperator

#: What one forward op read and wrote: ``{name: version}`` maps.
OpSSA = collections.namedtuple("OpSSA", ["op", "in_versions", "out_versions"])


def GetIndexFromGradientList(g_list, name):
    """Index of the first entry of ``g_list`` that is (or, for a slice,
    contains) the blob ``name``; None if there is none."""
    for i, g in enumerate(g_list):
        if isinstance(g, GradientSlice):
            if name in (g.indices, g.values):
                return i
        elif g is not None and g == name:
            return i
    return None


def _unique(names):
    """``names`` without repeats, in first-occurrence order."""
    return list(dict.fromkeys(names))


class IR:
    """The forward pass replayed as blob versions, and the backward sweep.

    Attributes (Caffe2's names): ``ssa`` (one :data:`OpSSA` per op),
    ``frontier`` (current version of each blob), ``input_usages[name][v]``
    (indices of the ops reading version v; a y of the backward pass adds the
    virtual index ``len(ssa)``), ``gradient_frontier[name]`` (version the
    known gradient of ``name`` belongs to) and ``gradient_generators[name][v]``
    (where the gradient of version v comes from).
    """

    def __init__(self, operators):
        self.ssa = []
        self.input_usages = collections.defaultdict(lambda: collections.defaultdict(list))
        self.frontier = collections.defaultdict(int)
        self.gradient_frontier = {}
        self.gradient_generators = collections.defaultdict(lambda: collections.defaultdict(list))
        for op in operators:
            self.Play(op)
        if eras.current().stop_gradient_orphan_check:
            self.SanityCheck(operators)

    def SanityCheck(self, operators):
        """Refuse a ``StopGradient`` whose output no op reads (Caffe2 9dacee826).

        Such an op stops nothing: the ops after it still read its input, whose
        gradient flows as if it were not there. Caffe2 raised ``ValueError``
        (here :class:`GradientUsageError`, also a ``ValueError``).
        """
        for index, op in enumerate(operators):
            if op.type == "StopGradient" and op.output[0] not in self.input_usages:
                raise GradientUsageError(
                    "StopGradient's output '%s' is orphan: no op reads it (op #%d, "
                    "StopGradient '%s' -> '%s'). You typically want to specify the same "
                    "input and output for StopGradient."
                    % (op.output[0], index, op.input[0] if op.input else "", op.output[0])
                )

    def Play(self, op):
        """Record ``op``'s reads and writes and advance the blob versions."""
        in_versions = {}
        for name in op.input:
            # Reading a never-seen blob makes it known at version 0, so a
            # later write of it becomes version 1.
            in_versions[name] = self.frontier[name]
            self.input_usages[name][self.frontier[name]].append(len(self.ssa))
        out_versions = {}
        for name in op.output:
            if name in self.frontier:
                self.frontier[name] += 1
            out_versions[name] = self.frontier[name]
        self.ssa.append(OpSSA(op, in_versions, out_versions))

    # --- checking and recording one op's gradient ops -------------------------
    def CheckGradientOperatorInput(
        self, grad_op_input, g_output, fwd_op_idx, locally_generated_blobs
    ):
        """Raise unless ``grad_op_input`` holds, at backward time, what the
        gradient op of forward op ``fwd_op_idx`` expects it to hold."""
        forward_op, in_versions, out_versions = self.ssa[fwd_op_idx]
        original_index = GetIndexFromGradientList(g_output, grad_op_input)
        if original_index is not None:
            output = forward_op.output[original_index]
            if out_versions[output] != self.gradient_frontier.get(output):
                raise GradientError(
                    'Gradient name "%s" is expected to correspond to version %d '
                    'of "%s", but currently we have version %s.'
                    % (
                        grad_op_input,
                        out_versions[output],
                        output,
                        self.gradient_frontier.get(output),
                    )
                )
        elif grad_op_input in out_versions:
            if self.frontier[grad_op_input] != out_versions[grad_op_input]:
                raise GradientError(
                    'Gradient operator needs output "%s" at version %d, but '
                    "currently we have version %d."
                    % (grad_op_input, out_versions[grad_op_input], self.frontier[grad_op_input])
                )
        elif grad_op_input in in_versions:
            if self.frontier[grad_op_input] != in_versions[grad_op_input]:
                raise GradientError(
                    'Gradient operator needs input "%s" at version %d, but '
                    "currently we have version %d."
                    % (grad_op_input, in_versions[grad_op_input], self.frontier[grad_op_input])
                )
        elif grad_op_input not in locally_generated_blobs:
            raise GradientError(
                'Blob name "%s" not in the scope of operator: %s\nand is not '
                "generated by any of the local gradient operators."
                % (grad_op_input, str(forward_op))
            )

    def BuildGradientGenerators(self, fwd_op_idx, gradient_ops, g_output, g_input):
        """Check ``gradient_ops``, record who produced each input gradient and
        move ``gradient_frontier`` to the versions the op read."""
        forward_op, in_versions, _ = self.ssa[fwd_op_idx]
        local = []
        sparse_parts = collections.defaultdict(list)  # (name, version) -> parts
        for grad_op in gradient_ops:
            for name in grad_op.input:
                self.CheckGradientOperatorInput(name, g_output, fwd_op_idx, local)
            local.extend(grad_op.output)
            for i, output in enumerate(grad_op.output):
                j = GetIndexFromGradientList(g_input, output)
                if j is None:
                    continue
                key = (forward_op.input[j], in_versions[forward_op.input[j]])
                g = g_input[j]
                if not isinstance(g, GradientSlice):
                    self.gradient_generators[key[0]][key[1]].append(GradGenMeta(grad_op, i, g))
                elif g.indices == output:
                    sparse_parts[key].append(SparseGradGenMeta(grad_op, i, None, 0, g))
                else:
                    sparse_parts[key].append(SparseGradGenMeta(None, 0, grad_op, i, g))
        for (name, version), parts in sparse_parts.items():
            self.gradient_generators[name][version].append(merge_sparse(name, parts))
        # Pass-throughs (Sum, Add, Alias...): the maker named an existing blob
        # as the input's gradient. A generator without an op still counts,
        # so that a Sum is made when another reader also has a gradient.
        for j, g in enumerate(g_input):
            if not g:
                continue
            name = forward_op.input[j]
            halves = [g.indices, g.values] if isinstance(g, GradientSlice) else [g]
            if all(str(half) not in local for half in halves):
                meta = (
                    SparseGradGenMeta(None, 0, None, 0, g)
                    if isinstance(g, GradientSlice)
                    else GradGenMeta(None, 0, g)
                )
                self.gradient_generators[name][in_versions[name]].append(meta)
        for j, g in enumerate(g_input):
            if g is not None:
                name = forward_op.input[j]
                self.gradient_frontier[name] = in_versions[name]

    # --- accumulation -------------------------------------------------------------
    def DoGradientAccumulation(self, fwd_op_idx):
        """Sum the gradients of every input version that several ops read,
        once the sweep reaches its first reader: ``(sum_ops, {name: grad})``."""
        forward_op, in_versions, _ = self.ssa[fwd_op_idx]
        sum_ops, grad_map = [], {}
        for name in _unique(forward_op.input):
            version = in_versions[name]
            usages = self.input_usages[name][version]
            if len(usages) <= 1 or usages[0] != fwd_op_idx:
                continue
            generators = self.gradient_generators[name][version]
            if not needs_sum(name, generators):
                continue
            ops, grad_map[name] = make_sum_ops(name, generators)
            sum_ops.extend(ops)
        return sum_ops, grad_map

    # --- the sweep -------------------------------------------------------------
    def _init_gradients(self, ys):
        """Map each y to its given gradient or to a ConstantFill of ones."""
        input_to_grad, gradient_ops = {}, []
        for y, g in ys.items():
            fill = None
            if g is None:
                # Caffe2 passed y itself, so a str y gets the current name
                # scope on the fill's blobs (but not in the returned map).
                fill = CreateOperator("ConstantFill", [y], [str(y) + "_autogen_grad"], value=1.0)
                gradient_ops.append(fill)
                g = fill.output[0]
            input_to_grad[str(y)] = (
                GradientSlice(str(g[0]), str(g[1])) if isinstance(g, GradientSlice) else str(g)
            )
            if fill is not None and eras.current().ys_count_as_use:
                self.gradient_generators[str(y)][self.frontier[str(y)]].append(
                    GradGenMeta(fill, 0, str(g))
                )
        return input_to_grad, gradient_ops

    def _gradients_for_op(self, k, input_to_grad):
        """Gradient ops of forward op k and its updates to ``input_to_grad``."""
        era = eras.current()
        forward_op = self.ssa[k].op
        g_output = [input_to_grad.get(name) for name in forward_op.output]
        if all(g is None for g in g_output) and not (
            era.zero_gradient_always and forward_op.type == "ZeroGradient"
        ):
            return [], {}
        gradient_ops, g_input = GradientRegistry.GetGradientForOp(forward_op, g_output)
        self.BuildGradientGenerators(k, gradient_ops, g_output, g_input)
        updates = {}
        for name, grad in zip(forward_op.input, g_input):
            # From 2017-04 a None only erases a known gradient through an
            # in-place op (StopGradient x -> x); before, it always did.
            if (
                era.none_overwrites_gradient
                or grad is not None
                or name not in input_to_grad
                or name in forward_op.output
            ):
                updates[name] = grad
        return gradient_ops, updates

    def GetBackwardPass(self, ys):
        """``(gradient_ops, {BlobReference: gradient})`` for ``ys``.

        ``ys`` is a list (every y gets a gradient of ones) or a dict
        ``{y: gradient or None}``; None also means ones. ``gradient_ops`` are
        the ConstantFills of the ones, then, for each forward op from the last
        to the first, its gradient ops followed by the Sums it triggered. The
        map holds every blob with a gradient (the ys included).
        """
        if isinstance(ys, list):
            ys = dict((y, None) for y in ys)
        elif not isinstance(ys, dict):
            raise TypeError("ys should either be a list or a dict.")
        for y in ys:
            name = str(y)
            self.gradient_frontier[name] = self.frontier[name]
            if eras.current().ys_count_as_use:
                # The caller reads y too: its gradient may need accumulation.
                self.input_usages[name][self.frontier[name]].append(len(self.ssa))
        input_to_grad, gradient_ops = self._init_gradients(ys)
        for k in reversed(range(len(self.ssa))):
            ops, updates = self._gradients_for_op(k, input_to_grad)
            input_to_grad.update(updates)
            gradient_ops.extend(ops)
            sum_ops, grad_map = self.DoGradientAccumulation(k)
            input_to_grad.update(grad_map)
            gradient_ops.extend(sum_ops)
        result = {}
        for name, grad in input_to_grad.items():
            if isinstance(grad, GradientSlice):
                result[BlobReference(name)] = GradientSlice(
                    BlobReference(grad.indices), BlobReference(grad.values)
                )
            elif grad is not None:
                result[BlobReference(name)] = BlobReference(grad)
        return gradient_ops, result


class GradientRegistry:
    """Gradient makers by op type, and ``GetBackwardPass``.

    Native makers (:mod:`caffe2rnn.operators.gradient_maker`, the C++ ones in
    Caffe2) are asked first; a Python maker registered here is the fallback::

        @GradientRegistry.RegisterGradient("MyOp")
        def AddMyOpGradient(op, g_output):
            return CreateOperator("MyOpGradient", ...), [op.input[0] + "_grad"]
    """

    gradient_registry_ = {}

    @classmethod
    def RegisterGradient(cls, op_type):
        """Decorator: ``f(op, g_output) -> (ops, g_input)`` makes ``op_type``'s
        gradient; ``ops`` may be None, one OperatorDef or a list."""

        def wrapper(func):
            cls.gradient_registry_[op_type] = func
            return func

        return wrapper

    @classmethod
    def GetGradientForOp(cls, op, g_output):
        """``(gradient_ops, g_input)`` of ``op`` given its output gradients."""
        try:
            gradient_ops, g_input = _native.get_gradient_for_op(op, g_output)
        except Exception as exc:  # noqa: BLE001 - Caffe2 fell back on any failure
            if op.type not in cls.gradient_registry_:
                # Caffe2's format; the inner message's own full stop is
                # dropped so the text does not end in "..".
                raise GradientError(
                    "Exception when creating the gradient for "
                    "[%s]: %s." % (op.type, str(exc).rstrip("."))
                ) from exc
            gradient_ops, g_input = cls.gradient_registry_[op.type](op, g_output)
            gradient_ops = cls._as_op_list(op, gradient_ops)
            if len(g_input) != len(op.input):
                raise GradientError(
                    "The Python gradient maker of %s returned %d input gradients "
                    "for %d inputs" % (op.type, len(g_input), len(op.input))
                ) from None
        return list(gradient_ops), list(g_input)

    @staticmethod
    def _as_op_list(op, gradient_ops):
        if gradient_ops is None:
            return []
        if isinstance(gradient_ops, caffe2_pb2.OperatorDef):
            return [gradient_ops]
        gradient_ops = list(gradient_ops)
        for g in gradient_ops:
            if not isinstance(g, caffe2_pb2.OperatorDef):
                raise GradientError(
                    "The Python gradient maker of %s returned %r "
                    "instead of an OperatorDef" % (op.type, g)
                )
        return gradient_ops

    @classmethod
    def GetBackwardPass(cls, operators, ys, ys_generate_gradient=False):
        """Backward ops of ``operators`` (OperatorDefs) for the blobs ``ys``.

        Returns ``(gradient_ops, input_to_grad)``; see :meth:`IR.GetBackwardPass`.
        ``ys_generate_gradient`` is accepted and ignored, as in Caffe2.
        """
        return IR(operators).GetBackwardPass(ys)

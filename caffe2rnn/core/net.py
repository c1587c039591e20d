"""``core.Net``: a named, growing ``NetDef`` and the ``net.<OpType>(...)`` API.

A Net does not run anything. It owns one ``NetDef`` proto and appends an
``OperatorDef`` to it each time you call an operator by name::

    net = core.Net("step")
    h = net.FC(["x", "w", "b"], "h", axis=2)   # appends FC, returns BlobReference("h")
    y = net.Sum([h, "x"])                      # output auto-named "step/Sum"

Three Caffe2 habits shape what ``recurrent_net`` builds and are kept here:

* a blob read by an op but produced by nobody in this net becomes an
  *external input* of the net (that is how a step net learns which outer
  blobs, e.g. parameters, it references);
* net names are unique in the process (``lstm_cell``, ``lstm_cell_1``...), and
  that name is printed inside every serialized step net;
* ``NextName('recurrent')`` keeps returning ``'<net>/recurrent'`` because no
  blob of exactly that name is ever defined.

Each op added through ``net.<OpType>(...)`` also records where it was created
(:mod:`caffe2rnn.core.tracebacks`).
"""

import contextlib
import sys
from collections import defaultdict
from typing import Any, Optional, Union

import numpy as np

from .. import eras
from .. import scope as _scope
from .. import workspace as _workspace
from ..errors import BuildError, EnforceNotMet, UnknownOperatorError, WorkspaceError
from ..proto import caffe2_pb2
from ..runtime import registry as _registry
from . import tracebacks
from .blob import BlobName, BlobReference, ScopedBlobReference
from .gradients import GradientRegistry
from .operator import CreateOperator, DataType, _RectifyInputOutput


def unknown_operator_error(op_type):
    """The exception Caffe2 raised for ``net.<op_type>`` of an unknown type.

    E4 onwards: an ``AttributeError`` (so ``hasattr(net, 'Fcc')`` is False)
    listing near names; E0-E3: a ``RuntimeError`` (E0 without the list).
    """
    message = "Method " + op_type + " is not a registered operator."
    era = eras.current()
    if era.unknown_op_lists_near_names:
        message += " Did you mean: [" + ",".join(_registry.close_matches(op_type)) + "]"
    if era.unknown_op_is_attribute_error:
        return UnknownOperatorError(message)
    return EnforceNotMet(message)


def _runs_as_era(op_type, era):
    """Whether an op of ``op_type`` added in ``era`` marks its net with the era:
    the recurrent op, or any op with a variant of that era (its form changed)."""
    return op_type == "RecurrentNetwork" or _registry.has_variant(op_type, era)


def _is_known_operator(op_type):
    return _registry.is_registered(op_type) or _registry.is_registered(op_type + "_ENGINE_CUDNN")


def _first_digit_after(name, prefix):
    """The digit right after ``prefix`` in ``name``, or None.

    Caffe2 read exactly one character there, so ``n_blob_12`` counts as 1.
    """
    if name.startswith(prefix) and name[len(prefix) : len(prefix) + 1].isdigit():
        return int(name[len(prefix)])
    return None


class Net:
    """A ``NetDef`` under construction (Caffe2's ``core.Net``).

    ``Net(name)`` starts an empty net; ``Net(netdef)`` starts from a copy of a
    NetDef. Either way the name is made unique in the process: the second
    ``Net("RecurrentBackwardStep")`` is called ``RecurrentBackwardStep_1``.
    """

    #: Every net name handed out in this process (Caffe2 never cleared it).
    _net_names_used = set()
    operator_registry_ = {}

    @classmethod
    def reset_names(cls):
        """Forget every net name used so far, and where their ops were made
        (not in Caffe2; for tests)."""
        cls._net_names_used.clear()
        _workspace.operator_tracebacks.clear()

    @staticmethod
    def current_prefix():
        """The name of the enclosing ``net_builder.NetBuilder`` (Caffe2's own
        module, loaded through caffe2rnn.compat), else ``""``."""
        net_builder = sys.modules.get("caffe2.python.net_builder")
        builder = net_builder.NetBuilder.current(required=False) if net_builder else None
        return builder.name if builder else ""

    @staticmethod
    def _get_next_net_name(basename):
        # Caffe2 joined the builder's name and the given one, skipping empty parts.
        name = basename = "/".join(x for x in (Net.current_prefix(), basename) if x)
        next_idx = 1
        while name in Net._net_names_used:
            name = basename + "_" + str(next_idx)
            next_idx += 1
        Net._net_names_used.add(name)
        return name

    def __init__(self, name_or_proto: Any) -> None:
        self._input_record = None
        self._output_record = None
        self._registered_blob_names = set()
        self._attr_dict = defaultdict(list)
        self._era = None  # caffe2rnn: the era of its recurrent ops (eras.mark)
        self._recreate_lookup_tables = False
        self._net = caffe2_pb2.NetDef()
        if type(name_or_proto) is caffe2_pb2.NetDef:
            self._net.CopyFrom(name_or_proto)
            name = self._net.name
            prefix = name + "_blob_"
            digits = [
                _first_digit_after(blob, prefix)
                for op in self._net.op
                for blob in list(op.input) + list(op.output)
            ]
            digits = [d for d in digits if d is not None]
            self._next_name_index = max(digits) + 1 if digits else 0
        else:
            name = name_or_proto
            self._next_name_index = 0
        self._net.name = Net._get_next_net_name(name)
        self._RecreateLookupTables()

    # -- lookup tables -----------------------------------------------------

    def _RecreateLookupTables(self):
        """Rebuild the sets of op outputs and external inputs from the proto."""
        self._op_outputs = {o for op in self._net.op for o in op.output}
        self._external_input_map = set(self._net.external_input)
        self._recreate_lookup_tables = False

    def BlobIsDefined(self, blob: BlobName) -> bool:
        """True if some op of this net writes ``blob`` or it is an external input."""
        if self._recreate_lookup_tables:
            self._RecreateLookupTables()
        name = str(blob)
        return name in self._op_outputs or name in self._external_input_map

    def UsesBlob(self, blob: BlobName) -> bool:
        """True if some op of this net reads ``blob``, or it is an external input."""
        name = str(blob)
        if any(name == i for op in self._net.op for i in op.input):
            return True
        return name in set(self._net.external_input)

    def UsedBlobNames(self) -> set:
        """E6: the names of every blob an op reads or writes, and the net's
        declared external inputs and outputs (``net_builder`` asks for them)."""
        names = set()
        for op in self._net.op:
            names.update(op.input)
            names.update(op.output)
        names.update(self._net.external_input)
        names.update(self._net.external_output)
        return names

    def GetBlobRef(self, blob_name: BlobName) -> BlobReference:
        """A BlobReference (bound to this net) to a blob the net defines."""
        blob_name = str(blob_name)
        if not self.BlobIsDefined(blob_name):
            raise KeyError("Net does not define blob %s" % blob_name)
        return BlobReference(blob_name, self)

    def _InvalidateLookupTables(self):
        self._recreate_lookup_tables = True

    def _CheckLookupTables(self):
        """Check that the lookup tables cover the proto (Caffe2's test helper).

        Every op output must be in the table of outputs and every external
        input in that of inputs; tables left stale by an edit through
        :meth:`Proto` are checked as they are, not rebuilt first.
        """
        missing_outputs = {o for op in self._net.op for o in op.output} - self._op_outputs
        missing_inputs = set(self._net.external_input) - self._external_input_map
        if missing_outputs or missing_inputs:
            raise BuildError(
                "net '%s': lookup tables miss op outputs %s and external inputs %s"
                % (self.Name(), sorted(missing_outputs), sorted(missing_inputs))
            )

    def is_external_input(self, blob):
        if self._recreate_lookup_tables:
            self._RecreateLookupTables()
        return str(blob) in self._external_input_map

    @property
    def external_inputs(self):
        return [BlobReference(name) for name in self._net.external_input]

    @property
    def external_outputs(self):
        return [BlobReference(name) for name in self._net.external_output]

    # -- names ---------------------------------------------------------------

    def Name(self) -> str:
        return self._net.name

    def __str__(self):
        return self.Name()

    def Proto(self) -> Any:
        """The net's own NetDef (not a copy): edits to it are edits to the net.

        Since the caller may edit it, the lookup tables are rebuilt lazily
        before the next ``BlobIsDefined``.
        """
        self._InvalidateLookupTables()
        return self._net

    def PopulateProtoWithFileName(self):
        """Name each op after where it was created: ``op.name = "file:line"``.

        See :mod:`caffe2rnn.core.tracebacks` (Caffe2 at 0cdd09da6 used the name;
        ``OperatorDef.debug_info`` came later).
        """
        tracebacks.populate_file_names(self)

    def NextName(self, prefix: Optional[str] = None, output_id: Optional[int] = None) -> str:
        """A fresh (unscoped) blob name: ``<net>/<prefix>[_k][:<output_id>]``.

        The uniqueness test looks at the *scoped* candidate while the result is
        returned unscoped, so outside a name scope a name that no op ever
        writes verbatim (``NextName('recurrent')``) comes back every time.
        Without a prefix: ``<net>_blob_<k>`` from a per-net counter.
        """
        if not prefix:
            name = self._net.name + "_blob_" + str(self._next_name_index)
            self._next_name_index += 1
            return name
        base = self._net.name + "/" + prefix
        suffix = "" if output_id is None else ":" + str(output_id)
        name = base + suffix
        index = 2
        while self.BlobIsDefined(str(ScopedBlobReference(name))):
            name = base + "_" + str(index) + suffix
            index += 1
        return name

    def NextBlob(self, prefix: str = "unnamed") -> BlobReference:
        """A BlobReference named ``prefix`` (or ``prefix_auto_<i>``) not used yet."""
        name = str(prefix)
        index = 0
        while name in self._registered_blob_names or self.BlobIsDefined(name):
            name = str(prefix) + "_auto_" + str(index)
            index += 1
        self._registered_blob_names.add(name)
        return BlobReference(name)

    def NextScopedBlob(self, prefix: str = "unnamed") -> BlobReference:
        return self.NextBlob(_scope.CurrentNameScope() + str(prefix))

    # -- external inputs and outputs ---------------------------------------------

    def AddExternalInput(self, *inputs: BlobName) -> Union[BlobReference, list[BlobReference]]:
        """Declare external inputs; return one BlobReference or a list of them.

        As in Caffe2 the references have no net (its helper tested the builtin
        ``input`` instead of the argument), so ``ref.Relu()`` on them fails.
        """
        if not inputs:
            raise WorkspaceError(
                "AddExternalInput of net '%s' needs at least one blob" % self.Name()
            )
        if self._recreate_lookup_tables:
            self._RecreateLookupTables()
        for blob in inputs:
            if str(blob) in self._external_input_map:
                raise WorkspaceError("Net already contains an input named %s" % str(blob))
        refs = []
        for blob in inputs:
            name = str(blob)
            self._net.external_input.append(name)
            self._external_input_map.add(name)
            refs.append(BlobReference(name))
        return refs[0] if len(refs) == 1 else refs

    AddExternalInputs = AddExternalInput

    def AddScopedExternalInputs(self, *inputs: BlobName) -> list[BlobReference]:
        """Add inputs with the current name scope prepended; always a list."""
        refs = self.AddExternalInput(*[ScopedBlobReference(b) for b in inputs])
        return refs if isinstance(refs, list) else [refs]

    def AddExternalOutput(self, *outputs: BlobReference) -> None:
        """Declare outputs; each must be a BlobReference the net defines."""
        for blob in outputs:
            if not isinstance(blob, BlobReference):
                raise TypeError(
                    "AddExternalOutput of net '%s' takes "
                    "BlobReferences, got %r" % (self.Name(), blob)
                )
            if not self.BlobIsDefined(blob):
                raise WorkspaceError(
                    "Net '%s' does not define blob %s, so it "
                    "cannot be an external output" % (self.Name(), blob)
                )
        self._net.external_output.extend(str(b) for b in outputs)

    AddExternalOutputs = AddExternalOutput

    def AddScopedExternalOutputs(self, *outputs):
        return self.AddExternalOutput(*[ScopedBlobReference(b) for b in outputs])

    # -- attributes (Python-side notes carried by Clone) ---------------------

    def add_attribute(self, name, obj):
        """Keep ``obj`` under ``name`` (user notes with no meaning to Caffe2)."""
        self._attr_dict[name].append(obj)

    AddAttribute = add_attribute

    def get_attributes(self, name):
        return self._attr_dict.get(name, [])

    # -- operators ---------------------------------------------------------------

    def _ExtendOps(self, new_ops):
        self._net.op.extend(new_ops)
        for op in new_ops:
            self._op_outputs.update(op.output)

    def DeduplicateGradientSlices(self, g, aggregator="sum"):
        """Merge repeated indices of the GradientSlice ``g`` (``Unique`` and
        ``UnsortedSegmentSum``/``Mean``, see :mod:`caffe2rnn.operators.deduplication`)."""
        from ..operators.deduplication import deduplicate_gradient_slices

        return deduplicate_gradient_slices(self, g, aggregator)

    def __getattr__(self, op_type):
        """``net.FC(...)``: a function that appends an ``op_type`` operator."""
        if op_type.startswith("__"):
            raise AttributeError(op_type)
        if not _is_known_operator(op_type):
            raise unknown_operator_error(op_type)
        return lambda *args, **kwargs: self._CreateAndAddToSelf(op_type, *args, **kwargs)

    def Const(self, array, blob_out=None, dtype=None):
        """A constant: ``ConstantFill`` for a Python bool, else a
        ``GivenTensor{Int,Int64,String,}Fill`` of ``np.array(array, dtype)``
        (Caffe2 0cdd09da6's choice by dtype; float64 and bool become float32)."""
        if isinstance(array, bool):
            return self.ConstantFill([], blob_out or 1, dtype=DataType.BOOL, value=array)
        array = np.array(array) if dtype is None else np.array(array, dtype=dtype)
        fill = {
            np.dtype(np.int32): "GivenTensorIntFill",
            np.dtype(np.int64): "GivenTensorInt64Fill",
        }
        op_type = (
            "GivenTensorStringFill"
            if array.dtype.kind in "SU"
            else fill.get(array.dtype, "GivenTensorFill")
        )
        values = array.flatten().tolist()
        return getattr(self, op_type)([], blob_out or 1, shape=array.shape, values=values)

    def Python(self, f, grad_f=None, python_func_type=None, pass_workspace=False,
               grad_output_indices=None, grad_input_indices=None):  # fmt: skip
        """``net.Python(f)(inputs, outputs)``: an op running a Python function
        (:mod:`caffe2rnn.core.python_op`)."""
        from .python_op import net_python  # it imports the operators

        return net_python(self, f, grad_f, python_func_type, pass_workspace,
                          grad_output_indices, grad_input_indices)  # fmt: skip

    # -- observers of the created net (runtime/observers.py; Caffe2 042e8ede4) --------
    def AddObserver(self, observer_type):
        """Attach a ``"TimeObserver"`` or ``"RunCountObserver"`` to this net as
        created in the current workspace; the observer."""
        return _workspace.C.add_observer_to_net(self._net.name, observer_type)

    def RemoveObserver(self, observer):
        _workspace.C.remove_observer_from_net(self._net.name, observer)

    def NumObservers(self):
        return _workspace.C.num_observers_on_net(self._net.name)

    def _CreateAndAddToSelf(self, op_type, inputs, outputs=None, **kwargs):
        """Append one operator; see the class docs for the naming rules.

        Returns None (no output), one BlobReference, or a tuple of them.
        """
        inputs = _RectifyInputOutput(inputs)
        for blob in inputs:
            if not self.BlobIsDefined(blob):
                if blob.Net() is self:
                    raise WorkspaceError(
                        "blob %s claims to come from net '%s' but the net does "
                        "not define it" % (blob, self.Name())
                    )
                self.AddExternalInput(blob)
        if outputs is None:
            outputs = self.NextName(prefix=op_type)
        elif type(outputs) is int:
            outputs = [self.NextName(prefix=op_type, output_id=i) for i in range(outputs)]
        outputs = _RectifyInputOutput(outputs, net=self)
        op = CreateOperator(op_type, inputs, outputs, **kwargs)
        if eras.named() is not None and _runs_as_era(op_type, eras.named()):
            # Built inside ``eras.use(...)``: the net runs that era's operators.
            eras.mark(self, eras.named())
        self._ExtendOps([op])
        tracebacks.record(self.Name(), len(self._net.op) - 1)
        if len(op.output) == 0:
            return None
        if len(op.output) == 1:
            return BlobReference(op.output[0], self)
        return tuple(BlobReference(o, self) for o in op.output)

    def AddGradientOperators(self, ys: Any, skip: int = 0) -> dict[str, Any]:
        """Append the backward pass of ``op[skip:]`` for ``ys``; return its map.

        ``ys`` is a list of blobs (their gradients are filled with ones) or a
        dict blob → gradient blob; see ``GradientRegistry.GetBackwardPass``.
        A net marked with an era (:func:`caffe2rnn.eras.mark`) is
        differentiated under that era's rules.
        """
        # A net built in an era gets its gradients by that era's rules (unless
        # the caller names one).
        era = eras.named() or eras.of(self)
        with eras.use(era) if era is not None else contextlib.nullcontext():
            grad_ops, input_to_grad = GradientRegistry.GetBackwardPass(self._net.op[skip:], ys)
        if era is not None and any(_runs_as_era(op.type, era) for op in grad_ops):
            # gradient ops of that era's form (E4's ReluGradient([X, Y, dY])) run as its ops
            eras.mark(self, era)
        if _workspace.IsImmediate():  # made without CreateOperator, so run them here
            for op in grad_ops:
                _workspace.RunOperatorImmediate(op)
        self._ExtendOps(grad_ops)
        return input_to_grad

    def AppendNet(self, net):
        """Append ``net``'s ops (copies) to this net; return this net.

        ``net``'s external inputs become this net's unless this net already
        has them or computes them; its external outputs are added (once each).
        """
        if not isinstance(net, Net):
            raise BuildError("AppendNet takes a core.Net, got %s" % type(net).__name__)
        if self._recreate_lookup_tables:
            self._RecreateLookupTables()
        for name in net.Proto().external_input:
            if name not in self._external_input_map and name not in self._op_outputs:
                self._net.external_input.append(name)
                self._external_input_map.add(name)
        self._net.external_output.extend(
            [o for o in net.Proto().external_output if o not in self._net.external_output]
        )
        self._ExtendOps(net.Proto().op)
        return self

    def ClonePartial(self, name, inputs, outputs, remap_funcs=None):
        """A net computing ``outputs`` from ``inputs`` with only the ops needed.

        Returns ``(new_net, [BlobReference of each output in new_net])``. See
        :func:`caffe2rnn.core.partial_clone.clone_partial`.
        """
        from .partial_clone import clone_partial  # uses Clone; keeps this file short

        return clone_partial(self, name, inputs, outputs, remap_funcs)

    def Clone(self, name, blob_remap=None, op_id_mask=None, remap_funcs=None, keep_schema=True):
        """A new Net (uniquely renamed from ``name``) with some ops and renamed blobs.

        ``op_id_mask`` lists the op indices to keep (default: all, in order);
        ``blob_remap`` renames blobs of ops and of external inputs/outputs;
        ``remap_funcs[op_type](op, name + '/')`` may edit each kept op;
        ``keep_schema`` also carries the (input/output) records over.
        """
        blob_remap = blob_remap or {}
        remap_funcs = remap_funcs or {}
        if op_id_mask is None:
            op_id_mask = range(len(self._net.op))

        def remap(names):
            renamed = [str(blob_remap.get(n, n)) for n in names]
            del names[:]
            names.extend(renamed)

        proto = caffe2_pb2.NetDef()
        proto.CopyFrom(self._net)
        proto.name = name
        del proto.op[:]
        for op_id in op_id_mask:
            op = proto.op.add()
            op.CopyFrom(self._net.op[op_id])
            remap(op.input)
            remap(op.output)
            if op.type in remap_funcs:
                remap_funcs[op.type](op, (name + "/") if name else "")
        remap(proto.external_input)
        remap(proto.external_output)
        new_net = Net(proto)
        if keep_schema:
            new_net._input_record = self._input_record
            new_net._output_record = self._output_record
        for key, values in self._attr_dict.items():
            new_net._attr_dict[key].extend(values)
        if eras.of(self) is not None:  # the copy's ops are of the same era
            eras.mark(new_net, eras.of(self))
        return new_net

"""``NetInstance``: a NetDef instantiated in a workspace, ready to run.

Caffe2's ``SimpleNet``: operators are created in order (each binding its blobs)
and run one after the other. Every net type this project meets (unset,
``simple``, ``dag``, ``async_simple``, ``rnn``, ``prof_dag``) runs sequentially,
which is what their results are defined by.

A net instance carries the *era* it was created with (None: today's
operators; see :mod:`caffe2rnn.eras`). Each operator is created as the class
the registry gives for that era (today's, or a variant an older era
registered) and is handed the era, so an era-dependent operator such as
``RecurrentNetwork`` keeps the behaviour it was created with for every run
and passes it on to the step nets it instantiates.
"""

from ..errors import EnforceNotMet, WorkspaceError, in_family, op_context
from . import observers as _observers
from . import registry

SEQUENTIAL_NET_TYPES = frozenset(
    ["", "simple", "dag", "async_simple", "async_dag", "rnn", "prof_dag", "async_scheduling"]
)


def with_context(exc, context):
    """``exc`` with ``context`` (``net 'n', op #3 FC``) in its message, as a
    caffe2rnn exception that keeps the built-in type (see
    :func:`caffe2rnn.errors.in_family`); raise it ``from exc``."""
    return in_family(exc, "%s: %s" % (context, exc))


def sanity_check(netdef):
    """The checks Caffe2's NetBase constructor made."""
    if netdef.type not in SEQUENTIAL_NET_TYPES:
        raise WorkspaceError("net '%s': unknown net type '%s'" % (netdef.name, netdef.type))
    known = set(netdef.external_input)
    if netdef.external_input:
        for op in netdef.op:
            for name in op.input:
                if name not in known:
                    raise WorkspaceError(
                        "op %s: Source for input %s is unknown for net %s, "
                        "operator %s" % (op.type, name, netdef.name, op.type)
                    )
            known.update(op.output)
    else:
        for op in netdef.op:
            known.update(op.output)
    for name in netdef.external_output:
        if name not in known:
            raise WorkspaceError(
                "Some of the blobs are declared as output but never produced by "
                "the net %s, the first one is %s" % (netdef.name, name)
            )


def create_operator(op_def, ws, index=None, net_name=None, era=None, checked=False, ops=None):
    """Instantiate one OperatorDef in ``ws`` (checks device, type and schema)
    as the class of ``era`` (None: today's operators), and hand it the era.
    ``checked``: the def passed these checks before (see :class:`NetInstance`).
    ``ops``: the net's ops, to number ``op_def`` in a message as written
    (:func:`~caffe2rnn.errors.op_context`)."""
    try:
        if checked:
            return registry.operator_class(op_def.type, era)(op_def, ws, era)
        if op_def.HasField("device_option") and op_def.device_option.device_type != 0:
            raise EnforceNotMet(
                "device type %d (CUDA or other) is not supported; "
                "caffe2rnn runs on the CPU" % op_def.device_option.device_type
            )
        cls = registry.operator_class(op_def.type, era)
        problem = cls.schema.verify(op_def)
        if problem:
            raise EnforceNotMet("Operator def did not pass schema checking: " + problem)
        return cls(op_def, ws, era)
    except Exception as exc:
        raise with_context(exc, op_context(op_def, index, net_name, ops)) from exc


class NetInstance:
    """A created net: bound operators that :meth:`run` executes in order."""

    def __init__(self, netdef, ws, era=None, checked=False):
        """Bind ``netdef``'s operators in ``ws``. ``checked``: this very NetDef
        object was instantiated before, with Caffe2's checks (NetBase's and
        each op's device and schema), and has not changed since -- a recurrent
        op's step net, instantiated once per timestep: the checks are not
        repeated (at T = 10,000 they were a third of creating the step nets)."""
        if not checked:
            sanity_check(netdef)
        self.name = netdef.name
        self.proto = netdef
        self.ws = ws
        self.era = era
        before = set(ws.local_blob_names())
        self.ops = []
        try:
            for i, op in enumerate(netdef.op):
                self.ops.append(create_operator(op, ws, i, self.name, era, checked, netdef.op))
        except Exception:
            # Nothing half-written: drop the blobs this attempt created.
            for name in set(ws.local_blob_names()) - before:
                ws.remove_blob(name)
            ws.last_failed_op_net_position = len(self.ops)
            raise

    #: observers attached with ``Net.AddObserver`` (:mod:`.observers`)
    observers = ()
    #: the rollback journal's copies of the last run, reused by the next
    #: (:mod:`.rollback`); None before the first run
    journal_spares = None
    #: the blobs the journal may swap instead of copying
    #: (:func:`.rollback.swappable`); None before the first ``RunNet``
    journal_swaps = None

    def run(self):
        index = 0
        try:
            if self.observers:  # the same loop, each op observed
                for index in _observers.run_ops_observed(self):  # noqa: B007
                    pass
            else:
                for index, op in enumerate(self.ops):  # noqa: B007 (read in except)
                    op.run()
        except Exception as exc:
            self.ws.last_failed_op_net_position = index  # Caffe2's Workspace field
            where = op_context(self.proto.op[index], index, self.name, self.proto.op)
            raise with_context(exc, where) from exc
        return True

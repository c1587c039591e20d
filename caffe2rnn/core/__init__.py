"""``caffe2.python.core``: blob references, operators, nets, SSA, gradients.

This is the model-building half of Caffe2: nothing here runs anything. A
:class:`Net` collects ``OperatorDef`` protos; :class:`GradientRegistry`
writes their backward ops; :func:`get_ssa` numbers blob versions. Running
is :mod:`caffe2rnn.workspace`'s job.
"""

from .. import scope  # noqa: F401
from ..operators import registry as _registry
from ..proto import caffe2_pb2  # noqa: F401
from ..scope import CurrentNameScope, DeviceScope, NameScope  # noqa: F401
from .blob import BlobReference, GradientSlice, ScopedBlobReference, ScopedName  # noqa: F401
from .devices import InferBlobDevices  # noqa: F401
from .gradients import IR, GetIndexFromGradientList, GradientRegistry  # noqa: F401
from .net import Net  # noqa: F401
from .operator import CreateOperator, DataType, DeviceOption, _RectifyInputOutput  # noqa: F401
from .ssa import get_op_ids_in_path, get_output_producers, get_ssa, get_undefined_blobs  # noqa: F401


def IsOperator(op_type):
    """True if ``op_type`` names a registered operator."""
    return _registry.is_registered(op_type)


def IsOperatorWithEngine(op_type, engine):
    return _registry.is_registered(op_type + "_ENGINE_" + engine)


def RefreshRegisteredOperators():
    """Caffe2 re-read the C++ registry here; ours is always current."""
    return _registry.registered_operators()

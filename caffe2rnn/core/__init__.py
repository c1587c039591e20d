"""``caffe2.python.core``: blob references, operators, nets, SSA, gradients, plans.

This is the model-building half of Caffe2: nothing here runs anything (but
see immediate mode in :mod:`caffe2rnn.workspace`). A :class:`Net` collects
``OperatorDef`` protos; :class:`GradientRegistry` writes their backward ops;
:func:`get_ssa` numbers blob versions; :class:`Plan` and
:class:`ExecutionStep` describe loops over nets. Running is
:mod:`caffe2rnn.workspace`'s job.
"""

from .. import scope  # noqa: F401
from .. import workspace as _workspace
from ..errors import WrongTypeError
from ..proto import caffe2_pb2  # noqa: F401
from ..runtime import registry as _registry
from ..scope import CurrentNameScope, DeviceScope, NameScope  # noqa: F401
from .blob import BlobReference, GradientSlice, ScopedBlobReference, ScopedName  # noqa: F401
from .devices import InferBlobDevices  # noqa: F401
from .gradients import IR, GetIndexFromGradientList, GradientRegistry  # noqa: F401
from .net import Net  # noqa: F401
from .operator import CreateOperator, DataType, DeviceOption, _RectifyInputOutput  # noqa: F401
from .plan import (  # noqa: F401
    ExecutionStep,
    Plan,
    add_nets_in_order,
    execution_step,
    get_net_name,
    scoped_execution_step,
    to_execution_step,
)
from .python_op import CreatePythonOperator  # noqa: F401
from .ssa import get_op_ids_in_path, get_output_producers, get_ssa, get_undefined_blobs  # noqa: F401

# Engine preferences (Caffe2 042e8ede4 core.py; caffe2rnn has one engine per op type).
SetPerOpEnginePref = _registry.set_per_op_engine_pref
SetGlobalEnginePref = _registry.set_global_engine_pref
SetEnginePref = _registry.set_engine_pref
SetOpEnginePref = _registry.set_op_engine_pref


def IsOperator(op_type):
    """True if ``op_type`` names a registered operator."""
    return _registry.is_registered(op_type)


def IsOperatorWithEngine(op_type, engine):
    """True if ``op_type`` is registered for ``engine``: Caffe2's ``OpRegistryKey``
    (operator.cc at 042e8ede4) is the op type itself for the engines ``""`` and
    ``"DEFAULT"``, else ``<op>_ENGINE_<engine>`` (caffe2rnn registers no engines)."""
    if engine in ("", "DEFAULT"):
        return _registry.is_registered(op_type)
    return _registry.is_registered(op_type + "_ENGINE_" + engine)


def device_option_equal(opt1, opt2, ignore_node_name=True, ignore_random_seed=True):
    """E6's comparison of two DeviceOptions: equal when both are for the CPU (a
    ``device_type`` of 0), or for the same GPU; ``node_name`` and
    ``random_seed`` count only when asked; a missing option equals only a
    missing one."""
    if not opt1 or not opt2:
        return opt1 == opt2
    if not ignore_node_name and opt1.node_name != opt2.node_name:
        return False
    if not ignore_random_seed and opt1.random_seed != opt2.random_seed:
        return False
    if not opt1.device_type or not opt2.device_type:
        return not opt1.device_type and not opt2.device_type
    return opt1.cuda_gpu_id == opt2.cuda_gpu_id


def RefreshRegisteredOperators():
    """Caffe2 re-read the C++ registry here; ours is always current."""
    return _registry.registered_operators()


_global_init_args = []


def GlobalInit(args):
    """Remember ``args`` (Caffe2 also parsed them as C++ flags; none apply here)."""
    _global_init_args[:] = list(args)
    _workspace.GlobalInit(args)


def GetGlobalInitArgs():
    return list(_global_init_args)


def output_to_list(op_output):
    """An op's result as a list: ``[ref]`` for one BlobReference, else ``list(...)``."""
    if isinstance(op_output, BlobReference):
        return [op_output]
    if not isinstance(op_output, (list, tuple)):
        raise WrongTypeError(
            "output_to_list takes a BlobReference, list or tuple, got %r" % (op_output,)
        )
    return list(op_output)

"""Creating ``OperatorDef`` protos: ``CreateOperator`` and its helpers."""

from .. import scope as _scope
from .. import workspace as _workspace
from ..proto import caffe2_pb2
from ..utils import MakeArgument
from .blob import BlobReference, ScopedBlobReference


class DataType:
    """``TensorProto.DataType`` values by name: ``DataType.INT32 == 2``."""


for _name, _value in caffe2_pb2.TensorProto.DataType.items():
    setattr(DataType, _name, _value)


def DeviceOption(device_type, cuda_gpu_id=0, random_seed=None):
    """A ``DeviceOption`` with ``device_type``/``cuda_gpu_id`` set (present)."""
    option = caffe2_pb2.DeviceOption()
    option.device_type = device_type
    option.cuda_gpu_id = cuda_gpu_id
    if random_seed is not None:
        option.random_seed = random_seed
    return option


def _RectifyInputOutput(blobs, net=None):
    """Turn the ways users name blobs into a list of BlobReferences.

    Plain strings get the current name scope; BlobReferences are kept as they
    are (they were scoped when made).
    """
    if isinstance(blobs, (bytes, str)):
        return [ScopedBlobReference(blobs, net=net)]
    if type(blobs) is BlobReference:
        return [blobs]
    if type(blobs) in (list, tuple):
        rectified = []
        for i, blob in enumerate(blobs):
            if isinstance(blob, (bytes, str)):
                rectified.append(ScopedBlobReference(blob, net=net))
            elif type(blob) is BlobReference:
                rectified.append(blob)
            else:
                raise TypeError(f"I/O blob #{i} of unsupported type: {blob} of type {type(blob)}")
        return rectified
    raise TypeError("Unknown input/output type: %s of type %s." % (str(blobs), type(blobs)))


def CreateOperator(
    operator_type,
    inputs,
    outputs,
    name="",
    control_input=None,
    device_option=None,
    arg=None,
    engine=None,
    **kwargs,
):
    """Build an ``OperatorDef``; it is not added to a net.

    ``name`` is always set (so it prints as ``name: ""``); every keyword other
    than the named parameters and ``random_seed`` becomes an ``Argument``, in
    call-site order. Nothing runs, except in immediate mode
    (``workspace.StartImmediate``), where the op also runs at once in the
    immediate workspace, and a failure there raises here.
    """
    operator = caffe2_pb2.OperatorDef()
    operator.type = operator_type
    operator.name = name
    operator.input.extend(str(i) for i in _RectifyInputOutput(inputs))
    operator.output.extend(str(o) for o in _RectifyInputOutput(outputs))
    if control_input:
        operator.control_input.extend(str(i) for i in _RectifyInputOutput(control_input))
    if device_option is not None:
        operator.device_option.CopyFrom(device_option)
    elif _scope.CurrentDeviceScope() is not None:
        operator.device_option.CopyFrom(_scope.CurrentDeviceScope())
    if engine is not None:
        operator.engine = engine
    if "random_seed" in kwargs:
        operator.device_option.random_seed = kwargs.pop("random_seed")
    if arg is not None:
        operator.arg.extend(arg)
    for key, value in kwargs.items():
        operator.arg.add().CopyFrom(MakeArgument(key, value))
    if _workspace.IsImmediate():
        _workspace.RunOperatorImmediate(operator)
    return operator

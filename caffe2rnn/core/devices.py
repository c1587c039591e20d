"""``InferBlobDevices``: which device each blob of a net is made on.

Caffe2's optimizers add each parameter's update ops under the device of the
op that *creates* the parameter, so that on a multi-GPU model every update
runs where its parameter lives. caffe2rnn runs on the CPU only, but the
device options still end up in the emitted ops (``device_option {}`` on every
optimizer op), so the rule is kept.
"""

from ..proto import caffe2_pb2


def InferBlobDevices(net):
    """``{blob name: DeviceOption}`` from the ops that write each blob.

    An op without a device option gives an empty ``DeviceOption`` (the CPU);
    a blob written by several ops gets the last one's (Caffe2 at E5,
    0cdd09da6).
    """
    mapping = {}
    for op in net.Proto().op:
        device = caffe2_pb2.DeviceOption()
        device.CopyFrom(op.device_option)
        for name in op.output:
            mapping[name] = device
    return mapping

"""The execution side of caffe2rnn: blobs, workspaces, operators, nets.

This is what Caffe2 did in C++ (``caffe2/core``): a :class:`Workspace` maps
names to :class:`Blob` containers; instantiating a NetDef binds each operator to
its input/output containers once; running a net runs the bound operators in
order. Python users normally go through :mod:`caffe2rnn.workspace` instead.
"""

from .blob import Blob
from .net import NetInstance
from .workspace import Workspace

__all__ = ["Blob", "Workspace", "NetInstance"]

"""Compile ``caffe2.proto`` into ``caffe2_pb2.py`` with protoc.

Caffe2 generated its Python protobuf module at build time; so do we. The
compiler comes from the ``grpcio-tools`` wheel (``grpc_tools.protoc``), which
pip installs everywhere, so no system ``protoc`` is needed. ``setup.py`` calls
:func:`generate`; importing :mod:`caffe2rnn.proto` calls it too when the
generated module is missing or older than the ``.proto`` (a fresh checkout).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO = os.path.join(HERE, "caffe2.proto")
PB2 = os.path.join(HERE, "caffe2_pb2.py")


def is_stale():
    """True when ``caffe2_pb2.py`` is absent or older than ``caffe2.proto``."""
    return not os.path.exists(PB2) or os.path.getmtime(PB2) < os.path.getmtime(PROTO)


def generate(force=False):
    """Run protoc on ``caffe2.proto``; return the path of ``caffe2_pb2.py``."""
    if not force and not is_stale():
        return PB2
    try:
        from grpc_tools import protoc
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise ImportError(
            "caffe2rnn needs protoc to generate caffe2rnn/proto/caffe2_pb2.py; "
            "install it with `pip install grpcio-tools` (or run `make test`, "
            "which installs everything)"
        ) from exc
    include = os.path.join(os.path.dirname(protoc.__file__), "_proto")
    status = protoc.main(
        ["grpc_tools.protoc", "-I" + HERE, "-I" + include, "--python_out=" + HERE, PROTO]
    )
    if status != 0:
        raise RuntimeError("protoc failed on %s (exit status %d)" % (PROTO, status))
    return PB2


if __name__ == "__main__":
    print(generate(force="--force" in sys.argv))

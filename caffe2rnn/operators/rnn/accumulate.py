"""Gradients arriving from outside the recurrent op, added into ``<state>_grad``.

The op's outputs alias its state tensors (``hidden_all`` = states[1:],
``hidden_last`` = states[T:]), so a loss downstream gives gradients for those
rows. The gradient op adds them into the states gradient, which the backward
step net reads through its links:

* ``_all`` (alias offset +1): before backward step t, ``states_grad[t + 1] +=
  GO_all[t]``, done by an ``rnn_internal_accumulate_gradient_input`` op
  prepended to the backward step net;
* ``_last`` (alias offset -1): ``states_grad[T] += GO_last`` once, before the
  backward loop.

Which alias is which output is found by matching ``alias_src`` with the state
and the alias index with an entry of ``outputs_with_grads`` (Caffe2 relied on
alias i being output i).
"""

from dataclasses import dataclass

from ... import kernels
from ...errors import ArgumentError, ShapeError
from ...kernels import checked
from ...proto import caffe2_pb2
from ...runtime.registry import register
from ...utils import MakeArgument
from ..base import Operator
from ..bound_call import BoundCall
from .links import read_timestep
from .step_net import prepend_ops


@dataclass
class RecurrentGradient:
    """The gradient ``grad`` of state tensor ``param`` and its external sources."""

    param: str
    grad: str
    external_grad: str = ""
    last_external_grad: str = ""
    offset: int = 1


@register(
    "rnn_internal_accumulate_gradient_input", inputs=3, outputs=(1, None), enforce_inplace=[(2, 0)]
)
class AccumulateInputGradientOp(Operator):
    """``g[t + offset] += og[t]``: inputs (timestep, og, g), output g (in place).

    ``rnn_dependency.<blob>`` arguments name linked blobs for an executor's
    ordering; running sequentially, they need nothing.
    """

    def setup(self):
        self.offset = self.args.single("offset", -1)
        self.check(
            self.offset >= 0, "Offset not set (argument 'offset' must be >= 0)", ArgumentError
        )
        self.where = "accumulating '%s' into '%s'" % (self.def_.input[1], self.def_.output[0])

    def run(self):
        t = read_timestep(self, 0, self.where)
        g = self.input(2)
        checked.accumulate_input_gradient(g, self.input(1), t, self.offset, self.where)

    def bind(self):
        impl = kernels.current()
        g, og, t = self.input(2), self.input(1), read_timestep(self, 0)
        row = g.size // g.shape[0]  # the rows the kernel touches (run() checked them)
        dst = g.reshape(-1)[(t + self.offset) * row : (t + self.offset + 1) * row]
        src = og.reshape(-1)[t * row : (t + 1) * row]
        kernel = impl.accumulate_input_gradient
        args = (g, og, t, self.offset)
        name = "accumulate_input_gradient"
        return [BoundCall.kernel(kernel, name, args, (src, dst), (dst,), impl.releases_gil, row)]


def accumulate_op_def(rg, timestep, links, device_option):
    """The ``rnn_internal_accumulate_gradient_input`` op for one state gradient."""
    op = caffe2_pb2.OperatorDef()
    op.type = "rnn_internal_accumulate_gradient_input"
    op.input.extend([timestep, rg.external_grad, rg.grad])
    op.output.append(rg.grad)
    for link in links:
        if link.external == rg.grad:
            op.arg.add().CopyFrom(MakeArgument("rnn_dependency." + link.internal, link.internal))
    op.device_option.CopyFrom(device_option)
    op.arg.add().CopyFrom(MakeArgument("offset", rg.offset))
    return op


class AccumulateOpsAndLast:
    """Today's (042e8ede4): a prepended op per ``_all`` gradient, a one-off add per ``_last``."""

    def prepare(self, step_net, recurrent_gradients, links, timestep, device_option):
        ops = []
        for rg in recurrent_gradients:
            if rg.external_grad:
                ops.append(accumulate_op_def(rg, timestep, links, device_option))
                step_net.external_input.extend([rg.external_grad, rg.grad])
        prepend_ops(ops, step_net)

    def before_backward(self, ws, recurrent_gradients):
        for rg in recurrent_gradients:
            if not rg.last_external_grad:
                continue
            g = ws.blob(rg.grad).value
            last = ws.blob(rg.last_external_grad).value
            # Caffe2's checks (CAFFE_ENFORCE_EQ of dims 1 and 2 and of the sizes):
            # any shape (1, N, D, ...) holding one row's N * D values is accepted.
            if last.ndim < 3 or last.shape[1:3] != g.shape[1:3] or last.size != g[-1].size:
                raise ShapeError(
                    "gradient '%s' of a _last output has shape %s; "
                    "expected (1, %d, %d) like a row of '%s'"
                    % (rg.last_external_grad, last.shape, g.shape[1], g.shape[2], rg.grad)
                )
            checked.inplace_add(
                g[-1],
                last.reshape(g[-1].shape),
                "adding '%s' into the last row of '%s'" % (rg.last_external_grad, rg.grad),
            )

"""Parameter gradients: summed over timesteps inside the backward step net.

A parameter (an FC weight) is used at every timestep, so its gradient is the
sum of the per-step gradients the backward cell computes. Since ``0c2c95309``
(2017-06) Caffe2 does it in the net itself:

1. the gradient output ``<param>_grad`` is zeroed before the backward loop;
2. in the backward step net, the blob the cell writes the step's gradient to
   (``param_grads[i]`` if given, e.g. an internal blob when the cell starts
   with a pass-through op, else the output name) is renamed
   ``<name>_tmpstep`` everywhere;
3. ``Sum([<param>_grad, <name>_tmpstep]) -> <param>_grad`` is appended.

Earlier eras accumulated into a private ``_acc`` blob and swapped it in at the
end; that is another policy with the same two hooks.
"""

from dataclasses import dataclass

from ...errors import DTypeError
from .step_net import rename_op_input_output


@dataclass(frozen=True)
class Param:
    """Parameter blob ``param``, gradient output ``grad``, per-step ``cell_gradient``."""

    param: str
    grad: str
    cell_gradient: str


class TmpstepSum:
    """Seed 004: ``_tmpstep`` rename plus an appended in-place ``Sum`` per param."""

    def param(self, param, grad, cell_grad_blob, step_net):
        tmp = cell_grad_blob + "_tmpstep"
        rename_op_input_output(step_net, cell_grad_blob, tmp)
        return Param(param, grad, tmp)

    def prepare(self, step_net, params, device_option):
        for p in params:
            op = step_net.op.add()
            op.type = "Sum"
            op.input.extend([p.grad, p.cell_gradient])
            op.output.append(p.grad)
            op.device_option.CopyFrom(device_option)
            step_net.external_input.append(p.grad)

    def before_backward(self, ws, params):
        for p in params:
            value = ws.blob(p.param).value
            if not hasattr(value, "dtype"):
                raise DTypeError("parameter '%s' is not a tensor" % p.param)
            ws.blob(p.grad).resize(value.shape, value.dtype).fill(0)

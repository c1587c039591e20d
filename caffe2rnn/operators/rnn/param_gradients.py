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
end; that is another policy with the same hooks (``param``, ``prepare``,
``before_backward``, ``after_backward``).

:class:`BatchedOverTime` is a caffe2rnn option, not Caffe2's step-net
semantics (op argument ``caffe2rnn_batch_param_gradients=1``, set with
:func:`caffe2rnn.recurrent.set_batch_param_gradients`): an FC's weight and bias
gradients are computed after the loop as one GEMM (and one GEMV) over all T
steps, as cuDNN's RNN did, instead of T small ones and T Sums. The result
equals the step-by-step sum up to float rounding (the terms are added in
another order); every other gradient is unchanged, bit for bit.
"""

import math
from dataclasses import dataclass

import numpy as np

from ...errors import DTypeError, ShapeError
from ...runtime.arguments import ArgumentHelper
from .step_net import rename_op_input_output


@dataclass(frozen=True)
class Param:
    """Parameter blob ``param``, gradient output ``grad``, per-step ``cell_gradient``."""

    param: str
    grad: str
    cell_gradient: str


class TmpstepSum:
    """Today's (042e8ede4): ``_tmpstep`` rename plus an appended in-place ``Sum`` per param."""

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

    def after_backward(self, ws, seq_len):
        """Nothing: the step nets' Sums did the accumulation."""


@dataclass(frozen=True)
class BatchedFC:
    """An FCGradient of the backward step net whose dW and db are formed
    after the loop from every step's X and dY at once.

    X (``x``) and dY (``dy``) are link views, window 1, so after the loop row
    ``t + offset`` of their external tensors holds what step t read: stacked,
    they are the ``(T·M) × K`` and ``(T·M) × N`` matrices of one GEMM.
    """

    weight: Param
    bias: Param
    x: object  # Link
    dy: object  # Link
    axis: int  # FCGradient's axis (flattening of one step's X)


class BatchedOverTime(TmpstepSum):
    """Parameter gradients of FCs batched over time; the rest as :class:`TmpstepSum`.

    An FCGradient is batched when all of this holds (otherwise its gradients
    are summed step by step, and the result is exactly Caffe2's):

    * its dW and db are the per-step gradients of two parameters;
    * its X is a link of window 1 that no backward op writes;
    * its dY is a backward link of window 1, the only link into its tensor,
      and no op after the FCGradient in the step net writes it.

    The op is then replaced by ``rnn_internal_fc_input_gradient`` (its dX
    alone, the same call) or dropped when it has no dX output.
    """

    def __init__(self, links):
        self.links = list(links)
        self.batched = []  # the BatchedFC of each batched FCGradient

    def prepare(self, step_net, params, device_option):
        by_cell_gradient = {p.cell_gradient: p for p in params}
        batched_params, dropped = set(), []
        for j, op in enumerate(step_net.op):
            entry = self._batchable(step_net, j, op, by_cell_gradient)
            if entry is None:
                continue
            self.batched.append(entry)
            batched_params.update((entry.weight.grad, entry.bias.grad))
            if len(op.output) == 3:  # keep its dX
                op.type = "rnn_internal_fc_input_gradient"
                del op.output[:2]
            else:
                dropped.append(j)
        for j in reversed(dropped):
            del step_net.op[j]
        summed = [p for p in params if p.grad not in batched_params]
        super().prepare(step_net, summed, device_option)

    def _batchable(self, step_net, j, op, by_cell_gradient):
        if op.type != "FCGradient" or len(op.output) < 2:
            return None
        weight, bias = by_cell_gradient.get(op.output[0]), by_cell_gradient.get(op.output[1])
        if weight is None or bias is None:
            return None
        x, dy = self._link(op.input[0]), self._link(op.input[2])
        if x is None or dy is None:
            return None
        if sum(link.external == dy.external for link in self.links) != 1:
            return None
        if weight.grad in self._batched_grads() or bias.grad in self._batched_grads():
            return None  # a parameter used twice: its terms must add up, not overwrite
        # What each op writes (the link ops make the views; they write nothing else).
        writes = [
            set() if o.type == "rnn_internal_apply_link" else set(o.output) for o in step_net.op
        ]
        if any(x.internal in w or x.external in w for w in writes):
            return None
        if any(dy.external in w for w in writes) or any(dy.internal in w for w in writes[j + 1 :]):
            return None
        args = ArgumentHelper(op)
        axis = args.value("axis", 1)
        if args.has("axis_w") or not isinstance(axis, int):
            return None  # FC itself reports a malformed axis
        return BatchedFC(weight, bias, x, dy, axis)

    def _batched_grads(self):
        return {e.weight.grad for e in self.batched} | {e.bias.grad for e in self.batched}

    def _link(self, name):
        found = [link for link in self.links if link.internal == name]
        if len(found) != 1 or found[0].window != 1:
            return None
        return found[0]

    def after_backward(self, ws, seq_len):
        """Write each batched dW = Σ_t dY₂(t)ᵀ · X₂(t) and db = Σ_t 1ᵀ · dY₂(t)
        from the rows the loop left in X's and dY's tensors."""
        for entry in self.batched:
            x = ws.blob(entry.x.external).value[entry.x.offset : entry.x.offset + seq_len]
            dy = ws.blob(entry.dy.external).value[entry.dy.offset : entry.dy.offset + seq_len]
            step_shape = x.shape[1:] if x.ndim > 1 else ()
            axis = entry.axis + len(step_shape) + 1 if entry.axis < 0 else entry.axis
            m = seq_len * math.prod(step_shape[: max(axis - 1, 0)])
            w = ws.blob(entry.weight.param).value
            dw = ws.blob(entry.weight.grad).value
            db = ws.blob(entry.bias.grad).value
            if m == 0 or x.size % m or dy.size % m or (x.size // m) * (dy.size // m) != w.size:
                raise ShapeError(
                    "batched gradient of '%s': X ('%s', %s) and dY ('%s', %s) over %d steps "
                    "do not make a %s weight gradient"
                    % (
                        entry.weight.param,
                        entry.x.external,
                        x.shape,
                        entry.dy.external,
                        dy.shape,
                        seq_len,
                        w.shape,
                    )
                )
            x2, dy2 = x.reshape(m, -1), dy.reshape(m, -1)
            np.matmul(dy2.T, x2, out=dw.reshape(dy2.shape[1], x2.shape[1]))
            np.dot(np.ones(m, dy2.dtype), dy2, out=db)

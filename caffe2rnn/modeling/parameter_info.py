"""What a model knows about one parameter (Caffe2 ``modeling/parameter_info.py``).

``ModelHelper`` keeps one :class:`ParameterInfo` per parameter blob: the blob,
its shape (from ``create_param`` or read off its fill op) and, once
``AddGradientOperators`` ran, its gradient. Optimizers walk these
(``GetOptimizationParamInfo``) to pick a dense or sparse update.
"""

import numpy as np

from .. import core
from ..errors import ModelError


class ParameterTags:
    """Tags of ``create_param``/``AddParameter``: where a parameter is listed."""

    BIAS = "BIAS"
    WEIGHT = "WEIGHT"
    #: Computed (not trained) parameters, e.g. a frozen bias: listed in
    #: ``_computed_params`` instead of ``params``, so they get no gradient step.
    COMPUTED_PARAM = "COMPUTED_PARAM"


class ParameterType:
    """How a parameter's gradient arrives: a full tensor or a ``GradientSlice``."""

    DENSE = "dense"
    SPARSE = "sparse"


class ParameterInfo:
    """One parameter blob: shape, size, gradient, and how to re-create it.

    ``length`` is at least 1 (Caffe2 stored ``max(1, length)``); ``size`` is
    the element count of ``shape`` (None when the shape is unknown).
    ``blob_copy`` maps a ``DataType`` to a copy of the blob in that precision.
    """

    def __init__(
        self, param_id, param, key=None, shape=None, length=None, grad=None, blob_copy=None
    ):
        if not isinstance(param, core.BlobReference):
            raise TypeError("ParameterInfo takes a BlobReference, got %r" % (param,))
        self.param_id = param_id
        self.blob = param
        self.name = str(param)
        self.key = key
        self.shape = shape
        self.size = None if shape is None else int(np.prod(shape))
        self.length = max(1, length if length is not None else 1)
        self.grad = grad
        self.blob_copy = blob_copy
        self._cloned_init_net = None

    def grad_type(self):
        """``ParameterType.SPARSE`` for a ``GradientSlice``, DENSE otherwise
        (None before the gradient exists)."""
        if self.grad is None:
            return None
        if isinstance(self.grad, core.GradientSlice):
            return ParameterType.SPARSE
        return ParameterType.DENSE

    @property
    def optimizer(self):
        """The optimizer of this parameter alone (E6's ``UseOptimizer``), or None."""
        return getattr(self, "_optimizer", None)

    @optimizer.setter
    def optimizer(self, value):
        if self.optimizer is not None:  # Caffe2 asserted it
            raise ModelError("optimizer has already been set for parameter %s" % self.name)
        self._optimizer = value

    def cloned_init_net(self):
        """``(net, blob)``: the part of the init net that creates this blob alone."""
        if self._cloned_init_net is None:
            init_net, outputs = self.blob.Net().ClonePartial(
                "param_%s_%s_init" % (self.param_id, self.name), inputs=[], outputs=[self.blob]
            )
            self._cloned_init_net = (init_net, outputs[0])
        return self._cloned_init_net

    def __str__(self):
        return self.name

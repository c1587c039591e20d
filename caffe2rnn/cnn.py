"""``caffe2.python.cnn``: ``CNNModelHelper``, the model helper the RNN seeds use.

E3 ``recurrent.LSTM`` builds its step model as
``CNNModelHelper(name='lstm_cell', param_model=model)`` and calls
``step_model.FC(hidden_t_prev, s('gates_t'), dim_in, 4 * dim_out, axis=2)``.
What that FC op looks like depends on the era (``eras.current()``):

* E0-E4 (``brew_argument_leakage`` off): the helper methods pass their
  keywords straight to the op: the FC gets only ``axis: 2``; ``Transpose``
  and ``Softmax`` get ``engine: "CUDNN"`` when ``use_cudnn``; ``Concat`` gets
  ``order``.
* E5/E6: ``CNNModelHelper`` is a deprecated thin wrapper over ``ModelHelper``
  + :mod:`brew`, with ``order``/``use_cudnn``/``cudnn_exhaustive_search`` as
  the model's ``arg_scope`` — which brew copies into the FC's arguments.

The era is read when a method is called, like every other era policy.

Every method of Caffe2's E5/E6 ``CNNModelHelper`` (cnn.py at 0cdd09da6 and
042e8ede4: the same 36) is here and calls the ``brew`` helper Caffe2's called,
with the model's ``order``, ``use_cudnn``, ``cudnn_exhaustive_search`` and
``ws_nbytes_limit`` where Caffe2 passed them — so the parameters are created
where Caffe2 created them (``Conv``: ``<out>_w`` and ``<out>_b`` in
``param_init_net``; ``Iter``: an int64 counter there). A method whose operator
caffe2rnn does not implement (``SpatialBN``, ``ConvTranspose``, ``PackedFC``,
``MaxPoolWithIndex``...) exists and raises an
:class:`~caffe2rnn.errors.UnknownOperatorError` naming the operator, leaving
the model as it was (:mod:`caffe2rnn.helpers.unimplemented`). Under E0-E4 the
methods call the same helpers without brew's ``arg_scope`` (those eras'
CNNModelHelper had the code itself).
"""

import logging

from . import brew, core, eras
from .errors import ArgumentError
from .helpers import pooling
from .model_helper import ModelHelper
from .proto import caffe2_pb2

logger = logging.getLogger(__name__)


def _calls(helper, *model_keywords, doc=""):
    """A method that calls ``brew.<helper>(self, *args, <model keywords>, **kwargs)``
    (from E5; before, the raw helper, without the model's ``arg_scope``).
    ``model_keywords`` name model attributes passed as keywords of the same
    name; a call that passes one again is a TypeError, as in Caffe2."""

    def method(self, *args, **kwargs):
        extra = {name: getattr(self, name) for name in model_keywords}
        function = getattr(brew, helper) if self._leaks() else brew._REGISTRY[helper]
        return function(self, *args, **extra, **kwargs)

    method.__name__ = helper
    method.__doc__ = doc or "``brew.%s(model, ...)``%s." % (
        helper,
        " with the model's " + ", ".join(model_keywords) if model_keywords else "",
    )
    return method


_CONV = ("use_cudnn", "order", "cudnn_exhaustive_search", "ws_nbytes_limit")


class CNNModelHelper(ModelHelper):
    """A :class:`ModelHelper` with CNN defaults and CamelCase layer methods."""

    _warned = False  # the deprecation banner is logged once per process

    def __init__(
        self,
        order="NCHW",
        name=None,
        use_cudnn=True,
        cudnn_exhaustive_search=False,
        ws_nbytes_limit=None,
        init_params=True,
        skip_sparse_optim=False,
        param_model=None,
    ):
        if eras.current().brew_argument_leakage and not CNNModelHelper._warned:
            # Caffe2 logged this on every construction; recurrent.LSTM makes
            # two per call, so we say it once per process.
            CNNModelHelper._warned = True
            logger.warning(
                "[====DEPRECATE WARNING====]: you are creating an object from "
                "CNNModelHelper class which will be deprecated soon. Please "
                "use ModelHelper object with brew module."
            )
        if order not in ("NCHW", "NHWC"):
            raise ArgumentError(
                "Cannot understand the CNN storage order %s; expected 'NCHW' or 'NHWC'." % order
            )
        cnn_arg_scope = {
            "order": order,
            "use_cudnn": use_cudnn,
            "cudnn_exhaustive_search": cudnn_exhaustive_search,
        }
        if ws_nbytes_limit:
            cnn_arg_scope["ws_nbytes_limit"] = ws_nbytes_limit
        super().__init__(
            name="CNN" if name is None else name,
            init_params=init_params,
            skip_sparse_optim=skip_sparse_optim,
            param_model=param_model,
            arg_scope=cnn_arg_scope,
        )
        self.order = order
        self.use_cudnn = use_cudnn
        self.cudnn_exhaustive_search = cudnn_exhaustive_search
        self.ws_nbytes_limit = ws_nbytes_limit

    @staticmethod
    def _leaks():
        return eras.current().brew_argument_leakage

    def FC(self, blob_in, blob_out, dim_in, dim_out, weight_init=None, bias_init=None, **kwargs):
        """Fully connected layer; parameters ``<blob_out>_w`` and ``<blob_out>_b``."""
        if self._leaks():
            return brew.fc(
                self,
                blob_in,
                blob_out,
                dim_in,
                dim_out,
                weight_init=weight_init,
                bias_init=bias_init,
                **kwargs,
            )
        weight_init = weight_init or ("XavierFill", {})
        bias_init = bias_init or ("ConstantFill", {})
        blob_out = blob_out or self.net.NextName()
        if self.init_params:
            weight = self.param_init_net.__getattr__(weight_init[0])(
                [], blob_out + "_w", shape=[dim_out, dim_in], **weight_init[1]
            )
            bias = self.param_init_net.__getattr__(bias_init[0])(
                [], blob_out + "_b", shape=[dim_out], **bias_init[1]
            )
        else:
            weight = core.ScopedBlobReference(blob_out + "_w", self.param_init_net)
            bias = core.ScopedBlobReference(blob_out + "_b", self.param_init_net)
        self.params.extend([weight] if "freeze_bias" in kwargs else [weight, bias])
        self.weights.append(weight)
        self.biases.append(bias)
        return self.net.FC([blob_in, weight, bias], blob_out, **kwargs)

    def Transpose(self, blob_in, blob_out, **kwargs):
        if self._leaks():
            return brew.transpose(self, blob_in, blob_out, use_cudnn=self.use_cudnn, **kwargs)
        if self.use_cudnn:
            kwargs["engine"] = "CUDNN"
        return self.net.Transpose(blob_in, blob_out, **kwargs)

    def Softmax(self, blob_in, blob_out=None, **kwargs):
        if self._leaks():
            return brew.softmax(self, blob_in, blob_out, use_cudnn=self.use_cudnn, **kwargs)
        if self.use_cudnn:
            kwargs["engine"] = "CUDNN"
        if blob_out is None:
            return self.net.Softmax(blob_in, **kwargs)
        return self.net.Softmax(blob_in, blob_out, **kwargs)

    def Concat(self, blobs_in, blob_out, **kwargs):
        if self._leaks():
            return brew.concat(self, blobs_in, blob_out, order=self.order, **kwargs)
        return self.net.Concat(
            blobs_in, [blob_out, "_" + blob_out + "_concat_dims"], order=self.order, **kwargs
        )[0]

    def Sum(self, blob_in, blob_out, **kwargs):
        if self._leaks():
            return brew.sum(self, blob_in, blob_out, **kwargs)
        return self.net.Sum(blob_in, blob_out, **kwargs)

    def PRelu(self, *args, **kwargs):
        """``brew.prelu`` (E0-E4 had the same code as a method)."""
        return brew.prelu(self, *args, **kwargs)

    def MaxPool(self, *args, **kwargs):
        return self._pool(pooling.max_pool, brew.max_pool, args, kwargs)

    def AveragePool(self, *args, **kwargs):
        return self._pool(pooling.average_pool, brew.average_pool, args, kwargs)

    def _pool(self, helper, brew_helper, args, kwargs):
        """The pooling helper with the model's order and cuDNN choice; from E5
        through brew, whose arg_scope then leaks into the op's arguments."""
        call = brew_helper if self._leaks() else helper
        return call(self, *args, use_cudnn=self.use_cudnn, order=self.order, **kwargs)

    # --- Caffe2's other methods (cnn.py at 0cdd09da6 and 042e8ede4) ---------------
    VideoInput = _calls("video_input")
    ConvNd = _calls("conv_nd", *_CONV)
    Conv = _calls("conv", *_CONV)
    ConvTranspose = _calls("conv_transpose", *_CONV)
    GroupConv = _calls("group_conv", *_CONV)
    GroupConv_Deprecated = _calls("group_conv_deprecated", *_CONV)
    PackedFC = _calls("packed_fc")
    FC_Prune = _calls("fc_prune")
    FC_Decomp = _calls("fc_decomp")
    FC_Sparse = _calls("fc_sparse")
    Dropout = _calls("dropout", "order", "use_cudnn")
    LRN = _calls("lrn", "order", "use_cudnn")
    SpatialBN = _calls("spatial_bn", "order")
    InstanceNorm = _calls("instance_norm", "order")
    Relu = _calls("relu", "order", "use_cudnn")
    Iter = _calls("iter")
    Accuracy = _calls("accuracy")
    MaxPoolWithIndex = _calls("max_pool_with_index", "order")

    def ImageInput(self, blob_in, blob_out, use_gpu_transform=False, **kwargs):
        """``brew.image_input`` with the model's order (``(data, label)``)."""
        function = brew.image_input if self._leaks() else brew._REGISTRY["image_input"]
        return function(
            self, blob_in, blob_out, order=self.order, use_gpu_transform=use_gpu_transform, **kwargs
        )

    def PadImage(self, blob_in, blob_out, **kwargs):
        """``PadImage`` added to the net directly (Caffe2's "dummy helper": returns nothing)."""
        self.net.PadImage(blob_in, blob_out, **kwargs)

    def DepthConcat(self, *args, **kwargs):
        """The old name of :meth:`Concat` (Caffe2 printed that it is deprecated)."""
        logger.warning("DepthConcat is deprecated. use Concat instead.")
        return self.Concat(*args, **kwargs)

    def AddWeightDecay(self, weight_decay):
        """``brew.add_weight_decay``: L2 decay on every weight's gradient."""
        return brew.add_weight_decay(self, weight_decay)

    def ConstantInit(self, value):
        """``('ConstantFill', {'value': value})``, an initializer for the layer methods."""
        return ("ConstantFill", dict(value=value))

    @property
    def XavierInit(self):
        return ("XavierFill", {})

    @property
    def MSRAInit(self):
        return ("MSRAFill", {})

    @property
    def ZeroInit(self):
        return ("ConstantFill", {})

    @property
    def CPU(self):
        """A CPU ``DeviceOption``."""
        device_option = caffe2_pb2.DeviceOption()
        device_option.device_type = caffe2_pb2.CPU
        return device_option

    @property
    def GPU(self, gpu_id=0):
        """A CUDA ``DeviceOption`` for GPU 0 (a property, as in Caffe2, so
        ``gpu_id`` cannot be given)."""
        device_option = caffe2_pb2.DeviceOption()
        device_option.device_type = caffe2_pb2.CUDA
        device_option.cuda_gpu_id = gpu_id
        return device_option

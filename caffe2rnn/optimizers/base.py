"""``Optimizer``: what every optimizer shares — the learning rate, the
iteration counter, auxiliary blobs, the names of per-optimizer blobs.

``build_lr`` adds, the first time a ``param_init_net`` sees an optimizer::

    param_init_net: ConstantFill([] → optimizer_iteration, shape=[1], value=0,
                                 dtype=INT64)          (device: CPU)
                    CreateMutex([] → iteration_mutex)  (device: CPU)
    net:            AtomicIter([iteration_mutex, optimizer_iteration]
                               → optimizer_iteration)  (device: CPU)

and then a ``LearningRate`` op with ``base_lr = −base_learning_rate`` (we go
*down* the gradient; ops that add ``lr · step`` receive a negative rate).
Where that rate lives changed in July 2017 (d885f96d3): in E5 (0cdd09da6)
every parameter had its own ``<param>_lr``; from then on (E6, 042e8ede4) an
optimizer instance makes one rate per device and shares it between its
parameters, named ``<Class>_<instance>_lr_cpu`` (``..._gpu<id>`` on a GPU) —
the era policy ``late_2017_optimizers`` (:mod:`caffe2rnn.eras`) picks.
With a learning-rate multiplier (E6: gradient clipping, ``lr_injection``,
:mod:`caffe2rnn.optimizers.building`; E7: ``lars``) the rate is multiplied by
it: ``CopyFromCPUInput`` + ``Mul`` in E6; in E7 (929c33cee) ``Mul`` alone
unless the rate is built in a CUDA scope from a multiplier on the CPU.

Caffe2: caffe2/python/optimizer.py (``Optimizer``) at 0cdd09da6, 042e8ede4 and
929c33cee.
"""

import collections
from typing import Optional

from .. import core, eras, scope
from ..errors import ModelError
from ..modeling.parameter_info import ParameterInfo
from ..proto import caffe2_pb2

OPTIMIZER_ITERATION_NAME = "optimizer_iteration"

#: ``local``: blobs kept per parameter (momentum, squared sums, moments);
#: ``shared``: blobs shared by all parameters (``ONE``, the iteration counter).
AuxOptimizerParams = collections.namedtuple("AuxOptimizerParams", ["local", "shared"])

#: optimizer class name → instances made so far (E6 names blobs after it).
optimizer_instance_count = collections.defaultdict(int)


def current_device():
    """The current device scope, or the CPU."""
    return scope.CurrentDeviceScope() or core.DeviceOption(caffe2_pb2.CPU)


def device_suffix(with_node_name=True):
    """``<device_type>_<gpu id>[<node name>]`` of the current device (CPU: ``0_0``)."""
    device = current_device()
    node = device.node_name if with_node_name else ""
    return "%d_%d%s" % (device.device_type, device.cuda_gpu_id, node)


def one_blob(param_init_net):
    """The device's ``ONE_<device>`` constant (1.0), made once per name."""
    return param_init_net.ConstantFill([], "ONE_" + device_suffix(), shape=[1], value=1.0)


def iteration_counter(net, param_init_net, iter_val=0):
    """The shared int64 counter ``optimizer_iteration``, its mutex and its
    ``AtomicIter`` (made on the CPU the first time ``param_init_net`` asks)."""
    if param_init_net.BlobIsDefined(OPTIMIZER_ITERATION_NAME):
        return param_init_net.GetBlobRef(OPTIMIZER_ITERATION_NAME)
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
        iteration = param_init_net.ConstantFill(
            [], OPTIMIZER_ITERATION_NAME, shape=[1], value=iter_val, dtype=core.DataType.INT64
        )
        iter_mutex = param_init_net.CreateMutex([], ["iteration_mutex"])
        net.AtomicIter([iter_mutex, iteration], [iteration])
    return iteration


def positive(optimizer, name, value):
    """Caffe2 asserted ``value > 0`` (or ``>= 0``); a clear error names it here."""
    if value < 0:
        raise ModelError("%s: %s must be >= 0; got %g" % (type(optimizer).__name__, name, value))


class Optimizer:
    """Adds the update ops of one parameter at a time: ``optimizer(net,
    param_init_net, param_info)`` or ``optimizer(net, param_init_net, param,
    grad)``. Subclasses implement :meth:`_run`."""

    #: the attribute holding the base rate, scaled by :meth:`scale_learning_rate`
    rate_name: Optional[str] = None

    def __init__(self):
        self._aux_params = AuxOptimizerParams(local=[], shared=[])
        self._instance_num = optimizer_instance_count[type(self).__name__]
        optimizer_instance_count[type(self).__name__] += 1
        self._lr_multiplier = None
        self._lr_multiplier_on_gpu = False

    def __call__(self, net, param_init_net, param, grad=None):
        if grad is None:
            if not isinstance(param, ParameterInfo) or param.grad is None:
                raise ModelError(
                    "%s needs a ParameterInfo with a gradient, or a parameter and its "
                    "gradient; got %r" % (type(self).__name__, param)
                )
        else:
            if isinstance(param, str):
                param = core.BlobReference(param)
            param = ParameterInfo(param_id=None, param=param, grad=grad)
        self._run(net, param_init_net, param)

    def keep_settings(self, settings):
        """Keep a constructor's arguments (its ``locals()``) as attributes of the
        same names, ``**kwargs`` as ``init_kwargs`` (the learning-rate policy's
        arguments), as Caffe2's optimizers did one assignment at a time."""
        settings = dict(settings)
        self.init_kwargs = settings.pop("kwargs", {})
        for name, value in settings.items():
            if name not in ("self", "__class__"):
                setattr(self, name, value)

    @staticmethod
    def later_keywords(settings, **defaults):
        """A constructor's ``locals()`` with E7's keywords (``defaults``: name →
        default) moved into ``**kwargs`` when the era in force is older: Caffe2's
        constructor then had no such parameter, so the value went into
        ``init_kwargs`` and on to the ``LearningRate`` op as an argument it ignores."""
        if eras.current().early_2018_optimizers:
            return settings
        settings = dict(settings)
        kwargs = dict(settings.get("kwargs", {}))
        for name, default in defaults.items():
            value = settings.pop(name)
            if value is not default and value != default:
                kwargs[name] = value
        settings["kwargs"] = kwargs
        return settings

    def _run(self, net, param_init_net, param_info):
        raise NotImplementedError("%s does not implement _run" % type(self).__name__)

    # -- names of this optimizer's blobs (E6) -----------------------------------
    def get_cpu_blob_name(self, base_str, node_name=""):
        return "%s_%d_%s%s_cpu" % (type(self).__name__, self._instance_num, base_str, node_name)

    def get_gpu_blob_name(self, base_str, gpu_id, node_name):
        return "%s_%d_%s%s_gpu%d" % (
            type(self).__name__,
            self._instance_num,
            base_str,
            node_name,
            gpu_id,
        )

    def make_unique_blob_name(self, base_str):
        """A name unique to this optimizer instance and the current device."""
        device = scope.CurrentDeviceScope()
        if device is None:
            return self.get_cpu_blob_name(base_str)
        if device.device_type == caffe2_pb2.CUDA:
            return self.get_gpu_blob_name(base_str, device.cuda_gpu_id, device.node_name)
        return self.get_cpu_blob_name(base_str, device.node_name)

    # -- the learning rate ---------------------------------------------------------
    def build_lr(
        self,
        net,
        param_init_net,
        base_learning_rate,
        learning_rate_blob=None,
        policy="fixed",
        iter_val=0,
        **kwargs,
    ):
        """A LearningRate op with rate ``−base_learning_rate``; ``(lr, iteration)``.

        ``learning_rate_blob`` None: this optimizer's shared rate (E6) — an
        existing one is reused — or the E5 caller's ``<param>_lr``.
        """
        shared = learning_rate_blob is None
        if shared:
            learning_rate_blob = self.make_unique_blob_name("lr")
        iteration = iteration_counter(net, param_init_net, iter_val)
        reuse = shared or eras.current().late_2017_optimizers
        if reuse and net.BlobIsDefined(learning_rate_blob):
            lr = net.GetBlobRef(learning_rate_blob)
        else:
            # We minimise, so the step goes against the gradient: a negative rate.
            lr = net.LearningRate(
                [iteration],
                learning_rate_blob,
                base_lr=-base_learning_rate,
                policy=policy,
                **kwargs,
            )
        if self._lr_multiplier is not None:
            multiplier = self._lr_multiplier
            if self._copy_lr_multiplier():
                multiplier = net.CopyFromCPUInput(
                    multiplier, self.make_unique_blob_name("lr_multiplier")
                )
            lr = net.Mul([lr, multiplier], self.make_unique_blob_name("scaled_lr"), broadcast=1)
        return lr, iteration

    def _copy_lr_multiplier(self):
        """E6 copied the multiplier with ``CopyFromCPUInput`` on every device; E7
        (929c33cee) only into a CUDA scope, and not a multiplier already on the GPU."""
        if not eras.current().early_2018_optimizers:
            return True
        device = scope.CurrentDeviceScope()
        return (
            device is not None
            and device.device_type == caffe2_pb2.CUDA
            and not self._lr_multiplier_on_gpu
        )

    def lars_multiplier(self, net, param, grad):
        """E7's ``lars``: a ``Lars([param, grad])`` op (:mod:`caffe2rnn.operators.lars`)
        whose factor multiplies the rates built from now on (:meth:`add_lr_multiplier`,
        replacing any multiplier set before, as in Caffe2). Dense gradients only (Caffe2:
        "TODO(zqq): support LARS for sparse parameters"); no ``lars`` (None) or an era
        before E7: nothing. A negative offset is refused (Caffe2 asserted
        ``lars >= 0``, "Lars offset must be nonnegative")."""
        lars = getattr(self, "lars", None)
        if lars is None or isinstance(grad, core.GradientSlice):
            return
        if lars < 0:
            raise ModelError(
                "%s: Lars offset must be nonnegative, got %g (parameter %s)"
                % (type(self).__name__, lars, param)
            )
        factor = net.Lars(
            [param, grad], self.make_unique_blob_name(str(param) + "_lars"), offset=lars
        )
        device = scope.CurrentDeviceScope()
        self.add_lr_multiplier(
            factor, is_gpu_blob=device is not None and device.device_type == caffe2_pb2.CUDA
        )

    def param_lr(self, net, param_init_net, param, base_learning_rate):
        """``(lr, iteration)`` for ``param``: :meth:`build_lr` with this
        optimizer's ``policy`` and extra arguments, under :meth:`lr_blob_name`."""
        return self.build_lr(
            net,
            param_init_net,
            base_learning_rate=base_learning_rate,
            learning_rate_blob=self.lr_blob_name(param),
            policy=self.policy,
            **self.init_kwargs,
        )

    def lr_blob_name(self, param):
        """Where :meth:`build_lr` puts the rate for ``param``: ``<param>_lr``
        in E5, this optimizer's shared name (None) from E6 on."""
        return None if eras.current().late_2017_optimizers else str(param) + "_lr"

    def add_lr_multiplier(self, lr_multiplier, is_gpu_blob=False):
        """Multiply every rate built from now on by the blob ``lr_multiplier`` (E6);
        ``is_gpu_blob`` (E7): it lives on the GPU already, so no copy is made."""
        self._lr_multiplier = lr_multiplier
        self._lr_multiplier_on_gpu = is_gpu_blob

    @staticmethod
    def dedup(net, sparse_dedup_aggregator, grad):
        """Merge repeated indices of a GradientSlice first, if an aggregator is named."""
        if not isinstance(grad, core.GradientSlice):
            raise ModelError("dedup takes a GradientSlice, got %r" % (grad,))
        if sparse_dedup_aggregator:
            return net.DeduplicateGradientSlices(grad, aggregator=sparse_dedup_aggregator)
        return grad

    def get_auxiliary_parameters(self):
        """The blobs this optimizer added besides the parameters: an
        :data:`AuxOptimizerParams` of ``local`` (one per parameter, e.g.
        Adagrad's squared sums) and ``shared`` blobs (e.g. Adam's iteration
        counter). Checkpoints need them to resume training."""
        return self._aux_params

    def scale_learning_rate(self, scale):
        """Multiply the base rate by ``scale`` (e.g. for a transferred parameter)."""
        if self.rate_name is None:
            raise NotImplementedError("Optimizer Need to Implement `scale_learning_rate` method.")
        setattr(self, self.rate_name, getattr(self, self.rate_name) * scale)

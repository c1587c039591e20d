"""``caffe2.python.model_helper``: a model = a net + its parameter-init net.

A Caffe2 model is two nets: ``param_init_net`` (run once: fill ops that
create the parameters) and ``net`` (the computation, run every iteration),
plus Python-side bookkeeping: which blobs are parameters (``params``), which
of them are weights/biases, and after ``AddGradientOperators`` which blob
holds each parameter's gradient (``param_to_grad``).

``recurrent_net`` relies on one trick here: a step model built with
``param_model=outer_model`` *shares* the outer model's ``param_init_net``,
``params`` and ``param_to_grad`` (the very same objects). The step net's FC
then reads ``<scope>/gates_t_w``, a blob its own net never writes, so
``Net`` declares it an external input of the step net, and ``recurrent_net``
finds the parameters among those inputs.

:class:`ModelHelper` is the E5 (2017-06) class; :class:`ModelHelperBase` is
its E3 (2017-04) name, with the E3 differences noted on it.
"""

import logging
import sys

from . import core, eras, scope
from .core.net import unknown_operator_error
from .errors import ShapeError, WorkspaceError
from .extract_predictor import ExtractPredictorNet  # noqa: F401 - Caffe2's home of it
from .modeling.initializers import (  # noqa: F401 - re-exported: operators import them here
    ExternalInitializer,
    Initializer,
    update_initializer,
)
from .modeling.parameter_info import ParameterInfo, ParameterTags  # noqa: F401
from .modeling.parameter_sharing import parameter_sharing_context

logger = logging.getLogger(__name__)

#: Op types a model helper creates without a warning (E3 list).
_KNOWN_WORKING_OPS_E3 = (
    "Accuracy",
    "Adam",
    "Add",
    "Adagrad",
    "SparseAdagrad",
    "AveragedLoss",
    "Cast",
    "Checkpoint",
    "ConstantFill",
    "Copy",
    "CopyGPUToCPU",
    "CopyCPUToGPU",
    "DequeueBlobs",
    "EnsureCPUOutput",
    "Flatten",
    "FlattenToVec",
    "LabelCrossEntropy",
    "LearningRate",
    "MakeTwoClass",
    "MatMul",
    "NCCLAllreduce",
    "NHWC2NCHW",
    "PackSegments",
    "Print",
    "PRelu",
    "Scale",
    "ScatterWeightedSum",
    "Sigmoid",
    "SortedSegmentSum",
    "Snapshot",
    "Softmax",
    "SoftmaxWithLoss",
    "SquaredL2Distance",
    "Squeeze",
    "StopGradient",
    "Summarize",
    "Tanh",
    "UnpackSegments",
    "WeightedSum",
    "ReduceFrontSum",
)
_KNOWN_WORKING_OPS = _KNOWN_WORKING_OPS_E3 + ("ExpandDims", "Transpose")


#: brew's name for :func:`~caffe2rnn.modeling.initializers.update_initializer`.
make_initializer = update_initializer


def _use_optimizer_context(info, tags):
    """Give ``info`` the optimizer an enclosing E6 ``UseOptimizer`` names for
    one of its tags (or ``DEFAULT``). That context lives in Caffe2's own
    ``optimizer_context`` module (from a checkout, through caffe2rnn.compat):
    unless that module is loaded, there is none."""
    context = sys.modules.get("caffe2.python.optimizer_context")
    if context is None:
        return
    current = context.OptimizerContext.current()
    for tag in _normalize_tags(tags):
        if current.has_optimizer(tag):
            info.optimizer = current.get_optimizer(tag)
    if not info.optimizer and current.has_optimizer(context.DEFAULT_OPTIM):
        info.optimizer = current.get_optimizer(context.DEFAULT_OPTIM)


def _normalize_tags(tags):
    if tags is None:
        return []
    return [tags] if isinstance(tags, str) else list(tags)


class ModelHelper:
    """A model under construction (Caffe2 E5 ``ModelHelper``, 0cdd09da6).

    ``arg_scope`` holds the defaults every ``brew`` helper call starts from;
    from E5 that is how ``order``/``use_cudnn`` end up as FC arguments.
    """

    _known_working_ops: tuple[str, ...] = _KNOWN_WORKING_OPS

    def __init__(
        self,
        name=None,
        init_params=True,
        allow_not_known_ops=True,
        skip_sparse_optim=False,
        param_model=None,
        arg_scope=None,
    ):
        self.name = name or "model"
        self.net = core.Net(self.name)
        if param_model is not None:
            # Shared on purpose: a step model adds to the outer model's lists.
            self.param_init_net = param_model.param_init_net
            self.param_to_grad = param_model.param_to_grad
            self.params = param_model.params
            self._parameters_info = param_model._parameters_info
            self._computed_params = param_model._computed_params
        else:
            self.param_init_net = core.Net(self._init_net_name(name))
            self.param_to_grad = {}
            self.params = []
            self._parameters_info = {}
            self._computed_params = []
        self.gradient_ops_added = False
        self.init_params = init_params
        self.allow_not_known_ops = allow_not_known_ops
        self.skip_sparse_optim = skip_sparse_optim
        self.weights = []
        self.biases = []
        self._arg_scope = {"order": "NCHW", "use_cudnn": True, "cudnn_exhaustive_search": False}
        if arg_scope is not None:
            self._arg_scope.update(arg_scope)

    def _init_net_name(self, name):
        return self.name + "_init"

    @property
    def arg_scope(self):
        return self._arg_scope

    def get_name(self):
        return self.name

    def Proto(self):
        return self.net.Proto()

    def InitProto(self):
        return self.param_init_net.Proto()

    # -- parameters -------------------------------------------------------------

    def _infer_param_shape(self, param):
        """The ``shape`` argument of the init op that writes ``param``, if any."""
        for op in self.param_init_net.Proto().op:
            if str(param) in op.output:
                for arg in op.arg:
                    if arg.name == "shape":
                        return list(arg.ints)
        return None

    def create_param(self, param_name, shape, initializer, tags=None):
        """Create (or, if it exists, return) the parameter ``param_name``.

        A str name gets the current name scope, rewritten by any active
        :func:`~caffe2rnn.modeling.parameter_sharing.ParameterSharing` block;
        a BlobReference is used as is. Asking again for an existing parameter
        returns its blob, so two cells built with ``param_model`` can share
        weights; the shapes must agree.
        """
        if isinstance(param_name, core.BlobReference):
            name = str(param_name)
        elif isinstance(param_name, str):
            name = parameter_sharing_context.get_parameter_name(param_name)
        else:
            raise TypeError(
                "create_param takes a str or BlobReference name, got %r" % (param_name,)
            )
        if name in self._parameters_info:
            existing = self._parameters_info[name]
            if existing.shape != shape:
                raise ShapeError(
                    "parameter '%s' already exists with shape %s; "
                    "create_param asked for shape %s" % (name, existing.shape, shape)
                )
            return existing.blob
        info = initializer.create_param(
            param_name=core.BlobReference(name), init_net=self.param_init_net, shape=shape
        )
        _use_optimizer_context(info, tags)
        self._parameters_info[name] = info
        self.AddParameter(info.blob, tags)
        return info.blob

    def AddParameter(self, param, tags=None):
        """List ``param`` in ``params`` (or computed params) and weights/biases."""
        if not isinstance(param, core.BlobReference):
            raise TypeError("AddParameter takes a BlobReference, got %r" % (param,))
        tags = _normalize_tags(tags)
        if ParameterTags.COMPUTED_PARAM in tags:
            self._computed_params.append(param)
        else:
            self.params.append(param)
        if ParameterTags.WEIGHT in tags:
            self.weights.append(param)
        if ParameterTags.BIAS in tags:
            self.biases.append(param)

    def add_param(self, param, key=None, shape=None, length=None):
        """Register ``param`` (E3 API); shape read from its init op if not given."""
        if shape is None:
            shape = self._infer_param_shape(param)
        self.params.append(param)
        info = ParameterInfo(
            param_id=len(self.params) - 1, param=param, key=key, shape=shape, length=length
        )
        self._parameters_info[str(param)] = info
        return info

    def get_param_info(self, param):
        return self._parameters_info.get(str(param))

    @staticmethod
    def _NormalizeNamescope(namescope):
        """The current name scope for None; otherwise ``namescope`` ending in '/'."""
        if namescope is None:
            return scope.CurrentNameScope()
        if namescope == "" or namescope.endswith(scope._NAMESCOPE_SEPARATOR):
            return namescope
        return namescope + scope._NAMESCOPE_SEPARATOR

    def GetParams(self, namescope=None, top_scope=False):
        """Parameters whose name scope starts with ``namescope``.

        ``namescope`` defaults to the current name scope (all parameters when
        that is empty). ``top_scope`` is accepted as in Caffe2, where both of
        its branches returned the same list.
        """
        namescope = self._NormalizeNamescope(namescope)
        if namescope == "":
            return self.params[:]
        return [p for p in self.params if p.GetNameScope().startswith(namescope)]

    def GetComputedParams(self, namescope=None):
        """Computed parameters (not trained by gradient steps, e.g. a frozen
        bias) created directly in ``namescope`` (default: the current one).

        Unlike :meth:`GetParams`, a scope matches only exactly (Caffe2 E5):
        ``GetComputedParams('a')`` does not list ``a/b/x``.
        """
        namescope = self._NormalizeNamescope(namescope)
        if namescope == "":
            return self._computed_params[:]
        return [p for p in self._computed_params if p.GetNameScope() == namescope]

    def GetAllParams(self, namescope=None):
        """:meth:`GetParams` followed by :meth:`GetComputedParams`."""
        return self.GetParams(namescope) + self.GetComputedParams(namescope)

    def _in_scope(self, blobs, namescope):
        if namescope is None:
            namescope = scope.CurrentNameScope()
        if namescope == "":
            return blobs[:]
        return [b for b in blobs if b.GetNameScope() == namescope]

    def GetWeights(self, namescope=None):
        """Weights created directly in ``namescope`` (default: current scope)."""
        return self._in_scope(self.weights, namescope)

    def GetBiases(self, namescope=None):
        return self._in_scope(self.biases, namescope)

    # -- gradients ---------------------------------------------------------------

    def _Validate(self):
        """The names ``params`` lists more than once, sorted (Caffe2 41ae85f4e)."""
        names = [str(p) for p in self.params]
        return sorted({n for n in names if names.count(n) > 1})

    def Validate(self):
        """Refuse a model whose ``params`` list a blob twice (Caffe2: an assert)."""
        duplicates = self._Validate()
        if duplicates:
            raise WorkspaceError("Duplicate params: %s" % duplicates)

    def get_param_to_grad(self, params):
        """``{param: gradient blob}`` for the given params that have one."""
        if not self.gradient_ops_added:
            raise WorkspaceError("You need to run AddGradientOperators first.")
        return {p: self.grad_map[str(p)] for p in params if str(p) in self.grad_map}

    def GetOptimizationParamInfo(self, params=None):
        """The :class:`ParameterInfo` (blob and gradient) of every parameter
        an optimizer should update, in the order of ``params``.

        ``params`` defaults to all parameters with a gradient. With
        ``skip_sparse_optim`` a parameter whose gradient is a
        ``GradientSlice`` is left out (its updates are someone else's job).
        """
        if not self.gradient_ops_added:
            raise WorkspaceError("Need to call AddGradientOperators first")
        param_to_grad = self.get_param_to_grad(params) if params else self.param_to_grad
        return [
            self.get_param_info(param)
            for param, grad in param_to_grad.items()
            if not (self.skip_sparse_optim and isinstance(grad, core.GradientSlice))
        ]

    def AddGradientOperators(self, *args, **kwargs):
        """Add the backward pass to ``net`` (once); fill ``param_to_grad``.

        As in Caffe2, ``param_to_grad`` is *rebound* to a new dict here, so a
        step model stops sharing it with its ``param_model`` at this point.
        """
        if self.gradient_ops_added:
            raise WorkspaceError("You cannot run AddGradientOperators twice.")
        if eras.current().model_validates_params:
            self.Validate()
        self.grad_map = self.net.AddGradientOperators(*args, **kwargs)
        self.gradient_ops_added = True
        self.param_to_grad = self.get_param_to_grad(self.params)
        for param, grad in self.param_to_grad.items():
            info = self.get_param_info(param)
            if info is None:
                self._parameters_info[str(param)] = ParameterInfo(
                    param_id=None, param=param, grad=grad
                )
            else:
                info.grad = grad
        return self.grad_map

    # -- operators ---------------------------------------------------------------

    def CreateDB(self, blob_out, db, db_type, **kwargs):
        """A DBReader on ``db``, opened by ``param_init_net`` (operators/db_input.py)."""
        return self.param_init_net.CreateDB([], blob_out, db=db, db_type=db_type, **kwargs)

    def TensorProtosDBInput(self, unused_blob_in, blob_out, batch_size, db, db_type, **kwargs):
        """Batches of ``db``'s TensorProtos records: a ``dbreader_<db>`` made by
        ``param_init_net``, read by ``net`` (Caffe2 ignored ``blob_in`` and ``kwargs``)."""
        reader = self.param_init_net.CreateDB([], "dbreader_" + db, db=db, db_type=db_type)
        return self.net.TensorProtosDBInput(reader, blob_out, batch_size=batch_size)

    def __getattr__(self, op_type):
        """``model.Tanh(...)`` = ``model.net.Tanh(...)``, warning on unusual ops."""
        if op_type.startswith("__"):
            raise AttributeError(op_type)
        if not core.IsOperator(op_type):
            raise unknown_operator_error(op_type)
        if op_type not in self.known_working_ops():
            if not self.allow_not_known_ops:
                raise WorkspaceError("Operator %s is not known to be safe" % op_type)
            logger.warning(
                "You are creating an op that the %s does not recognize: %s.",
                type(self)._helper_name(),
                op_type,
            )
        return self.net.__getattr__(op_type)

    @classmethod
    def _helper_name(cls):
        return "ModelHelper"

    def known_working_ops(self):
        """The op types ``model.<Op>(...)`` creates without a warning: Caffe2's
        ``_known_working_ops`` of the building era (E4: E3's list; E5 adds
        ExpandDims and Transpose; E6 YellowFin; ``eras.known_ops_added``)."""
        if self._known_working_ops is not _KNOWN_WORKING_OPS:  # a class with its own list
            return self._known_working_ops
        return _KNOWN_WORKING_OPS_E3 + eras.current().known_ops_added


class ModelHelperBase(ModelHelper):
    """The E3 (89ea32b11, 2017-04) model helper, renamed ModelHelper on 04-23.

    Differences kept: ``param_init_net`` is named from the *raw* ``name``
    argument (Caffe2 crashed on ``None + '_init'``; we fall back to
    ``model_init``), computed params are public (``computed_params``), there
    is no ``arg_scope`` argument, and the known-op list lacks ExpandDims and
    Transpose.
    """

    _known_working_ops = _KNOWN_WORKING_OPS_E3

    def __init__(
        self,
        name=None,
        init_params=True,
        allow_not_known_ops=True,
        skip_sparse_optim=False,
        param_model=None,
    ):
        super().__init__(
            name=name,
            init_params=init_params,
            allow_not_known_ops=allow_not_known_ops,
            skip_sparse_optim=skip_sparse_optim,
            param_model=param_model,
        )

    def _init_net_name(self, name):
        return (self.name if name is None else name) + "_init"

    @property
    def computed_params(self):
        return self._computed_params

    @classmethod
    def _helper_name(cls):
        return "ModelHelperBase"

"""``caffe2.python.optimizer``: add a training step for every parameter.

After ``model.AddGradientOperators([loss])`` each parameter has a gradient
blob; an optimizer appends, per parameter, the ops that update it with its
gradient. ``build_sgd(model, base_learning_rate=0.1)`` on a model with one FC
(parameters ``fc_w``, ``fc_b``) adds, as Caffe2 E5 (0cdd09da6) did::

    param_init_net: ConstantFill([] → optimizer_iteration, shape=[1], value=0,
                                 dtype=INT64)          (device: CPU)
                    CreateMutex([] → iteration_mutex)  (device: CPU)
    net:            AtomicIter([iteration_mutex, optimizer_iteration]
                               → optimizer_iteration)  (device: CPU)
    then for each parameter p, in the order of model.params:
    net:            LearningRate(optimizer_iteration → p_lr, base_lr=-0.1,
                                 policy="fixed")
    param_init_net: ConstantFill([] → ONE_0_0, shape=[1], value=1.0)
    net:            WeightedSum([p, ONE_0_0, p_grad, p_lr] → p)

(from E6 on, one rate ``SgdOptimizer_<n>_lr_cpu`` shared by the parameters
of an optimizer instance: :mod:`caffe2rnn.optimizers.base`). The optimizer
ops run as part of ``model.net``: one ``RunNet`` is one forward pass, one
backward pass and one update.

==========================================  ==========================================
``build_sgd`` / ``SgdOptimizer``            ``WeightedSum``, ``MomentumSGDUpdate``;
                                            sparse: ``ScatterWeightedSum``,
                                            ``SparseMomentumSGDUpdate`` (E6)
``build_multi_precision_sgd``               float32 master copies of float16 parameters
``build_adagrad`` / ``AdagradOptimizer``    ``Adagrad``, ``SparseAdagrad``,
                                            ``RowWiseSparseAdagrad`` (E6 ``rowWise``)
``build_adam`` / ``AdamOptimizer``          ``Adam``, ``SparseAdam``,
                                            ``RowWiseSparseAdam`` (E7 ``rowWise``)
``build_rms_prop`` (E6)                     ``RmsProp`` + ``MomentumSGDUpdate``
``build_ftrl`` / ``FtrlOptimizer``          ``Ftrl``, ``SparseFtrl``
``build_yellowfin`` (E6)                    ``YellowFin``
``add_weight_decay``                        ``grad += weight_decay · w`` (weights only)
==========================================  ==========================================

E6's ``max_gradient_norm`` (clipping by the global norm) and
``allow_lr_injection`` (:func:`set_lr_injection`) are in
:mod:`caffe2rnn.optimizers.building`. E7's ``lars=offset`` (``build_sgd``,
``build_adagrad``) multiplies each dense parameter's rate by a ``Lars`` factor
(:mod:`caffe2rnn.optimizers.base`). Caffe2's ``build_fp16_sgd`` is not
here: its ``FP16MomentumSGDUpdate`` existed only on the GPU.

Caffe2: caffe2/python/optimizer.py at 0cdd09da6 (E5), 042e8ede4 (E6) and 929c33cee (E7).
"""

from .optimizers.adaptive import (  # noqa: F401
    AdagradOptimizer,
    AdamOptimizer,
    FtrlOptimizer,
    RmsPropOptimizer,
)
from .optimizers.base import OPTIMIZER_ITERATION_NAME as _OPTIMIZER_ITERATION_NAME  # noqa: F401
from .optimizers.base import (  # noqa: F401
    AuxOptimizerParams,
    Optimizer,
)
from .optimizers.base import optimizer_instance_count as _optimizer_instance_count  # noqa: F401
from .optimizers.building import (  # noqa: F401
    LEARNING_RATE_INJECTION as _LEARNING_RATE_INJECTION,
)
from .optimizers.building import (  # noqa: F401
    _build,
    _calc_norm_ratio,
    _get_param_to_device,
    add_weight_decay,
    build_adagrad,
    build_adam,
    build_ftrl,
    build_multi_precision_sgd,
    build_rms_prop,
    build_sgd,
    build_yellowfin,
    get_lr_injection,
    get_param_device,
    set_lr_injection,
)
from .optimizers.sgd import (  # noqa: F401
    MultiPrecisionSgdOptimizer,
    SgdOptimizer,
    WeightDecayBuilder,
)
from .optimizers.yellowfin import YellowFinOptimizer  # noqa: F401

"""Which op creates a parameter (Caffe2 ``modeling/initializers.py``, 63cad9610).

``ModelHelper.create_param(name, shape, initializer)`` hands the name and
shape to an initializer, which adds the fill op to ``param_init_net`` and
returns a :class:`~.parameter_info.ParameterInfo`. Helpers such as
``brew.fc`` accept both spellings Caffe2 had: ``weight_init=('XavierFill',
{})`` and ``WeightInitializer=SomeInitializerClass``; :func:`update_initializer`
merges them.

``pFP16Initializer`` (E5, E6) is named ``PseudoFP16Initializer`` in E7
(Caffe2 929c33cee), with the same behaviour; the new name answers only
when the era in force has it (era policy ``early_2018_optimizers``).
"""

from .. import core, eras
from ..errors import ArgumentError
from .parameter_info import ParameterInfo


class Initializer:
    """Create the parameter with ``init_net.<operator_name>([], name, shape=shape, **kwargs)``."""

    def __init__(self, operator_name=None, **kwargs):
        self.operator_name = operator_name
        self.operator_kwargs = kwargs

    def update(self, operator_name, kwargs):
        """Set the fill op once (an initializer made without one)."""
        if self.operator_name is not None:
            raise ArgumentError(
                "Initializer already uses %r; operator name overwrites are not allowed"
                % self.operator_name
            )
        self.operator_name = operator_name
        self.operator_kwargs = kwargs

    def create_param(self, param_name, init_net, shape):
        if self.operator_name is None:
            raise ArgumentError("Initializer for '%s' has no fill operator" % param_name)
        param = init_net.__getattr__(self.operator_name)(
            [], param_name, shape=shape, **self.operator_kwargs
        )
        return ParameterInfo(param_id=None, param=param, shape=shape)


class ExternalInitializer:
    """The parameter is fed into the workspace by someone else: no op is added."""

    def create_param(self, param_name, init_net, shape):
        if isinstance(param_name, core.BlobReference):
            param = core.BlobReference(str(param_name), init_net)
        elif isinstance(param_name, str):
            param = core.ScopedBlobReference(param_name, init_net)
        else:
            raise TypeError("param_name must be a str or BlobReference, got %r" % (param_name,))
        return ParameterInfo(param_id=None, param=param, shape=shape)


class pFP16Initializer(Initializer):
    """A float32 master copy ``<name>_fp32`` and its half-precision cast ``<name>``
    (``PseudoFP16Initializer`` in E7)."""

    def create_param(self, param_name, init_net, shape):
        master = init_net.__getattr__(self.operator_name)(
            [], str(param_name) + "_fp32", shape=shape, **self.operator_kwargs
        )
        param = init_net.FloatToHalf(master, param_name)
        return ParameterInfo(
            param_id=None, param=param, shape=shape, blob_copy={core.DataType.FLOAT: master}
        )


def update_initializer(
    initializer_class, operator_name_and_kwargs, default_operator_name_and_kwargs
):
    """An initializer from a class and/or an ``(op_name, kwargs)`` pair.

    ``initializer_class`` defaults to :class:`Initializer`; the pair defaults
    to ``default_operator_name_and_kwargs``. Only items 0 (the op name) and 1
    (its keywords) are read, as Caffe2 did: a longer sequence such as
    ``('UniformFill', {'min': -1.0}, {'max': 1.0})`` is accepted and its
    other items are ignored.
    """
    name_and_kwargs = operator_name_and_kwargs or default_operator_name_and_kwargs
    return (initializer_class or Initializer)(name_and_kwargs[0], **name_and_kwargs[1])


def __getattr__(name):
    """``PseudoFP16Initializer``: E7's name of :class:`pFP16Initializer`."""
    if name == "PseudoFP16Initializer":
        era = eras.current()
        if era.early_2018_optimizers:
            return pFP16Initializer
        raise AttributeError(
            "modeling.initializers.PseudoFP16Initializer is the name Caffe2 gave "
            "pFP16Initializer after 042e8ede4 (era E7); the era in force is %s: use "
            "pFP16Initializer, or eras.use('E7')" % era.name
        )
    raise AttributeError("module %r has no attribute %r" % (__name__, name))

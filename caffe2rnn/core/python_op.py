"""Building ``Python`` operators: ``core.CreatePythonOperator`` and ``Net.Python``.

The operator and how its function travels (a token in the ``token``
argument, a builder's token in ``builder_token``) are described in
:mod:`caffe2rnn.operators.python_op`. Here, as in Caffe2's
caffe2/python/core.py (0cdd09da6):

* ``f`` / ``grad_f`` are functions ``(inputs, outputs)`` (plus the workspace
  with ``pass_workspace=True``), or *builders* ``(func, args, kwargs)``;
  with ``python_func_type`` T, ``T(f)`` supplies ``forward`` and ``backward``;
* ``CreatePythonOperator`` calls a builder at once and registers the result;
  ``Net.Python`` keeps builders as builders, called when each op is created
  (a tuple for ``f`` needs one for ``grad_f`` too, if there is a ``grad_f``);
* ``grad_output_indices`` / ``grad_input_indices`` (``Net.Python``) choose the
  output gradients the gradient function reads and the input gradients it
  writes.
"""

from ..errors import BuildError
from ..runtime import python_functions
from .operator import CreateOperator


def _register(f, grad_f=None, python_func_type=None, pass_workspace=False):
    """Register ``f`` (and ``grad_f``) now; the op's token (Caffe2's ``_RegisterPythonImpl``)."""
    if python_func_type:
        func = python_func_type(f)
        f, grad_f = func.forward, func.backward
    else:
        if isinstance(f, tuple):
            f = f[0](*f[1], **f[2])
        if isinstance(grad_f, tuple):
            grad_f = grad_f[0](*grad_f[1], **grad_f[2])
    token = python_functions.register_python_op(f, pass_workspace, "")
    if grad_f:
        python_functions.register_python_gradient_op(token, grad_f)
    return token


def CreatePythonOperator(
    f, inputs, outputs, grad_f=None, pass_workspace=False, python_func_type=None, *args, **kwargs
):
    """One ``Python`` OperatorDef running ``f`` (see the module docstring)."""
    kwargs["token"] = _register(f, grad_f, python_func_type, pass_workspace=pass_workspace)
    return CreateOperator("Python", inputs, outputs, *args, **kwargs)


def _builder_token(t):
    if not isinstance(t, tuple):
        return ""
    if len(t) != 3:
        raise BuildError("Expected builder tuple (func, args, kwargs), got %d items" % len(t))
    return python_functions.register_builder(t)


def net_python(
    net,
    f,
    grad_f=None,
    python_func_type=None,
    pass_workspace=False,
    grad_output_indices=None,
    grad_input_indices=None,
):
    """``net.Python(f, ...)``: a function ``(inputs, outputs, **kwargs)`` that
    adds the op to ``net`` and returns its outputs."""
    f_builder = _builder_token(f)
    grad_builder = _builder_token(grad_f)
    if grad_f and bool(f_builder) != bool(grad_builder):
        raise BuildError("A tuple has to be passed to both f and grad_f or neither.")
    core_kwargs = {}
    if f_builder:
        core_kwargs["builder_token"] = f_builder
        core_kwargs["grad_builder_token"] = grad_builder
        core_kwargs["pass_workspace"] = pass_workspace
    else:
        core_kwargs["token"] = _register(f, grad_f, python_func_type, pass_workspace=pass_workspace)

    def add(*args, **kwargs):
        kwargs.update(core_kwargs)
        return net._CreateAndAddToSelf(
            "Python",
            *args,
            grad_output_indices=list(grad_output_indices or []),
            grad_input_indices=list(grad_input_indices or []),
            **kwargs,
        )

    return add

"""``Python`` and ``PythonGradient``: an operator whose body is a Python function.

::

    def f(inputs, outputs):
        outputs[0].reshape(inputs[0].shape)
        outputs[0].data[...] = inputs[0].data * 2

    net.Python(f)(["x"], ["y"])                       # core.Net.Python
    op = core.CreatePythonOperator(f, ["x"], ["y"])   # one OperatorDef

``inputs`` and ``outputs`` are lists of ``TensorCPU`` views of the blobs
(:mod:`caffe2rnn.runtime.bindings`): ``.data`` is the blob's own array,
``.shape`` a tuple, ``.reshape(shape)`` resizes, ``.feed(array)`` replaces.
With ``pass_workspace=True`` the function also gets the op's workspace (a
``C.Workspace``). An output that does not hold a tensor becomes an empty one
first, as Caffe2's ``Output(i)`` made it.

How the function reaches the op (Caffe2 caffe2/python/pybind_state.cc,
0cdd09da6): ``C.register_python_op(f, pass_workspace, name)`` keeps it in the
process's table (:mod:`caffe2rnn.runtime.python_functions`) and returns a
*token*, stored in the op's ``token`` argument. The op looks its function up
when it runs; a token nobody registered in this process is an error saying so.

A *builder* ``(func, args, kwargs)`` instead of ``f`` is called each time an
op is created, and its result is that op's function (state per op). Caffe2
pickled the builder into the ``pickled_builder`` argument and unpickled it in
the op; caffe2rnn never unpickles (unpickling runs code named by the bytes),
so the builder stays in this process's table under a token in
``builder_token`` / ``grad_builder_token``, and a NetDef carrying
``pickled_builder`` is refused with an error that says why.

The gradient (Caffe2's ``GetPythonGradient``) is one ``PythonGradient`` op
with inputs ``[inputs..., outputs..., output gradients...]`` and outputs the
input gradients; ``grad_output_indices`` / ``grad_input_indices`` pick which
output gradients it reads and which input gradients it writes. An exception in
the function is an :class:`~caffe2rnn.errors.EnforceNotMet` (a
``RuntimeError``) carrying its message and traceback.
"""

import traceback

from ..errors import ArgumentError, EnforceNotMet, GradientError, KeyNotFoundError
from ..runtime import python_functions
from ..runtime.bindings import Blob, TensorCPU
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import GradientMaker


class _PythonOpBase(Operator):
    #: argument naming this op's builder, and the suffix of its registered function
    builder_arg = "builder_token"
    suffix = ""

    def setup(self):
        self.token = self.args.single("token", "", str)
        pickled = "pickled_builder" if self.suffix == "" else "pickled_grad_builder"
        if self.args.has(pickled) and any(a.s for a in self.def_.arg if a.name == pickled):
            raise ArgumentError(
                "argument '%s' holds a pickled builder; caffe2rnn does not unpickle "
                "(that would run code named by the bytes): build the op in this process "
                "with net.Python((func, args, kwargs))" % pickled
            )
        builder_token = self.args.single(self.builder_arg, "", str)
        if not builder_token and not self.token:
            raise ArgumentError("PythonOp requires either pickled_builder or token arg.")
        self.built = None
        if builder_token:
            builder = python_functions.builder(builder_token)
            if builder is None:
                raise KeyNotFoundError(
                    "Python operator builder %s is not available in this process" % builder_token
                )
            func, args, kwargs = builder
            try:
                built = func(*args, **kwargs)
            except Exception as exc:
                raise EnforceNotMet(
                    "Python exception encountered while creating PythonOp: %s: %s\n%s"
                    % (type(exc).__name__, exc, traceback.format_exc())
                ) from exc
            self.built = (built, self.args.single("pass_workspace", False, bool))

    def function(self):
        if self.built is not None:
            return self.built
        key = self.token + self.suffix
        found = python_functions.function(key)
        if found is None:
            raise KeyNotFoundError(
                "Python operator for %s is not available. If you use distributed training it "
                "probably means that python implementation has to be registered in each of "
                "the workers" % key
            )
        return found

    def run(self):
        func, pass_workspace = self.function()
        inputs = [TensorCPU(blob) for blob in self.inputs]
        for i in range(len(self.inputs)):
            self.input(i)  # each must hold a tensor (Caffe2's Input(i))
        outputs = [Blob(blob).tensor() for blob in self.outputs]
        try:
            if pass_workspace:
                func(inputs, outputs, python_functions.workspace_view(self.ws))
            else:
                func(inputs, outputs)
        except Exception as exc:
            raise EnforceNotMet(
                "Exception encountered running PythonOp function: %s: %s\n%s"
                % (type(exc).__name__, exc, traceback.format_exc())
            ) from exc


@register("Python", inplace="any")
class PythonOp(_PythonOpBase):
    """Run the registered Python function on the op's blobs."""


@register("PythonGradient", inplace="any")
class PythonGradientOp(_PythonOpBase):
    """Run the function registered as the op's gradient."""

    builder_arg = "grad_builder_token"
    suffix = "_gradient"


@register_gradient("Python")
class GetPythonGradient(GradientMaker):
    """``PythonGradient([I..., O..., GO(selected)...] → [GI(selected)...])``."""

    def get_gradient_defs(self):
        go_indices = list(self.arg("grad_output_indices", []) or [])
        gi_indices = list(self.arg("grad_input_indices", []) or [])
        n_in, n_out = len(self.def_.input), len(self.def_.output)
        for argument, indices, size, what in (
            ("grad_output_indices", go_indices, n_out, "outputs"),
            ("grad_input_indices", gi_indices, n_in, "inputs"),
        ):
            for i in indices:  # C++: GO(i) / GI(i), bounds-checked (std::out_of_range)
                if not 0 <= i < size:
                    raise GradientError(
                        "Python: argument '%s' holds %d; the op has %d %s (0..%d)"
                        % (argument, i, size, what, size - 1)
                    )
        inputs = [self.I(i) for i in range(n_in)] + [self.O(i) for i in range(n_out)]
        inputs += [self.GO(i) for i in (go_indices or range(n_out))]
        outputs = [self.GI(i) for i in (gi_indices or range(n_in))]
        return [self.op_def("PythonGradient", inputs, outputs)]

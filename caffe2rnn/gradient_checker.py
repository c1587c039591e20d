"""Check an operator's gradient against central finite differences.

Caffe2's ``caffe2/python/gradient_checker.py`` ran an op, asked the gradient
registry for its backward ops, and compared the analytic gradient with a
numerical one. This module does the same in a private workspace:

1. run the op on the given inputs;
2. define ``loss = Σ_j sum(Y_j ⊙ R_j)`` over the outputs that receive a
   gradient, with fixed random ``R_j`` (so every output element matters);
3. the analytic gradient: feed ``R_j`` as the output gradients, run the ops
   :func:`~caffe2rnn.operators.gradient_maker.get_gradient_for_op` makes, read
   the input's gradient blob;
4. the numeric gradient: ``(loss(x + ε e_k) − loss(x − ε e_k)) / 2ε`` for every
   element k of the checked input (:func:`numeric_gradient`, the project's one
   finite-difference loop: the example cells, the history reproductions and the
   demo call it too).

Use float64 inputs for tight checks (``eps=1e-6`` gives ~1e-9 accuracy).
"""

import numpy as np

from .errors import ArgumentError, BlobNotFoundError, GradientError, ShapeError
from .operators.gradient_maker import get_gradient_for_op
from .runtime import Workspace


def numeric_gradient(f, x, eps=1e-6, indices=None):
    """Central differences of the scalar ``f(x)`` with respect to each element of ``x``.

    ``x`` is perturbed *in place*, one element at a time, by ``±eps`` and
    restored, so ``f`` may read it as its argument or through a closure (a
    blob fed from it, an entry of a dict of values). Returns a float64 array
    shaped like ``x``; with ``indices`` (flat indices) only those entries are
    computed and the others are 0. In float64 with ``eps=1e-6`` the error is
    ~1e-9 for smooth ``f`` (truncation ~eps², round-off ~1e-16/eps).
    """
    x = np.asarray(x)
    numeric = np.zeros(x.shape, dtype=np.float64)
    for k in range(x.size) if indices is None else indices:
        where = np.unravel_index(int(k), x.shape)
        orig = x[where]
        x[where] = orig + eps
        plus = float(f(x))
        x[where] = orig - eps
        minus = float(f(x))
        x[where] = orig
        numeric[where] = (plus - minus) / (2 * eps)
    return numeric


def _run(op_def, names, arrays):
    ws = Workspace(name="gradient_checker")
    for name, array in zip(names, arrays):
        ws.feed(name, array)
    ws.run_operator_once(op_def)
    return ws


def _loss(op_def, names, arrays, weights):
    ws = _run(op_def, names, arrays)
    return sum(float(np.sum(ws.fetch(op_def.output[j]) * w)) for j, w in weights.items())


def _check_index(argument, indices, size, op_def, what):
    """Refuse an index that names no input/output (a negative one too: Python
    would count it from the end, and the op's gradient would not be asked for)."""
    for i in indices:
        if not (isinstance(i, (int, np.integer)) and 0 <= i < size):
            raise ArgumentError(
                "gradient check of %s: argument %s holds %r; the op has %d %s (0..%d)"
                % (op_def.type, argument, i, size, what, size - 1)
            )


def gradients(
    op_def, inputs, input_index, outputs_with_grads=(0,), eps=1e-6, seed=0, grad_ops_filter=None
):
    """Return ``(analytic, numeric)`` gradients of the op's input ``input_index``.

    ``inputs`` are arrays in the order of ``op_def.input``.
    """
    names = list(op_def.input)
    _check_index("input_index", [input_index], len(names), op_def, "inputs")
    _check_index("outputs_with_grads", outputs_with_grads, len(op_def.output), op_def, "outputs")
    arrays = [np.array(a, copy=True) for a in inputs]
    rng = np.random.RandomState(seed)
    ws = _run(op_def, names, arrays)
    weights = {}
    for j in outputs_with_grads:
        y = ws.fetch(op_def.output[j])
        weights[j] = rng.standard_normal(y.shape).astype(y.dtype)

    g_output = [
        op_def.output[j] + "_grad" if j in weights else None for j in range(len(op_def.output))
    ]
    grad_ops, g_input = get_gradient_for_op(op_def, g_output)
    if grad_ops_filter is not None:
        grad_ops = grad_ops_filter(grad_ops)
    for j, w in weights.items():
        ws.feed(g_output[j], w)
    for grad_op in grad_ops:
        ws.run_operator_once(grad_op)
    grad_name = g_input[input_index]
    if grad_name is None:
        raise ValueError(
            "%s has no gradient for input %d ('%s')"
            % (op_def.type, input_index, names[input_index])
        )
    analytic = ws.fetch(str(grad_name))

    numeric = numeric_gradient(
        lambda _: _loss(op_def, names, arrays, weights), arrays[input_index], eps
    )
    return analytic, numeric


def assert_gradient_close(
    op_def, inputs, input_index, outputs_with_grads=(0,), eps=1e-6, rtol=1e-5, atol=1e-7, seed=0
):
    """Fail with a clear message when analytic and numeric gradients differ."""
    analytic, numeric = gradients(op_def, inputs, input_index, outputs_with_grads, eps, seed)
    np.testing.assert_allclose(
        analytic,
        numeric,
        rtol=rtol,
        atol=atol,
        err_msg="%s: gradient of input %d ('%s') differs from finite differences"
        % (op_def.type, input_index, op_def.input[input_index]),
    )
    return analytic, numeric


# ---------------------------------------------------------------------------
# Caffe2's API: ``gradient_checker.GradientChecker`` and ``NetGradientChecker``
# (caffe2/python/gradient_checker.py, 0cdd09da6; the same at 042e8ede4). Its
# test utilities (``hypothesis_test_util.assertGradientChecks``) and
# ``gradient_check_test.py`` call these, so they keep Caffe2's signatures,
# loss and tolerance rule: a Caffe2 test passes or fails here as it did there.
# ---------------------------------------------------------------------------


def _dense(grad, like):
    """A gradient as a dense array shaped like ``like``.

    A ``core.GradientSlice`` (sparse: ``indices`` and ``values`` blobs) is
    added into zeros row by row, repeated indices summed, as Caffe2 did with
    ``ScatterWeightedSum`` (GradientChecker) or ``SparseToDense``
    (NetGradientChecker).
    """
    from . import core, workspace

    if not isinstance(grad, core.GradientSlice):
        return workspace.FetchBlob(str(grad))
    indices = workspace.FetchBlob(str(grad.indices))
    values = workspace.FetchBlob(str(grad.values))
    dense = np.zeros(np.shape(like), dtype=values.dtype)
    np.add.at(dense, indices.astype(np.int64), values)
    return dense


class GradientChecker:
    """Caffe2's operator gradient checker (``CheckSimple``).

    The loss is ``½ Σ ‖Y_j‖²`` over the outputs ``outputs_with_grads``, whose
    gradient ``Y_j`` itself is fed as ``Y_j_grad``; the numeric gradient uses
    central differences with step ``stepsize`` on the caller's input array
    (changed in place, then restored); an element fails when
    ``np.isclose(grad, estimate, atol=threshold, rtol=threshold)`` does not
    hold. The loss sums in the outputs' dtype and accumulates in a Python
    float, as Caffe2 did under NumPy 1.13, so float32 checks have the
    precision they had there. Runs in the workspace ``workspace_name``
    (created when missing; reset afterwards and the caller's workspace made
    current again).
    """

    def __init__(self, stepsize, threshold, device_option=None, workspace_name="gradient_check"):
        from .proto import caffe2_pb2

        self._stepsize = stepsize
        self._threshold = threshold
        self._device_option = device_option or caffe2_pb2.DeviceOption()
        self._workspace_name = workspace_name

    def GetLossAndGrad(self, op, grad_ops, x, input_name, grad_name, outputs_with_grads):
        """Run ``op`` with input ``input_name`` set to ``x``, then its gradient
        ops; return ``(loss, gradient of input_name)``."""
        from . import workspace

        workspace.FeedBlob(input_name, x, self._device_option)
        workspace.RunOperatorOnce(op)
        loss = 0.0
        for index in outputs_with_grads:
            output = workspace.FetchBlob(op.output[index])
            loss += float((output**2).sum())
            workspace.FeedBlob(op.output[index] + "_grad", output, self._device_option)
        workspace.RunOperatorsOnce(grad_ops)
        return loss / 2.0, _dense(grad_name, x)

    def CheckSimple(
        self,
        op,
        inputs,
        input_to_check,
        outputs_with_grads,
        grad_ops=None,
        input_device_options=None,
    ):
        """Check the gradient of ``op``'s input ``input_to_check``.

        Returns ``(passed, analytic_gradient, numeric_estimate)``. ``grad_ops``
        defaults to what the gradient registry makes for ``op``.
        """
        from . import core, workspace

        input_device_options = input_device_options or {}
        caller_workspace = workspace.CurrentWorkspace()
        switched = self._workspace_name != caller_workspace
        if switched:
            workspace.SwitchWorkspace(self._workspace_name, True)
        try:
            op.device_option.CopyFrom(self._device_option)
            registry_ops, g_input = core.GradientRegistry.GetGradientForOp(
                op, [name + "_grad" for name in op.output]
            )
            if grad_ops is None:
                grad_ops = registry_ops
            for name, array in zip(op.input, inputs):
                workspace.FeedBlob(name, array, input_device_options.get(name, self._device_option))
            x = inputs[input_to_check]
            input_name, grad_name = op.input[input_to_check], g_input[input_to_check]

            def loss_and_grad():
                return self.GetLossAndGrad(
                    op, grad_ops, x, input_name, grad_name, outputs_with_grads
                )

            _, grad = loss_and_grad()
            estimate = np.zeros_like(x)
            if estimate.shape != grad.shape:
                raise ShapeError(
                    "gradient of %s input %d ('%s'): shape %s, but the input is %s"
                    % (op.type, input_to_check, input_name, grad.shape, estimate.shape)
                )
            for k in range(x.size):
                original = x.flat[k]
                x.flat[k] = original + self._stepsize
                plus, _ = loss_and_grad()
                x.flat[k] = original - self._stepsize
                minus, _ = loss_and_grad()
                x.flat[k] = original
                estimate.flat[k] = (plus - minus) / self._stepsize / 2
            failed = np.flatnonzero(
                ~np.isclose(grad, estimate, atol=self._threshold, rtol=self._threshold)
            )
            if failed.size:
                print("Failed. [idx, grad, grad_estimate] are:")
                print(np.vstack([failed, grad.flat[failed], estimate.flat[failed]]).T)
            return failed.size == 0, grad, estimate
        finally:
            if switched:
                workspace.ResetWorkspace()
                workspace.SwitchWorkspace(caller_workspace)


def _assert_close(value1, value2, threshold, err_msg=""):
    """``assert_allclose`` with ``threshold`` as both tolerances; returns the
    mean and largest absolute difference."""
    np.testing.assert_allclose(value1, value2, atol=threshold, rtol=threshold, err_msg=err_msg)
    delta = np.abs(np.asarray(value1) - np.asarray(value2)).ravel()
    return np.mean(delta), max(delta)


def _net_gradients(net, outputs, outputs_with_grad, input_values, inputs_with_grads):
    """Run a copy of ``net`` with gradient operators for ``outputs_with_grad``
    (each seeded with ones) in the current workspace, after feeding
    ``input_values``. Returns ``([(output, value)...], {input: gradient},
    the copy)``."""
    from . import workspace

    grad_net = net.Clone(net.Name() + "_copy")
    grad_map = grad_net.AddGradientOperators(outputs_with_grad)
    for name, value in (input_values or {}).items():
        workspace.FeedBlob(name, value)
    for name in inputs_with_grads:
        if name not in grad_map:
            raise GradientError("%s has no gradient, cannot check net gradient." % name)
        if not workspace.HasBlob(str(name)):
            raise BlobNotFoundError("input %s to check is not in the workspace" % name)
    workspace.RunNetOnce(grad_net)
    results = [(output, workspace.FetchBlob(str(output))) for output in outputs]
    grads = {
        name: _dense(grad_map[name], workspace.FetchBlob(str(name))) for name in inputs_with_grads
    }
    return results, grads, grad_net


#: Draws a net as PNG bytes for ``CompareNets(print_net_images=True)``:
#: :mod:`caffe2rnn.viz` registers its drawing here when imported (the drawing
#: layer sits above this module, so it plugs in rather than being imported);
#: ``import caffe2rnn`` imports it. Caffe2 used ``net_drawer`` (pydot).
net_png_drawer = None


def register_net_png_drawer(drawer):
    """Set what draws nets for ``print_net_images`` (``drawer(net) -> bytes``)."""
    global net_png_drawer
    net_png_drawer = drawer


def _write_net_images(nets, prefix):
    """Caffe2's files: ``<prefix><i><net name>.png`` in the current folder."""
    if net_png_drawer is None:
        raise ArgumentError("print_net_images: no net drawer is registered (import caffe2rnn.viz)")
    for i, net in enumerate(nets):
        with open("%s%d%s.png" % (prefix, i, net.Name()), "wb") as handle:
            handle.write(net_png_drawer(net))


class NetGradientChecker:
    """Caffe2's whole-net checks: ``Check`` (finite differences of the summed
    outputs) and ``CompareNets`` (nets that must agree on outputs and
    gradients). Both run in the current workspace."""

    @staticmethod
    def CompareNets(
        nets,
        outputs,
        outputs_with_grad_ids,
        inputs_with_grads,
        input_values=None,
        threshold=0.0000001,
        print_net_images=False,
    ):
        """Run each net (with gradients of its outputs ``outputs_with_grad_ids``)
        and assert that all agree with the first on outputs and on the
        gradients of ``inputs_with_grads``."""
        if print_net_images:  # as Caffe2: the forward nets, then the gradient nets
            _write_net_images(nets, "caffe2_net_forward_")
        results = []
        for net, net_outputs in zip(nets, outputs):
            with_grad = [net_outputs[j] for j in outputs_with_grad_ids]
            results.append(
                _net_gradients(net, net_outputs, with_grad, input_values, inputs_with_grads)
            )
        if print_net_images:
            _write_net_images([grad_net for _, _, grad_net in results], "caffe2_net_")
        first_results, first_grads, _ = results[0]
        for net_results, net_grads, _ in results[1:]:
            assert len(net_results) == len(first_results)
            for idx, ((blob1, value1), (blob2, value2)) in enumerate(
                zip(first_results, net_results)
            ):
                _assert_close(
                    value1,
                    value2,
                    threshold,
                    "Different forward pass results for output id %d. "
                    "Corresponding output blobs: %s and %s" % (idx, blob1, blob2),
                )
            assert net_grads.keys() == first_grads.keys()
            for blob, value in net_grads.items():
                _assert_close(
                    first_grads[blob], value, threshold, "Different gradients for input %s" % blob
                )

    @staticmethod
    def Check(
        net,
        outputs_with_grad,
        input_values,
        input_to_check,
        step_size=0.0001,
        threshold=0.05,
        print_net=True,
    ):
        """Assert that the gradient of ``sum(outputs_with_grad)`` with respect
        to ``input_to_check`` matches central differences; returns the mean
        and largest absolute difference."""
        from . import workspace

        _, grads, grad_net = _net_gradients(
            net, [], outputs_with_grad, input_values, [input_to_check]
        )
        analytic = grads[input_to_check]
        original = input_values[input_to_check]

        def loss(k, delta):
            value = original.copy()
            value.flat[k] += delta
            workspace.FeedBlob(input_to_check, value)
            workspace.RunNetOnce(grad_net)
            return sum(workspace.FetchBlob(str(o)) for o in outputs_with_grad).sum()

        estimate = np.zeros_like(original)
        for k in range(original.size):
            estimate.flat[k] = (loss(k, step_size) - loss(k, -step_size)) / step_size / 2
        message = "Error in gradient check for net_copy %s" % net.Name()
        if print_net:
            message += ": %s" % net.Proto()
        return _assert_close(analytic, estimate, threshold, message)

"""Summing the gradients of a blob that several operators read.

When one version of a blob feeds several forward ops, each of their gradient
makers produces a gradient for it (a *generator*), and Caffe2's backward
builder (``IR.DoGradientAccumulation`` in ``caffe2/python/core.py``) adds them
up once the backward sweep reaches the blob's first reader:

* every generator is a record of *which gradient op output* holds the
  gradient (``GradGenMeta``), or says that the maker passed an existing blob
  through (``grad_op`` None: ``Sum``, ``Add``, ``Alias`` makers, and the y's
  own gradient);
* generator outputs are renamed ``_<grad>_autosplit_<i>`` **inside the
  gradient ops already emitted** (the records hold those very op objects), so
  that the new ``Sum`` can read them and write the plain gradient name.

Dense example (E5), ``in`` read by three ``Direct`` ops::

    DirectGradient(hidden3_grad -> in_grad)                  # first: kept
    DirectGradient(hidden2_grad -> _in_grad_autosplit_0)      # renamed
    DirectGradient(hidden1_grad -> _in_grad_autosplit_1)      # renamed
    Sum([in_grad, _in_grad_autosplit_0, _in_grad_autosplit_1] -> in_grad)

Before b80ac2b2a (2017-06-11, eras E0-E4) the first one was renamed too
(``_in_grad_autosplit_0``...) and the Sum wrote ``in_grad`` from renamed
blobs only. Sparse gradients (``GradientSlice``) are "summed" by
concatenating their indices and their values (two ``Concat`` ops, axis 0).
"""

import collections

from .. import eras
from ..errors import GradientError
from .blob import BlobReference, GradientSlice
from .operator import CreateOperator

#: A dense gradient's producer: ``grad_op.output[idx]`` holds ``gradient``;
#: ``grad_op`` is None for a pass-through (the maker reused an existing blob).
GradGenMeta = collections.namedtuple("GradGenMeta", ["grad_op", "idx", "gradient"])
#: The same for a ``GradientSlice``, whose two halves may come from two ops.
SparseGradGenMeta = collections.namedtuple(
    "SparseGradGenMeta",
    ["grad_op_indices", "idx_indices", "grad_op_values", "idx_values", "gradient"],
)


def gradient_ops_of(generator):
    """The gradient ops that produced a generator's blob(s) (maybe none)."""
    if isinstance(generator, GradGenMeta):
        ops = [generator.grad_op]
    else:
        ops = [generator.grad_op_indices, generator.grad_op_values]
    return [op for op in ops if op is not None]


def merge_sparse(name, parts):
    """One generator from the records of the ops writing a slice's indices
    and its values (one forward op's gradient ops may split the two)."""
    merged = parts[0]
    for part in parts[1:]:
        if (part.grad_op_indices is not None and merged.grad_op_indices is not None) or (
            part.grad_op_values is not None and merged.grad_op_values is not None
        ):
            raise GradientError(
                "Two gradient ops of one operator write the same half of the "
                "sparse gradient %s of '%s'" % (tuple(part.gradient), name)
            )
        merged = SparseGradGenMeta(
            _first_op(merged.grad_op_indices, part.grad_op_indices),
            merged.idx_indices + part.idx_indices,
            _first_op(merged.grad_op_values, part.grad_op_values),
            merged.idx_values + part.idx_values,
            merged.gradient,
        )
    return merged


def _first_op(a, b):
    return a if a is not None else b


def needs_sum(name, generators):
    """True if the ``generators`` of blob ``name`` must be added up.

    Raises :class:`GradientError` if they cannot be: dense and sparse mixed,
    different device options, or (E0-E4) different gradient names.
    """
    if len({type(g) for g in generators}) > 1:
        raise GradientError(
            "Automatic aggregation of a mix of sparse and dense gradients is not "
            "supported yet (gradients of '%s')" % name
        )
    if len(generators) < 2:
        return False
    made = [g for g in generators if gradient_ops_of(g)]
    if eras.current().equal_generator_names:
        names = {str(g.gradient) for g in made}
        if len(names) > 1:
            raise GradientError(
                "Unexpected behavior: not all grad output names are the same "
                "(gradients of '%s': %s)" % (name, ", ".join(sorted(names)))
            )
    options = [op.device_option for g in made for op in gradient_ops_of(g)]
    if any(option != options[0] for option in options[1:]):
        raise GradientError(
            "Unexpected behavior: not all grad ops have the same device option "
            "(gradients of '%s')" % name
        )
    return True


def make_sum_ops(name, generators):
    """``(ops, gradient)``: the ops adding up ``generators`` (renaming their
    outputs in place) and the name (or slice) of the total."""
    base = _sum_output_name(name, generators)
    if isinstance(generators[0], GradGenMeta):
        ops, gradient = _dense_sum(generators, base)
    else:
        ops, gradient = _sparse_concat(generators, base)
    _copy_device_option(ops, generators)
    return ops, gradient


def _sum_output_name(name, generators):
    """The first made gradient's name (before renaming), else ``name_grad``.
    A slice's name loses its ``_indices`` / ``_values`` suffix."""
    for g in generators:
        if isinstance(g, GradGenMeta):
            if g.grad_op is not None:
                return g.grad_op.output[g.idx]
        elif g.grad_op_indices is not None:
            return _strip(g.grad_op_indices.output[g.idx_indices], "_indices")
        elif g.grad_op_values is not None:
            return _strip(g.grad_op_values.output[g.idx_values], "_values")
    return name + "_grad"


def _strip(name, suffix):
    return name[: -len(suffix)] if name.endswith(suffix) else name


def _rename(grad_op, idx, count):
    grad_op.output[idx] = "_%s_autosplit_%d" % (grad_op.output[idx], count)
    return grad_op.output[idx]


def _check_no_conflict(base, gradient):
    # A passed-through blob named like the total would be read and written
    # by the Sum at once, in a position other than its in-place first input.
    if str(gradient) == str(base):
        raise GradientError(
            "The gradient output of empty gradient op can not be the same as the "
            "normal name of the current input gradient. ('%s')" % base
        )


def _dense_sum(generators, base):
    keep_first = eras.current().first_generator_keeps_name
    inputs, count, kept = [], 0, False
    for g in generators:
        if g.grad_op is None:
            _check_no_conflict(base, g.gradient)
            inputs.append(str(g.gradient))
        elif keep_first and not kept:
            kept = True
            inputs.append(g.grad_op.output[g.idx])
        else:
            inputs.append(_rename(g.grad_op, g.idx, count))
            count += 1
    if keep_first and base in inputs:
        # Sum may run in place only on its first input.
        i = inputs.index(base)
        inputs[0], inputs[i] = inputs[i], inputs[0]
    # BlobReferences: names are final, the current name scope must not apply.
    op = CreateOperator("Sum", [BlobReference(x) for x in inputs], BlobReference(base))
    return [op], base


def _sparse_concat(generators, base):
    """Concatenate indices and values (duplicates are removed later, by the
    optimizer, in Caffe2). Every made half is renamed, in every era."""
    halves = {"indices": [], "values": []}
    counts = {"indices": 0, "values": 0}
    for g in generators:
        for half, op, idx in (
            ("indices", g.grad_op_indices, g.idx_indices),
            ("values", g.grad_op_values, g.idx_values),
        ):
            if op is None:
                given = getattr(g.gradient, half)
                _check_no_conflict(base, given)
                halves[half].append(str(given))
            else:
                halves[half].append(_rename(op, idx, counts[half]))
                counts[half] += 1
    ops = [
        CreateOperator(
            "Concat",
            [BlobReference(x) for x in halves[half]],
            [
                BlobReference(base + "_%s_concat" % half),
                BlobReference(base + "_%s_concat_split" % half),
            ],
            axis=0,
        )
        for half in ("indices", "values")
    ]
    return ops, GradientSlice(indices=base + "_indices_concat", values=base + "_values_concat")


def _copy_device_option(sum_ops, generators):
    """Run the Sum where the gradients were made (one device, checked by
    :func:`needs_sum`): the first generator with an op decides; of a slice,
    Caffe2 looked at the values op first."""
    for generator in generators:
        ops = gradient_ops_of(generator)
        if ops:
            if ops[-1].HasField("device_option"):
                for op in sum_ops:
                    op.device_option.CopyFrom(ops[-1].device_option)
            return

"""Caffe2's helpers whose operators caffe2rnn does not implement.

Caffe2's ``brew`` (and ``CNNModelHelper``, which calls it) had helpers for
operators outside what recurrent networks need: batch normalisation
(``SpatialBN``), transposed and split-group convolutions (``ConvTranspose``,
``DepthSplit``), the FC variants (``PackedFC``, ``FC_Prune``, ``FC_Decomp``,
``FC_Sparse``), ``MaxPoolWithIndex`` (GPU only) and ``VideoInput``. (E6's
``brew.cond`` and ``brew.loop`` are implemented: :mod:`caffe2rnn.helpers.control_ops`.)
They exist here with Caffe2's names and signatures, so code written against
Caffe2 finds them; calling one raises an
:class:`~caffe2rnn.errors.UnknownOperatorError` (an ``AttributeError``) that
names the operator missing — before it creates any parameter or op, so the
model is left as it was.

Caffe2: caffe2/python/helpers/{conv,fc,normalization,pooling,tools}.py at 0cdd09da6 and 042e8ede4.
"""

from ..errors import UnknownOperatorError
from ..runtime import registry


def _requires(helper, *op_types):
    missing = [t for t in op_types if not registry.is_registered(t)]
    if missing:
        raise UnknownOperatorError(
            "brew.%s needs the operator%s %s, which caffe2rnn does not implement"
            % (helper, "s" if len(missing) > 1 else "", ", ".join(missing))
        )


def conv_transpose(
    model,
    blob_in,
    blob_out,
    dim_in,
    dim_out,
    kernel,
    weight_init=None,
    bias_init=None,
    use_cudnn=False,
    order="NCHW",
    cudnn_exhaustive_search=False,
    ws_nbytes_limit=None,
    **kwargs,
):
    """A transposed convolution: ``ConvTranspose([in, <out>_w, <out>_b] → out)``."""
    _requires("conv_transpose", "ConvTranspose")


def group_conv_deprecated(
    model,
    blob_in,
    blob_out,
    dim_in,
    dim_out,
    kernel,
    weight_init=None,
    bias_init=None,
    group=1,
    use_cudnn=False,
    order="NCHW",
    cudnn_exhaustive_search=False,
    ws_nbytes_limit=None,
    **kwargs,
):
    """A group convolution simulated by ``DepthSplit``, one Conv per group and ``Concat``."""
    _requires("group_conv_deprecated", "DepthSplit")


def packed_fc(model, *args, **kwargs):
    """An FC whose weights are pre-packed: ``PackedFC``."""
    _requires("packed_fc", "PackedFC")


def fc_decomp(
    model,
    blob_in,
    blob_out,
    dim_in,
    dim_out,
    rank_approx=5,
    weight_init=None,
    bias_init=None,
    **kwargs,
):
    """An FC with a low-rank weight ``U·Vᵀ``: ``FC_Decomp``."""
    _requires("fc_decomp", "FC_Decomp")


def fc_prune(
    model,
    blob_in,
    blob_out,
    dim_in,
    dim_out,
    weight_init=None,
    bias_init=None,
    mask_init=None,
    threshold=0.00001,
    need_compress_rate=False,
    comp_lb=0.05,
    **kwargs,
):
    """An FC with a pruning mask: ``FC_Prune``."""
    _requires("fc_prune", "FC_Prune")


def fc_sparse(model, blob_in, blob_out, w_csr, iw, jw, bias, **kwargs):
    """An FC with a CSR weight: ``FC_Sparse``."""
    _requires("fc_sparse", "FC_Sparse")


def spatial_bn(model, blob_in, blob_out, dim_in, order="NCHW", **kwargs):
    """Batch normalisation: ``SpatialBN`` with scale, bias and running statistics."""
    _requires("spatial_bn", "SpatialBN")


def max_pool_with_index(model, blob_in, blob_out, order="NCHW", **kwargs):
    """Max pooling that also writes the argmax: ``MaxPoolWithIndex`` (GPU only in Caffe2)."""
    _requires("max_pool_with_index", "MaxPoolWithIndex")


def video_input(model, blob_in, blob_out, **kwargs):
    """Decoded video clips and labels: ``VideoInput``."""
    _requires("video_input", "VideoInput")

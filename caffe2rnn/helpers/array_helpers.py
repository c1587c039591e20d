"""``brew.concat`` and its old name ``brew.depth_concat``."""

import logging

from .. import eras

logger = logging.getLogger(__name__)


def concat(model, blobs_in, blob_out, order="NCHW", **kwargs):
    """``Concat``; returns only the result (the split sizes go to ``_<out>_concat_dims``).

    From E6 (042e8ede4) an ``axis`` drops the ``order`` the model's
    ``arg_scope`` brings ("The backend throws an error if both are given");
    before, both reached the op, which refused them (E5's Concat wanted
    exactly one)."""
    if eras.current().concat_add_axis and order and kwargs.get("axis"):
        return model.net.Concat(blobs_in, [blob_out, "_" + blob_out + "_concat_dims"], **kwargs)[0]
    return model.net.Concat(
        blobs_in, [blob_out, "_" + blob_out + "_concat_dims"], order=order, **kwargs
    )[0]


def depth_concat(model, blobs_in, blob_out, **kwargs):
    """The deprecated name of :func:`concat`.

    Caffe2 E5 called ``concat(blobs_in, blob_out, ...)`` here, without the
    model, so the helper failed; it is the intended call here.
    """
    logger.warning("DepthConcat is deprecated. use Concat instead.")
    return concat(model, blobs_in, blob_out, **kwargs)

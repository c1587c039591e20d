"""``brew.concat`` and its old name ``brew.depth_concat``."""

import logging

logger = logging.getLogger(__name__)


def concat(model, blobs_in, blob_out, order="NCHW", **kwargs):
    """``Concat``; returns only the result (the split sizes go to ``_<out>_concat_dims``)."""
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

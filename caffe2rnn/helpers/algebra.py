"""``brew.transpose``, ``brew.sum`` and (from E6) ``brew.batch_mat_mul``."""


def transpose(model, blob_in, blob_out, use_cudnn=False, **kwargs):
    """``Transpose`` (``axes=...``); engine CUDNN when ``use_cudnn``."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    return model.net.Transpose(blob_in, blob_out, **kwargs)


def sum(model, blob_in, blob_out, **kwargs):  # noqa: A001 - Caffe2's name
    """``Sum`` of the input blobs."""
    return model.net.Sum(blob_in, blob_out, **kwargs)


def batch_mat_mul(model, blob_in, blob_out, enable_tensor_core=False, **kwargs):
    """``BatchMatMul([A, B] → blob_out)``; engine TENSORCORE when asked (a helper
    of 042e8ede4)."""
    if enable_tensor_core:
        kwargs["engine"] = "TENSORCORE"
    return model.net.BatchMatMul(blob_in, blob_out, **kwargs)

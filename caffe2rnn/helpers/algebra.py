"""``brew.transpose`` and ``brew.sum``."""


def transpose(model, blob_in, blob_out, use_cudnn=False, **kwargs):
    """``Transpose`` (``axes=...``); engine CUDNN when ``use_cudnn``."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    return model.net.Transpose(blob_in, blob_out, **kwargs)


def sum(model, blob_in, blob_out, **kwargs):  # noqa: A001 - Caffe2's name
    """``Sum`` of the input blobs."""
    return model.net.Sum(blob_in, blob_out, **kwargs)

"""``brew.max_pool`` and ``brew.average_pool``."""


def max_pool(model, blob_in, blob_out, use_cudnn=False, order="NCHW", **kwargs):
    """``MaxPool(blob_in → blob_out, order=...)``; engine CUDNN when ``use_cudnn``."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    return model.net.MaxPool(blob_in, blob_out, order=order, **kwargs)


def average_pool(model, blob_in, blob_out, use_cudnn=False, order="NCHW", **kwargs):
    """``AveragePool(blob_in → blob_out, order=...)``; engine CUDNN when ``use_cudnn``."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    return model.net.AveragePool(blob_in, blob_out, order=order, **kwargs)

"""``brew.relu``."""


def relu(model, blob_in, blob_out, use_cudnn=False, order="NCHW", **kwargs):
    """``Relu(blob_in → blob_out, order=...)``; engine CUDNN when ``use_cudnn``."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    return model.net.Relu(blob_in, blob_out, order=order, **kwargs)

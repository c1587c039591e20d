"""``brew.dropout``."""


def dropout(model, blob_in, blob_out, use_cudnn=False, **kwargs):
    """``Dropout(blob_in → [blob_out, _<out>_mask])`` (``ratio``, ``is_test``...);
    returns ``blob_out``. Engine CUDNN when ``use_cudnn``."""
    if use_cudnn:
        kwargs["engine"] = "CUDNN"
    return model.net.Dropout(blob_in, [blob_out, "_" + blob_out + "_mask"], **kwargs)[0]

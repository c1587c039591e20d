"""``brew.image_input``: an ``ImageInput`` op, in the layout the model wants.

``ImageInput`` produces NHWC images; with ``order='NCHW'`` (the model's
default ``arg_scope``) the helper names its output ``<data>_nhwc`` and adds
``NHWC2NCHW`` to make ``data`` (Caffe2 caffe2/python/helpers/tools.py,
0cdd09da6). ``use_gpu_transform`` asked the op to transpose on the GPU
instead. See :mod:`caffe2rnn.operators.image_input` for what the op does here.
"""


def image_input(model, blob_in, blob_out, order="NCHW", use_gpu_transform=False, **kwargs):
    """Returns ``(data, label)``; ``blob_out`` names them."""
    if order == "NCHW" and use_gpu_transform:
        kwargs["use_gpu_transform"] = 1
        return model.net.ImageInput(blob_in, [blob_out[0], blob_out[1]], **kwargs)
    if order == "NCHW":
        data, label = model.net.ImageInput(blob_in, [blob_out[0] + "_nhwc", blob_out[1]], **kwargs)
        return model.net.NHWC2NCHW(data, blob_out[0]), label
    return model.net.ImageInput(blob_in, blob_out, **kwargs)

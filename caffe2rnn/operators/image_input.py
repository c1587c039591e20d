"""ImageInput: batches of images from an image database, as an op.

Caffe2's ``ImageInput`` (caffe2/image/image_input_op.{h,cc}, 0cdd09da6) read
records from a ``DBReader`` (input 0; or, with no input, a database it opened
itself from the ``db`` and ``db_type`` arguments), decoded and augmented the
images with OpenCV on a thread pool and produced ``data`` (N, crop, crop,
C), float, NHWC, and ``label``. ``brew.image_input`` builds it, and
Caffe2's tests build image models with it that they never run (a predictor
is extracted from them, for instance).

caffe2rnn has no image databases and no image decoding, so this op is here to
be *built*: it is registered with Caffe2's schema (0 or 1 input, 2 outputs,
no gradient) and, when a net containing it is created, checks its arguments
exactly as Caffe2's constructor did. Running it is an error that says so.
"""

from ..errors import ArgumentError, EnforceNotMet
from ..runtime.registry import register, register_gradient
from .base import Operator
from .gradient_maker import NoGradient


@register("ImageInput", inputs=(0, 1), outputs=2)
class ImageInput(Operator):
    """Images and labels from a database (see the module docstring): built, not run."""

    def setup(self):
        single = self.args.single
        if not self.def_.input:
            self.check(bool(single("db", "", str)), "Must specify a db name.", ArgumentError)
        self.check(single("batch_size", 0) > 0, "Batch size should be nonnegative.", ArgumentError)
        multiple_label = single("multiple_label", 0)
        if single("use_caffe_datum", 0):
            self.check(
                multiple_label == 0, "Caffe datum does not support multiple labels", ArgumentError
            )
        if multiple_label:
            self.check(
                single("num_labels", 0) > 0,
                "Number of labels must be set for using multiple label output.",
                ArgumentError,
            )
        scale, minsize, crop = single("scale", -1), single("minsize", -1), single("crop", -1)
        self.check(
            (scale > 0) != (minsize > 0),
            "Must provide one and only one of scaling or minsize",
            ArgumentError,
        )
        self.check(crop > 0, "Must provide the cropping value.", ArgumentError)
        self.check(
            (scale if scale > 0 else minsize) >= crop,
            "The scale/minsize value must be no smaller than the crop value.",
            ArgumentError,
        )
        mean = self.args.repeated("mean_per_channel", [single("mean", 0.0, float)], float)
        std = self.args.repeated("std_per_channel", [single("std", 1.0, float)], float)
        self.check(
            len(mean) == len(std),
            "The mean and std. dev vectors must be of the same size.",
            ArgumentError,
        )
        self.check(
            len(mean) in (1, 3),
            "The mean and std. dev vectors must be of size 1 or 3",
            ArgumentError,
        )

    def run(self):
        raise EnforceNotMet(
            "ImageInput decodes images read from an image database (a DBReader in input 0, "
            "or argument 'db'); caffe2rnn reads no image databases and decodes no images"
        )


register_gradient("ImageInput")(NoGradient)

"""``brew.layer_norm``: LayerNorm plus its learned gain and bias (Caffe2 2017-09)."""

from ..modeling.initializers import Initializer
from ..modeling.parameter_info import ParameterTags


def layer_norm(
    model, blob_in, blob_out, dim_in, axis=1, epsilon=1e-4, initial_scale=1.0, initial_bias=0.0
):
    """Layer-normalise ``blob_in`` along ``axis`` (arXiv:1607.06450).

    ``LayerNorm`` gives ``blob_out`` (zero mean, unit variance per row),
    ``<blob_out>_mean`` and ``<blob_out>_stdev``; then the learned per-unit
    ``<blob_out>_scale`` (``[dim_in]``, initial ``initial_scale``) multiplies
    it and ``<blob_out>_bias`` is added, both broadcast from ``axis``.
    Returns ``(<blob_out>_biased, mean, stdev)``.
    """
    normalized, mean, stdev = model.net.LayerNorm(
        [blob_in],
        [blob_out, blob_out + "_mean", blob_out + "_stdev"],
        axis=axis,
        epsilon=epsilon,
    )
    scale = model.create_param(
        param_name=f"{blob_out}_scale",
        shape=[dim_in],
        initializer=Initializer("ConstantFill", value=initial_scale),
        tags=ParameterTags.WEIGHT,
    )
    bias = model.create_param(
        param_name=f"{blob_out}_bias",
        shape=[dim_in],
        initializer=Initializer("ConstantFill", value=initial_bias),
        tags=ParameterTags.BIAS,
    )
    scaled = model.net.Mul([normalized, scale], [f"{blob_out}_scaled"], broadcast=1, axis=axis)
    biased = model.net.Add([scaled, bias], [f"{blob_out}_biased"], broadcast=1, axis=axis)
    return biased, mean, stdev

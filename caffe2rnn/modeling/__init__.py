"""``caffe2.python.modeling``: how a model names, shares and creates its parameters.

* :mod:`.parameter_info` — :class:`ParameterTags`, :class:`ParameterInfo`
  (what a model knows about one parameter blob);
* :mod:`.initializers` — :class:`Initializer`, :class:`ExternalInitializer`,
  :func:`update_initializer` (which fill op creates a parameter);
* :mod:`.parameter_sharing` — the :func:`ParameterSharing` context that
  ``ModelHelper.create_param`` consults, so that parameters created under one
  name scope can be the very blobs of another (a static RNN unroll shares one
  set of weights across its timesteps this way).

The package appeared in Caffe2 63cad9610 (2017-05-25); ``model_helper`` keeps
re-exporting these names, as Caffe2 code imported them from either place.
"""

"""Placeholder: the core helper writes get_ssa & co. here."""


def get_ssa(net, blob_versions=None):
    raise NotImplementedError


def get_undefined_blobs(ssa):
    raise NotImplementedError


def get_output_producers(ssa):
    raise NotImplementedError


def get_op_ids_in_path(ssa, blob_versions, inputs, outputs):
    raise NotImplementedError

"""control_ops_util.get_external_blob_names, both historical variants."""

import pytest

from caffe2rnn import core
from caffe2rnn.control_ops_util import get_external_blob_names
from caffe2rnn.errors import BlobNotFoundError


def sub_net():
    """Reads x and outer_w (Net declares it on first read); declares
    ``declared_only`` without reading it; writes h and y (y twice)."""
    net = core.Net("then_net")
    net.Proto().external_input.extend(["x", "declared_only"])
    h = net.Relu("x", "h")
    y = net.Sum([h, "outer_w"], "y")
    net.Relu(y, y)
    net.Proto().external_output.extend(["y", "declared_out"])
    return net


LEXICAL_SCOPE = {"x", "outer_w", "y", "unrelated"}


def test_variant_1_adds_declared_inputs_and_outputs():
    inputs, outputs = get_external_blob_names(sub_net(), LEXICAL_SCOPE, variant=1)
    assert inputs == {"x", "outer_w", "declared_only"}
    assert outputs == {"y", "declared_out"}


def test_variant_2_uses_only_blobs_actually_read_and_written():
    inputs, outputs = get_external_blob_names(sub_net(), LEXICAL_SCOPE)
    assert inputs == {"x", "outer_w"}
    assert outputs == {"y"}
    assert isinstance(inputs, set) and isinstance(outputs, set)


def test_variant_2_requires_inputs_in_the_lexical_scope():
    with pytest.raises(BlobNotFoundError, match="Input blob outer_w is undefined"):
        get_external_blob_names(sub_net(), {"x", "y"}, variant=2)
    inputs, _ = get_external_blob_names(sub_net(), {"x", "y"}, variant=1)
    assert "outer_w" in inputs


def test_net_without_declared_inputs():
    net = core.Net("body")
    net.Proto().op.extend([core.CreateOperator("Relu", "a", "b")])
    assert get_external_blob_names(net, {"a", "b"}) == ({"a"}, {"b"})
    assert get_external_blob_names(net, {"a"}, variant=1) == ({"a"}, set())


def test_unknown_variant():
    with pytest.raises(ValueError, match="variant must be 1"):
        get_external_blob_names(sub_net(), LEXICAL_SCOPE, variant=3)

"""Time reads left to right: the laid-out SVG has the steps in the order they run.

Graphviz orders the nodes of a rank to save crossings, which put the unroll
view's columns in orders like 1, 2, 0, 3. These tests lay each view out
with ``dot`` and read the x positions back from the SVG.
"""

import re
import xml.etree.ElementTree as ET

import pytest

from caffe2rnn import viz
from caffe2rnn.viz import examples
from caffe2rnn.viz.backward_timeline import backward_timeline
from caffe2rnn.viz.render import pipe

SVG = "{http://www.w3.org/2000/svg}"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def left_edges(graph):
    """{title: smallest x of its outline} for every node and cluster of the SVG."""
    root = ET.fromstring(pipe(graph, "svg"))
    found = {}
    for group in root.iter(SVG + "g"):
        title = group.find(SVG + "title")
        if title is None or (group.get("class") or "").split()[:1] not in (["node"], ["cluster"]):
            continue
        xs = []
        for shape in group:
            if shape.tag in (SVG + "polygon", SVG + "path", SVG + "polyline"):
                coords = NUMBER.findall(shape.get("points") or shape.get("d") or "")
                xs += [float(x) for x in coords[0::2]]
            elif shape.tag == SVG + "ellipse":
                xs.append(float(shape.get("cx")) - float(shape.get("rx")))
        if xs:
            found[title.text] = min(xs)
    return found


def assert_left_to_right(positions, titles):
    xs = [positions[t] for t in titles]
    assert xs == sorted(xs) and len(set(xs)) == len(xs), "order on the page: %s" % sorted(
        titles, key=positions.get
    )


@pytest.mark.needs_dot
@pytest.mark.parametrize("T", range(1, 13))
def test_unroll_steps_appear_left_to_right_in_time_order(T):
    positions = left_edges(viz.unroll(examples.mul(), T))
    assert_left_to_right(positions, ["cluster_t%d" % t for t in range(T)])


@pytest.mark.needs_dot
@pytest.mark.parametrize("T", [4, 8])
def test_unroll_of_an_lstm_is_in_time_order(T):
    positions = left_edges(viz.unroll(examples.lstm(), T))
    assert_left_to_right(positions, ["cluster_t%d" % t for t in range(T)])


@pytest.mark.needs_dot
@pytest.mark.parametrize("T", range(1, 13))
def test_backward_steps_appear_left_to_right_in_the_order_they_run(T):
    positions = left_edges(backward_timeline(examples.lstm(), T))
    assert_left_to_right(positions, ["bstep%d" % t for t in range(T - 1, -1, -1)])


def test_backward_timeline_names_the_rows_each_step_reads_and_writes():
    from caffe2rnn.viz.backward_timeline import backward_plan

    _, _, steps, lengths = backward_plan(examples.lstm(), 3)
    states = "lstm/hidden_t_prev_states_grad"
    assert lengths == {states: 4, "lstm/cell_t_prev_states_grad": 4, "input_grad": 3}
    for t in range(3):
        assert (states, t + 1, "lstm/hidden_t_grad") in steps[t]["reads"]
        assert (states, t, "hidden_t_prev_grad") in steps[t]["writes"]
        assert ("input_grad", t, "lstm/gates_t_grad") in steps[t]["writes"]
        assert ("lstm/hidden_t_prev_states", t, "hidden_t_prev") in steps[t]["forward"]
        assert steps[t]["scratch"] == ["lstm/gates_t"]
        assert steps[t]["params"] == ["lstm/gates_t_w_grad", "lstm/gates_t_b_grad"]
    source = backward_timeline(examples.lstm(), 3).source
    # GO of hidden_t_all is added into row t+1 before backward step t
    for t in range(3):
        assert "lstm/hidden_t_all_grad[%d] (before step %d)" % (t, t) in source
    assert "runs 1st of 3" in source and "backward, timestep t = 2" in source


def top_edges(graph):
    """{title: smallest y (top, SVG y grows downwards) of its outline}."""
    root = ET.fromstring(pipe(graph, "svg"))
    found = {}
    for group in root.iter(SVG + "g"):
        title = group.find(SVG + "title")
        if title is None or (group.get("class") or "").split()[:1] != ["cluster"]:
            continue
        for shape in group:
            if shape.tag in (SVG + "polygon", SVG + "path"):
                coords = NUMBER.findall(shape.get("points") or shape.get("d") or "")
                found[title.text] = min(float(y) for y in coords[1::2])
    return found


@pytest.mark.needs_dot
@pytest.mark.parametrize("T", [1, 2, 5, 12])
def test_timeline_steps_appear_top_to_bottom_in_time_order(T):
    positions = top_edges(viz.timeline(examples.lstm(), T))
    ys = [positions["cluster_step%d" % t] for t in range(T)]
    assert ys == sorted(ys) and len(set(ys)) == T, ys

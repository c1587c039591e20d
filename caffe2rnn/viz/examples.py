"""Hand-built RecurrentNetwork operators to draw: mul, sum_mul, lstm, attention.

Each builder returns the ``OperatorDef`` that ``recurrent_net`` (v3, seed
000 #2) makes for its cell. Until :mod:`caffe2rnn.recurrent` exists we write
the cell, its backward ops (what ``GradientRegistry.GetBackwardPass`` gives
under era E5 rules) by hand, and :func:`assemble` performs
``recurrent_net``'s remaining, mechanical steps: references, scratches,
recompute ops in front of the backward net, the backward net's external
inputs, links (forward and backward, with the "Sum as first op" rule),
``_all``/``_last`` aliases, the ``_accum`` rewrite, ``param``/``param_grads``.

* ``mul``: ``hidden_t = input_t * hidden_t_prev``; no parameters, no scratch.
* ``sum_mul``: ``hidden_t = (hidden_t_prev + input_t) * w``; the Sum's gradient
  is a pass-through (so the backward link of ``hidden_t_prev`` reads
  ``sum_t_grad``), ``w`` is a parameter and ``sum_t`` a scratch.
* ``lstm``: ``recurrent.LSTM``'s cell (spec caffe2-core §4.5): FC, in-place
  Sum, LSTMUnit; scratch ``lstm/gates_t``.
* ``attention``: an LSTM-with-attention-sized cell (15 ops, three states);
  the decoder state ``att/hidden_t`` is also read inside the cell, so its
  internal gradient goes through ``_accum``; the attention logits are
  recomputed on backward.
"""
from .. import core
from .. import recurrent_stages as stages
from ..core.operator import CreateOperator as Op
from ..proto import caffe2_pb2


def _grad(op_type, inputs, outputs, **arguments):
    op = Op(op_type, inputs, outputs, **arguments)
    op.is_gradient_op = True
    return op


def _net(name, ops, external_input, external_output):
    return caffe2_pb2.NetDef(name=name, op=ops, external_input=external_input,
                             external_output=external_output)


def assemble(name, cell, backward_ops, backward_mapping, inputs,
             initial_cell_inputs, links, timestep="timestep", recompute=(),
             outputs_with_grads=(0,)):
    """The RecurrentNetwork op ``recurrent_net`` (v3) builds for ``cell``.

    ``inputs`` = [(input_t, sequence blob)]; ``initial_cell_inputs`` =
    [(cell input, initial blob)]; ``links`` = {cell input: cell output}.
    Scratches and the ``_accum`` rewrite come from
    :mod:`caffe2rnn.recurrent_stages`, as in ``recurrent_net``.
    """
    def s(blob):
        return "%s/%s" % (name, blob)

    cell_inputs = [c for c, _ in initial_cell_inputs]
    known = [i for i, _ in inputs] + [b for _, b in initial_cell_inputs]
    known += cell_inputs + [timestep]
    references = [b for b in cell.external_input if b not in known]

    backward = core.Net("RecurrentBackwardStep")
    proto = backward.Proto()
    proto.op.extend(op for op in cell.op if set(op.output) & set(recompute))
    proto.op.extend(backward_ops)
    proto.external_input.extend(stages.find_scratches(cell, proto))
    proto.type = "simple"
    written = {o for op in proto.op for o in op.output}

    forward_links, backward_links, aliases, states, outputs = [], [], [], [], []
    for cell_input, _ in initial_cell_inputs:
        state, output = s(cell_input + "_states"), links[cell_input]
        forward_links += [(cell_input, state, 0), (output, state, 1)]
        aliases += [(state, output + "_all", 1), (state, output + "_last", -1)]
        outputs += [output + "_all", output + "_last"]
        states.append(state)
        backward_links.append((output + "_grad", state + "_grad", 1))
        proto.external_input.append(output + "_grad")
        # "Sum as first op": nobody writes <cell_input>_grad, so link the blob
        # that actually holds that gradient.
        grad = (cell_input + "_grad" if cell_input + "_grad" in written
                else backward_mapping[cell_input])
        backward_links.append((grad, state + "_grad", 0))
    for input_t, blob in inputs:
        forward_links.append((input_t, blob, 0))
        backward_links.append((backward_mapping[input_t], blob + "_grad", 0))
    proto.external_input.extend(cell.external_input)
    proto.external_input.extend(cell.external_output)
    stages.accumulate_linked_gradients(backward)

    all_inputs = [b for _, b in inputs] + [b for _, b in initial_cell_inputs] + references
    params = [r for r in references if r in backward_mapping]
    cell.type = "rnn"
    op = Op("RecurrentNetwork", all_inputs, outputs + [s("step_workspaces")],
            name=name,
            alias_src=[a[0] for a in aliases], alias_dst=[a[1] for a in aliases],
            alias_offset=[a[2] for a in aliases], recurrent_states=states,
            initial_recurrent_state_ids=[all_inputs.index(b)
                                         for _, b in initial_cell_inputs],
            link_internal=[l[0] for l in forward_links],
            link_external=[l[1] for l in forward_links],
            link_offset=[l[2] for l in forward_links],
            step_net=str(cell), timestep=timestep,
            param=[all_inputs.index(p) for p in params],
            backward_link_internal=[l[0] for l in backward_links],
            backward_link_external=[l[1] for l in backward_links],
            backward_link_offset=[l[2] for l in backward_links],
            backward_step_net=str(proto),
            outputs_with_grads=list(outputs_with_grads),
            recompute_blobs_on_backward=list(recompute),
            param_grads=[backward_mapping[p] for p in params])
    cell.type = "simple"
    return op


def mul():
    cell = _net("mul_cell", [Op("Mul", ["input_t", "hidden_t_prev"], ["hidden_t"])],
                ["input_t", "hidden_t_prev"], ["hidden_t"])
    backward = [_grad("Mul", ["hidden_t_grad", "hidden_t_prev"], ["input_t_grad"]),
                _grad("Mul", ["hidden_t_grad", "input_t"], ["hidden_t_prev_grad"])]
    mapping = {"hidden_t": "hidden_t_grad", "input_t": "input_t_grad",
               "hidden_t_prev": "hidden_t_prev_grad"}
    return assemble("mul", cell, backward, mapping, [("input_t", "x")],
                    [("hidden_t_prev", "hidden_init")], {"hidden_t_prev": "hidden_t"})


def sum_mul():
    cell = _net("sum_mul_cell",
                [Op("Sum", ["hidden_t_prev", "input_t"], ["sum_t"]),
                 Op("Mul", ["sum_t", "w"], ["hidden_t"])],
                ["input_t", "hidden_t_prev", "w"], ["hidden_t"])
    backward = [_grad("Mul", ["hidden_t_grad", "w"], ["sum_t_grad"]),
                _grad("Mul", ["hidden_t_grad", "sum_t"], ["w_grad"])]
    mapping = {"hidden_t": "hidden_t_grad", "sum_t": "sum_t_grad", "w": "w_grad",
               "hidden_t_prev": "sum_t_grad", "input_t": "sum_t_grad"}
    return assemble("sum_mul", cell, backward, mapping, [("input_t", "x")],
                    [("hidden_t_prev", "hidden_init")], {"hidden_t_prev": "hidden_t"})


def lstm():
    w, b, gates = "lstm/gates_t_w", "lstm/gates_t_b", "lstm/gates_t"
    cell = _net("lstm_cell", [
        Op("FC", ["hidden_t_prev", w, b], [gates], axis=2),
        Op("Sum", [gates, "input_t"], [gates]),
        Op("LSTMUnit", ["hidden_t_prev", "cell_t_prev", gates, "seq_lengths",
                        "timestep"], ["lstm/hidden_t", "lstm/cell_t"])],
        ["input_t", "timestep", "cell_t_prev", "hidden_t_prev", w, b, "seq_lengths"],
        ["lstm/cell_t", "lstm/hidden_t"])
    backward = [
        _grad("LSTMUnitGradient", ["hidden_t_prev", "cell_t_prev", gates, "seq_lengths",
                                   "timestep", "lstm/hidden_t", "lstm/cell_t",
                                   "lstm/hidden_t_grad", "lstm/cell_t_grad"],
              ["hidden_t_prev_grad", "cell_t_prev_grad", gates + "_grad"]),
        _grad("FCGradient", ["hidden_t_prev", w, gates + "_grad"],
              [w + "_grad", b + "_grad", "_hidden_t_prev_grad_autosplit_0"], axis=2),
        Op("Sum", ["hidden_t_prev_grad", "_hidden_t_prev_grad_autosplit_0"],
           ["hidden_t_prev_grad"])]
    mapping = {"lstm/cell_t": "lstm/cell_t_grad", "lstm/hidden_t": "lstm/hidden_t_grad",
               "hidden_t_prev": "hidden_t_prev_grad", "cell_t_prev": "cell_t_prev_grad",
               gates: gates + "_grad", "input_t": gates + "_grad",
               w: w + "_grad", b: b + "_grad"}
    return assemble("lstm", cell, backward, mapping, [("input_t", "lstm/i2h")],
                    [("hidden_t_prev", "hidden_init"), ("cell_t_prev", "cell_init")],
                    {"hidden_t_prev": "lstm/hidden_t", "cell_t_prev": "lstm/cell_t"})


def attention():
    p = "att/"
    ctx_prev, ctx = "attention_weighted_encoder_context_t_prev", p + "context_t"
    gw, gb, dw, db, v = (p + "gates_t_w", p + "gates_t_b", p + "decoder_w",
                         p + "decoder_b", p + "attention_v")
    enc, enc_t, wenc = "encoder_outputs", "encoder_outputs_transposed", \
        "weighted_encoder_outputs"
    cell = _net("attention_cell", [
        Op("Concat", ["hidden_t_prev", ctx_prev], [p + "hidden_ctx", p + "hidden_ctx_dims"],
           axis=2),
        Op("FC", [p + "hidden_ctx", gw, gb], [p + "gates_t"], axis=2),
        Op("Sum", [p + "gates_t", "input_t"], [p + "gates_t"]),
        Op("LSTMUnit", ["hidden_t_prev", "cell_t_prev", p + "gates_t", "seq_lengths",
                        "timestep"], [p + "hidden_t", p + "cell_t"]),
        Op("FC", [p + "hidden_t", dw, db], [p + "decoder_state"], axis=2),
        Op("Add", [wenc, p + "decoder_state"], [p + "scores_in"], broadcast=1),
        Op("Tanh", [p + "scores_in"], [p + "scores_in"]),
        Op("MatMul", [p + "scores_in", v], [p + "logits"]),
        Op("Squeeze", [p + "logits"], [p + "logits_t"], dims=[2]),
        Op("Softmax", [p + "logits_t"], [p + "weights"]),
        Op("ExpandDims", [p + "weights"], [p + "weights_3d"], dims=[1]),
        Op("BatchMatMul", [p + "weights_3d", enc_t], [p + "context_3d"]),
        Op("Squeeze", [p + "context_3d"], [ctx], dims=[1]),
        Op("Copy", [ctx], [p + "context_copy"]),
        Op("Concat", [p + "hidden_t", p + "context_copy"], [p + "output_t",
                                                            p + "output_dims"], axis=2)],
        ["input_t", "timestep", "hidden_t_prev", "cell_t_prev", ctx_prev, gw, gb,
         "seq_lengths", dw, db, wenc, v, enc, enc_t],
        [p + "hidden_t", p + "cell_t", ctx])
    g = lambda blob: blob + "_grad"  # noqa: E731
    backward = [
        _grad("ConcatGradient", [g(p + "output_t"), p + "output_dims"],
              [g(p + "hidden_t"), g(p + "context_copy")]),
        _grad("Copy", [g(p + "context_copy")], [g(ctx)]),
        _grad("ExpandDims", [g(ctx)], [g(p + "context_3d")], dims=[1]),
        _grad("BatchMatMulGradient", [p + "weights_3d", enc_t, g(p + "context_3d")],
              [g(p + "weights_3d"), g(enc_t)]),
        _grad("Squeeze", [g(p + "weights_3d")], [g(p + "weights")], dims=[1]),
        _grad("SoftmaxGradient", [p + "weights", g(p + "weights")], [g(p + "logits_t")]),
        _grad("ExpandDims", [g(p + "logits_t")], [g(p + "logits")], dims=[2]),
        _grad("MatMulGradient", [p + "scores_in", v, g(p + "logits")],
              [g(p + "scores_in"), g(v)]),
        _grad("TanhGradient", [p + "scores_in", g(p + "scores_in")], [g(p + "scores_in")]),
        _grad("SumReduceLike", [g(p + "scores_in"), p + "decoder_state"],
              [g(p + "decoder_state")]),
        _grad("FCGradient", [p + "hidden_t", dw, g(p + "decoder_state")],
              [g(dw), g(db), "_att/hidden_t_grad_autosplit_0"], axis=2),
        Op("Sum", [g(p + "hidden_t"), "_att/hidden_t_grad_autosplit_0"], [g(p + "hidden_t")]),
        _grad("LSTMUnitGradient", ["hidden_t_prev", "cell_t_prev", p + "gates_t",
                                   "seq_lengths", "timestep", p + "hidden_t", p + "cell_t",
                                   g(p + "hidden_t"), g(p + "cell_t")],
              [g("hidden_t_prev"), g("cell_t_prev"), g(p + "gates_t")]),
        _grad("FCGradient", [p + "hidden_ctx", gw, g(p + "gates_t")],
              [g(gw), g(gb), g(p + "hidden_ctx")], axis=2),
        _grad("Split", [g(p + "hidden_ctx"), p + "hidden_ctx_dims"],
              ["_hidden_t_prev_grad_autosplit_0", g(ctx_prev)], axis=2),
        Op("Sum", [g("hidden_t_prev"), "_hidden_t_prev_grad_autosplit_0"],
           [g("hidden_t_prev")])]
    mapping = {b: g(b) for b in [p + "hidden_t", p + "cell_t", ctx, "hidden_t_prev",
                                 "cell_t_prev", ctx_prev, gw, gb, dw, db, v, enc_t]}
    mapping["input_t"] = g(p + "gates_t")
    return assemble("att", cell, backward, mapping, [("input_t", "att/i2h")],
                    [("hidden_t_prev", "hidden_init"), ("cell_t_prev", "cell_init"),
                     (ctx_prev, "context_init")],
                    {"hidden_t_prev": p + "hidden_t", "cell_t_prev": p + "cell_t",
                     ctx_prev: ctx},
                    recompute=[p + "scores_in"], outputs_with_grads=(0, 1, 4))


CELLS = {"mul": mul, "sum_mul": sum_mul, "lstm": lstm, "attention": attention}

"""``RNNCell``: one timestep of a recurrent network, and how to run it over time.

A cell knows three things (Caffe2 ``rnn_cell.RNNCell``, 2017-05 on):

* :meth:`~RNNCell.prepare_input` — the work that depends on the input only
  (an LSTM's input projection ``i2h``), done once for the whole T × N × D
  sequence, outside the recurrence;
* :meth:`~RNNCell._apply` — one step: ops added to a step model that turn
  ``input_t`` (1 × N × ·) and the previous states into the new states;
* :meth:`~RNNCell.get_state_names` — the names of the recurrent states.

From these, :meth:`~RNNCell.apply_over_sequence` builds the step net and one
``RecurrentNetwork`` op with :func:`caffe2rnn.recurrent.recurrent_net` (so
every diagram of :mod:`caffe2rnn.viz` draws it), and :meth:`~RNNCell.apply`
adds a single step to an ordinary net (decoding one token at a time).

Outputs of ``apply_over_sequence``: ``(output, states_for_all_steps)`` where
``states_for_all_steps = (state0_all, state0_last, state1_all, ...)`` —
each state over all T steps (T × N × ·) and at the last step (1 × N × ·).
"""

from .. import brew, eras, scope
from ..errors import ArgumentError
from ..model_helper import ModelHelper
from ..recurrent import recurrent_net


class RNNCell:
    """Base class of recurrent cells; subclasses define ``_apply``,
    ``prepare_input`` (optional) and ``get_state_names``.

    ``name`` scopes the cell's blobs (``<name>/hidden_t``); ``forward_only``
    builds no backward pass (and turns dropout off).
    """

    def __init__(self, name=None, forward_only=False, initializer=None):
        self.name = name
        self.forward_only = forward_only
        self.recompute_blobs = []
        #: makes learned initial states when ``initial_states`` is None (E6)
        self.initializer = initializer

    def scope(self, name):
        return self.name + "/" + name if self.name is not None else name

    # -- the three methods a cell defines ---------------------------------------

    def _apply(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        """Add one step to ``model``; return the new states (same order as
        :meth:`get_state_names`).

        ``input_t``: 1 × N × D, already through :meth:`prepare_input`;
        ``seq_lengths`` (int32, N) and ``timestep`` let an LSTMUnit stop
        finished sequences; ``extra_inputs`` is a list of ``(blob, dim)``
        concatenated to the recurrent input (attention feeds its context so).
        """
        raise NotImplementedError("%s must define _apply" % type(self).__name__)

    def prepare_input(self, model, input_blob):
        """Input-only work, on the whole sequence (T × N × D) or one step."""
        return input_blob

    def gates_fc(self, model, blob, name, dim_in, gates):
        """``brew.fc`` of ``blob`` (a step's 1 × N × dim_in, or the whole
        sequence) to ``gates`` × ``hidden_size`` units along axis 2, named
        ``<scope>/<name>`` (``i2h``, ``gates_t``...)."""
        return brew.fc(
            model, blob, self.scope(name), dim_in=dim_in, dim_out=gates * self.hidden_size, axis=2
        )

    def get_state_names(self):
        """Names of the recurrent states; ``<name>_prev`` are the step net's inputs."""
        raise NotImplementedError("%s must define get_state_names" % type(self).__name__)

    # -- outputs -----------------------------------------------------------------

    def get_output_state_index(self):
        """Index (into the states) of the primary step-wise output."""
        return 0

    def get_output_dim(self):
        raise NotImplementedError("%s must define get_output_dim" % type(self).__name__)

    def _prepare_output(self, model, states):
        """The output of one step, from its states (post-processing hook)."""
        return states[self.get_output_state_index()]

    def _prepare_output_sequence(self, model, state_outputs):
        """The output over the sequence. ``state_outputs`` alternates
        ``(all, last)`` per state, hence the index ``2 * i``."""
        return state_outputs[2 * self.get_output_state_index()]

    # -- running the cell ----------------------------------------------------------

    def check_initial_states(self, initial_states):
        """``initial_states`` must be given (a list of blobs).

        Caffe2 paired the states with the given blobs by ``zip``: extra blobs
        are ignored (a GRU layer given ``(h0, c0)`` as for an LSTM uses
        ``h0``), and a state left without one is read from a blob nobody
        writes, which fails when the net runs, as in Caffe2. None (E5; E6 when
        the cell has no initializer) raised in Caffe2 (``zip`` of None;
        "Either initial states or initializer have to be set").
        """
        names = list(map(str, self.get_state_names()))
        if initial_states is None:
            raise ArgumentError(
                "initial_states: %s needs one blob per recurrent state (%s), got None"
                % (type(self).__name__, ", ".join(names))
            )
        # The output is read from the output state's outputs, which exist only
        # for a state given an initial blob (Caffe2: an IndexError there).
        output = self.get_output_state_index()
        if output >= len(initial_states):
            raise ArgumentError(
                "initial_states: %d given for the states %s; the output state '%s' "
                "(state %d) has none"
                % (len(initial_states), ", ".join(names), names[output], output)
            )

    def collected_recompute_blobs(self):
        """Blobs to recompute in the backward step (set by ``_apply``)."""
        return list(self.recompute_blobs)

    def default_initial_states(self, model, initial_states):
        """``initial_states``, or (None, era E6) the initializer's learned states."""
        if initial_states is not None or not eras.current().late_2017_cells:
            return initial_states
        if self.initializer is None:
            raise ArgumentError(
                "initial_states: None needs an initializer on %s '%s' (give the states "
                "or initializer=...)" % (type(self).__name__, self.name)
            )
        with scope.NameScope(self.name or ""):
            return self.initializer.create_states(model)

    def apply_over_sequence(
        self, model, inputs, seq_lengths, initial_states=None, outputs_with_grads=None
    ):
        """Run the cell over ``inputs`` (T × N × D) with one ``RecurrentNetwork`` op.

        ``initial_states``: one blob per state (from E6, None: learned states
        made by ``self.initializer``). ``outputs_with_grads`` (indices into
        ``states_for_all_steps``) defaults to the primary output's all-steps
        blob. Returns ``(output, states_for_all_steps)``.
        """
        initial_states = self.default_initial_states(model, initial_states)
        self.check_initial_states(initial_states)
        preprocessed_inputs = self.prepare_input(model, inputs)
        step_model = ModelHelper(name=self.name, param_model=model)
        input_t, timestep = step_model.net.AddScopedExternalInputs("input_t", "timestep")
        states_prev = step_model.net.AddScopedExternalInputs(
            *[str(s) + "_prev" for s in self.get_state_names()]
        )
        states = self._apply(
            model=step_model,
            input_t=input_t,
            seq_lengths=seq_lengths,
            states=states_prev,
            timestep=timestep,
        )
        if outputs_with_grads is None:
            outputs_with_grads = [2 * self.get_output_state_index()]
        states_for_all_steps = recurrent_net(
            net=model.net,
            cell_net=step_model.net,
            inputs=[(input_t, preprocessed_inputs)],
            initial_cell_inputs=list(zip(states_prev, initial_states)),
            links=dict(zip(states_prev, states)),
            timestep=timestep,
            scope=self.name,
            outputs_with_grads=outputs_with_grads,
            recompute_blobs_on_backward=self.collected_recompute_blobs() or None,
            forward_only=self.forward_only,
        )
        output = self._prepare_output_sequence(model, states_for_all_steps)
        return output, states_for_all_steps

    def apply(self, model, input_t, seq_lengths, states, timestep):
        """One step in ``model``'s own net: returns ``(output, states)``."""
        input_t = self.prepare_input(model, input_t)
        states = self._apply(model, input_t, seq_lengths, states, timestep)
        return self._prepare_output(model, states), states

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

**Era E7** (Caffe2 085ce4663, 2018-02-07, "Fix RNN scoping situation";
policy ``cells_scope_their_ops``): a cell may instead define
``apply_override`` and ``get_state_names_override`` with *unscoped* names.
The base ``_apply`` turns the input names it is given into blob references
(so they keep the scope they were named in), then runs ``apply_override``
inside ``NameScope(cell.name)``, which scopes every blob the step creates;
``get_state_names`` scopes the override's names with :meth:`RNNCell.scope`.
Cells written the old way, overriding ``_apply`` and ``get_state_names``,
work as before. ``apply_over_sequence`` then also refuses a number of
initial states that differs from the number of states, and makes every
state the step returns an output of the step net.
"""

import inspect

from .. import brew, core, eras, scope
from ..errors import ArgumentError
from ..model_helper import ModelHelper
from ..recurrent import recurrent_net


def rectify_name(blob):
    """``rnn_cell._RectifyName`` (E7): a name given as ``str`` becomes a blob
    reference scoped *now* (by the caller's name scope); None and references
    are returned as they are. Anything else: Caffe2's "Unknown blob reference
    type", here an :class:`~caffe2rnn.errors.ArgumentError`."""
    if blob is None or isinstance(blob, core.BlobReference):
        return blob
    if isinstance(blob, str):
        return core.ScopedBlobReference(blob)
    raise ArgumentError("Unknown blob reference type: %r" % (blob,))


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

        Era E7: runs :meth:`apply_override` inside ``NameScope(self.name)``,
        on the inputs made blob references first (module docstring).
        """
        if not eras.current().cells_scope_their_ops:
            raise NotImplementedError("%s must define _apply" % type(self).__name__)
        return self.scoped_apply(model, input_t, seq_lengths, states, timestep, extra_inputs)

    def scoped_apply(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        """E7's ``_apply``: :meth:`apply_override` inside ``NameScope(self.name)``."""
        args = self._rectify_apply_inputs(input_t, seq_lengths, states, timestep, extra_inputs)
        with core.NameScope(self.name):
            return self.apply_override(model, *args)

    def _rectify_apply_inputs(self, input_t, seq_lengths, states, timestep, extra_inputs):
        """The arguments of :meth:`apply_override`, names made references
        before a cell's scope could prefix them; ``extra_inputs`` is passed
        only to an ``apply_override`` that has that parameter (as Caffe2's
        ``inspect.getargspec`` test)."""
        input_t, seq_lengths, timestep = (rectify_name(b) for b in (input_t, seq_lengths, timestep))
        states = [rectify_name(b) for b in states]
        arguments = [input_t, seq_lengths, states, timestep]
        if "extra_inputs" in inspect.signature(self.apply_override).parameters:
            # Caffe2 rectified the names, then paired the *unrectified* ones
            # with their sizes again: the references given are kept as given.
            arguments.append(list(extra_inputs) if extra_inputs else extra_inputs)
        return arguments

    def apply_override(self, model, input_t, seq_lengths, states, timestep, extra_inputs=None):
        """One step, era E7's way: like :meth:`_apply`, but every blob it names
        with a plain string lands in the cell's scope."""
        raise NotImplementedError("Abstract method: %s.apply_override" % type(self).__name__)

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
        """Names of the recurrent states; ``<name>_prev`` are the step net's inputs.

        Era E7: :meth:`get_state_names_override`'s names, each scoped with
        :meth:`scope` (a list)."""
        if not eras.current().cells_scope_their_ops:
            raise NotImplementedError("%s must define get_state_names" % type(self).__name__)
        return [self.scope(name) for name in self.get_state_names_override()]

    def get_state_names_override(self):
        """The states' names without the cell's scope (era E7)."""
        raise NotImplementedError(
            "Abstract method: %s.get_state_names_override" % type(self).__name__
        )

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
        if eras.current().cells_scope_their_ops and len(initial_states) != len(names):
            # E7: utils.raiseIfNotEqual, with Caffe2's words
            raise ArgumentError(
                "initial_states: Number of initial state values provided doesn't match the "
                "number of states. %d != %d (%s)"
                % (len(initial_states), len(names), ", ".join(names))
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
        self, model, inputs, seq_lengths=None, initial_states=None, outputs_with_grads=None
    ):
        """Run the cell over ``inputs`` (T × N × D) with one ``RecurrentNetwork`` op.

        ``seq_lengths``: int32 (N,) lengths, or (cells of era E7) None: every
        sequence runs all T steps. ``initial_states``: one blob per state
        (from E6, None: learned states made by ``self.initializer``).
        ``outputs_with_grads`` (indices into ``states_for_all_steps``)
        defaults to the primary output's all-steps blob. Returns ``(output,
        states_for_all_steps)``.
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
        if eras.current().cells_scope_their_ops:
            # E7: a state written by an op the cell did not mark is an output too
            outputs = set(step_model.net.Proto().external_output)
            for state in states:
                if str(state) not in outputs:
                    step_model.net.AddExternalOutput(state)
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

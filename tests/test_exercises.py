"""caffe2rnn.exercises: a wrong try gets what is wrong and a hint first, the answer later.

A cold reader of round 12 asked for a hint before the answer. The tries are counted per
exercise (its name: the ``predicted_<name>`` variable, or the code exercise's check) for as
long as the kernel runs: the first wrong try is told what is wrong, given the hint and asked
to change the prediction and run the cell again, with the answer kept back; the second wrong
try of the same exercise, ``reveal=True`` or ``exercises.reveal(name)`` gives the answer and
the why. The fixture forgets every try, so no test depends on another having run.
"""

import numpy as np
import pytest

from caffe2rnn import exercises
from caffe2rnn.exercises import WIDTH, feedback

CASE = dict(
    observed="rows [0, 1, 2] are non-zero.",
    why="a gradient flows only backwards.",
    hint="look at which row each backward timestep writes.",
    variable="predicted_rows",
)


@pytest.fixture(autouse=True)
def fresh_tries():
    exercises.reset()
    yield
    exercises.reset()


def lines(capsys):
    return capsys.readouterr().out.splitlines()


def test_first_wrong_try_gets_the_hint_and_no_answer(capsys):
    assert feedback([1, 2], [0, 1, 2], **CASE) is False
    out = lines(capsys)
    assert out[0] == "Not quite (you said [1, 2])."
    assert out[1] == "Hint: look at which row each backward timestep writes."
    text = " ".join(out)
    assert "Change predicted_rows and run this cell again." in text
    assert 'caffe2rnn.exercises.reveal("predicted_rows")' in text
    assert "[0, 1, 2]" not in text and "The answer" not in text and "Why" not in text
    assert max(len(line) for line in out) <= WIDTH


def test_second_wrong_try_of_the_same_exercise_gets_the_answer(capsys):
    feedback([1, 2], [0, 1, 2], **CASE)
    capsys.readouterr()
    assert feedback([2], [0, 1, 2], **CASE) is False
    assert lines(capsys) == [
        "Not quite (you said [2]): rows [0, 1, 2] are non-zero.",
        "The answer: [0, 1, 2].",
        "Why: a gradient flows only backwards.",
    ]


def test_tries_are_counted_per_exercise(capsys):
    feedback([1, 2], [0, 1, 2], **CASE)
    feedback(
        3,
        2,
        "step 2's output.",
        why="two workspaces.",
        hint="count them.",
        variable="predicted_step",
    )
    out = capsys.readouterr().out
    assert out.count("Hint: ") == 2 and "The answer" not in out


def test_reveal_prints_what_the_wrong_try_kept_back_and_answers_at_once_after(capsys):
    feedback([1, 2], [0, 1, 2], **CASE)
    capsys.readouterr()
    exercises.reveal("predicted_rows")
    assert lines(capsys) == [
        "Not quite (you said [1, 2]): rows [0, 1, 2] are non-zero.",
        "The answer: [0, 1, 2].",
        "Why: a gradient flows only backwards.",
    ]
    exercises.reset("predicted_rows")
    exercises.reveal("predicted_rows")  # before any try: the next check answers at once
    assert "run its check cell again" in " ".join(lines(capsys))
    feedback([1], [0, 1, 2], **CASE)
    assert "The answer: [0, 1, 2]." in capsys.readouterr().out


def test_reveal_true_answers_at_the_first_wrong_try(capsys):
    feedback([1, 2], [0, 1, 2], reveal=True, **CASE)
    out = capsys.readouterr().out
    assert "The answer: [0, 1, 2]." in out and "Hint" not in out


def test_a_right_prediction_is_confirmed_and_explained(capsys):
    feedback([1, 2], [0, 1, 2], **CASE)  # a wrong try first changes nothing
    capsys.readouterr()
    assert feedback([0, 1, 2], [0, 1, 2], **CASE) is True
    assert lines(capsys) == [
        "Right: rows [0, 1, 2] are non-zero.",
        "Why: a gradient flows only backwards.",
    ]


def test_no_prediction_yet_keeps_its_message_and_counts_no_try(capsys):
    for _ in range(2):
        assert feedback(None, [0, 1, 2], **CASE) is False
    assert capsys.readouterr().out == (
        "No prediction yet: set predicted_rows above, then run this cell again.\n" * 2
    )
    feedback([1], [0, 1, 2], **CASE)
    assert "Hint: " in capsys.readouterr().out


def test_an_expected_wrong_answer_gets_its_words_with_the_hint(capsys):
    wrong = [((5, 0), "five is what the NumPy loop left.")]
    feedback(
        (5, 0),
        (1, 0),
        "1 blob.",
        why="shared.",
        hint="where is it made?",
        variable="predicted_tmpstep",
        wrong=wrong,
    )
    assert lines(capsys)[:3] == [
        "Not quite (you said (5, 0)).",
        "Your answer (5, 0): five is what the NumPy loop left.",
        "Hint: where is it made?",
    ]


def test_a_check_that_judges_the_prediction_says_what_is_wrong_with_it(capsys):
    """With ``right`` given, ``observed`` speaks of the prediction (notebook 04's lists):
    the first wrong try shows it, and its detail, but not the answer."""
    feedback(
        "lists",
        "answer",
        "your hidden_t writes row 1.",
        why="k rows.",
        hint="which rows hold h0?",
        variable="predicted_lists",
        right=False,
        detail="forward raised ValueError: shapes",
    )
    out = lines(capsys)
    assert out[0] == "Not quite (you said 'lists'): your hidden_t writes row 1."
    assert out[1:3] == ["Hint: which rows hold h0?", "Detail: forward raised ValueError: shapes"]
    assert "'answer'" not in " ".join(out)


def test_a_code_exercise_gets_a_hint_then_the_answer(capsys):
    """check_running_sum: the first wrong try says what is wrong and gives RUNNING_SUM_HINT,
    not the code (the why); the second gives the why; reveal("running_sum") too."""
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    assert exercises.check_running_sum(xs.copy(), xs) is False
    first = capsys.readouterr().out
    assert first.startswith("Not quite: hs equals X4")
    assert "Hint: " + exercises.RUNNING_SUM_HINT[:30] in first
    assert "np.cumsum" not in first and "Why" not in first
    assert 'reveal("running_sum")' in first.replace("\n", " ")
    exercises.reveal("running_sum")
    assert "np.cumsum(X4, axis=0)" in capsys.readouterr().out
    exercises.reset()
    exercises.check_running_sum(xs.copy(), xs)
    capsys.readouterr()
    exercises.check_running_sum(xs * 2, xs)
    assert "np.cumsum(X4, axis=0)" in capsys.readouterr().out
    assert exercises.check_running_sum(np.cumsum(xs, axis=0), xs) is True
    assert capsys.readouterr().out.startswith("Right: ")


def test_the_hints_of_the_code_exercises_do_not_hold_their_code():
    """A hint points to where to look; the code of the answer is in the why alone."""
    for hint in (
        exercises.RUNNING_SUM_HINT,
        exercises.FINITE_DIFFERENCES_HINT,
        exercises.FORWARD_HINT,
        exercises.BACKWARD_HINT,
        exercises.CELL_HINT,
    ):
        assert hint.startswith("Look at ")
        for code in (
            "np.cumsum",
            "np.eye",
            "outer[",
            "ws[",
            "+=",
            "recurrent_net(",
            "t + offset :",
        ):
            assert code not in hint, (code, hint)


def test_verdicts_list_every_verdict_in_order_for_make_run(capsys):
    """``make run`` reads the first verdict of each exercise (the learner's try) to end a
    run with which predictions were wrong; a prediction not given yet has no verdict, a
    check without a hint counts too, and reset forgets them."""
    from caffe2rnn.exercises.verdicts import verdicts

    feedback(None, [0, 1, 2], **CASE)
    assert verdicts() == []
    feedback([1, 2], [0, 1, 2], **CASE)
    feedback([0, 1, 2], [0, 1, 2], **CASE)
    no_hint = dict(CASE, hint=None, variable="predicted_late")
    feedback("zeros", "right", **no_hint)
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    exercises.check_running_sum(xs.copy(), xs)
    capsys.readouterr()
    assert verdicts() == [
        ("predicted_rows", False),
        ("predicted_rows", True),
        ("predicted_late", False),
        ("running_sum", False),
    ]
    exercises.reset("predicted_rows")
    assert [name for name, _ in verdicts()] == ["predicted_late", "running_sum"]
    exercises.reset()
    assert verdicts() == []

"""caffe2rnn.demo.char_rnn: the in-repo char-RNN learns a text (CI always runs this).

The text is made here from a seeded generator: sentences of a small set of
words, so it has structure an LSTM can use (spelling, spaces, capitals after
a full stop) that character frequencies alone do not capture.
"""

import collections
import io
import math

import numpy as np
import pytest

from caffe2rnn import workspace
from caffe2rnn.demo import char_rnn
from caffe2rnn.errors import TextError

WORDS = (
    "the", "cat", "sat", "on", "a", "mat", "and", "saw", "one", "red", "bird", "fly", "over",
    "green", "hills", "while", "two", "dogs", "ran", "after", "it", "past", "old", "trees",
    "near", "quiet", "water",
)  # fmt: skip


def sentences(n_chars, seed=0):
    rng = np.random.default_rng(seed)
    out, size = [], 0
    while size < n_chars:
        words = [WORDS[i] for i in rng.integers(len(WORDS), size=rng.integers(4, 10))]
        sentence = " ".join(words).capitalize() + ". "
        out.append(sentence)
        size += len(sentence)
    return "".join(out)[:n_chars]


def entropy_of_characters(text):
    """Unigram entropy in nats, from the counts (independent of char_rnn)."""
    counts = collections.Counter(text)
    return -sum(c / len(text) * math.log(c / len(text)) for c in counts.values())


TEXT = sentences(6000)
SMALL = dict(seq_len=16, hidden=32, batch=8, learning_rate=0.02, sample_length=40)


@pytest.fixture(scope="module")
def trained():
    return char_rnn.train(TEXT, steps=300, seed=3, prime="The ", stream=io.StringIO(), **SMALL)


def test_loss_falls_below_the_unigram_entropy_of_the_text(trained):
    entropy = entropy_of_characters(TEXT)
    assert trained.unigram_entropy == pytest.approx(entropy, rel=1e-12)
    assert len(trained.losses) == 300
    first, last = trained.losses[0], trained.final_loss(20)
    assert first == pytest.approx(math.log(len(set(TEXT))), abs=0.05)  # a uniform guess
    assert last < 0.8 * entropy  # ... and ends well below what frequencies give


def test_samples_start_with_the_prime_and_use_the_vocabulary(trained):
    steps = [step for step, _ in trained.samples]
    assert steps == [60, 120, 180, 240, 300]  # five times a run, the last at the end
    for _, text in trained.samples:
        assert text.startswith("The ") and len(text) == 4 + 40
        assert set(text) <= set(TEXT)
    # a trained model writes words of the text, not noise: most words it
    # spells are real words
    words = " ".join(t for _, t in trained.samples[-2:]).replace(".", " ").lower().split()
    assert np.mean([w in WORDS for w in words]) > 0.5


def test_same_seed_same_run():
    a = char_rnn.train(TEXT[:1500], steps=12, seed=7, stream=io.StringIO(), **SMALL)
    b = char_rnn.train(TEXT[:1500], steps=12, seed=7, stream=io.StringIO(), **SMALL)
    c = char_rnn.train(TEXT[:1500], steps=12, seed=8, stream=io.StringIO(), **SMALL)
    assert a.losses == b.losses and a.samples == b.samples
    assert a.losses != c.losses


def test_sampling_keeps_the_training_state(trained):
    model = trained.model
    with workspace.WorkspaceGuard(model.workspace_name):
        before = [workspace.FetchBlob(blob).copy() for blob in model.state]
    model.sample(10, "a", temperature=0.5, rng=np.random.default_rng(0))
    with workspace.WorkspaceGuard(model.workspace_name):
        after = [workspace.FetchBlob(blob) for blob in model.state]
    for x, y in zip(before, after):
        np.testing.assert_array_equal(x, y)
    assert before[0].shape == (1, SMALL["batch"], SMALL["hidden"])


def test_a_tiny_temperature_is_greedy(trained):
    rng = np.random.default_rng(0)
    cold = {trained.model.sample(30, "The ", temperature=1e-4, rng=rng) for _ in range(3)}
    assert len(cold) == 1  # p^(1/τ) puts all the mass on the likeliest character
    hot = {trained.model.sample(30, "The ", temperature=2.0, rng=rng) for _ in range(3)}
    assert len(hot) == 3


def test_vocabulary_is_sorted_and_round_trips():
    vocab = char_rnn.Vocabulary("banana")
    assert vocab.chars == ["a", "b", "n"] and len(vocab) == 3
    assert vocab.encode("nab").tolist() == [2, 0, 1]
    assert vocab.decode([1, 0, 2]) == "ban"
    with pytest.raises(TextError, match="'x' is not in the training text"):
        vocab.encode("bax")


def test_batches_read_in_caffe2_char_rnn_order():
    """The reading order of Caffe2's TrainModel loop, written out element by element."""
    ids = np.arange(23, dtype=np.int32) * 2 % 23
    N, T = 3, 4
    batches = char_rnn.Batches(ids, N, T)
    block = len(ids) // N
    starts = list(range(0, len(ids), block))[:N]
    sizes = [block] * N
    sizes[-1] += len(ids) % N
    positions = [0] * N
    for _ in range(5):  # wraps around inside the blocks
        x, targets = batches.next(23)
        want_x = np.zeros((T, N, 23), np.float32)
        want_t = np.zeros(T * N, np.int32)
        for e in range(N):
            for i in range(T):
                pos = starts[e] + positions[e]
                want_x[i, e, ids[pos]] = 1
                want_t[i * N + e] = ids[(pos + 1) % len(ids)]
                positions[e] = (positions[e] + 1) % sizes[e]
        np.testing.assert_array_equal(x, want_x)
        np.testing.assert_array_equal(targets, want_t)


def test_smoothed_is_a_trailing_mean(trained):
    losses = np.array(trained.losses)
    smoothed = trained.smoothed(20)
    for i in (0, 5, 19, 20, 150, 299):
        assert smoothed[i] == pytest.approx(losses[max(0, i - 19) : i + 1].mean(), rel=1e-12)


def test_unigram_entropy():
    assert char_rnn.unigram_entropy("aaaa") == 0.0
    assert char_rnn.unigram_entropy("abab") == pytest.approx(math.log(2))
    assert char_rnn.unigram_entropy(TEXT) == pytest.approx(entropy_of_characters(TEXT))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(steps=0), "steps must be a positive integer, got 0"),
        (dict(batch=2.5), "batch must be a positive integer, got 2.5"),
        (dict(hidden=True), "hidden must be a positive integer"),
        (dict(sample_every=0), "sample_every must be a positive integer"),
        (dict(learning_rate=-1.0), "learning_rate must be a positive number"),
        (dict(temperature=float("nan")), "temperature must be a positive number"),
        (dict(batch=64, seq_len=32), "the text has 1500 characters; --batch 64 × --seq-len 32"),
        (dict(prime="Zebra"), "'Z' is not in the training text's vocabulary"),
    ],
)
def test_bad_arguments_fail_before_any_training(kwargs, message):
    arguments = dict(SMALL, steps=5, stream=io.StringIO())
    arguments.update(kwargs)
    with pytest.raises(TextError, match=message.replace("(", r"\(")) as error:
        char_rnn.train(TEXT[:1500], **arguments)
    assert isinstance(error.value, ValueError)


def test_read_text(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("héllo\n", encoding="utf-8")
    assert char_rnn.read_text(str(good)) == "héllo\n"
    cases = {
        "missing.txt": (None, "no such file"),
        "empty.txt": (b"", "is empty"),
        "binary.bin": (b"\x7fELF\x00\x01", "looks binary"),
        "latin1.txt": ("café".encode("latin-1"), "not UTF-8 text \\(byte 0xe9 at offset 3\\)"),
    }
    for name, (data, message) in cases.items():
        path = tmp_path / name
        if data is not None:
            path.write_bytes(data)
        with pytest.raises(TextError, match=message):
            char_rnn.read_text(str(path))
    with pytest.raises(TextError, match="is a directory"):
        char_rnn.read_text(str(tmp_path))

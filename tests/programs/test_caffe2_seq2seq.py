"""Caffe2's seq2seq model (``caffe2/python/models/seq2seq``), run unchanged.

As a user would: ``train.py`` trains on a small corpus and writes a minidb
checkpoint after each epoch (``--checkpoint ck`` → ``ck-0``, ``ck-1``...);
then a *fresh process* runs ``translate.py --checkpoint ck-N``, which loads it
into a beam-search decoder and translates the sentences it reads from stdin::

    python -m caffe2rnn.compat [--era E6] SRC/caffe2/python/models/seq2seq/train.py \\
        --source-corpus train.src --target-corpus train.tgt \\
        --source-corpus-eval eval.src --target-corpus-eval eval.tgt --checkpoint ck ...
    printf 'one two three\\n' | python -m caffe2rnn.compat \\
        SRC/caffe2/python/models/seq2seq/translate.py --checkpoint ck-19 --beam-size 3 ...

The task is a toy translation, "reverse the words and capitalise them"
(``one two three`` → ``THREE TWO ONE``); the test sentences are not in the
training corpus. Caffe2's files are read from ``$CAFFE2_SOURCE`` (0cdd09da6,
E5) and ``$CAFFE2_SOURCE_E6`` (042e8ede4); without them these tests skip.

Two configurations never ran in Caffe2 itself, and fail here with Caffe2's
error (:func:`test_configurations_broken_in_caffe2_fail_as_in_caffe2`): at
0cdd09da6 a decoder without attention called ``model.FC(blob, name, dim_in,
dim_out)``, a call ``Net.__getattr__`` cannot take (fixed by Caffe2's
06fd9b567, "Fix broken seq2seq example", two weeks later); at 042e8ede4 the
bidirectional encoder halves ``num_units`` with ``/=`` under
``from __future__ import division``, making the LSTM weights' shape
``[4 * 12.0, 8]``, which Caffe2's ``utils.MakeArgument`` refuses. So the
bidirectional encoder runs at E5 and the plain model at E6.
"""

import os
import random
import re
import subprocess
import sys
from dataclasses import dataclass

import pytest

#: The era's checkout: environment variable and the commit it should be at.
CHECKOUTS = {"E5": ("CAFFE2_SOURCE", "0cdd09da6"), "E6": ("CAFFE2_SOURCE_E6", "042e8ede4")}

WORDS = ("one", "two", "three", "four", "five", "six")
#: Held out of the training corpus; translate.py must get most of them right.
TEST_SENTENCES = (
    "one two three",
    "four five six",
    "six one",
    "two two five",
    "three four",
    "five one four two",
)
SMALL_MODEL = [
    "--unk-threshold", "0",  # every word of the tiny corpus is in the vocabulary
    "--encoder-cell-num-units", "24",
    "--decoder-cell-num-units", "24",
    "--encoder-embedding-size", "8",
    "--decoder-embedding-size", "8",
]  # fmt: skip


def translation_of(sentence):
    return " ".join(reversed(sentence.upper().split()))


def write_corpus(folder, seed=2017):
    """Training and eval corpora of the reversal task, one sentence a line."""
    generator = random.Random(seed)
    held_out = set(TEST_SENTENCES)
    paths = {}
    for part, size in (("train", 240), ("eval", 16)):
        sources = []
        while len(sources) < size:
            sentence = " ".join(generator.choice(WORDS) for _ in range(generator.randint(2, 4)))
            if sentence not in held_out:
                sources.append(sentence)
        for side, lines in (("src", sources), ("tgt", [translation_of(s) for s in sources])):
            paths[part, side] = folder / ("%s.%s" % (part, side))
            paths[part, side].write_text("\n".join(lines) + "\n")
    return paths


def seq2seq_program(era, name):
    variable, commit = CHECKOUTS[era]
    source = os.environ.get(variable)
    if not source:
        pytest.skip(
            "set %s to a checkout of facebookarchive/caffe2 at %s to run Caffe2's %s seq2seq "
            "programs" % (variable, commit, era)
        )
    path = os.path.join(source, "caffe2", "python", "models", "seq2seq", name)
    if not os.path.isfile(path):
        pytest.skip("caffe2/python/models/seq2seq/%s is not in %s=%s" % (name, variable, source))
    return path


def run_program(era, name, arguments, folder, stdin=None):
    # train.py seeds Python's random (the batch order) itself; --seed fixes the
    # fillers' draws too, which Caffe2 seeded from the clock: without it a run
    # now and then learns less in the epochs given here.
    command = [sys.executable, "-m", "caffe2rnn.compat", "--era", era, "--seed", "2017"]
    command += [seq2seq_program(era, name), *arguments]
    return subprocess.run(
        command,
        input=stdin,
        capture_output=True,
        text=True,
        cwd=folder,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
        timeout=600,
    )


def vocabulary_arguments(corpus):
    """The training corpora: both programs build their vocabularies from them."""
    return ["--source-corpus", str(corpus["train", "src"]),
            "--target-corpus", str(corpus["train", "tgt"]), *SMALL_MODEL]  # fmt: skip


def train_arguments(corpus, epochs, configuration):
    return [
        *vocabulary_arguments(corpus),
        "--source-corpus-eval", str(corpus["eval", "src"]),
        "--target-corpus-eval", str(corpus["eval", "tgt"]),
        "--checkpoint", "ck",
        "--batch-size", "8",
        "--epochs", str(epochs),
        *configuration,
    ]  # fmt: skip


@dataclass(frozen=True)
class Configuration:
    era: str
    flags: tuple
    epochs: int  # enough for this configuration to learn the task


CONFIGURATIONS = {
    "E5-attention": Configuration("E5", ("--use-attention",), 20),
    "E5-bidirectional-attention": Configuration(
        "E5", ("--use-bidirectional-encoder", "--use-attention"), 20
    ),
    "E6-plain": Configuration("E6", (), 40),  # two LSTM layers each side (E6's default)
    "E6-attention": Configuration("E6", ("--use-attention",), 20),
}


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_train_checkpoint_then_translate_in_a_fresh_process(tmp_path, name):
    configuration = CONFIGURATIONS[name]
    corpus = write_corpus(tmp_path)
    arguments = train_arguments(corpus, configuration.epochs, configuration.flags)
    train = run_program(configuration.era, "train.py", arguments, tmp_path)
    assert train.returncode == 0, train.stderr[-3000:]

    log = train.stderr  # train.py logs to stderr
    assert re.findall(r"^Epoch (\d+)$", log, re.M) == [str(i) for i in range(configuration.epochs)]
    losses = [float(x) for x in re.findall(r"^\ttraining loss ([\d.]+)$", log, re.M)]
    assert len(losses) == configuration.epochs
    # A uniform guess over the 10-word target vocabulary costs log(10) a token;
    # the model learns the reversal, so the summed loss falls far below that.
    assert losses[-1] < losses[0] / 4, losses
    last = tmp_path / ("ck-%d" % (configuration.epochs - 1))
    assert all((tmp_path / ("ck-%d" % i)).is_file() for i in range(configuration.epochs))

    translate = run_program(
        configuration.era,
        "translate.py",
        [*vocabulary_arguments(corpus), *configuration.flags, "--checkpoint", str(last)]
        + ["--beam-size", "3"],
        tmp_path,
        stdin="".join(s + "\n" for s in TEST_SENTENCES),
    )
    assert translate.returncode == 0, translate.stderr[-3000:]
    assert "Model model0 is loaded from a checkpoint %s" % last in translate.stderr
    translations = translate.stdout.splitlines()
    assert len(translations) == len(TEST_SENTENCES), translate.stdout
    vocabulary = {w.upper() for w in WORDS} | {"<EOS>", "<UNK>"}
    assert all(set(t.split()) <= vocabulary for t in translations), translations
    right = [t == translation_of(s) + " <EOS>" for s, t in zip(TEST_SENTENCES, translations)]
    assert sum(right) >= 4, list(zip(TEST_SENTENCES, translations))


@pytest.mark.parametrize(
    "era, flags, error",
    [
        ("E5", (), r"TypeError: .*_CreateAndAddToSelf\(\) takes from 3 to 4 positional"),
        (
            "E5",
            ("--use-bidirectional-encoder",),
            r"TypeError: .*_CreateAndAddToSelf\(\) takes from 3 to 4 positional",
        ),
        (
            "E6",
            ("--use-bidirectional-encoder",),
            r"ValueError: Unknown iterable argument type: key=shape value=\[48\.0, 8\]",
        ),
    ],
    ids=["E5-plain", "E5-bidirectional", "E6-bidirectional"],
)
def test_configurations_broken_in_caffe2_fail_as_in_caffe2(tmp_path, era, flags, error):
    """Caffe2's own bugs (module docstring): the program stops while building
    the model, with the error Caffe2 raised, before any training."""
    corpus = write_corpus(tmp_path)
    train = run_program(era, "train.py", train_arguments(corpus, 1, flags), tmp_path)
    assert train.returncode != 0
    assert re.search(error, train.stderr), train.stderr[-3000:]
    assert "Epoch 0" not in train.stderr
    assert "seq2seq_util.py" in train.stderr  # raised where Caffe2's code made the call

"""``torch.nn.LSTM`` against Caffe2's ``rnn_cell.LSTM``, on the same weights.

torch is never a dependency of caffe2rnn, so the docs site is built without
it. This module runs the comparison where torch *is* importable and keeps its
result as a small JSON record that the site shows (docs/concepts/cells.md):

    python -m caffe2rnn.cells.torch_check                 # compare now, print
    python -m caffe2rnn.cells.torch_check --record docs/_data/torch_check.json

The recorded file was made with torch 2.13.0 for the CPU (``pip install
torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu``, into any
environment where caffe2rnn imports); caffe2rnn itself never needs torch.

:func:`compare` loads one ``torch.nn.LSTM`` layer's weights into an
``rnn_cell.LSTM`` (:func:`caffe2rnn.cells.torch_layout.load_torch_lstm`) and
measures the largest absolute differences, in float32, of

* the forward outputs: ``output``, ``h_n``, ``c_n`` against
  ``lstm/hidden_t_all``, ``lstm/hidden_t_last``, ``lstm/cell_t_last``;
* the gradients of ``L = sum(output * R)`` (``R`` fixed, random): torch's
  autograd against the ``RecurrentNetworkGradient`` op's, for the four weights
  (moved back to torch's gate order), the input sequence and ``h0``, ``c0``;
* sequences of different lengths: a ``PackedSequence`` against
  ``seq_lengths``, for ``h_n``, ``c_n`` and the rows of ``output`` before each
  sequence's end (after it, torch pads with zeros and Caffe2 repeats the last
  state: :func:`compare` checks that too and records it).

Everything runs in a workspace of its own, so a caller's blobs are untouched.
"""

import argparse
import datetime
import json
import platform
import sys

import numpy as np

#: The sizes and seed of the recorded comparison.
SIZES = {"T": 6, "N": 3, "D": 5, "H": 4}
SEED = 0
#: The lengths of the packed case (one full, two shorter), for N = 3.
LENGTHS = (6, 4, 1)
#: Differences above this fail the check (float32 rounding is ~1e-7).
TOLERANCE = 1e-5
#: What the record holds, section by section (a test checks the shape).
FIELDS = {
    "forward": ("output", "h_n", "c_n"),
    "gradients": ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "input", "h0", "c0"),
    "packed": ("h_n", "c_n", "output before each end"),
}
COMMAND = "python -m caffe2rnn.cells.torch_check --record docs/_data/torch_check.json"


def _caffe2_lstm(weights, x, h0, c0, lengths, r):
    """Run rnn_cell.LSTM forward and backward; return its outputs and gradients
    (in torch's names and gate order)."""
    from .. import model_helper, workspace
    from . import torch_layout
    from .layers import LSTM  # rnn_cell.LSTM's home (rnn_cell re-exports it)

    T, N, _ = x.shape
    model = model_helper.ModelHelper(name="torch_check")
    hidden_all, hidden_last, _, cell_last = LSTM(
        model,
        "x",
        "seq_lengths",
        ("h0", "c0"),
        dim_in=x.shape[2],
        dim_out=h0.shape[1],
        scope="lstm",
    )
    weighted = model.net.Mul([hidden_all, "R"], "weighted")
    loss = model.net.SumElements(weighted, "loss")
    model.AddGradientOperators([loss])
    workspace.RunNetOnce(model.param_init_net)
    torch_layout.load_torch_lstm("lstm", **weights)
    for name, value in (("x", x), ("h0", h0[None]), ("c0", c0[None]), ("R", r)):
        workspace.FeedBlob(name, value.astype(np.float32))
    workspace.FeedBlob("seq_lengths", np.asarray(lengths, np.int32))
    workspace.RunNetOnce(model.net)
    grads = [workspace.FetchBlob("lstm/%s_grad" % p) for p in torch_layout.PARAM_NAMES]
    weight_ih, weight_hh, bias_ih, bias_hh = torch_layout.lstm_params_to_torch(*grads)
    return {
        "output": workspace.FetchBlob(str(hidden_all)),
        "h_n": workspace.FetchBlob(str(hidden_last)),
        "c_n": workspace.FetchBlob(str(cell_last)),
        "weight_ih": weight_ih,
        "weight_hh": weight_hh,
        "bias_ih": bias_ih,
        "bias_hh": bias_hh,
        "input": workspace.FetchBlob("x_grad"),
        "h0": workspace.FetchBlob("h0_grad"),
        "c0": workspace.FetchBlob("c0_grad"),
    }


def _torch_lstm(torch, weights, x, h0, c0, r, lengths=None):
    """torch.nn.LSTM on the same weights: outputs and autograd's gradients."""
    lstm = torch.nn.LSTM(x.shape[2], h0.shape[1])
    with torch.no_grad():
        for name, value in weights.items():
            getattr(lstm, name + "_l0").copy_(torch.tensor(value, dtype=torch.float32))
    xs, h, c = (torch.tensor(a, dtype=torch.float32, requires_grad=True) for a in (x, h0, c0))
    source = xs
    if lengths is not None:
        source = torch.nn.utils.rnn.pack_padded_sequence(
            xs, torch.tensor(lengths), enforce_sorted=False
        )
    output, (h_n, c_n) = lstm(source, (h[None], c[None]))
    if lengths is not None:
        output, _ = torch.nn.utils.rnn.pad_packed_sequence(output, total_length=x.shape[0])
    (output * torch.tensor(r, dtype=torch.float32)).sum().backward()
    found = {"output": output, "h_n": h_n, "c_n": c_n}
    found = {k: v.detach().numpy() for k, v in found.items()}
    found.update({name: getattr(lstm, name + "_l0").grad.numpy() for name in weights})
    found.update({"input": xs.grad.numpy(), "h0": h.grad.numpy(), "c0": c.grad.numpy()})
    return found


def compare(seed=SEED, sizes=None, lengths=LENGTHS):
    """Compare ``torch.nn.LSTM`` with ``rnn_cell.LSTM`` now (torch must be
    importable); return the record :func:`record` writes."""
    import torch

    from .. import kernels, workspace

    sizes = dict(SIZES, **(sizes or {}))
    T, N, D, H = (sizes[k] for k in "TNDH")
    rng = np.random.default_rng(seed)
    k = 1 / np.sqrt(H)  # torch's initialisation range
    weights = {
        "weight_ih": rng.uniform(-k, k, (4 * H, D)),
        "weight_hh": rng.uniform(-k, k, (4 * H, H)),
        "bias_ih": rng.uniform(-k, k, 4 * H),
        "bias_hh": rng.uniform(-k, k, 4 * H),
    }
    weights = {name: value.astype(np.float32) for name, value in weights.items()}
    x = rng.normal(size=(T, N, D)).astype(np.float32)
    h0, c0 = (rng.normal(size=(N, H)).astype(np.float32) for _ in range(2))
    r = rng.normal(size=(T, N, H)).astype(np.float32)

    def largest(a, b):
        return float(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)).max())

    with workspace.WorkspaceGuard("caffe2rnn_torch_check"):
        workspace.ResetWorkspace()
        full = _caffe2_lstm(weights, x, h0, c0, [T] * N, r)
        workspace.ResetWorkspace()
        packed = _caffe2_lstm(weights, x, h0, c0, lengths, r)
        workspace.ResetWorkspace()
    want = _torch_lstm(torch, weights, x, h0, c0, r)
    want_packed = _torch_lstm(torch, weights, x, h0, c0, r, lengths)

    before_end = np.arange(T)[:, None] < np.asarray(lengths)[None, :]  # T x N
    after_end = ~before_end
    repeats = all(
        np.array_equal(packed["output"][t, n], packed["output"][lengths[n] - 1, n])
        for t, n in zip(*np.nonzero(after_end))
    )
    return {
        "torch_version": torch.__version__,
        "numpy_version": np.__version__,
        "python_version": platform.python_version(),
        "kernels": kernels.active(),
        "recorded": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": COMMAND,
        "sizes": sizes,
        "seed": seed,
        "lengths": list(lengths),
        "tolerance": TOLERANCE,
        "forward": {name: largest(full[name], want[name]) for name in FIELDS["forward"]},
        "gradients": {name: largest(full[name], want[name]) for name in FIELDS["gradients"]},
        "packed": {
            "h_n": largest(packed["h_n"], want_packed["h_n"]),
            "c_n": largest(packed["c_n"], want_packed["c_n"]),
            "output before each end": largest(
                packed["output"][before_end], want_packed["output"][before_end]
            ),
        },
        "padded rows": {
            "torch all zeros": bool(not want_packed["output"][after_end].any()),
            "caffe2 repeats the last state": bool(repeats),
        },
    }


def passed(check):
    """True when every recorded difference is within the record's tolerance."""
    return all(
        check[section][name] <= check["tolerance"] for section in FIELDS for name in FIELDS[section]
    )


def load(path):
    """A record written by :func:`record` (``--record``)."""
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def record(path, check):
    """Write ``check`` (from :func:`compare`) as JSON to ``path``."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(check, handle, indent=2, sort_keys=False)
        handle.write("\n")


def describe(check):
    """The record as a few lines of text, what the docs page prints."""
    sizes = check["sizes"]
    lines = [
        "torch %s, caffe2rnn's %s kernels, T=%d N=%d D=%d H=%d; largest |torch - Caffe2|:"
        % (
            check["torch_version"],
            check["kernels"],
            sizes["T"],
            sizes["N"],
            sizes["D"],
            sizes["H"],
        )
    ]
    titles = {
        "forward": "forward",
        "gradients": "gradients",
        "packed": "lengths %s" % check["lengths"],
    }
    for section, names in FIELDS.items():
        cells = ["%s %.1e" % (name, check[section][name]) for name in names]
        lines.append("  %-15s %s" % (titles[section] + ":", ", ".join(cells[:4])))
        if cells[4:]:
            lines.append("  %-15s %s" % ("", ", ".join(cells[4:])))
    padded = check["padded rows"]
    zeros = "yes" if padded["torch all zeros"] else "no"
    repeats = "yes" if padded["caffe2 repeats the last state"] else "no"
    lines.append(
        "  padded rows: torch zeros %s, Caffe2 repeats the last state %s" % (zeros, repeats)
    )
    verdict = "PASS" if passed(check) else "FAIL"
    lines.append("  %s (tolerance %.0e)" % (verdict, check["tolerance"]))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m caffe2rnn.cells.torch_check",
        description="Compare torch.nn.LSTM with Caffe2's rnn_cell.LSTM on the same weights.",
    )
    parser.add_argument("--record", metavar="PATH", help="write the result as JSON to PATH")
    args = parser.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError:
        print(
            "torch is not importable: pip install torch==2.13.0 --index-url "
            "https://download.pytorch.org/whl/cpu to run this comparison"
        )
        return 2
    check = compare()
    print(describe(check))
    if args.record:
        record(args.record, check)
        print("recorded in", args.record)
    return 0 if passed(check) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Plots (matplotlib) of numbers the library computes: bug gradients, attention, benchmarks.

The diagrams of :mod:`caffe2rnn.viz` show *structure*; these show *values*:

* :func:`gradient_errors` / :func:`plot_bug` — for a bug of
  :data:`caffe2rnn.history.bugs.BUGS`, the error of the buggy and of the fixed
  version's gradient against the NumPy reference, per timestep (and per run:
  B4 and B5 only show on the second run). Errors are max-abs per timestep,
  drawn on a log axis with exact zeros at the floor (and an error above
  1e30, garbage memory, at a marked ceiling), so "right for the last
  step only" (B3) or "all zero" (B7) is visible at a glance;
* :func:`plot_attention` — attention weights, a decoder step per row and an
  encoder position per column (each row sums to 1);
* :func:`plot_benchmark` — timings per configuration and implementation, as
  grouped bars, from rows a benchmark printed;
* :func:`loss_plot` — loss curves of a training run (the demo report's plot),
  written as PNG and SVG, sized and lettered to be read from the back of a room.

matplotlib is needed only here; without it these functions raise
:class:`ImportError` saying how to install it.
"""

import numpy as np

from ..errors import DrawingError

#: Where an error of exactly 0 is drawn on the log axis.
ZERO_FLOOR = 1e-17
#: Errors above this are drawn on it: a buggy version that reads memory
#: nobody wrote (B4) may find anything there, up to 1e308 or infinity, and a
#: log axis reaching that far fails in matplotlib (its ticks overflow).
INF_CEILING = 1e30
COLOURS = {"buggy": "#C5221F", "fixed": "#188038", "reference": "#1A73E8"}


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("caffe2rnn.viz.plots needs matplotlib: pip install matplotlib") from None
    return plt


def _per_step(error):
    """max |error| per leading index (timestep); a 0-d or 1-row array is one value."""
    error = np.abs(np.asarray(error, dtype=np.float64))
    if error.ndim == 0:
        return error[None]
    return error.reshape(error.shape[0], -1).max(axis=1)


def gradient_errors(result):
    """``{blob: {"buggy": [per run: errors per t], "fixed": [...]}}`` for a BugResult.

    Each entry is an array of ``max |gradient - reference|`` over everything but
    the first axis (timesteps for a sequence input, one value for a
    parameter). A run that produced no gradient for the blob gives NaN.
    """
    errors = {}
    for blob, reference in result.reference.items():
        reference = np.asarray(reference, dtype=np.float64)
        entry = {}
        for side in ("buggy", "fixed"):
            runs = []
            for run in getattr(result, side):
                if blob not in run or np.shape(run[blob]) != reference.shape:
                    runs.append(np.full(len(_per_step(reference)), np.nan))
                else:
                    runs.append(_per_step(np.asarray(run[blob], np.float64) - reference))
            entry[side] = runs
        errors[blob] = entry
    return errors


def plot_bug(bug_id, result=None, ax=None):
    """Per-timestep gradient error of a bug's buggy vs fixed version (log scale).

    ``result`` defaults to ``BUGS[bug_id].run()``. One line per version and run
    for each blob with a gradient; returns the matplotlib ``Axes``.
    """
    from ..history.bugs import BUGS

    if bug_id not in BUGS:
        raise DrawingError("unknown bug %r; bugs: %s" % (bug_id, ", ".join(BUGS)))
    bug = BUGS[bug_id]
    if result is None:
        result = bug.run()
    if not hasattr(result, "reference"):
        raise DrawingError("%s is not shown by gradients (%r)" % (bug_id, result))
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.4))
    markers = {"input": "o", "w": "s"}
    infinite = False
    for blob, entry in gradient_errors(result).items():
        for side in ("buggy", "fixed"):
            version = bug.buggy_version if side == "buggy" else bug.fixed_version
            for run, values in enumerate(entry[side]):
                t = np.arange(len(values))
                shown = np.where(values == 0, ZERO_FLOOR, values)
                beyond = values > INF_CEILING  # inf included, NaN (no gradient) not
                infinite |= bool(beyond.any())
                shown = np.where(beyond, INF_CEILING, shown)
                ax.plot(
                    t,
                    shown,
                    marker=markers.get(blob, "^"),
                    linestyle="-" if run == len(entry[side]) - 1 else ":",
                    color=COLOURS[side],
                    alpha=1.0 if run == len(entry[side]) - 1 else 0.55,
                    label="%s grad, %s (%s), run %d" % (blob, side, version, run + 1),
                )
    ax.set_yscale("log")
    ax.set_ylim(ZERO_FLOOR / 3, None)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.axhline(ZERO_FLOOR, color="#9AA0A6", linewidth=0.8, linestyle="--")
    if infinite:
        ax.axhline(INF_CEILING, color="#9AA0A6", linewidth=0.8, linestyle="--")
        ax.annotate("≥ 1e30 (garbage)", (0, INF_CEILING), fontsize=7, va="bottom", color="#5F6368")
    ax.set_xlabel("timestep t (a parameter's gradient: one point)")
    ax.set_ylabel("max |gradient − reference|")
    ax.set_title(
        "%s: %s vs %s against the NumPy reference" % (bug_id, bug.buggy_version, bug.fixed_version)
    )
    ax.legend(fontsize=7, loc="best")
    ax.figure.tight_layout()
    return ax


def plot_attention(weights, ax=None, source_labels=None, target_labels=None, title=None):
    """A heatmap of attention weights ``(decoder steps, encoder positions)``.

    A ``(T, N, S)`` array (Caffe2's per-step ``attention_weights_3d`` stacked)
    is drawn for batch item 0. Rows must be distributions (sum to 1).
    """
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim == 3:
        weights = weights[:, 0, :]
    if weights.ndim != 2:
        raise DrawingError(
            "attention weights must be (T, S) or (T, N, S), got shape %s" % (weights.shape,)
        )
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(1.2 + 0.45 * weights.shape[1], 1.0 + 0.4 * weights.shape[0]))
    image = ax.imshow(weights, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
    for (t, s), value in np.ndenumerate(weights):
        ax.text(
            s,
            t,
            "%.2f" % value,
            ha="center",
            va="center",
            fontsize=8,
            color="white" if value > 0.6 else "#202124",
        )
    ax.set_xticks(range(weights.shape[1]), source_labels or range(weights.shape[1]))
    ax.set_yticks(range(weights.shape[0]), target_labels or range(weights.shape[0]))
    ax.set_xlabel("encoder position s")
    ax.set_ylabel("decoder step t")
    ax.set_title(title or "attention weights α[t, s] (each row sums to 1)")
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    ax.figure.tight_layout()
    return ax


def plot_benchmark(rows, ax=None, value="time", unit="ms", title=None):
    """Grouped bars from benchmark rows: ``[{"config": ..., "impl": ..., value: ...}]``.

    One group per configuration, one bar per implementation, in first-seen
    order; the value printed on each bar.
    """
    rows = list(rows)
    if not rows:
        raise DrawingError("plot_benchmark: no rows")
    configs = list(dict.fromkeys(str(r["config"]) for r in rows))
    impls = list(dict.fromkeys(str(r["impl"]) for r in rows))
    table = {(str(r["config"]), str(r["impl"])): float(r[value]) for r in rows}
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(max(5.0, 1.3 * len(configs) * len(impls) / 2 + 2), 3.4))
    width = 0.8 / len(impls)
    for k, impl in enumerate(impls):
        xs = [i + (k - (len(impls) - 1) / 2) * width for i in range(len(configs))]
        heights = [table.get((c, impl), np.nan) for c in configs]
        bars = ax.bar(xs, heights, width, label=impl)
        ax.bar_label(bars, fmt="%.3g", fontsize=7)
    ax.set_xticks(range(len(configs)), configs, rotation=0, fontsize=8)
    ax.set_ylabel("%s (%s)" % (value, unit))
    ax.set_title(title or "benchmark")
    ax.legend(fontsize=8)
    ax.figure.tight_layout()
    return ax


def have_matplotlib():
    """True when matplotlib can be imported (the plots need it; nothing else does)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def loss_plot(path_stem, curves, references=(), title="", ylabel="loss", xlabel="step"):
    """Draw loss curves; write ``path_stem.png`` and ``path_stem.svg``; return both paths.

    ``curves`` is a list of ``(label, losses)`` or ``(label, losses, smoothed)``:
    each curve is drawn faint per step, and bold when a smoothed version is
    given. ``references`` is a list of ``(label, value)`` horizontal lines
    (e.g. a baseline a model must beat).
    """
    plt = _pyplot()
    colors = ["#1f5fa8", "#c2571a", "#2c8a3e", "#7a3e9d"]
    with plt.rc_context({"font.size": 15, "svg.fonttype": "none", "svg.hashsalt": "caffe2rnn"}):
        figure, axes = plt.subplots(figsize=(10, 5.2))
        for i, (label, losses, *smoothed) in enumerate(curves):
            color = colors[i % len(colors)]
            steps = np.arange(1, len(losses) + 1)
            if smoothed:
                axes.plot(steps, losses, color=color, alpha=0.25, linewidth=1)
                axes.plot(steps, smoothed[0], color=color, linewidth=2.5, label=label)
            else:
                axes.plot(steps, losses, color=color, linewidth=2, label=label)
        for j, (label, value) in enumerate(references):
            axes.axhline(value, color="#555555", linestyle=("--", ":", "-.")[j % 3], linewidth=1.5)
            axes.annotate(
                label,
                (1.0, value),
                xycoords=("axes fraction", "data"),
                xytext=(-6, 5),
                textcoords="offset points",
                ha="right",
                color="#333333",
                fontsize=13,
            )
        axes.set_xlabel(xlabel)
        axes.set_ylabel(ylabel)
        if title:
            axes.set_title(title)
        axes.set_xlim(1, max(len(c[1]) for c in curves))
        axes.set_ylim(bottom=0)
        axes.grid(alpha=0.3)
        axes.spines[["top", "right"]].set_visible(False)
        axes.legend(loc="lower left", frameon=False)
        figure.tight_layout()
        paths = [path_stem + ".png", path_stem + ".svg"]
        figure.savefig(paths[0], dpi=110)
        figure.savefig(paths[1], metadata={"Date": None})
        plt.close(figure)
    return paths

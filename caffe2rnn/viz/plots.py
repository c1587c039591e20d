"""Plots (matplotlib) of numbers the library computes: bug gradients, attention, benchmarks.

The diagrams of :mod:`caffe2rnn.viz` show *structure*; these show *values*:

* :func:`gradient_errors` / :func:`plot_bug` — for a bug of
  :data:`caffe2rnn.history.bugs.BUGS`, the error of the buggy and of the fixed
  version's gradient against the NumPy reference. A bug shown in one run
  (B3, B7) is drawn per timestep: the input's gradient, max-abs error per t,
  on a log axis with exact zeros at the floor (and an error above 1e30,
  garbage memory, at a marked ceiling), so "right for the last step only"
  (B3) is visible at a glance. A bug shown by a second run (B4, B5) is a
  parameter's gradient, one number per run: bars, run 1 and run 2 × buggy
  and fixed, each marked right or wrong. Legends sit under the axes, never
  on the data;
* :func:`plot_attention` — attention weights, a decoder step per row and an
  encoder position per column (each row sums to 1);
* :func:`plot_benchmark` — timings per configuration and implementation, as
  grouped bars, from rows a benchmark printed;
* :func:`loss_plot` — loss curves of a training run (the demo report's plot),
  written as PNG and SVG, sized and lettered to be read from the back of a room.

matplotlib is needed only here; without it these functions raise
:class:`ImportError` saying how to install it.
"""

import textwrap

import numpy as np

from ..errors import DrawingError

#: Where an error of exactly 0 is drawn on the log axis.
ZERO_FLOOR = 1e-17
#: Errors above this are drawn on it: a buggy version that reads memory
#: nobody wrote (B4) may find anything there, up to 1e308 or infinity, and a
#: log axis reaching that far fails in matplotlib (its ticks overflow).
INF_CEILING = 1e30
COLOURS = {"buggy": "#C5221F", "fixed": "#188038", "reference": "#1A73E8"}
#: In the bars of a second-run bug: colour is the verdict ...
VERDICT_COLOURS = {"right": COLOURS["fixed"], "wrong": COLOURS["buggy"]}
#: ... and the fill the version (hatched: the buggy one; solid: the fixed one).
VERSION_HATCH = {"buggy": "///", "fixed": None}


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


#: An error below this fraction of the reference's size is float noise: "right".
RIGHT = 1e-4

#: What a plot says under its title, beside what the numbers show.
CAPTIONS = {
    "B3": "rows 0 … T−1 of the state gradient are never written: each step reads "
    "uninitialised memory, not the next step's gradient",
    "B4": "the fixing version (april) is right on run 1 only: its fix met the C++ "
    "op's accumulation, bug B5",
    "B5": "right on run 1, wrong on run 2: 2 × the gradient of timestep 0 instead "
    "of the sum over t",
    "B7": "every gradient of the input is lost: the linked gradient is overwritten",
}


def _right(error, reference):
    """Whether an error is float noise beside the reference's size (NaN: no gradient)."""
    scale = float(np.max(np.abs(reference))) or 1.0
    return bool(np.all(np.isfinite(error)) and np.max(error) <= RIGHT * scale)


def _shown(values):
    """Errors as drawn on a log axis: 0 at the floor, garbage (> 1e30, inf, NaN: a
    gradient computed from memory nobody wrote) at the ceiling."""
    values = np.asarray(values, np.float64)
    shown = np.where(values == 0, ZERO_FLOOR, values)
    beyond = (values > INF_CEILING) | np.isnan(values)
    return np.where(beyond, INF_CEILING, shown), bool(beyond.any())


def _what_unwritten_memory_held(errors, reference):
    """B3-like results: say whether the buggy run read garbage or (most likely) zeros."""
    buggy = errors[:-1]
    if not np.all(np.isfinite(buggy)) or np.any(buggy > 1e6 * (np.max(np.abs(reference)) or 1)):
        return "this run: garbage (values of up to %.0e)" % np.nanmax(np.where(
            np.isfinite(buggy), buggy, INF_CEILING))  # fmt: skip
    return "this run: no garbage there (fresh memory holds zeros), so the recurrent part is missing"


def plot_bug(bug_id, result=None, ax=None):
    """The gradient error of a bug's buggy and fixed versions against the NumPy reference.

    ``result`` defaults to ``BUGS[bug_id].run()``. A bug shown by one run is
    drawn per timestep (one line per version, the input's gradient); one shown
    by a second run (``Bug.runs`` > 1) as bars, run 1 and run 2 × buggy and
    fixed, of its parameter's gradient. Returns the matplotlib ``Axes``.
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
        _, ax = plt.subplots(figsize=(6.4, 3.7))
    errors = gradient_errors(result)
    if len(result.buggy) > 1:
        _bug_bars(ax, bug, result, errors)
    else:
        _bug_lines(ax, bug, result, errors)
    caption = CAPTIONS.get(bug_id)
    title = "%s: %s (buggy) vs %s (fixed), against the NumPy reference" % (
        bug_id, bug.buggy_version, bug.fixed_version)  # fmt: skip
    if caption:
        title += "\n" + textwrap.fill(caption, 84)
    ax.set_title(title, fontsize=9, loc="left")
    ax.figure.tight_layout()
    return ax


def _bug_lines(ax, bug, result, errors):
    """One line per version: the input's gradient error at each timestep."""
    blob = "input" if "input" in errors else next(iter(errors))
    infinite = False
    for side, marker in (("buggy", "o"), ("fixed", "s")):
        version = bug.buggy_version if side == "buggy" else bug.fixed_version
        values = errors[blob][side][0]
        shown, beyond = _shown(values)
        infinite |= beyond
        ax.plot(np.arange(len(values)), shown, marker=marker, color=COLOURS[side],
                label="%s (%s)" % (version, side))  # fmt: skip
    ax.set_yscale("log")
    ax.set_ylim(ZERO_FLOOR / 3, INF_CEILING * 30 if infinite else None)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.axhline(ZERO_FLOOR, color="#9AA0A6", linewidth=0.8, linestyle="--")
    if infinite:
        ax.axhline(INF_CEILING, color="#9AA0A6", linewidth=0.8, linestyle="--")
        ax.annotate("≥ 1e30 or NaN: garbage", (0, INF_CEILING), xytext=(2, 3),
                    textcoords="offset points", fontsize=8, va="bottom",
                    color="#5F6368")  # fmt: skip
    if bug.id == "B3":
        held = _what_unwritten_memory_held(errors[blob]["buggy"][0], result.reference[blob])
        ax.text(0.98, 0.16, held, transform=ax.transAxes, ha="right", va="center", fontsize=8,
                color="#5F6368")  # fmt: skip
    ax.set_xlabel("timestep t")
    ax.set_ylabel("max |%s_grad − reference|" % blob, fontsize=9)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)


def _what_it_is(bug, gradient, reference, timestep0):
    """A wrong gradient said in plain numbers (the log axis hides a factor of 2):
    garbage, a whole multiple of timestep 0's gradient ``g₀`` (B5: ``= 2 g₀``), or
    its error beside the reference's size. Each claim is checked on the numbers."""
    gradient = np.asarray(gradient, np.float64)
    scale = float(np.max(np.abs(reference))) or 1.0
    if gradient.shape != np.shape(reference):
        return "no gradient"
    if not np.all(np.isfinite(gradient)) or np.max(np.abs(gradient)) > 1e6 * scale:
        return "garbage: up to %.0e" % np.nanmax(np.where(np.isfinite(gradient),
                                                          np.abs(gradient), np.inf))  # fmt: skip
    if not np.any(gradient):
        return "= 0"
    if np.max(np.abs(gradient)) < 1e-6 * scale:  # B4: T × memory nobody wrote, nearly 0
        return "≈ 0 (up to %.0e)" % np.max(np.abs(gradient))
    if timestep0 is not None:
        factor = round(float(np.median(gradient / np.where(timestep0 == 0, 1, timestep0))))
        if factor and np.allclose(gradient, factor * timestep0, rtol=1e-6, atol=1e-9 * scale):
            return "= %d g₀" % factor
    error = float(np.max(np.abs(gradient - reference)))
    return "off by %.2g (|ref| ≤ %.2g)" % (error, scale)


def _timestep0(bug, blob, seed=0):
    """``g₀``, the gradient of timestep 0's use of the reference ``w`` alone, for a bug run
    on the pass-through cell (B4, B5) with ``Bug.run``'s default seed; else None."""
    from ..history import bugs, cells

    if bug.cell is not cells.pass_through_reference or blob != "w":
        return None
    values = bug.cell().values(np.random.default_rng(seed))
    return bugs.timestep0_gradient(values)


def _bug_bars(ax, bug, result, errors):
    """Bars: run 1 and run 2 × buggy and fixed, a parameter's gradient error each.

    Colour says right or wrong (:data:`VERDICT_COLOURS`: green right, red
    wrong), the fill says which version (:data:`VERSION_HATCH`: the buggy
    version hatched, the fixed one solid), so a wrong answer of the fixed
    version (B4's second run) is red, not the green of "fixed". The legend
    keeps the two apart (a "version" group, a "result" group), and each wrong
    bar says what its gradient is (:func:`_what_it_is`: ``= 2 g₀`` for B5's
    second run, where the log axis alone hides the factor)."""
    from matplotlib.patches import Patch

    blob = next((b for b in errors if b != "input"), "input")
    reference = result.reference[blob]
    timestep0 = _timestep0(bug, blob)
    width, runs = 0.36, len(result.buggy)
    infinite, said_g0 = False, False
    for k, side in enumerate(("buggy", "fixed")):
        values = [float(np.max(v)) for v in errors[blob][side]]
        shown, beyond = _shown(values)
        infinite |= beyond
        xs = np.arange(runs) + (k - 0.5) * width
        for run, (x, value, raw) in enumerate(zip(xs, shown, errors[blob][side])):
            verdict = "right" if _right(raw, reference) else "wrong"
            colour = VERDICT_COLOURS[verdict]
            hatched = VERSION_HATCH[side] is not None
            ax.bar([x], [value], width, color="#FFFFFF" if hatched else colour,
                   edgecolor=colour, hatch=VERSION_HATCH[side], linewidth=1.2)  # fmt: skip
            label = verdict
            if verdict == "wrong":
                what = _what_it_is(bug, getattr(result, side)[run].get(blob), reference,
                                   timestep0)  # fmt: skip
                said_g0 |= "g₀" in what
                label += "\n" + what
            ax.annotate(label, (x, value), xytext=(0, 3), textcoords="offset points",
                        ha="center", fontsize=8, color=colour)  # fmt: skip
    grey = "#5F6368"
    versions = [
        Patch(facecolor="#FFFFFF", edgecolor=grey, hatch=VERSION_HATCH["buggy"],
              label="hatched: %s (buggy)" % bug.buggy_version),
        Patch(facecolor=grey, edgecolor=grey, label="solid: %s (fixed)" % bug.fixed_version),
    ]  # fmt: skip
    verdicts = [
        Patch(color=VERDICT_COLOURS["right"], label="green: right"),
        Patch(color=VERDICT_COLOURS["wrong"], label="red: wrong"),
    ]
    ax.set_yscale("log")
    ax.set_ylim(ZERO_FLOOR / 3, (INF_CEILING if infinite else 1e3) * 1e5)
    ax.set_xticks(range(runs), ["run %d" % (r + 1) for r in range(runs)])
    ax.set_ylabel("max |%s_grad − reference|" % blob, fontsize=9)
    notes = []
    others = [b for b in errors if b != blob]
    if others:  # say what the plot leaves out, and why
        fine = all(_right(v, result.reference[b]) for b in others
                   for side in ("buggy", "fixed") for v in errors[b][side])  # fmt: skip
        notes.append("%s's gradient%s" % (", ".join(others),
                     ": right in every run (not drawn)" if fine else ""))  # fmt: skip
    if said_g0:
        notes.append("g₀: %s's gradient from timestep 0 alone; the reference is the sum over "
                     "all timesteps" % blob)  # fmt: skip
    if notes:
        ax.set_xlabel("\n".join(notes), fontsize=8)
    common = dict(fontsize=8, title_fontsize=8, loc="upper center", ncol=2, frameon=False)
    below = -0.18 - 0.075 * len(notes)  # under the tick labels and the notes
    first = ax.legend(handles=versions, title="version (fill)", bbox_to_anchor=(0.27, below),
                      **common)  # fmt: skip
    ax.add_artist(first)
    ax.legend(handles=verdicts, title="result (colour)", bbox_to_anchor=(0.77, below), **common)


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

"""Loss curves as PNG and SVG files (matplotlib, drawn off-screen).

Sized and lettered to be read from the back of a room: a report shows them
projected. matplotlib is imported only when a plot is drawn, with the
non-interactive ``Agg`` backend, so no display is needed.
"""

import numpy as np


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
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

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

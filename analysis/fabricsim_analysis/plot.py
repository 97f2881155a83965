"""Shared matplotlib setup: the Agg backend (no display needed), saving figures.

matplotlib is imported only when a plot is asked for, so text output does
not pay for it.
"""

import os

# Colours shared by the scripts' figures: run A and run B of a comparison.
SERIES_COLORS = ("#4c72b0", "#dd8452")


def pyplot():
    """matplotlib.pyplot with the Agg backend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def figure(nrows=1, ncols=1, figsize=(7, 4.5), **kw):
    """(fig, axes) of a new figure, as plt.subplots."""
    return pyplot().subplots(nrows, ncols, figsize=figsize, **kw)


def savefig(fig, path, dpi=100, tight=True):
    """Write ``fig`` to ``path`` (its directory created if needed), close it, return the path."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    if tight:
        fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path


def no_data(ax, text):
    """An empty panel that says why it is empty."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


def grouped_bars(ax, labels, series, names, colors=SERIES_COLORS):
    """Bars of several series side by side for each label.

    ``series``: one list of values per series (None or NaN: no bar);
    ``names``: the series' legend entries.
    """
    import numpy as np
    n = len(series)
    x = np.arange(len(labels))
    width = 0.8 / max(n, 1)
    for i, (vals, name) in enumerate(zip(series, names)):
        h = np.array([np.nan if v is None else float(v) for v in vals], dtype=float)
        ax.bar(x - 0.4 + width * (i + 0.5), h, width, label=name, color=colors[i % len(colors)])
    ax.set_xticks(x)
    crowded = len(labels) > 4 or sum(len(str(l)) for l in labels) > 60
    ax.set_xticklabels(labels, rotation=20 if crowded else 0, ha="right" if crowded else "center", fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)

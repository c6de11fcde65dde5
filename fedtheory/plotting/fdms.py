r"""Figures of seed 004's experiment (``fdms.experiment``), drawn like the paper's Figs. 1-5:
test accuracy against the round per dropout ratio and setting, the pairwise similarity
scores at the last round, and the similarity computations with and without the complexity
reduction.

Each function takes :func:`fedtheory.experiments.fdms_paper.paper_data` and returns the saved
paths (none when ``path`` is None).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.experiments.fdms_paper import ALPHAS, CR_RUNS, METHODS, SETTINGS
from fedtheory.plotting import label_axes, plt, save_figure

__all__ = ["plot_complexity", "plot_curves", "plot_heatmap"]

_COLORS = {"Full": "k", "Dropout": "C0", "Stale": "C1", "Stale (updates)": "C4",
           "FL-FDMS": "C3", "Theta_t": "C2", "0.5 Theta_t": "C5", "code threshold": "C6"}
_STYLE = {"Stale (updates)": ":"}


def plot_curves(data: dict[str, Any], path: Any) -> list[str]:
    r"""Mean test accuracy over the seeds (with the 10-90 % band) per round for every method:
    rows = settings, columns = :math:`\alpha` (the paper's Figs. 1 and 3)."""
    fig, axes = plt.subplots(len(SETTINGS), len(ALPHAS), figsize=(13.0, 7.5), squeeze=False)
    p = data["params"]
    for i, setting in enumerate(SETTINGS):
        acc = data[setting]["acc"]
        for j, alpha in enumerate(ALPHAS):
            ax = axes[i, j]
            runs = [("Full", acc[("Full", "Full")])]
            runs += [(m, acc[(f"alpha={alpha}", m)]) for m in METHODS]
            for name, vals in runs:
                x = np.arange(vals.shape[0])
                ax.plot(x, vals.mean(axis=1), _STYLE.get(name, "-"), color=_COLORS[name],
                        label=name, lw=1.1)
                lo, hi = np.percentile(vals, [10, 90], axis=1)
                ax.fill_between(x, lo, hi, color=_COLORS[name], alpha=0.10, lw=0)
            full = acc[("Full", "Full")].mean(axis=1)
            ax.set_ylim(max(0.0, float(full[min(5, full.size - 1)]) - 0.15), 1.0)
            label_axes(ax, "round", "test accuracy", f"{setting}, alpha = {alpha}")
    fig.suptitle(f"FL-FDMS against Full, Dropout, Stale (digits, softmax regression, K = 20, "
                 f"{p['seeds']} seeds, the authors' splits and dropout)", fontsize=10)
    fig.tight_layout(rect=(0.0, 0.0, 1.0, 0.96))
    return save_figure(fig, path)


def plot_heatmap(data: dict[str, Any], path: Any) -> list[str]:
    r"""FL-FDMS's similarity means :math:`R^{i,j}_T` at the last round (seed 0, :math:`\alpha =
    0.5`), one panel per setting (the paper's Fig. 4; clients in their groups of 4)."""
    fig, axes = plt.subplots(1, len(SETTINGS), figsize=(10.0, 4.4), squeeze=False)
    for ax, setting in zip(axes[0], SETTINGS, strict=True):
        heat = np.asarray(data[setting]["heat"])[0]
        im = ax.imshow(heat, vmin=0.0, vmax=1.0, cmap="viridis")
        ax.set_title(f"{setting}: R^(i,j) at the last round (alpha = 0.5)", fontsize=9)
        ax.set_xlabel("client j")
        ax.set_ylabel("client i")
        fig.colorbar(im, ax=ax, shrink=0.8)
    return save_figure(fig, path)


def plot_complexity(data: dict[str, Any], path: Any) -> list[str]:
    r"""Clustered, :math:`\alpha = 0.5` (the paper's Fig. 5): cumulative similarity
    computations per round (mean over the seeds) without and with the complexity reduction,
    and the test accuracy of each."""
    d = data["clustered"]
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0), squeeze=False)
    for name in ("FL-FDMS", *CR_RUNS):
        hist = np.asarray(d["computations"][name], dtype=float)
        axes[0, 0].plot(np.arange(1, hist.shape[0] + 1), hist.mean(axis=1),
                        color=_COLORS[name], label=name if name != "FL-FDMS" else "no reduction")
        acc = d["acc"][("alpha=0.5", name)]
        axes[0, 1].plot(np.arange(acc.shape[0]), acc.mean(axis=1), color=_COLORS[name],
                        label=name if name != "FL-FDMS" else "no reduction", lw=1.0)
    label_axes(axes[0, 0], "round", "similarity computations (cumulative)",
               "clustered, alpha = 0.5: computation")
    label_axes(axes[0, 1], "round", "test accuracy", "clustered, alpha = 0.5: learning")
    return save_figure(fig, path)

r"""Figures of seed 004's experiment (``fdms.experiment``): loss (and accuracy) curves per
dropout ratio and setting, the pairwise similarity heat map at the last round, and the
similarity computations with and without the complexity reduction.

Each function takes :func:`fedtheory.experiments.fdms_runs.experiment_data` and returns the
saved paths (none when ``path`` is None).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.experiments.fdms_runs import ALPHAS, METHODS, SETTINGS
from fedtheory.plotting import label_axes, plt, save_figure

__all__ = ["plot_complexity", "plot_curves", "plot_heatmap"]

_COLORS = {"Full": "k", "Dropout": "C0", "Stale": "C1", "FL-FDMS": "C3", "Oracle": "C2"}


def plot_curves(data: dict[str, Any], path: Any, metric: str = "f_gap") -> list[str]:
    r"""Mean (over the replicas, with the 10-90 % band) of ``metric`` per round for every
    method: rows = settings, columns = :math:`\alpha`."""
    fig, axes = plt.subplots(len(SETTINGS), len(ALPHAS), figsize=(13.0, 7.0), squeeze=False)
    p = data["params"]
    for i, setting in enumerate(SETTINGS):
        for j, alpha in enumerate(ALPHAS):
            ax = axes[i, j]
            for method in METHODS:
                run = data["runs"].get((setting, alpha, method))
                if run is None or metric not in run:
                    continue
                vals = np.asarray(run[metric])
                x = np.linspace(0, p["rounds"], vals.shape[1])
                ax.plot(x, vals.mean(axis=0), color=_COLORS[method], label=method, lw=1.2)
                lo, hi = np.percentile(vals, [10, 90], axis=0)
                ax.fill_between(x, lo, hi, color=_COLORS[method], alpha=0.12, lw=0)
            label_axes(ax, "round", r"$f - f^\star$" if metric == "f_gap" else metric,
                       f"{setting}, alpha = {alpha}", log="y" if metric == "f_gap" else "")
    fig.suptitle(f"FL-FDMS against Full, Dropout, Stale ({p['kind']}, K = 20, "
                 f"{p['replicas']} seeds, tau = {p['local_steps']})", fontsize=10)
    fig.tight_layout(rect=(0.0, 0.0, 1.0, 0.96))
    return save_figure(fig, path)


def plot_heatmap(data: dict[str, Any], path: Any) -> list[str]:
    r"""FL-FDMS's similarity means :math:`R^{i,j}_T` at the last round (replica 0), one panel
    per setting (clients ordered by cluster in the clustered setting)."""
    fig, axes = plt.subplots(1, len(SETTINGS), figsize=(10.0, 4.4), squeeze=False)
    for ax, setting in zip(axes[0], SETTINGS, strict=True):
        heat = np.asarray(data["heat"][setting])[0]
        im = ax.imshow(heat, vmin=0.0, vmax=1.0, cmap="viridis")
        ax.set_title(f"{setting}: R^(i,j) at the last round (alpha = 0.5)", fontsize=9)
        ax.set_xlabel("client j")
        ax.set_ylabel("client i")
        fig.colorbar(im, ax=ax, shrink=0.8)
    return save_figure(fig, path)


def plot_complexity(data: dict[str, Any], path: Any) -> list[str]:
    r"""Cumulative similarity computations per round (mean over replicas): no reduction,
    :math:`\Theta_t` of Theorem 2 and :math:`0.5\Theta_t` (:math:`\alpha = 0.5`)."""
    fig, axes = plt.subplots(1, len(SETTINGS), figsize=(10.0, 4.0), squeeze=False)
    for ax, setting in zip(axes[0], SETTINGS, strict=True):
        for name, style in (("no reduction", "-"), ("Theta_t", "--"), ("0.5 Theta_t", ":")):
            hist = np.asarray(data["complexity"][(setting, name)])
            ax.plot(np.arange(1, hist.shape[0] + 1), hist.mean(axis=1), style, label=name)
        label_axes(ax, "round", "similarity computations (cumulative)",
                   f"{setting}, alpha = 0.5")
    return save_figure(fig, path)

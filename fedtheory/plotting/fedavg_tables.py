r"""Figures of the lecture's two experiments run (seed 003): FedAvg's test accuracy per
heterogeneity level (the ablation of line 153) and the SCAFFOLD table's accuracy curves per
similarity (lines 313-322).

Each ``draw_*`` takes the summary its claim's figure check passes (mean curves over the seeds,
not the replicas) and returns the figure (a plotter of :mod:`fedtheory.plotting.figures`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from fedtheory.plotting import errorbar_points, label_axes, plt

__all__ = ["draw_ablation", "draw_scaffold_table"]


def draw_ablation(curves: Mapping[str, Any], budgets: Sequence[int],
                  half_widths: Mapping[str, Any], ceiling: float, seeds: int) -> plt.Figure:
    """FedAvg's mean test accuracy against the rounds, one line per heterogeneity level
    (``curves[label]``, ``(T + 1,)``), with the mean and a two-sided interval half-width
    (``half_widths[label]``, one per budget) at the budgets the claim tests, and the
    centralised optimum's accuracy (``ceiling``) as a dashed line."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2), layout="constrained")
    for j, (label, curve) in enumerate(curves.items()):
        c = np.asarray(curve, dtype=float)
        ax.plot(np.arange(c.size), 100 * c, "-", color=f"C{j}", lw=1.2, label=label)
        b = np.asarray(budgets, dtype=int)
        errorbar_points(ax, b, 100 * c[b], 100 * np.asarray(half_widths[label], dtype=float),
                        color=f"C{j}", label="")
    ax.axhline(100 * ceiling, ls="--", color="0.4", lw=1, label="centralised optimum")
    lo = min(100 * float(np.asarray(c, dtype=float)[min(budgets)]) for c in curves.values())
    ax.set_ylim(max(0.0, lo - 5), 100 * ceiling + 1.5)
    label_axes(ax, "round", "test accuracy (%)",
               f"FedAvg on digits, Dirichlet splits vs homogeneous ({seeds} random seeds; "
               "intervals at the budgets tested)", title_size=9, legend_size=8)
    return fig


def draw_scaffold_table(curves: Mapping[str, Mapping[str, Any]], target: float,
                        ceiling: float, seeds: int) -> plt.Figure:
    """Mean test accuracy against the rounds of every method of the SCAFFOLD table, one panel
    per similarity (``curves[similarity][method]``, ``(T + 1,)``), the target the rounds are
    counted to (dotted) and the centralised optimum's accuracy (dashed)."""
    fig, axes = plt.subplots(1, len(curves), figsize=(4.2 * len(curves), 4.0),
                             layout="constrained", sharey=True)
    for ax, (sim, methods) in zip(np.atleast_1d(axes), curves.items(), strict=True):
        for j, (name, curve) in enumerate(methods.items()):
            c = np.asarray(curve, dtype=float)
            ax.plot(np.arange(c.size), 100 * c, "-" if "E=1" in name else "--",
                    color=f"C{j}", lw=1.2, label=name)
        ax.axhline(100 * target, ls=":", color="k", lw=1, label=f"target {target:g}")
        ax.axhline(100 * ceiling, ls="--", color="0.5", lw=1, label="centralised optimum")
        ax.set_ylim(50, 100 * ceiling + 2)
        label_axes(ax, "round", "test accuracy (%)", f"{sim} ({seeds} random seeds)", title_size=9,
                   legend_size=7)
    fig.suptitle("SCAFFOLD table on digits: mean test accuracy per round", fontsize=10)
    return fig

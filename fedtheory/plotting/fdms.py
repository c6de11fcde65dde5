r"""Figures of seed 004's experiment (``fdms.experiment``), drawn like the paper's Figs. 1-5:
test accuracy against the round per dropout ratio and setting, the pairwise similarity
scores at the last round, and the similarity computations with and without the complexity
reduction.

Each ``draw_*`` takes :func:`fedtheory.experiments.fdms_paper.paper_data` and returns the
figure (the registry's plotters, :mod:`fedtheory.plotting.figures`); each ``plot_*`` saves it
for ``paper_figures/fdms_experiment.py``. :func:`draw_complexity_observation` draws
``fdms.complexity_reduction``'s observation, :func:`draw_negative_gap` its counterexample.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.experiments.fdms_paper import ALPHAS, CR_RUNS, METHODS, SETTINGS
from fedtheory.plotting import label_axes, plt, save_figure

__all__ = ["draw_complexity", "draw_complexity_observation", "draw_curves", "draw_heatmap",
           "draw_negative_gap", "plot_complexity", "plot_curves", "plot_heatmap"]

_COLORS = {"Full": "k", "Dropout": "C0", "Stale": "C1", "Stale (updates)": "C4",
           "FL-FDMS": "C3", "Theta_t": "C2", "0.5 Theta_t": "C5", "code threshold": "C6"}
#: Full dashed and drawn on top: FL-FDMS (red) often runs right under it.
_STYLE = {"Stale (updates)": ":", "Full": "--"}
_ZORDER = {"Full": 4}


def draw_curves(data: dict[str, Any]) -> plt.Figure:
    r"""Mean test accuracy over the seeds (with the 10-90 % band) per round for every method:
    rows = settings, columns = :math:`\alpha` (the paper's Figs. 1 and 3)."""
    fig, axes = plt.subplots(len(SETTINGS), len(ALPHAS), figsize=(13.0, 7.5), squeeze=False,
                             layout="constrained")
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
                        label=name, lw=1.1, zorder=_ZORDER.get(name, 2))
                lo, hi = np.percentile(vals, [10, 90], axis=1)
                ax.fill_between(x, lo, hi, color=_COLORS[name], alpha=0.10, lw=0)
            full = acc[("Full", "Full")].mean(axis=1)
            ax.set_ylim(max(0.0, float(full[min(5, full.size - 1)]) - 0.15), 1.0)
            label_axes(ax, "round", "test accuracy (mean, 10-90%)",
                       f"{setting}, alpha = {alpha}")
    fig.suptitle(f"FL-FDMS against Full, Dropout, Stale (digits, softmax regression, K = 20, "
                 f"{p['seeds']} replicas (random seeds), the authors' splits and dropout)",
                 fontsize=10)
    return fig


def plot_curves(data: dict[str, Any], path: Any) -> list[str]:
    """Draw :func:`draw_curves` and save it; returns the saved paths."""
    return save_figure(draw_curves(data), path)


def draw_heatmap(data: dict[str, Any]) -> plt.Figure:
    r"""FL-FDMS's similarity means :math:`R^{i,j}_T` at the last round (replica 0, :math:`\alpha =
    0.5`), one panel per setting (the paper's Fig. 4; clients in their groups of 4)."""
    fig, axes = plt.subplots(1, len(SETTINGS), figsize=(10.0, 4.4), squeeze=False,
                             layout="constrained")
    for ax, setting in zip(axes[0], SETTINGS, strict=True):
        heat = np.asarray(data[setting]["heat"])[0]
        im = ax.imshow(heat, vmin=0.0, vmax=1.0, cmap="viridis")
        ax.set_title(f"{setting}: R^(i,j) at the last round (alpha = 0.5)", fontsize=9)
        ax.set_xlabel("client j")
        ax.set_ylabel("client i")
        fig.colorbar(im, ax=ax, shrink=0.8, label=r"similarity score $R^{i,j}$")
    return fig


def plot_heatmap(data: dict[str, Any], path: Any) -> list[str]:
    """Draw :func:`draw_heatmap` and save it; returns the saved paths."""
    return save_figure(draw_heatmap(data), path)


#: Line styles of the complexity runs: the curves coincide until a threshold eliminates, so
#: each has its own dash (no reduction wide and pale, underneath).
_CR_STYLE = {"FL-FDMS": {"ls": "-", "lw": 3.0, "alpha": 0.5}, "Theta_t": {"ls": "--"},
             "0.5 Theta_t": {"ls": "-."}, "code threshold": {"ls": ":", "lw": 1.8}}


def draw_complexity(data: dict[str, Any]) -> plt.Figure:
    r"""Clustered, :math:`\alpha = 0.5` (the paper's Fig. 5): cumulative similarity
    computations per round (mean over the replicas) without and with the complexity reduction,
    and the test accuracy of each (the panel's title gives the largest difference to the run
    without reduction: the curves often coincide)."""
    d = data["clustered"]
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0), squeeze=False, layout="constrained")
    base = d["acc"][("alpha=0.5", "FL-FDMS")].mean(axis=1)
    gap = 0.0
    for name in ("FL-FDMS", *CR_RUNS):
        label = name if name != "FL-FDMS" else "no reduction"
        style = {"lw": 1.2, **_CR_STYLE.get(name, {})}
        hist = np.asarray(d["computations"][name], dtype=float)
        axes[0, 0].plot(np.arange(1, hist.shape[0] + 1), hist.mean(axis=1),
                        color=_COLORS[name], label=label, **style)
        acc = d["acc"][("alpha=0.5", name)].mean(axis=1)
        gap = max(gap, float(np.max(np.abs(acc - base))))
        axes[0, 1].plot(np.arange(acc.shape[0]), acc, color=_COLORS[name], label=label,
                        **style)
    label_axes(axes[0, 0], "round", "similarity computations (cumulative)",
               "clustered, alpha = 0.5: computation")
    label_axes(axes[0, 1], "round", "test accuracy (mean)",
               f"clustered, alpha = 0.5: learning (largest difference to no reduction: "
               f"{gap:.2g})")
    return fig


def plot_complexity(data: dict[str, Any], path: Any) -> list[str]:
    """Draw :func:`draw_complexity` and save it; returns the saved paths."""
    return save_figure(draw_complexity(data), path)


#: Line styles of the complexity observation's runs (no reduction drawn on top, dotted).
_RUN_STYLES = {"none": ("k", ":", 3), "1 Theta_t": ("C1", "-", 2), "0.5 Theta_t": ("C2", "--", 2)}


def draw_complexity_observation(computations_per_round: dict[str, Any],
                                rows: dict[str, dict[str, float]],
                                whole_cluster_rate: float) -> plt.Figure:
    r"""``fdms.complexity_reduction``'s observation: similarity scores computed per round
    without the reduction and with :math:`\Theta_t` and :math:`0.5\,\Theta_t` (left), and per
    run the share of scores saved, of runs that lost a friend and the non-friend rate (right),
    beside the non-friend rate under whole-cluster dropout (Assumption 5 failing)."""
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10.5, 4.0),
                             layout="constrained")
    for name, per_round in computations_per_round.items():
        color, ls, z = _RUN_STYLES.get(name, ("C0", "-", 1))
        y = np.asarray(per_round, dtype=float)
        ax.plot(np.arange(1, y.size + 1), y, color=color, ls=ls, zorder=z, lw=1.2,
                label="no reduction" if name == "none" else name)
    label_axes(ax, "round $t$", "similarity scores computed (mean over runs)",
               "computations per round", log="")
    names = list(rows)
    x = np.arange(len(names))
    w = 0.27
    bars = (("saved", "scores saved", "C0"), ("friend_eliminated", "runs losing a friend", "C3"),
            ("nonfriend_rate", "non-friend rate", "C7"))
    for j, (key, label, color) in enumerate(bars):
        bars_j = bx.bar(x + (j - 1) * w, [100 * float(rows[n][key]) for n in names], w,
                        color=color, label=label)
        bx.bar_label(bars_j, fmt="%.0f%%", fontsize=7)  # a 0 is a bar of no height: say it
    bx.axhline(100 * float(whole_cluster_rate), color="k", ls="--", lw=1,
               label="non-friend rate, whole-cluster dropout")
    bx.set_xticks(x, ["no reduction" if n == "none" else n for n in names])
    label_axes(bx, "run", "percent", "what the reduction saves and costs", log="")
    return fig


def draw_negative_gap(theta: Any, gap: float, eliminated: Any, p: float) -> plt.Figure:
    r"""``fdms.complexity_reduction``'s counterexample: Theorem 2's threshold
    :math:`\Theta_t` per round against the gap by which the non-friend leader's mean exceeds
    the friend's (left: the friend can be eliminated once :math:`\Theta_t` is below it), and
    the share of runs in which the friend has left the candidate set by round :math:`t`
    against :math:`p` (right). ``eliminated`` is each run's first round of elimination
    (-1: never)."""
    theta = np.asarray(theta, dtype=float)
    first = np.asarray(eliminated, dtype=int)
    t = np.arange(theta.size)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(7.5, 3.2), layout="constrained")
    shown = np.isfinite(theta) & (t >= 1)
    ax.plot(t[shown], theta[shown], color="C1", lw=1.2, label=r"$\Theta_t$ (Theorem 2)")
    ax.axhline(gap, color="C3", ls="--", lw=1, label=f"gap of the means: {gap:g}")
    label_axes(ax, "round $t$", "threshold", r"$\Theta_t$ against the gap", log="y")
    share = np.array([np.mean((first >= 0) & (first <= s)) for s in t]) if first.size else 0 * t
    bx.plot(t, share, color="C3", lw=1.2, label="runs that lost the friend")
    bx.axhline(p, color="k", ls=":", lw=1, label=f"p = {p:g}")
    bx.set_ylim(-0.03, 1.03)
    label_axes(bx, "round $t$", f"share of {first.size} runs", "friend eliminated by round $t$",
               log="")
    return fig

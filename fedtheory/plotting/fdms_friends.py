r"""Figures of FL-FDMS's friend discovery (seed 004, Lemma 2 and Theorem 2).

Each function takes the data of :mod:`fedtheory.experiments.fdms_friends` and returns the saved
paths (none when ``path`` is None).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.plotting import label_axes, plt, save_figure

__all__ = ["plot_complexity", "plot_nonfriend"]


def plot_nonfriend(data: dict[str, Any], path: Any) -> list[str]:
    r""":math:`P(\phi_t(k)\notin\mathcal B_k)` against :math:`t`: exact curves of the tight
    instance (:math:`\beta = 1`, :math:`\beta\approx1/4`) and the simulated algorithm with its
    Clopper–Pearson band, each against Lemma 2's bound :math:`2Ke^{-\beta\delta^2t/2}`
    (``data`` from :func:`~fedtheory.experiments.fdms_friends.nonfriend_figure_data`)."""
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for c, color in zip(data["curves"].values(), ("C0", "C1"), strict=True):
        lab = rf"$\beta = {c['beta']:.2g}$"
        ax.plot(c["t"], c["P"], "-", color=color, label=f"exact, {lab}")
        ax.plot(c["t"], c["bound"], "--", color=color, label=f"Lemma 2 bound, {lab}")
    mc = data["mc"]
    ax.fill_between(mc["t"], np.maximum(mc["lower"], 1e-12), mc["upper"], color="C2", alpha=0.3,
                    label=f"Clopper-Pearson band (alpha={data['alpha']:g})")
    ax.plot(mc["t"], np.maximum(mc["rate"], 1e-12), "o", color="C2", ms=3,
            label=rf"FL-FDMS simulated, $\beta = {mc['beta']:.2g}$, {mc['R']} runs")
    ax.set_ylim(1e-8, 20)
    label_axes(ax, "round $t$", r"$P(\phi_t(k)$ not a friend$)$",
               "Lemma 2 on its tightest instance (scores in {0, 1}, q = 3/4, K = 3)", log="y")
    return save_figure(fig, path)


def plot_complexity(data: dict[str, Any], path: Any) -> list[str]:
    r"""Similarity scores computed per round without the complexity reduction and with
    :math:`\Theta_t` and :math:`0.5\,\Theta_t` (left), and :math:`\Theta_t` itself (right)
    (``data`` from :func:`~fedtheory.experiments.fdms_friends.complexity_figure_data`)."""
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10.0, 4.0))
    styles = (("k", ":", 3), ("C1", "-", 2), ("C2", "-", 2))  # no reduction drawn on top
    for (name, run), (color, ls, z) in zip(data["runs"].items(), styles, strict=True):
        ax.plot(np.arange(data["T"]), run["per_round"], color=color, ls=ls, zorder=z, lw=1,
                label=f"{name}: total {run['total']:.0f}, friend lost in "
                      f"{100 * run['friend_eliminated']:.0f}% of runs")
    label_axes(ax, "round $t$", "similarity scores computed",
               f"20 clients, 5 clusters, p = {data['p']}", log="")
    t = np.arange(1, data["T"])
    bx.plot(t, data["theta"], color="C1", label=r"$\Theta_t$")
    bx.plot(t, 0.5 * data["theta"], color="C2", label=r"$0.5\,\Theta_t$")
    bx.axhline(1.0, color="grey", lw=0.8, label="range of the scores")
    label_axes(bx, "round $t$", "threshold",
               rf"Theorem 2: $\beta = {data['beta']:.2g}$, $\delta_f \leq {data['delta_f']:.2g}$",
               log="y")
    return save_figure(fig, path)

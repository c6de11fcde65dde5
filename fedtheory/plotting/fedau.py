r"""Figures of the FedAU claims (seed 001): the weight error against :math:`T` for several
cutoffs :math:`K`, the objective each weighting reaches, the methods x patterns table.

Each function takes the data of :mod:`fedtheory.experiments.fedau_runs` /
:mod:`fedtheory.experiments.fedau_patterns` and returns the saved paths (none when ``path``
is None).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.plotting import label_axes, plt, save_figure

__all__ = ["plot_objectives", "plot_patterns_table", "plot_weight_error"]


def plot_weight_error(data: dict[str, Any], path: Any) -> list[str]:
    r"""Theorem 3's weight error (exact) against :math:`T` for each :math:`K` (solid), with its
    bias term :math:`\frac1N\sum_n(1-p_n)^{2K}` (dotted): small :math:`K` floors early, large
    :math:`K` decays like :math:`K\log T/T` from higher up. ``data`` from
    :func:`~fedtheory.experiments.fedau_runs.weight_error_curves`."""
    fig, ax = plt.subplots(figsize=(5.5, 4.0))
    T = data["T"]
    for j, (K, err) in enumerate(data["error"].items()):
        color = f"C{j}"
        ax.plot(T[1:], err[1:], color=color, label=f"K = {K}")
        if data["bias"][K] > 0:
            ax.axhline(data["bias"][K], color=color, ls=":", lw=1)
    label_axes(ax, "T", "(1/NT) sum_t sum_n E[(p_n w_t - 1)^2]",
               f"weight error (exact), p = {np.round(data['p'], 2).tolist()}; dotted: bias term",
               log="xy")
    return save_figure(fig, path)


def plot_objectives(data: dict[str, Any], path: Any) -> list[str]:
    r"""The excess true objective :math:`f(x^\dagger) - f^\star` of the point each weighting
    drives Algorithm 1 to (Theorem 1); ``data`` from
    :func:`~fedtheory.experiments.fedau_runs.objective_by_weighting`."""
    names = list(data["excess"])
    vals = [max(data["excess"][k], 1e-16) for k in names]
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    ax.barh(range(len(names)), vals, color=[f"C{j}" for j in range(len(names))])
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("f(argmin h) - f*  (log; 1e-16 = exact)")
    ax.set_title(f"objective each weighting reaches (FedAU: long-run weights, K = {data['K']})",
                 fontsize=8)
    return save_figure(fig, path)


def plot_patterns_table(tab: dict[str, Any], path: Any) -> list[str]:
    r"""Methods x patterns: mean ± std over seeds of :math:`f - f^\star` (left), of the
    training accuracy and of the test accuracy (the seed's table's metrics); ``tab`` from
    :func:`~fedtheory.experiments.fedau_patterns.patterns_table`."""
    patterns = list(tab["f_gap"])
    methods = list(tab["f_gap"][patterns[0]])
    fig, axes = plt.subplots(3, 1, figsize=(8.0, 10.5))  # stacked: legible in a column
    width = 0.8 / len(methods)
    cfg = tab["config"]
    for ax, key, ylabel in ((axes[0], "f_gap", "f(x) - f*"),
                            (axes[1], "train_acc", "training accuracy"),
                            (axes[2], "test_acc", "test accuracy")):
        for j, m in enumerate(methods):
            vals = np.array([tab[key][pat][m] for pat in patterns])  # (patterns, seeds)
            ax.bar(np.arange(len(patterns)) + (j - len(methods) / 2 + 0.5) * width,
                   vals.mean(axis=1), width, yerr=vals.std(axis=1, ddof=1), capsize=2,
                   label=m, color=f"C{j}")
        ax.set_xticks(range(len(patterns)), patterns)
        label_axes(ax, "participation pattern", ylabel,
                   f"digits, {cfg['instances']} replicas (random seeds), {cfg['rounds']} rounds "
                   "(mean ± std)")
        if key != "f_gap":
            lo = min(float(np.min(tab[key][pat][m])) for pat in patterns for m in methods)
            ax.set_ylim(max(0.0, lo - 0.02), 1.0)
    return save_figure(fig, path)

r"""Figures of the ``mifa`` family (seed 000): the seed's experiments (f - f* per rule, one
panel per p) and the error floors of FedAvg-IS, MIFA and U-MIFA.

Each function takes the data of :mod:`fedtheory.experiments.mifa_experiments` and returns the
saved PNG and PDF paths.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fedtheory.experiments.mifa_experiments import band
from fedtheory.plotting import plt, save_figure

__all__ = ["LABELS", "plot_floor_experiment", "plot_seed_experiment"]

#: Plotted values are clipped to at most this (the axes stop at 1e4).
_TOP = 1e6

LABELS: dict[str, str] = {"fedavg_is": "FedAvg-IS", "mifa": "MIFA", "umifa": "U-MIFA",
                          "mifam": "MIFAm", "umifam": "U-MIFAm"}


def plot_seed_experiment(res: dict[str, Any], *, title: str, path: Any) -> list[str]:
    """Plot :func:`fedtheory.experiments.mifa_experiments.seed_experiment` results (one panel
    per p; median and 10-90% band of f - f* per rule); returns the PNG and PDF paths."""
    labels = dict(LABELS)
    pvs = res["p_values"]
    fig, axes = plt.subplots(1, len(pvs), figsize=(4.2 * len(pvs), 3.4), sharey=True)
    axes = np.atleast_1d(axes)
    t = res["rounds"]
    lows = [np.min(q[q > 0], initial=np.inf) for pv in pvs for k in labels
            for q in band(res["runs"][pv][k])[1:2]]
    bottom = max(min(lows) / 3, 1e-16)
    for ax, pv in zip(axes, pvs, strict=True):
        for k, lab in labels.items():
            # clipped to the visible range (log axes overflow on 1e300)
            med, lo, hi = np.clip(band(res["runs"][pv][k]), bottom / 10, _TOP)
            line, = ax.plot(t, med, label=lab)
            ax.fill_between(t, lo, hi, color=line.get_color(), alpha=0.2)
        b2 = res["betas"][1] if len(res["betas"]) > 1 else None
        if b2 is not None:  # the momentum question: MIFAm with the other beta, dashed
            med = np.clip(band(res["runs"][pv][f"mifam@{b2:g}"])[0], bottom / 10, _TOP)
            ax.plot(t, med, "k--", lw=1, label=f"MIFAm, β = {b2:g}")
        ax.set_yscale("log")
        ax.set_title(f"p = {pv:g}")
        ax.set_xlabel("round t")
    axes[0].set_ylim(bottom, 1e4)
    axes[0].set_ylabel(r"$f(w_t) - f^\star$ (median, 10-90%)")
    axes[-1].legend(fontsize=8)
    fig.suptitle(f"{title}: η = {res['eta']}, β = {res['betas'][0]}, {res['replicas']} seeds",
                 y=1.03)
    return save_figure(fig, path)



def plot_floor_experiment(results: Sequence[dict[str, Any]], *, path: Any) -> list[str]:
    """One panel per :func:`~fedtheory.experiments.mifa_experiments.floor_experiment` result:
    median and 10-90% bands of ||∇f(w_t)||^2 with the three floors; returns the PNG and PDF
    paths."""
    fig, axes = plt.subplots(1, len(results), figsize=(4.8 * len(results), 3.6), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, res in zip(axes, results, strict=True):
        t = np.arange(res["T"] + 1)
        for k in ("fedavg_is", "mifa", "umifa"):
            med, lo, hi = np.clip(band(res[k].T), 1e-17, _TOP)
            line, = ax.plot(t, med, label=LABELS[k])
            ax.fill_between(t, lo, hi, color=line.get_color(), alpha=0.2)
        ax.axhline(res["floor"], color="C0", ls=":", lw=1, label="FedAvg-IS stationary")
        ax.axhline(res["floor_printed"], color="k", ls="--", lw=1,
                   label=r"printed floor $\eta^2Lc\sigma_G^2/2$")
        ax.axhline(res["floor_derived"], color="k", ls="-.", lw=1,
                   label=r"derived floor $\eta Lc\sigma_G^2$")
        ax.set_yscale("log")
        ax.set_ylim(1e-16, 1e4)
        ax.set_xlabel("round t")
        ax.set_title(f"p = {res['p']:g}, η = {res['eta']:g}")
    axes[0].set_ylabel(r"$\|\nabla f(w_t)\|^2$ (median, 10-90%)")
    axes[-1].legend(fontsize=7)
    return save_figure(fig, path)

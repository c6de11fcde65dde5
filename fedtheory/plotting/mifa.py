r"""Figures of the ``mifa`` family (seed 000): the seed's experiments (f - f* per rule, one
panel per p) and the error floors of FedAvg-IS, MIFA and U-MIFA.

Each ``draw_*`` takes the data of :mod:`fedtheory.experiments.mifa_experiments` and returns
the figure (the registry's plotters, :mod:`fedtheory.plotting.figures`); each ``plot_*`` saves
it as PNG and PDF for the scripts in ``paper_figures/``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fedtheory.experiments.mifa_experiments import band
from fedtheory.plotting import plt, save_figure

__all__ = ["LABELS", "draw_floor_experiment", "draw_seed_experiment", "plot_floor_experiment",
           "plot_seed_experiment"]

#: Plotted values are clipped to at most this (the axes stop at 1e4).
_TOP = 1e6

LABELS: dict[str, str] = {"fedavg_is": "FedAvg-IS", "mifa": "MIFA", "umifa": "U-MIFA",
                          "mifam": "MIFAm", "umifam": "U-MIFAm"}


#: Line styles of the rules (distinguishable where curves overlap, in grey print too).
_STYLES: dict[str, dict[str, Any]] = {
    "fedavg_is": {"color": "C0", "ls": "-"}, "mifa": {"color": "C1", "ls": "--"},
    "umifa": {"color": "C2", "ls": "-."}, "mifam": {"color": "C4", "ls": ":"},
    "umifam": {"color": "C3", "ls": "-"}}


def _mark_divergence(ax: plt.Axes, t: np.ndarray, med: np.ndarray, top: float, color: str,
                     label: str) -> bool:
    """Mark where a median curve leaves the plot at ``top`` (an upward triangle at the first
    round above it, labelled); return whether it does."""
    above = np.flatnonzero(med >= top)
    if not above.size:
        return False
    k = int(above[0])
    ax.plot([t[k]], [top / 3], marker="^", ms=8, color=color, ls="none", clip_on=False,
            label=f"{label} leaves the plot (diverges)")
    return True


def draw_seed_experiment(res: dict[str, Any], *, title: str,
                         lowest: str | None = "umifam") -> plt.Figure:
    """:func:`fedtheory.experiments.mifa_experiments.seed_experiment` results: one panel per
    p; median and 10-90% band of f - f* over the replicas (random seeds) per rule. A median
    that leaves the plot (U-MIFA's divergence for p < 1/2) is marked where it does; ``lowest``
    (the rule the claim says should end lowest) is drawn thicker."""
    labels = dict(LABELS)
    pvs = res["p_values"]
    # one panel per row: a page's column shows them at a size whose legends can be read
    fig, axes = plt.subplots(len(pvs), 1, figsize=(7.0, 3.3 * len(pvs)), sharex=True,
                             layout="constrained")
    axes = np.atleast_1d(axes)
    t = res["rounds"]
    lows = [np.min(q[q > 0], initial=np.inf) for pv in pvs for k in labels
            for q in band(res["runs"][pv][k])[1:2]]
    bottom = max(min(lows) / 3, 1e-16)
    top = 1e4
    for ax, pv in zip(axes, pvs, strict=True):
        for k, lab in labels.items():
            # clipped to the visible range (log axes overflow on 1e300)
            med, lo, hi = np.clip(band(res["runs"][pv][k]), bottom / 10, _TOP)
            style = dict(_STYLES.get(k, {}))
            if k == lowest:
                style["lw"] = 2.6
                lab = f"{lab} (the claim: lowest)"
            line, = ax.plot(t, med, label=lab, **style)
            ax.fill_between(t, lo, hi, color=line.get_color(), alpha=0.15)
            _mark_divergence(ax, t, med, top, line.get_color(), LABELS[k])
        b2 = res["betas"][1] if len(res["betas"]) > 1 else None
        if b2 is not None:  # the momentum question: MIFAm with the other beta, dashed
            med = np.clip(band(res["runs"][pv][f"mifam@{b2:g}"])[0], bottom / 10, _TOP)
            ax.plot(t, med, "k--", lw=1, label=f"MIFAm, β = {b2:g}")
        ax.set_yscale("log")
        ax.set_ylim(bottom, top)
        ax.set_title(f"p = {pv:g}" + (" (p < 1/2: U-MIFA diverges)" if pv < 0.5 else ""),
                     fontsize=9)
        ax.set_xlabel("round t")
        ax.set_ylabel(r"$f(w_t) - f^\star$ (median, 10-90%)")
        ax.yaxis.set_tick_params(labelleft=True)
        ax.legend(fontsize=7, ncol=2)
    fig.suptitle(f"{title}: η = {res['eta']}, β = {res['betas'][0]}, {res['replicas']} "
                 "replicas (random seeds)")
    return fig


def plot_seed_experiment(res: dict[str, Any], *, title: str, path: Any) -> list[str]:
    """Draw :func:`draw_seed_experiment` and save it; returns the PNG and PDF paths."""
    return save_figure(draw_seed_experiment(res, title=title), path)


def draw_floor_experiment(results: Sequence[dict[str, Any]]) -> plt.Figure:
    """One panel per :func:`~fedtheory.experiments.mifa_experiments.floor_experiment` result:
    median and 10-90% bands of ||∇f(w_t)||^2 with the three floors."""
    fig, axes = plt.subplots(len(results), 1, figsize=(7.0, 3.4 * len(results)), sharex=True,
                             layout="constrained")
    axes = np.atleast_1d(axes)
    for ax, res in zip(axes, results, strict=True):
        t = np.arange(res["T"] + 1)
        for k in ("fedavg_is", "mifa", "umifa"):
            med, lo, hi = np.clip(band(res[k].T), 1e-17, _TOP)
            line, = ax.plot(t, med, label=LABELS[k], **_STYLES[k])
            ax.fill_between(t, lo, hi, color=line.get_color(), alpha=0.2)
            _mark_divergence(ax, t, med, 1e4, line.get_color(), LABELS[k])
        ax.axhline(res["floor"], color="C0", ls=":", lw=1, label="FedAvg-IS stationary")
        ax.axhline(res["floor_printed"], color="k", ls="--", lw=1,
                   label=r"printed floor $\eta^2Lc\sigma_G^2/2$")
        ax.axhline(res["floor_derived"], color="k", ls="-.", lw=1,
                   label=r"derived floor $\eta Lc\sigma_G^2$")
        ax.set_yscale("log")
        ax.set_ylim(1e-16, 1e4)
        ax.set_xlabel("round t")
        ax.set_ylabel(r"$\|\nabla f(w_t)\|^2$ (median, 10-90%)")
        ax.yaxis.set_tick_params(labelleft=True)
        ax.set_title(f"p = {res['p']:g}, η = {res['eta']:g}")
        ax.legend(fontsize=7)
    return fig


def plot_floor_experiment(results: Sequence[dict[str, Any]], *, path: Any) -> list[str]:
    """Draw :func:`draw_floor_experiment` and save it; returns the PNG and PDF paths."""
    return save_figure(draw_floor_experiment(results), path)

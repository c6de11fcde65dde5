"""Figures of family ``ocs``: AOCS iterations, the improvement factor against the spread of the
norms, the theorems' slack, and the Section 5 experiment (OCS against uniform, the m = O(sqrt n)
sweep). The ``draw_*`` plotters are the registry's (:mod:`fedtheory.plotting.figures`), the
``plot_*`` functions save them for the scripts in ``paper_figures/``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from fedtheory.experiments import ocs_fedavg as ox
from fedtheory.experiments.ocs_runs import SqrtNSweep
from fedtheory.plotting import plt, save_figure

__all__ = [
    "draw_alpha_spread",
    "draw_aocs_iterations",
    "draw_ocs_vs_uniform",
    "draw_sqrt_n",
    "plot_alpha_spread",
    "plot_aocs_iterations",
    "plot_ocs_vs_uniform",
    "plot_sqrt_n",
    "plot_theorem_slack",
]


def draw_aocs_iterations(data: dict[str, np.ndarray]) -> plt.Figure:
    r""":func:`~fedtheory.sampling.aocs.aocs_iteration_study` data: iterations to completion,
    how often the budget :math:`j_{\max} = 4` suffices, and the variance it leaves."""
    ns = np.unique(data["n"])
    sigmas = np.unique(data["sigma"])
    fig, axes = plt.subplots(3, 1, figsize=(7.0, 10.0),  # stacked: legible in a column
                             layout="constrained")
    for n in ns:
        rows = data["n"] == n
        fracs = np.unique(np.round(data["m"][rows] / n, 4))
        for f in fracs:
            sel = rows & np.isclose(data["m"] / n, f, atol=1e-4)
            label = f"n={int(n)}, m={int(np.round(f * n))}"
            line = axes[0].plot(data["sigma"][sel], data["mean_iterations"][sel], marker="o",
                                label=label)
            color = line[0].get_color()
            axes[1].plot(data["sigma"][sel], data["reached_within_budget"][sel], marker="o",
                         color=color, label=label)
            axes[1].plot(data["sigma"][sel], data["within_budget"][sel], ls=":", marker="x",
                         color=color)
            axes[2].plot(data["sigma"][sel], np.maximum(data["excess_at_budget"][sel], 1e-16),
                         marker="o", color=color, label=label)
    # the line styles of the middle panel, said once in its own legend
    axes[1].plot([], [], "o-", color="grey", label="optimum reached")
    axes[1].plot([], [], "x:", color="grey", label="certified (C <= 1)")
    axes[0].set(xlabel=r"log-normal spread $\sigma$", ylabel="mean iterations $j$ to stop",
                title="AOCS iterations to completion")
    axes[1].set(xlabel=r"log-normal spread $\sigma$", ylabel=r"fraction of rounds",
                title=r"$j_{\max}=4$: optimum reached (solid), certified (dotted)",
                ylim=(-0.05, 1.05))
    axes[2].set(xlabel=r"log-normal spread $\sigma$",
                ylabel=r"$V(p_{j_{\max}=4})/V^\star - 1$", yscale="log",
                title="variance left by the budget")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.set_xticks(sigmas)
        ax.legend(fontsize=6, ncol=2)
    return fig


def plot_aocs_iterations(data: dict[str, np.ndarray], path: Path | str) -> list[str]:
    """Draw :func:`draw_aocs_iterations` and save it; return the PNG/PDF paths."""
    return save_figure(draw_aocs_iterations(data), path)


def draw_alpha_spread(data: dict[str, np.ndarray]) -> plt.Figure:
    """:func:`~fedtheory.sampling.improvement.alpha_spread_study`: the improvement factor
    and its bound, and the relative improvement, against the spread of the norms."""
    sig = data["sigmas"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8),
                             layout="constrained")
    for a, m in enumerate(data["ms"]):
        line = axes[0].plot(sig, data["alpha"][a], marker="o", label=fr"$\alpha$, m={m:g}")
        axes[0].plot(sig, data["bound"][a], ls="--", color=line[0].get_color(), alpha=0.6)
        axes[1].plot(sig, data["gamma"][a], marker="o", label=f"m={m:g}")
    axes[0].plot([], [], ls="--", color="grey", label=r"bound $(\sum u)^2/(n\sum u^2)$")
    axes[0].set(xlabel=r"log-normal spread $\sigma$ of the norms", ylabel=r"mean $\alpha$",
                title="improvement factor (Definition 11)", ylim=(-0.02, 1.02))
    axes[1].set(xlabel=r"log-normal spread $\sigma$ of the norms", ylabel=r"mean $\gamma$",
                ylim=(0, 1.02),
                title=r"relative improvement $\gamma = m/(\alpha(n-m)+m)$")
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return fig


def plot_alpha_spread(data: dict[str, np.ndarray], path: Path | str) -> list[str]:
    """Draw :func:`draw_alpha_spread` and save it; return the PNG/PDF paths."""
    return save_figure(draw_alpha_spread(data), path)


def plot_theorem_slack(data: dict[str, Any], path: str | Any) -> list[str]:
    """Four panels, one per theorem: measured left side (with intervals) and right side."""
    fig, axes = plt.subplots(2, 2, figsize=(11, 8.5))

    def series(ax: Any, pts: list[dict[str, Any]], xkey: str, label: str, color: str,
               diff: bool = False) -> None:
        x = [p[xkey] for p in pts]
        y = [p["mean_minus_ref" if diff else "mean"] for p in pts]
        b = [p["bound_minus_ref" if diff else "bound"] for p in pts]
        ax.errorbar(x, y, yerr=[p["half_width"] for p in pts], fmt="o", ms=3.5, color=color,
                    capsize=2, label=f"measured, {label}")
        ax.plot(x, b, "-", color=color, alpha=0.8, label=f"bound, {label}")

    ax = axes[0, 0]
    series(ax, data["thm13"], "t", "(20)", "C0")
    series(ax, data["thm13c"], "t", "corrected", "C1")
    ax.set(xlabel=r"$x^k - x^\star$", ylabel=r"$\mathbb{E}\|r^{k+1}\|^2$",
           title="Thm 13: DSGD, w = (3/4, 1/4), exact gradients")
    ax = axes[0, 1]
    series(ax, data["thm15"], "eta_scale", "(24)", "C0", diff=True)
    ax.set(xlabel=r"$\eta\,/\,(\gamma/((1+M)L))$", ylabel=r"$\mathbb{E}f(x^{k+1}) - f(x^k)$",
           title=r"Thm 15: DSGD, $A_i = LI$, $w = 1/n$, $x^k = x^\star$ (tight)")
    ax = axes[1, 0]
    series(ax, data["thm17"], "n", "(27)", "C0")
    series(ax, data["thm17c"], "n", "corrected", "C1")
    ax.set(xlabel="n (m = 1, w = 1/n, R = 2)", ylabel=r"$\mathbb{E}\|r^{k+1}\|^2$", yscale="log",
           title=r"Thm 17: FedAvg at $x^k = x^\star$, $f_i = (x \mp 1)^2/2$")
    ax = axes[1, 1]
    series(ax, data["thm18"], "eta_scale", "(29)", "C0", diff=True)
    ax.set(xlabel=r"$\eta\,/\,\eta_{\max}$", ylabel=r"$\mathbb{E}f(x^{k+1}) - f(x^k)$",
           title="Thm 18: FedAvg, indefinite Hessians, R = 2")
    for a in axes.ravel():
        a.legend(fontsize=7)
        a.grid(alpha=0.3)
    fig.suptitle(f"Paper 002's one-step recursions: replica means ({data['replicas']} replicas, "
                 f"intervals at level {data['level']:g}) against the bounds", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


_COLORS = {"full": "k", "uniform": "C3", "ocs": "C0", "aocs": "C2"}
_LABELS = {"full": "full", "uniform": "uniform", "ocs": "OCS", "aocs": "AOCS"}
#: OCS and AOCS give almost the same curves: OCS wide and pale, AOCS thin, dashed, with
#: markers on top, so that both stay visible where they coincide.
_STYLES = {"full": {"ls": ":", "lw": 1.5}, "uniform": {"ls": "-", "lw": 1.2, "marker": "s"},
           "ocs": {"ls": "-", "lw": 3.5, "alpha": 0.55},
           "aocs": {"ls": "--", "lw": 1.2, "marker": "^"}}


def draw_ocs_vs_uniform(run: ox.FedAvgRun) -> plt.Figure:
    """Validation accuracy and f - f* against rounds and against bits, bands over replicas.

    Accuracy: mean +- std over replicas; f - f*: geometric mean with a band of +- one standard
    deviation of log(f - f*) (the quantity the checks compare)."""
    fig, axes = plt.subplots(2, 2, figsize=(10.5, 7.5),
                             layout="constrained")
    rounds = np.arange(run.loss.shape[-1])
    positive = run.bits[run.bits > 0]
    budgets = np.geomspace(float(positive.min()), float(run.bits.max()), 200)
    ms = np.atleast_1d(run.config["m"])
    metrics = (run.accuracy, np.log(run.loss - run.f_star))
    per_bit = [ox.curves_per_bit(run, vals, budgets) for vals in metrics]  # (S, R, G)
    for i, s in enumerate(run.schemes):
        label = _LABELS[s] + ("" if s == "full" else f" (m={ms[i]:g})")
        style = {"color": _COLORS[s], **_STYLES.get(s, {})}
        keep = budgets <= float(run.bits[i, :, -1].min())  # budgets every replica reached
        for row in (0, 1):
            for col, xs, vals in ((0, rounds, metrics[row][i]),
                                  (1, budgets[keep], per_bit[row][i][:, keep])):
                mean, sd = vals.mean(axis=0), vals.std(axis=0)
                lo, hi = mean - sd, mean + sd
                if row == 1:
                    mean, lo, hi = np.exp(mean), np.exp(lo), np.exp(hi)
                ax = axes[row, col]
                marks = {"markevery": max(1, len(xs) // 8), "ms": 4} if "marker" in style \
                    else {}
                ax.plot(xs, mean, label=label, **style, **marks)
                ax.fill_between(xs, lo, hi, color=_COLORS[s], alpha=0.12)
    for ax in axes[0]:
        ax.set_ylabel("validation accuracy (mean +- std)")
    for ax in axes[1]:
        ax.set_ylabel(r"$f(x^k) - f^\star$ (geometric mean)")
        ax.set_yscale("log")
    for ax in axes[:, 1]:
        ax.set_xscale("log")
        ax.set_xlabel("bits sent client -> master")
    for ax in axes[:, 0]:
        ax.set_xlabel("communication round")
    for ax in axes.ravel():
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    cfg = run.config
    fig.suptitle(f"FedAvg on unbalanced digits (n = {cfg['n']}, d = {cfg['d']}, "
                 f"{cfg['replicas']} replicas; accuracy: mean +- std, loss: geometric mean, "
                 f"x/÷ exp(std of log))", fontsize=10)
    return fig


def plot_ocs_vs_uniform(run: ox.FedAvgRun, path: Any) -> list[str]:
    """Draw :func:`draw_ocs_vs_uniform` and save it; returns the saved paths (none when
    ``path`` is None)."""
    if path is None:
        return []
    return save_figure(draw_ocs_vs_uniform(run), path)


def draw_sqrt_n(sw: SqrtNSweep) -> plt.Figure:
    """Accuracy gap full - OCS(m) against m per n (upper limits), and m*(n) against n."""
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10.5, 4.2),
                             layout="constrained")
    for k, n in enumerate(sw.ns):
        grid = np.array(sw.grids[n])
        mean = sw.acc_gap[n].mean(axis=1)
        ax0.errorbar(grid, mean, yerr=[np.zeros_like(mean), sw.upper[n] - mean], fmt="o-",
                     ms=4, capsize=3, color=f"C{k}", label=f"n = {n}")
    ax0.axhline(sw.epsilon, color="gray", ls="--", lw=1,
                label=f"tolerance {sw.epsilon:g} (OCS(m) matches full below it)")
    ax0.set_xscale("log", base=2)
    ax0.set_xlabel("m (expected participants)")
    ax0.set_ylabel("accuracy(full) - accuracy(OCS(m))")
    ax0.set_title(f"mean and one-sided upper limit (alpha = {sw.alpha:g})", fontsize=9)
    ax0.legend(fontsize=8)
    ns = np.array(sw.ns, dtype=float)
    found = [(n, m) for n, m in sw.m_star.items() if m is not None]
    if found:
        ax1.plot(*zip(*found, strict=True), "o", color="C0", label="m*(n), this sweep")
    fine = np.geomspace(ns.min(), max(ns.max(), 128), 100)
    ax1.plot(fine, ox.SETUP["sweep_m_seed_constant"] * np.sqrt(fine), "--", color="gray",
             label=r"$c\sqrt{n}$, $c = 6/\sqrt{32}$")
    ax1.plot([32, 128], [6, 12], "s", color="C3", label="paper 002 (Shakespeare)")
    ax1.set_xscale("log", base=2)
    ax1.set_yscale("log", base=2)
    ax1.set_xlabel("n (clients)")
    ax1.set_ylabel("smallest m matching full participation")
    ax1.legend(fontsize=8)
    fig.suptitle(f"m = O(sqrt n)? ({sw.config['replicas']} replicas, {sw.config['rounds']} "
                 f"rounds, tolerance {sw.epsilon:g})", fontsize=10)
    return fig


def plot_sqrt_n(sw: SqrtNSweep, path: Any) -> list[str]:
    """Draw :func:`draw_sqrt_n` and save it; returns the saved paths (none when ``path`` is
    None)."""
    if path is None:
        return []
    return save_figure(draw_sqrt_n(sw), path)

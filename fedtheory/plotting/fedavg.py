r"""Figures of the lecture's FedAvg claims (seed 003): error floors against heterogeneity,
variance against participation, FedAvg against parallel SGD.

Each ``draw_*`` takes the data of :mod:`fedtheory.experiments.fedavg_runs` and returns the
figure (the registry's plotters, :mod:`fedtheory.plotting.figures`); each ``plot_*`` saves it
for the scripts in ``paper_figures/``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory.experiments.fedavg_experiments import Rows, mean_interval
from fedtheory.plotting import errorbar_points, label_axes, plt, save_figure

__all__ = ["draw_heterogeneity", "draw_local_steps", "draw_partial_participation",
           "plot_heterogeneity", "plot_local_steps", "plot_partial_participation"]


def _mc_points(ax: plt.Axes, x: Any, samples: Rows, alpha: float, *, color: str,
               label: str, fmt: str = "o") -> None:
    """Row means of ``samples`` at ``x`` with their two-sided intervals at ``alpha``
    (:func:`~fedtheory.experiments.fedavg_experiments.mean_interval`)."""
    mean, hw = mean_interval(samples, alpha)
    errorbar_points(ax, x, mean, hw, color=color, label=label, fmt=fmt)


def _replica_text(replicas: int | tuple[int, ...], at: Any = None, name: str = "x") -> str:
    """How many Monte Carlo replicas (random seeds) each point has: one count, or one per
    point (``at``: the points' values of ``name``).

    >>> _replica_text(300)
    '300 Monte Carlo replicas per point'
    >>> _replica_text((2000, 300), at=[8, 32], name="T")
    'Monte Carlo replicas: 2000 at T = 8, 300 at T = 32'
    """
    if isinstance(replicas, (int, np.integer)):
        return f"{replicas} Monte Carlo replicas per point"
    xs = [f"{x:g}" for x in np.asarray(at if at is not None else range(len(replicas)),
                                           dtype=float)]
    return "Monte Carlo replicas: " + ", ".join(
        f"{r} at {name} = {x}" for r, x in zip(replicas, xs, strict=True))


def draw_heterogeneity(drift: dict[str, Any], sampling: dict[str, Any],
                       alpha: float = 1e-6) -> plt.Figure:
    r"""Error floor against :math:`\zeta^2`: FedAvg (exact line, Monte Carlo points) against
    SCAFFOLD (full participation, :math:`K` local steps) and SAGA (:math:`m` of :math:`n`).

    ``drift`` and ``sampling`` are
    :func:`~fedtheory.experiments.fedavg_experiments.floors_vs_heterogeneity` results with a
    ``params`` entry; intervals are two-sided at ``alpha`` (Bonferroni over the points of a curve).
    """
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0),
                             layout="constrained")
    panels = ((axes[0], drift, "scaffold", "SCAFFOLD"), (axes[1], sampling, "saga", "SAGA"))
    for ax, data, rule, label in panels:
        p = data["params"]
        lv = np.asarray(data["levels"])
        ax.plot(lv, data["exact_fedavg"], "-", color="C0", label="FedAvg (exact)")
        for key, color, name, fmt in (("fedavg", "C0", "FedAvg", "o"), (rule, "C1", label, "s")):
            _mc_points(ax, lv, data["dist2"][key], alpha, color=color,
                       label=f"{name} (Monte Carlo)", fmt=fmt)
        m = p.get("participants") or p["problem_kw"]["n"]
        label_axes(ax,
                   r"heterogeneity $\zeta_\star^2 = \frac{1}{n}\sum_i\|\nabla f_i(x^\star)\|^2$",
                   r"$\mathbb{E}\|x_R - x^\star\|^2$",
                   f"m = {m} of {p['problem_kw']['n']}, K = {p['local_steps']}, "
                   f"lr = {p['lr']}, R = {p['rounds']}, {p['replicas']} replicas",
                   title_size=9, legend_size=8)
    fig.suptitle(f"FedAvg's floor grows with heterogeneity; memory removes it "
                 f"(intervals at alpha = {alpha:g})", fontsize=10)
    return fig


def plot_heterogeneity(drift: dict[str, Any], sampling: dict[str, Any], path: Any,
                       alpha: float = 1e-6) -> list[str]:
    """Draw :func:`draw_heterogeneity` and save it; returns the saved paths (none when
    ``path`` is None)."""
    return save_figure(draw_heterogeneity(drift, sampling, alpha), path)


def draw_partial_participation(update: dict[str, Any], floor: dict[str, Any],
                               alpha: float = 1e-6) -> plt.Figure:
    r"""Left: variance of one server update against :math:`m` (exact, leading order, the
    lecture's :math:`\sigma^2 + K\zeta^2(1-m/n)` form, Monte Carlo). Right: the part of the
    error after :math:`R` rounds due to heterogeneity against :math:`m` (exact, Monte Carlo,
    paired), with :math:`(1-m/n)/m` scaled to it. ``update`` from
    :func:`~fedtheory.experiments.fedavg_experiments.server_update_samples`
    and ``floor`` as in ``fedavg.partial_participation`` (``dist2`` of shape
    ``(m values, 2 levels, replicas)``, ``exact``, ``factor``, ``lecture_factor``)."""
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0),
                             layout="constrained")
    ax = axes[0]
    m = np.asarray(update["participants"], dtype=float)
    ax.plot(m, update["variance"], "-", color="C0", label="exact")
    ax.plot(m, update["leading"], "--", color="C2",
            label=r"$\frac{\gamma^2K}{m}(\sigma^2 + K\zeta^2\frac{n-m}{n-1})$")
    ax.plot(m, update["lecture"], ":", color="C3",
            label=r"lecture: $\frac{\gamma^2K}{m}(\sigma^2 + K\zeta^2(1-\frac{m}{n}))$")
    _mc_points(ax, m, update["samples"], alpha, color="C0", label="Monte Carlo")
    p = update["params"]
    label_axes(ax, "m (participants per round)", r"$\mathbb{E}\|x_1 - \mathbb{E}x_1\|^2$",
               f"one round, K = {p['local_steps']}, lr = {p['lr']}, sigma^2 = {p['sigma2']}, "
               f"zeta^2 = {update['zeta2']:.3g}, {p['replicas']} replicas", log="y")
    ax = axes[1]
    p = floor["params"]
    m = np.asarray(p["participants"], dtype=float)
    diff = floor["dist2"][:, 1, :] - floor["dist2"][:, 0, :]
    exact = floor["exact"][:, 1] - floor["exact"][:, 0]
    ax.plot(m, exact, "-", color="C0", label="exact")
    scale = exact[0] / floor["lecture_factor"][0]
    ax.plot(m, scale * floor["lecture_factor"], ":", color="C3",
            label=r"$\propto (1-\frac{m}{n})/m$ (lecture)")
    _mc_points(ax, m, diff, alpha, color="C0", label="Monte Carlo (paired)")
    label_axes(ax, "m (participants per round)",
               r"$\mathbb{E}\|x_R - x^\star\|^2_{\zeta^2=1} - "
               r"\mathbb{E}\|x_R - x^\star\|^2_{\zeta^2=0}$",
               f"after R = {p['rounds']} rounds, K = {p['local_steps']}, lr = {p['lr']}, "
               f"{p['replicas']} replicas")
    fig.suptitle(f"Partial participation amplifies heterogeneity (intervals at alpha = "
                 f"{alpha:g})", fontsize=10)
    return fig


def plot_partial_participation(update: dict[str, Any], floor: dict[str, Any], path: Any,
                               alpha: float = 1e-6) -> list[str]:
    """Draw :func:`draw_partial_participation` and save it; returns the saved paths."""
    return save_figure(draw_partial_participation(update, floor, alpha), path)


def draw_local_steps(rate: dict[str, Any], curves: dict[str, Any],
                     alpha: float = 1e-6) -> plt.Figure:
    r"""Left: final :math:`\mathbb E\|\nabla f\|^2` against :math:`T = KR` for FedAvg and
    parallel SGD (exact lines, Monte Carlo points, a :math:`T^{-1/2}` guide). Right: exact
    trajectories against communication rounds: FedAvg reaches in :math:`R` rounds what SGD
    reaches in :math:`KR`. ``rate`` from
    :func:`~fedtheory.experiments.fedavg_experiments.local_steps_runs` (with ``params`` and
    ``exact_grid``; the samples per :math:`R` a 2-D array or ragged rows, one count per R),
    ``curves`` from :func:`~fedtheory.theory.fedavg.local_steps_curves`."""
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 4.0),
                             layout="constrained")
    ax = axes[0]
    K = rate["local_steps"]
    T = K * np.asarray(rate["rounds"], dtype=float)
    grid = rate["exact_grid"]
    Tg = K * np.asarray(grid["rounds"], dtype=float)
    ax.plot(Tg, grid["fedavg"], "-", color="C0", label=f"FedAvg, K = {K} (exact)")
    ax.plot(Tg, grid["sgd"], "--", color="C1", label="parallel SGD (exact)")
    for key, color, fmt, name in (("fedavg", "C0", "o", "FedAvg"), ("sgd", "C1", "s", "SGD")):
        _mc_points(ax, T, rate[key], alpha, color=color, label=f"{name} (Monte Carlo)", fmt=fmt)
    guide = grid["sgd"][0] * np.sqrt(Tg[0] / Tg)
    ax.plot(Tg, guide, ":", color="gray", label=r"$\propto T^{-1/2}$")
    # the exact lines nearly coincide on the log scale: their ratio, inset
    inset = ax.inset_axes((0.2, 0.1, 0.3, 0.26))
    inset.plot(Tg, np.asarray(grid["fedavg"]) / np.asarray(grid["sgd"]), "-", color="C0")
    inset.axhline(1.0, color="C1", ls="--", lw=0.8)
    inset.set_xscale("log")
    inset.set_xlabel("T", fontsize=7, labelpad=1)
    inset.set_ylabel("ratio", fontsize=7, labelpad=1)
    inset.set_title("FedAvg / SGD (exact)", fontsize=7)
    inset.tick_params(labelsize=6)
    p = rate["params"]
    label_axes(ax, r"gradient steps per client $T = KR$ ($\gamma = c/\sqrt{T}$)",
               r"$\mathbb{E}\|\nabla f(x_{\mathrm{final}})\|^2$",
               f"n = {p['problem_kw']['n']}, c = {rate['c']}, sigma^2 = {p['sigma2']}; "
               f"{_replica_text(p['replicas'], T, 'T')}", log="xy")
    ax = axes[1]
    ax.plot(curves["fedavg_rounds"][1:], curves["fedavg"][1:], "-", color="C0",
            label=f"FedAvg, K = {K}")
    ax.plot(curves["sgd_rounds"][1:], curves["sgd"][1:], "--", color="C1",
            label="parallel SGD")
    R = curves["fedavg_rounds"][-1]
    ax.axvline(R, color="C0", lw=0.8, ls=":", label=f"R = {R}: FedAvg's last round")
    ax.axhline(curves["fedavg"][-1], color="gray", lw=0.8, ls=":",
               label="FedAvg's error after R rounds")
    label_axes(ax, "communication rounds", r"$\mathbb{E}\|\nabla f(x)\|^2$ (exact)",
               f"R = {R} rounds vs KR = {curves['sgd_rounds'][-1]}, "
               f"gamma = {float(curves['lr']):.3g}", log="xy")
    fig.suptitle("FedAvg with K local steps vs parallel SGD with the same gradient steps",
                 fontsize=10)
    return fig


def plot_local_steps(rate: dict[str, Any], curves: dict[str, Any], path: Any,
                     alpha: float = 1e-6) -> list[str]:
    """Draw :func:`draw_local_steps` and save it; returns the saved paths."""
    return save_figure(draw_local_steps(rate, curves, alpha), path)

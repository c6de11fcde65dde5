"""Figures of family ``is``: the variance of the importance-sampled aggregate against b.

The data come from :func:`fedtheory.experiments.importance_sampling.variance_curves`.
"""

from __future__ import annotations

from pathlib import Path

from fedtheory.experiments.importance_sampling import VarianceCurves
from fedtheory.plotting import errorbar_points, label_axes, plt, save_figure

__all__ = ["draw_variance_curves", "plot_variance_curves"]


def draw_variance_curves(data: VarianceCurves) -> plt.Figure:
    """:func:`~fedtheory.experiments.importance_sampling.variance_curves` data (log scale):
    exact lines and Monte Carlo points of both designs."""
    fig, ax = plt.subplots(figsize=(6.0, 4.0),
                             layout="constrained")
    keep = data.b < data.n  # both variances vanish at b = n (full participation)
    ax.plot(data.b[keep], data.exact_independent[keep], "-", color="C0",
            label=r"independent, $p_i = b/n$ (exact)")
    ax.plot(data.b[keep], data.exact_without_replacement[keep], "--", color="C1",
            label=r"$b$ of $n$ without replacement (exact)")
    errorbar_points(ax, data.mc_b, data.mc_independent, data.half_width_independent,
                    color="C0", label="Monte Carlo, independent")
    errorbar_points(ax, data.mc_b, data.mc_without_replacement,
                    data.half_width_without_replacement, color="C1",
                    label="Monte Carlo, without replacement", fmt="s")
    label_axes(ax, "b (expected number of participants)", r"$\mathbb{E}\|X - \bar G\|^2$",
               f"n = {data.n} (both 0 at b = n); {data.replicas} replicas per point, "
               f"intervals at alpha = {data.alpha:g}", log="y", title_size=9, legend_size=8)
    # the two exact curves nearly coincide on the log scale: their ratio, inset
    inset = ax.inset_axes((0.2, 0.1, 0.32, 0.3))
    inset.plot(data.b[keep], data.exact_without_replacement[keep]
               / data.exact_independent[keep], ".-", color="C1", ms=4)
    inset.axhline(1.0, color="C0", lw=0.8)
    inset.set_xlabel("b", fontsize=7, labelpad=1)
    inset.set_ylabel("ratio", fontsize=7, labelpad=1)
    inset.set_title("without / independent (exact)", fontsize=7)
    inset.tick_params(labelsize=6)
    return fig


def plot_variance_curves(data: VarianceCurves, path: Path | str | None) -> list[str]:
    """Draw :func:`draw_variance_curves`; save PNG and PDF at ``path`` if given."""
    return save_figure(draw_variance_curves(data), path)

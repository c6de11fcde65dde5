"""Figure helpers: a headless backend, saving one figure as PNG and PDF, and the command line
shared by the scripts in ``paper_figures/``.

The claims do not draw: a check returns a :class:`~fedtheory.claimkit.evidence.Figure` (a
plotter's name and its data), and :mod:`fedtheory.plotting.figures` draws it with the plotter
of that name (its registry, :data:`~fedtheory.plotting.figures.PLOTTERS`), titled with the
claim and its verdict. The family modules (``plotting/<family>.py``) hold the plotters: each
``draw_*`` returns a matplotlib figure, each ``plot_*`` (the scripts' entry point) saves it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["errorbar_points", "figure_script_args", "label_axes", "plt", "save_figure"]


def save_figure(fig: plt.Figure, path: Path | str | None,
                formats: tuple[str, ...] = ("png", "pdf"), dpi: int = 130) -> list[str]:
    """Save ``fig`` as ``path.<fmt>`` for each format, close it, and return the paths.

    With ``path=None`` the figure is only closed and no path is returned (figures are off).
    """
    if path is None:
        plt.close(fig)
        return []
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for fmt in formats:
        target = path.with_suffix(f".{fmt}")
        fig.savefig(target, dpi=dpi, bbox_inches="tight")
        out.append(str(target))
    plt.close(fig)
    return out


def errorbar_points(ax: plt.Axes, x: Any, mean: Any, half_width: Any, *, color: str, label: str,
                    fmt: str = "o") -> None:
    """Monte Carlo means as points with their interval half-widths as error bars, in the
    figures' common style (marker size 4, caps 3)."""
    ax.errorbar(x, mean, yerr=half_width, fmt=fmt, color=color, ms=4, capsize=3, label=label)


def label_axes(ax: plt.Axes, xlabel: str, ylabel: str, title: str, *, log: str = "",
               title_size: float = 8, legend_size: float = 7) -> None:
    """Axis labels, a small title and the legend of one panel (only when something in it is
    labelled: no empty legend, no warning); ``log`` names the axes on a log scale (``""``,
    ``"x"``, ``"y"`` or ``"xy"``)."""
    if set(log) - {"x", "y"}:
        raise ValueError(f"log must be '', 'x', 'y' or 'xy', got {log!r}")
    if "x" in log:
        ax.set_xscale("log")
    if "y" in log:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=title_size)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=legend_size)


def figure_script_args(doc: str, argv: Sequence[str] | None = None, *,
                       quick_help: str = "small sizes (seconds)") -> argparse.Namespace:
    """Parse the command line every figure script takes: ``--quick``, ``--out DIR``, ``--seed S``.

    Parameters
    ----------
    doc
        The script's module docstring; its first line is the description.
    argv
        The arguments (default: ``sys.argv[1:]``).
    quick_help
        What ``--quick`` does, for ``--help``.

    Returns
    -------
    argparse.Namespace
        ``quick`` (bool), ``out`` (str, default ``"figures"``) and ``seed`` (int, default 0).

    Examples
    --------
    >>> args = figure_script_args("A figure.\\n\\nMore.", ["--quick", "--seed", "3"])
    >>> args.quick, args.out, args.seed
    (True, 'figures', 3)
    """
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=quick_help)
    ap.add_argument("--out", default="figures", help="output folder (default: figures/)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    return ap.parse_args(None if argv is None else list(argv))

"""The plotters of the figure checks, by name, and the drawing of the figures a claim asked for.

A check does not draw (the claims sit below plotting): it returns a
:class:`~fedtheory.claimkit.evidence.Figure`, a plotter's name with its data. The layer that runs
the claims (:func:`fedtheory.runner.verify_one`) hands the result to :func:`draw_result`, which
draws each figure with the plotter :data:`PLOTTERS` names, heads it with the claim's id and
verdict (a figure says what it supports), writes the caption under it, and saves it where a
check drawing itself would have: ``<figure dir>/<claim id, dots as _>__<name>.png`` and
``.pdf``.

A new figure: a ``draw_*`` function in ``plotting/<family>.py`` returning a matplotlib figure
(every panel labelled, a legend wherever lines are told apart), one entry here, and the check
returns ``Figure("<family>.<what>", "<file name>", {<its keyword arguments>}, caption=...)``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path

from fedtheory.claimkit.core import ClaimResult
from fedtheory.claimkit.evidence import Figure
from fedtheory.plotting import (
    fdms,
    fedavg,
    fedavg_tables,
    importance_sampling,
    mifa,
    ocs,
    plt,
    save_figure,
)

__all__ = ["PLOTTERS", "claim_figure_script", "draw_result", "figure_file", "render"]

#: The plotters a :class:`~fedtheory.claimkit.evidence.Figure` may name: each takes the
#: figure's ``data`` as keyword arguments and returns a matplotlib figure.
PLOTTERS: Mapping[str, Callable[..., plt.Figure]] = {
    "fdms.complexity": fdms.draw_complexity,
    "fdms.complexity_observation": fdms.draw_complexity_observation,
    "fdms.curves": fdms.draw_curves,
    "fdms.heatmap": fdms.draw_heatmap,
    "fdms.negative_gap": fdms.draw_negative_gap,
    "fedavg.ablation": fedavg_tables.draw_ablation,
    "fedavg.heterogeneity": fedavg.draw_heterogeneity,
    "fedavg.local_steps": fedavg.draw_local_steps,
    "fedavg.partial_participation": fedavg.draw_partial_participation,
    "fedavg.scaffold_table": fedavg_tables.draw_scaffold_table,
    "is.variance_curves": importance_sampling.draw_variance_curves,
    "mifa.floor_experiment": mifa.draw_floor_experiment,
    "mifa.seed_experiment": mifa.draw_seed_experiment,
    "ocs.alpha_spread": ocs.draw_alpha_spread,
    "ocs.aocs_iterations": ocs.draw_aocs_iterations,
    "ocs.ocs_vs_uniform": ocs.draw_ocs_vs_uniform,
    "ocs.sqrt_n": ocs.draw_sqrt_n,
}

#: Characters of caption per inch of figure width (at the caption's 8 points).
_CHARS_PER_INCH = 15


def render(figure: Figure, *, claim_id: str = "", verdict: str = "") -> plt.Figure:
    """Draw ``figure`` with its plotter; head it with ``claim_id`` and ``verdict`` (before the
    plotter's own title, if any) and write its caption under it.

    >>> render(Figure("ocs.nothing", "x"))
    Traceback (most recent call last):
    ...
    ValueError: figure plotter 'ocs.nothing' is not in fedtheory.plotting.figures.PLOTTERS
    """
    if not isinstance(figure, Figure):
        raise ValueError(f"figure must be a fedtheory.claims.Figure, got {figure!r}")
    draw = PLOTTERS.get(figure.plotter)
    if draw is None:
        raise ValueError(f"figure plotter {figure.plotter!r} is not in "
                         "fedtheory.plotting.figures.PLOTTERS")
    fig = draw(**figure.data)
    head = " ".join(p for p in (claim_id, f"({verdict})" if verdict else "") if p)
    if head:
        # the claim and its verdict first, the plotter's own title on the line below; above
        # the panels (saved with a tight bounding box, so nothing is cut)
        own = fig.get_suptitle()
        fig.suptitle(f"{head}\n{own}" if own else head, fontsize=10, y=1.01, va="bottom")
    if figure.caption:
        width = max(40, int(fig.get_figwidth() * _CHARS_PER_INCH))
        fig.text(0.5, -0.01, textwrap.fill(figure.caption, width), ha="center", va="top",
                 fontsize=8, transform=fig.transFigure)
    return fig


def figure_file(figure_dir: Path | str, claim_id: str, name: str) -> Path:
    """Where a claim's figure named ``name`` goes (without suffix): the file name a check
    drawing itself gets from :meth:`~fedtheory.claimkit.core.Context.figure_path`.

    >>> figure_file("figs", "ocs.experiment", "sqrt_n").as_posix()
    'figs/ocs_experiment__sqrt_n'
    """
    return Path(figure_dir) / f"{claim_id.replace('.', '_')}__{name}"


def claim_figure_script(claim_id: str, doc: str, argv: list[str] | None = None) -> int:
    """The body of a figure script that verifies ``claim_id`` (all its checks, on the
    preset's data: ``--quick`` or the full preset, ``--seed``) and draws its figures into
    ``--out`` with the verdict in the heading (:func:`draw_result`), printing the verdict,
    each check's outcome and the paths; ``doc`` is the script's usage text."""
    from fedtheory.claims.registry import get_claim
    from fedtheory.plotting import figure_script_args

    args = figure_script_args(doc, argv)
    res = get_claim(claim_id).verify(preset="quick" if args.quick else "full", seed=args.seed)
    paths = draw_result(res, args.out)
    print(f"{res.id}: {res.verdict.value}")
    for c in res.checks:
        print(f"  {c.name}: {c.passed} {c.undecided or ''}")
    print("\n".join(paths))
    return 0


def draw_result(result: ClaimResult, figure_dir: Path | str | None) -> list[str]:
    """Draw the figures ``result``'s checks asked for (:attr:`ClaimResult.drawings`) into
    ``figure_dir``, add their paths to the checks' ``figures`` and empty ``drawings``; return
    the paths. With ``figure_dir=None`` (figures off) nothing is drawn and ``drawings`` is
    emptied all the same."""
    drawings, result.drawings = list(result.drawings), []
    if figure_dir is None or not drawings:
        return []
    checks = {c.name: c for c in result.checks}
    out: list[str] = []
    for check, figure in drawings:
        fig = render(figure, claim_id=result.id, verdict=result.verdict.value)
        paths = save_figure(fig, figure_file(figure_dir, result.id, figure.name))
        if check in checks:
            checks[check].figures.extend(paths)
        out += paths
    return out


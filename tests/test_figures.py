"""Figures that say what they show: every figure a claim's checks ask for is drawn by the layer
above the claims (fedtheory.plotting.figures) with its claim id and verdict on top, both axes
of every panel labelled, a legend wherever lines are told apart, a caption, and "seed" only as
"random seed" (the seed papers are "papers" on a figure).

The per-claim test reads the claim's quick verification shared with
tests/test_registry.py::test_quick_verdict (``verified``, computed once per session, on its
family's worker), then draws each figure in memory: well under a second per figure.
"""

import re
import warnings

import numpy as np
import pytest

from fedtheory.claims import Claim, ClaimKind, Context, Evidence, Figure, all_claims
from fedtheory.plotting import label_axes, plt
from fedtheory.plotting.figures import PLOTTERS, draw_result, figure_file, render
from fedtheory.report import write_markdown
from fedtheory.runner import draw_figures

from .test_registry import _by_family

ALL = all_claims()

#: "seed" on a figure means the paper (say "paper") unless it is a "random seed".
_BARE_SEED = re.compile(r"(?<!random )\bseeds?\b", re.IGNORECASE)


def _texts(fig: plt.Figure) -> list[str]:
    """Every text drawn on ``fig``: titles, axis labels, legends, free texts."""
    out = [fig.get_suptitle(), *(t.get_text() for t in fig.texts)]
    for leg in fig.legends:
        out += [t.get_text() for t in leg.get_texts()]
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_title("left"), ax.get_title("right"), ax.get_xlabel(),
                ax.get_ylabel(), *(t.get_text() for t in ax.texts)]
        if ax.get_legend() is not None:
            out += [t.get_text() for t in ax.get_legend().get_texts()]
    return out


def figure_problems(fig: plt.Figure, claim_id: str, verdict: str) -> list[str]:
    """What ``fig`` fails to say: the claim and verdict on top, both axis labels of every
    panel (colour bars aside), a legend in every panel with two lines or more, no bare
    "seed"."""
    problems = []
    if claim_id not in fig.get_suptitle() or verdict not in fig.get_suptitle():
        problems.append(f"suptitle {fig.get_suptitle()!r} names neither {claim_id} nor "
                        f"{verdict}")
    for k, ax in enumerate(fig.axes):
        if hasattr(ax, "_colorbar"):  # a colour bar: its label is checked below
            if not (ax.get_ylabel() or ax.get_xlabel()):
                problems.append(f"colour bar {k} has no label")
            continue
        if not ax.get_xlabel() or not ax.get_ylabel():
            problems.append(f"axes {k} ({ax.get_title()!r}): x label {ax.get_xlabel()!r}, "
                            f"y label {ax.get_ylabel()!r}")
        lines = [ln for ln in ax.get_lines() if ln.get_visible() and len(ln.get_xdata()) > 0]
        if len(lines) >= 2 and ax.get_legend() is None and not fig.legends:
            problems.append(f"axes {k} ({ax.get_title()!r}): {len(lines)} lines, no legend")
    bare = [t for t in _texts(fig) if _BARE_SEED.search(t or "")]
    if bare:
        problems.append(f"'seed' where a random seed (or a paper) is meant: {bare}")
    return problems


@pytest.mark.parametrize("claim", _by_family(ALL))
def test_figures_say_what_they_show(claim, verified):
    """Every figure a claim's checks ask for names the claim and its verdict, labels every
    panel, has a legend where lines are told apart, and a caption; a check of kind "figure"
    shows something (no figure check draws nothing)."""
    res = verified.result(claim)
    asked = {name for name, _ in res.drawings}
    for c in res.checks:
        if c.kind == "figure" and c.error is None:
            assert c.name in asked or c.figures, f"figure check {c.name} draws nothing"
    for name, figure in res.drawings:
        assert figure.caption.strip(), f"{name}: {figure.name} has no caption"
        assert not _BARE_SEED.search(figure.caption), figure.caption
        fig = render(figure, claim_id=res.id, verdict=res.verdict.value)
        try:
            assert not figure_problems(fig, res.id, res.verdict.value), (
                name, figure.name, figure_problems(fig, res.id, res.verdict.value))
        finally:
            plt.close(fig)


# -- the plumbing, on small synthetic data ------------------------------------------------


def _draw_demo(x, y):
    """A plain two-line figure (no mathematics: cheap to lay out and save)."""
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot(x, y, label="y")
    ax.plot(x, np.asarray(y) / 2, "--", label="y / 2")
    label_axes(ax, "x", "y", "demo")
    return fig


@pytest.fixture
def demo_plotter(monkeypatch):
    """The plotter "demo.lines" in the registry for the length of a test."""
    monkeypatch.setitem(PLOTTERS, "demo.lines", _draw_demo)


def _demo_figure(caption="What it shows."):
    return Figure("demo.lines", "curves", {"x": [0, 1, 2], "y": [1, 2, 4]}, caption=caption)


def _drawing_claim() -> Claim:
    claim = Claim(id="demo.drawn", family="demo", seed_ref="t", title="t", statement="x",
                  kind=ClaimKind.IDENTITY)

    @claim.check("exact")
    def _holds(ctx: Context) -> Evidence:
        return Evidence(True, 1, 1)

    @claim.check("figure")
    def _picture(ctx: Context) -> Evidence:
        return Evidence.illustration(
            [_demo_figure()], detail="shows")
    return claim


def test_a_check_asks_for_a_figure_and_the_runner_draws_it(tmp_path, demo_plotter):
    tmp_path = tmp_path / "figures"
    """verify keeps the figure (the claims do not draw); draw_result draws it where a check
    drawing itself would have written it, titled with the claim and verdict, and adds the
    paths to the check; without a figure folder nothing is drawn and nothing is kept."""
    claim = _drawing_claim()
    res = claim.verify(figure_dir=tmp_path)
    assert [n for n, _ in res.drawings] == ["picture"] and not tmp_path.exists()
    assert "drawings" not in res.to_dict() and res.verdict.value == "confirmed"
    paths = draw_result(res, tmp_path)
    stem = figure_file(tmp_path, "demo.drawn", "curves")
    assert stem == tmp_path / "demo_drawn__curves"
    assert paths == [str(stem.with_suffix(".png")), str(stem.with_suffix(".pdf"))]
    assert all(p.exists() for p in map(type(tmp_path), paths))
    assert res.checks[1].figures == paths and res.drawings == []
    again = claim.verify()
    assert again.drawings
    draw_figures(again, None)
    assert again.drawings == [] and again.checks[1].figures == []


def test_render_heads_the_figure_with_claim_and_verdict_and_writes_the_caption(demo_plotter):
    fig = render(_demo_figure("A caption."), claim_id="demo.drawn", verdict="refuted")
    try:
        assert fig.get_suptitle().startswith("demo.drawn (refuted)")
        assert "A caption." in [t.get_text() for t in fig.texts]
        assert not figure_problems(fig, "demo.drawn", "refuted")
    finally:
        plt.close(fig)
    with pytest.raises(ValueError, match="'demo.unknown' is not in"):
        render(Figure("demo.unknown", "c"))


def test_figure_rejects_bad_names_and_checks_reject_other_figures():
    with pytest.raises(ValueError, match="plotter must be 'family.what'"):
        Figure("nodot", "x")
    with pytest.raises(ValueError, match="name must be letters"):
        Figure("is.variance_curves", "a/b")
    claim = Claim(id="demo.bad", family="demo", seed_ref="t", title="t", statement="x",
                  kind=ClaimKind.IDENTITY)
    claim.check("figure")(lambda ctx: Evidence.illustration([object()]))
    (c,) = claim.verify().checks
    assert c.error and "figures must be Figure values or paths" in c.detail


def test_every_plotter_is_a_draw_function():
    assert all(callable(f) and f.__name__.startswith("draw_") for f in PLOTTERS.values())
    assert all(re.fullmatch(r"[a-z]+\.[a-z_]+", name) for name in PLOTTERS)


def test_label_axes_makes_no_empty_legend():
    """Nothing labelled: no legend and no "No artists with labels" warning."""
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        label_axes(ax, "x", "y", "t")
    assert ax.get_legend() is None
    plt.close(fig)


def test_report_counts_checks_apart_from_figures_and_says_the_finding_once(tmp_path):
    from fedtheory.claimkit.stated import Erratum

    claim = _drawing_claim()
    claim.finding = "The statement fails at n = 2 (a referee's sentence)."
    claim.erratum = Erratum("typo", "eq. (3): 1/p for p, the long account", quote="G = 1/p",
                            location="eq. (3)", intended_holds=True)
    res = claim.verify()
    # as drawn (draw_result): the paths join the check's figures
    res.checks[1].figures = [str(tmp_path / "figures" / f"demo_drawn__curves.{s}")
                             for s in ("png", "pdf")]
    md = write_markdown(tmp_path, [res], 0, "quick", prov={}).read_text()
    assert "| 1 of 1 check passed, 1 figure |" in md
    assert md.count("**Finding.**") == 1 and md.count("**Erratum**") == 1
    assert "**Erratum** (typo): the intended statement holds." in md
    # the erratum's own account is there once, folded, not a second finding
    assert md.count("the long account") == 1 and "The erratum in detail" in md
    assert "| picture | figure | figure (shows) |" in md
    # the alt text says what the figure is: the claim's title, the check and its detail
    assert ("![t: figure of check picture (shows)](figures/demo_drawn__curves.png) "
            "([PDF](figures/demo_drawn__curves.pdf))") in md

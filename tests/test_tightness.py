"""The tightness search (fedtheory/claimkit/tightness.py): grid, bounded refinement, exact
re-check; what it returns fits an Evidence and the bound check."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from fedtheory.claims import Evidence, Tightness, tightest


def test_an_interior_maximum_is_refined_between_grid_points() -> None:
    """4 x (1 - x) <= 1 on [0, 0.9] with 4 grid points (0, .3, .6, .9): the grid's best is
    0.96 at x = 0.6, the refinement finds the maximum 1 at x = 1/2."""
    t = tightest(lambda x: 4 * x * (1 - x), lambda x: 1, {"x": (0.0, 0.9)}, grid=4)
    assert t.best_grid == {"x": 0.6} and t.grid_size == 4
    assert t.refined is not None and abs(t.refined["x"] - 0.5) < 1e-4
    assert t.ratio == pytest.approx(1.0, abs=1e-8) and t.evaluations > t.grid_size


def test_the_exact_recheck_and_a_lower_bound() -> None:
    """(1 + x)^2 >= 4x (AM-GM): stated/measured is 4x/(1+x)^2, 1 exactly at x = 1."""
    t = tightest(lambda x: (1 + x) ** 2, lambda x: 4 * x, {"x": (0.0, 3.0)}, side="lower",
                 exact=True, grid=7)
    assert t.exact_ratio == Fraction(1) and t.instance["x"] == 1.0
    assert t.instance["measured"] == 4 and "exact ratio 1" in t.search


def test_a_loop_over_points_with_an_integer_parameter() -> None:
    """A quantity that is not vectorised (called a point at a time) with an integer K: the
    ratio (1/K) (1 - 1/K)... largest at K = 2."""
    seen = []

    def q(eta: float, k: int) -> float:
        assert isinstance(k, int)
        seen.append(k)
        return eta * (1 - 1 / k) / k

    t = tightest(q, lambda eta, k: eta / 4, {"eta": (0.1, 1.0), "k": (1, 6)},
                 integers=("k",), vectorised=False, exact=True)
    assert t.exact_ratio == 1 and t.instance["k"] == 2 and set(seen) == set(range(1, 7))


def test_what_it_returns_fills_an_evidence_and_the_bound_check() -> None:
    t = tightest(lambda x: x / (1 + x), lambda x: x, {"x": (0.5, 3.0)}, exact=True)
    ev = Evidence(True, str(t.instance["measured"]), str(t.instance["stated"]), "holds",
                  **t.evidence_fields())
    assert ev.ratio == pytest.approx(2 / 3) and ev.instance["x"] == 0.5
    assert "9 grid points" in ev.search
    assert t.bound_inputs() == {"quantity": [Fraction(1, 3)], "stated": [Fraction(1, 2)],
                                "instances": [{"x": 0.5}], "side": "upper"}
    assert len(t.points) == 9 and t.points[0] == {"x": 0.5, "measured": 1 / 3, "stated": 0.5}
    with pytest.raises(ValueError, match="exact re-check"):
        tightest(lambda x: x / (1 + x), lambda x: x, {"x": (0.5, 3.0)}).bound_inputs()
    assert isinstance(t, Tightness) and t.to_dict()["exact_ratio"] == "2/3"


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"box": {}}, "at least one"),
    ({"box": {"x": (2.0, 1.0)}}, "low <= high"),
    ({"box": {"x": (0.0, np.inf)}}, "finite"),
    ({"box": {"x": (0.0, 1.0)}, "side": "both"}, "side"),
    ({"box": {"x": (0.0, 1.0)}, "grid": 1}, "grid"),
    ({"box": {"x": (0.5, 2.0)}, "integers": ("x",)}, "integer"),
    ({"box": {"x": (0.0, 1.0)}, "integers": ("y",)}, "not in the box"),
])
def test_bad_searches_are_clear_errors(kwargs, match) -> None:
    with pytest.raises(ValueError, match=match):
        tightest(lambda x: x, lambda x: 1 + x, **kwargs)


def test_a_nan_in_the_bound_names_the_point() -> None:
    with pytest.raises(ValueError, match=r"the bound is NaN at x=1\.0, k=3"):
        tightest(lambda x, k: x, lambda x, k: np.where((x == 1) & (k == 3), np.nan, 2.0),
                 {"x": (0.0, 1.0), "k": (1, 3)}, integers=("k",), grid=3)


def test_the_bound_check_on_the_tightest_point() -> None:
    """Tightness.evidence is claimkit.checks.check_bound at the tightest point, exactly, with
    the search's record: a bound that holds, and one violated at the box's end."""
    t = tightest(lambda x: x / (1 + x), lambda x: x, {"x": (0.5, 3.0)}, exact=True)
    ev = t.evidence("x/(1+x) <= x")
    assert ev.passed is True and ev.ratio == pytest.approx(2 / 3)
    assert ev.instance == {"x": 0.5} and ev.search == t.search and ev.counterexample is None
    low = tightest(lambda x: x * x, lambda x: x, {"x": (0.5, 2.0)}, side="lower", exact=True)
    ev = low.evidence("x^2 >= x")
    assert ev.passed is False and ev.counterexample == {"x": 0.5, "measured": "1/4",
                                                         "bound": "1/2"}

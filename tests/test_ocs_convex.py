"""Convex cross-check of OCS (cvxpy + KKT certificate) and the sympy KKT derivation."""

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory.convex.ocs import (
    budget_dual_bound,
    dual_function,
    kkt_certificate,
    solve_ocs_convex,
)
from fedtheory.sampling.ocs import (
    independent_sampling_variance,
    optimal_probabilities,
    optimal_variance,
)
from fedtheory.symbolic.kkt import (
    derive_ocs_kkt,
    derive_optimal_value,
    kkt_points_exact,
    to_rational,
)


def test_known_instance():
    sol = solve_ocs_convex([1.0, 1.0, 10.0], 2)
    assert sol.status == "optimal" and sol.optimal
    np.testing.assert_allclose(sol.p, [0.5, 0.5, 1.0], atol=1e-6)
    assert sol.objective == pytest.approx(2.0, rel=1e-6)
    assert sol.budget_dual == pytest.approx(4.0, rel=1e-4)  # y = (S_l/(m+l-n))^2


def test_zero_norms_are_handled_explicitly():
    sol = solve_ocs_convex([0.0, 3.0, 0.0, 1.0, 2.0], 2)
    assert sol.optimal and sol.p[0] == 0.0 and sol.p[2] == 0.0
    sol = solve_ocs_convex([0.0, 3.0, 0.0, 1.0], 2)  # at most m non-zero: no solve needed
    assert sol.status == "trivial"
    np.testing.assert_array_equal(sol.p, [0.0, 1.0, 0.0, 1.0])
    assert kkt_certificate([0.0, 3.0, 0.0, 1.0], 2).certified()  # budget just active
    cert = kkt_certificate([0.0, 3.0, 0.0, 1.0], 3)  # budget slack: y = 0
    assert cert.certified() and cert.y == 0.0
    assert kkt_certificate([0.0, 0.0], 1).certified()


def test_invalid_input():
    with pytest.raises(ValueError, match=r"norms must be 1-D for the convex solve"):
        solve_ocs_convex(np.ones((2, 3)), 1)
    with pytest.raises(ValueError, match=r"m must satisfy 0 < m <= n = 2, got 3"):
        solve_ocs_convex([1.0, 2.0], 3)
    with pytest.raises(ValueError, match=r"y must be a non-negative number, got -1"):
        budget_dual_bound([1.0, 2.0], 1, -1)
    with pytest.raises(ValueError, match=r"p must have shape \(2,\)"):
        kkt_certificate([1.0, 2.0], 1, p=[1.0])


@pytest.mark.parametrize("kind", ["lognormal", "pareto", "ties", "zeros", "m_close_to_n"])
def test_closed_form_certified_and_never_worse_than_solver(kind):
    rng = np.random.default_rng(7)
    n = 60
    u = {
        "lognormal": rng.lognormal(0, 2, n),
        "pareto": rng.pareto(0.7, n) + 1e-3,
        "ties": rng.integers(1, 4, n).astype(float),
        "zeros": rng.lognormal(0, 1, n) * (rng.random(n) < 0.5),
        "m_close_to_n": rng.lognormal(0, 1, n),
    }[kind]
    m = n - 0.5 if kind == "m_close_to_n" else 7.0
    cert = kkt_certificate(u, m)
    assert cert.certified(1e-9), cert.summary()
    sol = solve_ocs_convex(u, m)
    assert sol.status in ("optimal", "optimal_inaccurate")
    v = optimal_variance(u, m)
    assert v <= sol.objective * (1 + 1e-9) + 1e-12
    assert budget_dual_bound(u, m, max(sol.budget_dual, 0.0)) <= v * (1 + 1e-9) + 1e-12


def test_certificate_rejects_a_wrong_candidate():
    u = np.array([1.0, 2.0, 3.0, 20.0])
    uniform = np.full(4, 0.5)
    cert = kkt_certificate(u, 2, p=uniform)
    assert not cert.certified(1e-6)
    assert cert.gap > 1e-3
    # and the right one passes when given explicitly
    assert kkt_certificate(u, 2, p=optimal_probabilities(u, 2)).certified(1e-9)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 100.0, allow_subnormal=False), min_size=2, max_size=8),
       st.floats(0.05, 1.0), st.data())
def test_weak_duality(norms, frac, data):
    u = np.array(norms)
    n = u.size
    m = max(frac * n, 0.5)
    y = data.draw(st.floats(0.0, 1e4))
    lam = np.array(data.draw(st.lists(st.floats(0.0, 1e3), min_size=n, max_size=n)))
    mu = np.array(data.draw(st.lists(st.floats(0.0, 1e3), min_size=n, max_size=n)))
    p_feasible = np.full(n, min(1.0, m / n))
    v = independent_sampling_variance(u, p_feasible)
    scale = 1e-9 * (1.0 + v + float(np.sum(u**2)) + y * m + lam.sum() + mu.sum())
    assert dual_function(u, m, y, lam, mu) <= v + scale
    assert budget_dual_bound(u, m, y) <= v + scale
    assert budget_dual_bound(u, m, y) <= optimal_variance(u, m) + scale


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(1e-3, 1e3, allow_subnormal=False), min_size=2, max_size=25),
       st.floats(0.05, 1.0))
def test_optimal_against_convex_solve(norms, frac):
    u = np.array(norms)
    m = max(frac * u.size, 0.5)
    p = optimal_probabilities(u, m)
    sol = solve_ocs_convex(u, m)
    v = independent_sampling_variance(u, p)
    assert v <= sol.objective * (1 + 1e-9) + 1e-12
    assert kkt_certificate(u, m).certified(1e-9)


# -------------------------------------------------------------------------------------------
# symbolic
# -------------------------------------------------------------------------------------------

def test_kkt_derivation_expressions():
    d = derive_ocs_kkt()
    s = d.symbols
    m, n, ell, s_l, u_i = s["m"], s["n"], s["l"], s["S_l"], s["u_i"]
    assert sp.simplify(d.p_interior - u_i / sp.sqrt(s["y"])) == 0
    assert sp.simplify(d.mu_saturated - (u_i**2 - s["y"])) == 0
    assert sp.simplify(d.sqrt_y - s_l / (m + ell - n)) == 0
    assert sp.simplify(d.p_closed_form - (m + ell - n) * u_i / s_l) == 0
    assert len(d.steps) == 9


def test_optimal_value_derivation():
    for k in (1, 3):
        val, u, m, n = derive_optimal_value(k)
        expected = sp.Add(*u) ** 2 / (m - n + k) - sp.Add(*[x**2 for x in u])
        assert sp.simplify(val - expected) == 0
    with pytest.raises(ValueError, match="ell must be a positive integer, got 0"):
        derive_optimal_value(0)


def test_kkt_points_exact_unique_and_equal_to_closed_form():
    rng = np.random.default_rng(11)
    for _ in range(20):
        n = int(rng.integers(1, 7))
        u = [int(x) for x in rng.integers(0, 8, n)]
        m = Fraction(int(rng.integers(1, 2 * n + 1)), 2)
        pts = kkt_points_exact(u, m)
        assert len(pts) == 1
        np.testing.assert_allclose([float(x) for x in pts[0].p],
                                   optimal_probabilities(u, float(m)), atol=1e-12)


def test_kkt_points_exact_validates():
    with pytest.raises(ValueError, match="needs 1 <= n <= 12"):
        kkt_points_exact([1] * 13, 2)
    with pytest.raises(ValueError, match="norms must be non-negative"):
        kkt_points_exact([1, -1], 1)
    with pytest.raises(ValueError, match="m must satisfy 0 < m <= n = 2"):
        kkt_points_exact([1, 1], 3)


def test_to_rational_is_exact():
    assert to_rational(0.1) == sp.Rational(3602879701896397, 36028797018963968)
    assert to_rational(Fraction(1, 3)) == sp.Rational(1, 3)
    assert to_rational("2/7") == sp.Rational(2, 7)


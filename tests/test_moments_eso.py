"""Exact moments of the importance-sampled aggregate, the ESO SDP, and the indicator algebra."""

from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest
import sympy as sp

from fedtheory.claims import checks
from fedtheory.convex import eso as eso_mod
from fedtheory.convex.eso import (
    ESOSolverError,
    eso_gap_matrix,
    eso_min_eigenvalue,
    smallest_eso,
)
from fedtheory.sampling.designs import (
    ExplicitSampling,
    IndependentSampling,
    UniformWithoutReplacement,
)
from fedtheory.sampling.moments import (
    bound_coefficients,
    enumerate_moments,
    eso_bound,
    estimator_mean,
    estimator_variance,
    importance_vectors,
    sample_estimator,
    variance_formula,
)
from fedtheory.symbolic.indicators import (
    derive_estimator_moments,
    design_moments,
    expectation,
    independent_moments,
    indicator_symbols,
    pairwise_moments,
    sign_expectation,
    sign_symbols,
    uniform_without_replacement_moments,
)

from ._tolerance import assert_close_sum

PROPER = [
    IndependentSampling([Fraction(1, 10), Fraction(1, 2), Fraction(9, 10), 1, Fraction(3, 10)]),
    UniformWithoutReplacement(5, 2),
    UniformWithoutReplacement(5, 5),
    ExplicitSampling([(0, 1), (2,), (0, 2, 3), (1, 3, 4), (0, 1, 2, 3, 4)],
                     [Fraction(k, 15) for k in (1, 2, 3, 4, 5)]),
]
IDS = [repr(d) for d in PROPER]


def _w_zeta(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 5, n)
    w = [Fraction(int(x), int(w.sum())) for x in w]
    zeta = rng.integers(-4, 5, (n, d))
    return w, zeta


# -- moments -----------------------------------------------------------------------------------

@pytest.mark.parametrize("design", PROPER, ids=IDS)
def test_formula_equals_exact_enumeration(design):
    w, zeta = _w_zeta(design.n)
    mean_e, var_e = enumerate_moments(design, w, zeta, exact=True)
    wz = np.array(w, dtype=object)[:, None] * zeta.astype(object)
    assert list(mean_e) == list(wz.sum(axis=0))  # unbiased, exactly
    A = (np.array(w, dtype=object) / design.p_exact)[:, None] * zeta.astype(object)
    assert variance_formula(design.P_exact, A) == var_e  # eq. (30), exactly
    wf = np.array([float(x) for x in w])
    assert estimator_variance(design, wf, zeta) == pytest.approx(float(var_e), rel=1e-12,
                                                                 abs=1e-12)
    # sum_i p_i a_i (a BLAS product) against the exact sum_i w_i zeta_i: the same terms
    assert_close_sum(estimator_mean(design, wf, zeta), wz.astype(float).sum(0),
                     np.abs(wz.astype(float)).sum(0))
    mean_f, var_f = enumerate_moments(design, wf, zeta, exact=False)
    assert var_f == pytest.approx(float(var_e), rel=1e-12, abs=1e-12)


def test_independent_known_answer_and_equality_with_bound():
    p = np.array([0.1, 0.5, 0.9, 1.0, 0.3])
    w, zeta = np.full(5, 0.2), np.random.default_rng(1).normal(size=(5, 4))
    expected = sum(w[i] ** 2 * (1 - p[i]) / p[i] * zeta[i] @ zeta[i] for i in range(5))
    d = IndependentSampling(p)
    assert estimator_variance(d, w, zeta) == pytest.approx(expected, rel=1e-12)
    assert eso_bound(p, 1 - p, w, zeta) == pytest.approx(expected, rel=1e-12)


def test_without_replacement_equal_vectors_has_zero_variance():
    d = UniformWithoutReplacement(6, 2)
    assert estimator_variance(d, np.full(6, 1 / 6), np.ones((6, 2))) == pytest.approx(0, abs=1e-15)


def test_degenerate_inputs():
    d = IndependentSampling([0.3, 0.6])
    assert estimator_variance(d, [0.5, 0.5], np.zeros((2, 3))) == 0.0
    assert estimator_variance(UniformWithoutReplacement(3, 3), [1, 1, 1], np.eye(3)) == 0.0
    assert estimator_variance(IndependentSampling([1.0, 1.0]), [1, 2], np.eye(2)) == 0.0
    # 1-D zeta is (n, 1)
    assert estimator_mean(d, [0.5, 0.5], [1.0, 3.0]).shape == (1,)
    # a P matrix instead of a design
    assert estimator_variance(d.P, [0.5, 0.5], [1.0, 3.0]) == pytest.approx(
        estimator_variance(d, [0.5, 0.5], [1.0, 3.0]))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda d: estimator_variance(d, [1, 2], np.ones((3, 2))), r"w must have shape \(3,\)"),
        (lambda d: estimator_variance(d, [1, 2, np.nan], np.ones((3, 2))), r"w must be finite"),
        (lambda d: estimator_variance(d, [1, 2, 3], np.ones((2, 2))),
         r"zeta must have shape \(3, d\), got shape \(2, 2\)"),
        (lambda d: estimator_mean(d, [1, 2, 3], np.full((3, 2), np.inf)), r"zeta must be finite"),
        (lambda d: eso_bound(d.p, [1, 1], [1, 2, 3], np.ones((3, 2))), r"v must have shape"),
        (lambda d: eso_bound([0.0, 1, 1], [1, 1, 1], [1, 2, 3], np.ones((3, 2))),
         r"p must be in \(0, 1\], got 0.0"),
        (lambda d: estimator_variance(np.ones((2, 3)), [1, 2], np.ones((2, 1))),
         r"P must be a square"),
        (lambda d: estimator_variance(np.array([[0.5, 0.1], [0.2, 0.5]]), [1, 2], [1, 1]),
         r"P must be symmetric"),
        (lambda d: sample_estimator(d, [1, 2, 3], np.ones((3, 1)), np.random.default_rng(), -2),
         r"replicas must be a non-negative integer, got -2"),
        (lambda d: sample_estimator(d, [1, 2, 3], np.ones((3, 1)), 0, 2), r"rng must be"),
        (lambda d: sample_estimator(d.P, [1, 2, 3], np.ones((3, 1)), np.random.default_rng(), 2),
         r"design must be a SamplingDesign"),
        (lambda d: sample_estimator(d, [1, 2, 3], np.ones((3, 1)), np.random.default_rng(), 2,
                                    chunk_rows=0), r"chunk_rows must be a positive integer"),
    ],
)
def test_moments_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call(IndependentSampling([0.2, 0.5, 0.7]))


def test_improper_design_is_rejected():
    d = ExplicitSampling([(0,), (0, 1)], [0.5, 0.5], n=3)
    with pytest.raises(ValueError, match=r"proper \(every p_i > 0\), got p_2 = 0.0"):
        estimator_variance(d, [1, 1, 1], np.ones((3, 1)))
    with pytest.raises(ValueError, match="proper"):
        enumerate_moments(d, [1, 1, 1], np.ones((3, 1)))
    with pytest.raises(ValueError, match="proper"):
        smallest_eso(d)


@pytest.mark.parametrize("design", PROPER, ids=IDS)
def test_sampler_matches_exact_moments(design):
    w, zeta = _w_zeta(design.n, d=2, seed=3)
    w = np.array([float(x) for x in w])
    X = sample_estimator(design, w, zeta, np.random.default_rng(11), 200_000)
    mean = estimator_mean(design, w, zeta)
    ev = checks.check_identity(X, mean, alpha=1e-6)
    assert ev.passed, ev.detail
    sq = np.sum((X - mean) ** 2, axis=1)
    ev = checks.check_identity(sq, estimator_variance(design, w, zeta), alpha=1e-6)
    assert ev.passed, ev.detail


@pytest.mark.parametrize("design", PROPER, ids=IDS)
def test_sampler_independent_of_chunking_and_equal_to_masks(design):
    w, zeta = _w_zeta(design.n, d=2, seed=4)
    a = sample_estimator(design, w, zeta, np.random.default_rng(5), 1000)
    b = sample_estimator(design, w, zeta, np.random.default_rng(5), 1000, chunk_rows=7)
    c = sample_estimator(design, w, zeta, np.random.default_rng(5), 1000, chunk_rows=10**6)
    masks = design.sample(np.random.default_rng(5), 1000)
    A = importance_vectors(design, w, zeta)
    # the draws do not depend on the chunking; the sums over the sampled clients are BLAS
    # products of chunks of different shapes, so their last bits may (another draw would
    # differ by a whole importance vector, far above this tolerance)
    terms = masks @ np.abs(A)
    assert_close_sum(b, a, terms)
    assert_close_sum(c, a, terms)
    assert_close_sum(a, masks @ A, terms)
    assert sample_estimator(design, w, zeta, np.random.default_rng(5), 0).shape == (0, 2)


# -- ESO SDP -----------------------------------------------------------------------------------

def _assert_certificate(res, design):
    p = design.p
    assert res.status in ("optimal", "optimal_inaccurate")
    assert res.certified and res.min_eigenvalue >= -1e-12
    assert eso_min_eigenvalue(design, res.v) == pytest.approx(res.min_eigenvalue, abs=1e-14)
    assert np.all(res.v >= 1 - p - 1e-7)  # any feasible v has v_i >= 1 - p_i
    assert np.linalg.eigvalsh(res.dual)[0] >= -1e-7  # Z is PSD
    assert res.stationarity_residual <= 1e-6 * max(1.0, np.max(res.c))
    assert abs(res.duality_gap) <= 1e-6 * max(1.0, abs(res.objective))
    # complementary slackness <Z, Diag(p v) - (P - pp^T)> = 0
    assert abs(np.sum(res.dual * eso_gap_matrix(design, res.v_solver))) <= 1e-6
    assert res.shift <= 1e-7


def test_eso_independent_is_one_minus_p_for_any_positive_c():
    rng = np.random.default_rng(0)
    d = IndependentSampling(rng.uniform(0.05, 1.0, 6))
    for c in (None, rng.uniform(0.1, 5, 6)):
        res = smallest_eso(d, c)
        _assert_certificate(res, d)
        np.testing.assert_allclose(res.v, 1 - d.p, atol=1e-6)


@pytest.mark.parametrize("n, b", [(5, 1), (5, 2), (6, 3), (4, 4), (2, 1)])
def test_eso_without_replacement_known_answer(n, b):
    d = UniformWithoutReplacement(n, b)
    res = smallest_eso(d)
    _assert_certificate(res, d)
    v = (n - b) / (n - 1)
    np.testing.assert_allclose(res.v, v, atol=1e-6)
    assert res.objective == pytest.approx(n * v, abs=1e-6)


def test_eso_explicit_design_and_bound():
    d = PROPER[3]
    w, zeta = _w_zeta(d.n)
    w = np.array([float(x) for x in w])
    c = bound_coefficients(d.p, w, zeta)
    res = smallest_eso(d, c)
    _assert_certificate(res, d)
    var = estimator_variance(d, w, zeta)
    assert res.objective >= var - 1e-9
    # the bound at v is c^T v (non-negative terms: relative to itself); the reported objective
    # is c^T v to the 10 significant digits an interior-point solve determines (its last
    # digits vary with the BLAS kernel)
    cv = c @ res.v
    assert_close_sum(eso_bound(d.p, res.v, w, zeta), cv, cv)
    assert res.objective == pytest.approx(cv, rel=5e-10)
    # another feasible vector: v_i = lambda_max(P - pp^T) / p_i; not better than the SDP
    lam = np.linalg.eigvalsh(d.P - np.outer(d.p, d.p))[-1]
    v_alt = lam / d.p
    assert eso_min_eigenvalue(d, v_alt) >= -1e-12
    assert c @ v_alt >= res.objective - 1e-7
    assert eso_bound(d.p, v_alt, w, zeta) >= var - 1e-12


def test_eso_validation():
    d = IndependentSampling([0.5, 0.5])
    with pytest.raises(ValueError, match=r"c must have shape \(2,\)"):
        smallest_eso(d, [1.0])
    with pytest.raises(ValueError, match="c must be finite and non-negative"):
        smallest_eso(d, [1.0, -1.0])
    with pytest.raises(ValueError, match="P must be a square"):
        smallest_eso(np.ones((2, 3)))
    with pytest.raises(ValueError, match="tol must be positive"):
        smallest_eso(d, tol=0)
    with pytest.raises(ValueError, match="v must have shape"):
        eso_gap_matrix(d, [1.0])


def test_eso_solver_failure_raises(monkeypatch):
    def infeasible(n):
        v = cp.Variable(n)
        p = cp.Parameter(n, nonneg=True)
        M = cp.Parameter((n, n), symmetric=True)
        c = cp.Parameter(n, nonneg=True)
        lmi = cp.diag(cp.multiply(p, v)) - M >> 0
        return cp.Problem(cp.Minimize(c @ v), [lmi, v <= -10]), v, p, M, c, lmi

    monkeypatch.setattr(eso_mod, "_problem", infeasible)
    with pytest.raises(ESOSolverError, match="infeasible"):
        smallest_eso(IndependentSampling([0.5, 0.5]))


# -- indicator algebra -------------------------------------------------------------------------

def test_symbolic_derivation_matches_exact_enumeration():
    d = PROPER[3]
    w, zeta = _w_zeta(d.n, d=2, seed=9)
    masks, probs = d.enumerate(exact=True)
    p = [sp.Rational(str(x)) for x in d.p_exact]
    ws = [sp.Rational(str(x)) for x in w]
    mean, var = derive_estimator_moments(ws, sp.Matrix(zeta.tolist()), p,
                                         design_moments(masks, probs))
    mean_e, var_e = enumerate_moments(d, w, zeta, exact=True)
    assert [sp.Rational(str(x)) for x in mean_e] == list(mean)
    assert sp.Rational(str(var_e)) == var


def test_indicator_algebra_basics():
    one = indicator_symbols(3)
    p = sp.symbols("p0:3", positive=True)
    assert expectation(one[0] ** 2, one, independent_moments(p)) == p[0]
    assert expectation(one[0] * one[1] * one[2], one, independent_moments(p)) == p[0] * p[1] * p[2]
    with pytest.raises(ValueError, match=r"\|T\| <= 2"):
        expectation(one[0] * one[1] * one[2], one, pairwise_moments(sp.eye(3)))
    e = sign_symbols(2)
    assert sign_expectation(e[0] * e[1] + e[0] ** 2 + e[1] ** 3, e) == 1
    with pytest.raises(ValueError, match="n must be a positive integer, got 0"):
        indicator_symbols(0)
    assert uniform_without_replacement_moments(5, 2) == (sp.Rational(2, 5), sp.Rational(1, 10))
    with pytest.raises(ValueError, match="masks must have shape"):
        design_moments(np.ones((2, 2), bool), [1])


# -- the is claims' shared Monte Carlo glue ---------------------------------------------------

def test_is_check_identity_reports_the_detectable_deviation():
    import importlib

    common = importlib.import_module("fedtheory.claims.is._common")  # `is` is a keyword
    x = np.random.default_rng(0).normal(2.0, 1.0, 10_000)
    ev = common.check_identity(x, 2.0, alpha=1e-6, what="E[X]", counterexample={})
    assert ev.passed
    half = ev.tolerance * float(np.max(ev.data["stderr"]))
    assert ev.detail.endswith(f"; detects relative deviations above {half / 2.0:.2%}")
    ev = common.check_identity(x, 2.0, alpha=1e-6, what="E[X]", counterexample={}, scale=4.0)
    assert ev.detail.endswith(f"; detects relative deviations above {half / 4.0:.2%}")
    shifted = common.check_identity(x + 0.2, 2.0, alpha=1e-6, what="E[X]",
                                    counterexample={"shift": 0.2})
    assert shifted.passed is False and shifted.counterexample["shift"] == 0.2


def test_is_independent_average_is_seed000_estimator():
    import importlib

    common = importlib.import_module("fedtheory.claims.is._common")
    p = np.array([0.2, 0.5, 1.0])
    g = np.array([[1.0, -2.0], [3.0, 0.5], [-1.0, 4.0]])
    G = common.independent_average(p, g, np.random.default_rng(3), 2000)
    # bit-identical: the same design, weights and generator state as sample_estimator's call
    np.testing.assert_array_equal(G, sample_estimator(IndependentSampling(p), np.full(3, 1 / 3),
                                                      g, np.random.default_rng(3), 2000))
    # each draw is (1/n) sum_i 1_i g_i / p_i for some participation pattern
    patterns = np.array([[a, b, 1.0] for a in (0.0, 1.0) for b in (0.0, 1.0)])
    values = patterns / p @ g / 3
    dist = np.abs(G[:, None, :] - values[None, :, :]).max(axis=2).min(axis=1)
    assert dist.max() <= 1e-12


def test_smallest_eso_is_the_same_whatever_was_solved_before():
    """The parameterised SDP is compiled once per n and re-solved: without warm starts the
    re-solve gives bitwise the first solve's numbers (a report must not depend on which claims
    ran before in the same worker process)."""
    eso_mod._problem.cache_clear()
    first = {b: smallest_eso(UniformWithoutReplacement(10, b)).v for b in (1, 5, 9)}
    for b in (2, 3, 7, 4):  # (a warm start from these moved the last bits of all three)
        smallest_eso(UniformWithoutReplacement(10, b))
    for b, v in first.items():  # bit-identical: the same data to the same solver, cold
        assert np.array_equal(smallest_eso(UniformWithoutReplacement(10, b)).v, v)

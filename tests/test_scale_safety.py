"""Scale safety of the sampling module: huge, tiny and subnormal norms.

The OCS probabilities, the threshold, AOCS, the improvement factor and Appendix B's bound are
invariant under u -> lambda u; they must stay so in floating point at the ends of the range.
The variances scale like u^2 (the moments like w zeta, their variance like (w zeta)^2): no
intermediate step may overflow (or become inf * 0 = nan) where the true value is finite, and
inf comes back only when the true value is beyond the float range. Powers of two scale exactly,
so 2**k u must give the same probabilities as u up to a few ulps.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fedtheory.sampling.aocs import aocs_probabilities, client_initial_probabilities
from fedtheory.sampling.designs import (
    ExplicitSampling,
    IndependentSampling,
    UniformWithoutReplacement,
)
from fedtheory.sampling.improvement import (
    alpha_upper_bound,
    improvement_factor,
    relative_improvement_factor,
    uniform_variance,
)
from fedtheory.sampling.moments import (
    bound_coefficients,
    enumerate_moments,
    eso_bound,
    estimator_mean,
    estimator_variance,
    importance_vectors,
    sample_estimator,
)
from fedtheory.sampling.ocs import (
    closed_form_as_printed,
    independent_sampling_variance,
    ocs_threshold,
    optimal_probabilities,
    optimal_variance,
    validate_norms,
)

# any RuntimeWarning (overflow, invalid value, divide by zero) is a failure here
pytestmark = pytest.mark.filterwarnings("error")

HUGE = 1e308
TINY = 5e-324  # the smallest subnormal


def ldexp(x, k):
    """x * 2**k, inf beyond the range (math.ldexp raises OverflowError): a float for a
    scalar ``x``, else an array."""
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(x, k)
    return float(out) if np.ndim(out) == 0 else out


# -------------------------------------------------------------------------------------------
# the reported case
# -------------------------------------------------------------------------------------------

def test_reported_case_huge_equal_norms():
    np.testing.assert_array_equal(optimal_probabilities([HUGE, HUGE], 1), [0.5, 0.5])
    assert ocs_threshold([HUGE, HUGE], 1) == 2
    assert closed_form_as_printed([HUGE, HUGE], 1) == ([0.5, 0.5], 2)
    np.testing.assert_allclose(aocs_probabilities([HUGE, HUGE], 1).p, [0.5, 0.5], rtol=0,
                               atol=1e-15)


# -------------------------------------------------------------------------------------------
# OCS closed form at the ends of the range: the answer of the moderate twin
# -------------------------------------------------------------------------------------------

CASES = [
    # (norms, m, the same instance at a moderate scale)
    ([HUGE, HUGE], 1, [1.0, 1.0]),
    ([HUGE, HUGE, HUGE], 2, [1.0, 1.0, 1.0]),
    ([HUGE, 0.5 * HUGE, 0.25 * HUGE, 0.0], 1.5, [4.0, 2.0, 1.0, 0.0]),
    ([1.7e308] * 5, 4.5, [1.0] * 5),
    ([TINY, TINY], 1, [1.0, 1.0]),
    ([TINY, 2 * TINY, 3 * TINY], 1.5, [1.0, 2.0, 3.0]),
    ([TINY, 2 * TINY, 3 * TINY], 2, [1.0, 2.0, 3.0]),
    ([0.0, 3 * TINY, TINY, 3 * TINY], 1.7, [0.0, 3.0, 1.0, 3.0]),
    ([1e-310, 3e-310], 1, [1.0, 3.0]),
]


@pytest.mark.parametrize(("norms", "m", "twin"), CASES)
def test_extreme_scales_match_the_moderate_twin(norms, m, twin):
    p = optimal_probabilities(norms, m)
    expected = optimal_probabilities(twin, m)
    np.testing.assert_allclose(p, expected, rtol=1e-14, atol=1e-15)  # probabilities
    assert ocs_threshold(norms, m) == ocs_threshold(twin, m)
    np.testing.assert_allclose(aocs_probabilities(norms, m, j_max=len(norms) + 1).p,
                               expected, rtol=1e-12, atol=1e-12)
    if min(norms) > 0:
        printed, ell = closed_form_as_printed(norms, m)
        twin_printed, twin_ell = closed_form_as_printed(twin, m)
        assert ell == twin_ell
        np.testing.assert_allclose(np.asarray(printed, float), np.asarray(twin_printed, float),
                                   rtol=1e-14, atol=1e-15)


def test_mixture_of_huge_and_tiny_norms():
    # the two tiny norms share the budget left by the huge one: p = 1, 1/3, 2/3
    p = optimal_probabilities([HUGE, 1e-300, 2e-300], 2)
    np.testing.assert_allclose(p, [1.0, 1 / 3, 2 / 3], rtol=0, atol=1e-15)
    # a huge maximum next to subnormal norms: the l smallest are all subnormal
    p = optimal_probabilities([1.0, 3 * TINY, 3 * TINY, TINY], 1.7)
    np.testing.assert_allclose(p, [1.0, 0.3, 0.3, 0.1], rtol=0, atol=1e-15)
    # the huge norm dominates: everything else gets a (rounded) probability <= 1e-308
    p = optimal_probabilities([HUGE, 1e-300, 1.0], 1)
    assert p[0] == 1.0 and 0 <= p[1] <= p[2] <= 1e-307 and np.isclose(p.sum(), 1.0)


def test_rows_of_different_scales_are_solved_independently():
    base = np.array([1.0, 2.0, 3.0, 0.0, 4.0])
    rows = np.vstack([base * 0.25e308, base, base * 2.0**-1070, base * 1e-300])
    p = optimal_probabilities(rows, 2.5)
    for r in range(rows.shape[0]):
        np.testing.assert_allclose(p[r], optimal_probabilities(base, 2.5), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(ocs_threshold(rows, 2.5), [ocs_threshold(base, 2.5)] * 4)
    np.testing.assert_allclose(aocs_probabilities(rows, 2.5, j_max=6).p, p, rtol=0, atol=1e-12)


def test_validation_still_names_the_bad_value():
    with pytest.raises(ValueError, match="norms must be finite, got nan"):
        optimal_probabilities([1.0, np.nan], 1)
    with pytest.raises(ValueError, match="norms must be finite, got -inf"):
        optimal_probabilities([1.0, -np.inf], 1)
    with pytest.raises(ValueError, match="norms must be finite, got inf"):
        optimal_variance([[1.0, 2.0], [np.inf, 1.0]], 1)
    with pytest.raises(ValueError, match="norms must be non-negative, got -1e-300"):
        ocs_threshold([HUGE, -1e-300], 1)
    u, m = validate_norms([HUGE, TINY], 2)
    assert u.tolist() == [HUGE, TINY] and m == 2.0


# -------------------------------------------------------------------------------------------
# scale invariance as a property: 2**k u gives the same probabilities
# -------------------------------------------------------------------------------------------

@st.composite
def scaled_instances(draw, max_n=30):
    n = draw(st.integers(1, max_n))
    mant = draw(st.lists(st.one_of(st.just(0.0), st.just(1.0),
                                   st.floats(1.0, 2.0, exclude_max=True)),
                         min_size=n, max_size=n))
    expo = draw(st.lists(st.integers(-60, 60), min_size=n, max_size=n))
    u = np.ldexp(np.asarray(mant), np.asarray(expo))
    m = draw(st.one_of(st.just(float(n)), st.just(float(max(1, n // 2))),
                       st.floats(1e-3, float(n))))
    nz = u[u > 0]
    if nz.size:  # every 2**k u exact: no entry subnormal, none beyond the range
        lo = -1022 - int(np.frexp(nz.min())[1]) + 1
        hi = 1023 - int(np.frexp(nz.max())[1])
    else:
        lo, hi = -1000, 1000
    k = draw(st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi])))
    return u, min(m, float(n)), k


@settings(max_examples=300, deadline=None)
@given(scaled_instances())
# found by a randomised run: (1 - p_i) u_i fell into the subnormal range near 2**-1021 and
# the improvement factor lost 33 ulp (now its sum is taken in unit rows)
@example((np.array([1.0, 0.5, 0.50390625]), 2.9921875, -1020))
def test_probabilities_are_invariant_under_powers_of_two(inst):
    u, m, k = inst
    v = np.ldexp(u, k)
    assert np.array_equal(np.ldexp(v, -k), u)  # the scaling is exact
    p = optimal_probabilities(u, m)
    np.testing.assert_array_max_ulp(optimal_probabilities(v, m), p, maxulp=4)
    assert ocs_threshold(v, m) == ocs_threshold(u, m)
    np.testing.assert_array_max_ulp(aocs_probabilities(v, m, j_max=u.size + 1).p,
                                    aocs_probabilities(u, m, j_max=u.size + 1).p, maxulp=4)
    np.testing.assert_array_max_ulp(improvement_factor(v, m), improvement_factor(u, m),
                                    maxulp=16)
    np.testing.assert_array_max_ulp(alpha_upper_bound(v), alpha_upper_bound(u), maxulp=4)
    assert relative_improvement_factor(v, m) == pytest.approx(
        relative_improvement_factor(u, m), rel=1e-14)
    # 2-D: each row at its own scale
    both = np.vstack([u, v])
    np.testing.assert_array_max_ulp(optimal_probabilities(both, m), np.vstack([p, p]), maxulp=4)


@settings(max_examples=200, deadline=None)
@given(scaled_instances())
def test_variances_scale_like_the_square(inst):
    u, m, k = inst
    k = max(-500, min(500, k))  # 4**k times a moderate variance stays in range
    v = np.ldexp(u, k)
    # (a result in the subnormal range has fewer bits: compared in absolute terms there)
    for f in (optimal_variance, uniform_variance):
        ref = f(u, m)
        np.testing.assert_allclose(f(v, m), ldexp(ref, 2 * k), rtol=1e-13, atol=2.0**-1000)
    p = np.clip(optimal_probabilities(u, m), 1e-3, 1.0)
    np.testing.assert_allclose(independent_sampling_variance(v, p),
                               ldexp(independent_sampling_variance(u, p), 2 * k),
                               rtol=1e-13, atol=2.0**-1000)


# -------------------------------------------------------------------------------------------
# the audited functions, one by one
# -------------------------------------------------------------------------------------------

def test_optimal_variance_scale_safety():
    assert optimal_variance([HUGE, HUGE], 2) == 0.0  # S_l overflows, V* = 0
    assert optimal_variance([HUGE, HUGE, HUGE], 3) == 0.0
    assert optimal_variance([1e200, 1e200], 1) == np.inf  # V* = 2e400: truly beyond range
    base = [1.0, 2.0, 3.0, 0.0, 7.0]
    for k in (-1000, -600, 400, 1000):
        scaled = np.ldexp(base, k)
        want = ldexp(optimal_variance(base, 2.5), 2 * k)  # 0 or inf when out of range
        got = optimal_variance(scaled, 2.5)
        # relative: the same sums scaled by 4**k (exact); abs=0 for the tiny scales
        assert got == pytest.approx(want, rel=1e-14, abs=0) or (want == got == 0.0)
    # V* = S^2/c with c = m: t = S/m overflows in the naive evaluation for a tiny m
    # relative: two terms, a value of 4e-100 (abs must be 0)
    assert optimal_variance([1e-200, 1e-200], 1e-300) == pytest.approx(4e-100, rel=1e-13, abs=0)
    # 2-D, rows at different scales
    rows = np.vstack([np.ldexp(base, -900), np.ldexp(base, 500)])
    # relative: each row's variance at its own scale 4**k (the same sums, scaled exactly)
    np.testing.assert_allclose(optimal_variance(rows, 2.5),
                               [ldexp(optimal_variance(base, 2.5), 2 * k)
                                for k in (-900, 500)], rtol=1e-14)


def test_optimal_variance_equals_variance_of_the_optimum():
    for u, m in [([HUGE * 1e-10, 3e297, 1e290], 1.5), ([1e-160, 3e-160, 2e-160], 2.0),
                 ([1.0, 2.0, 3.0, 4.0], 2.5)]:
        p = optimal_probabilities(u, m)
        assert independent_sampling_variance(u, p) == pytest.approx(optimal_variance(u, m),
                                                                    rel=1e-13)


def test_independent_sampling_variance_scale_safety():
    assert independent_sampling_variance([1e200, 1e200], [1.0, 1.0]) == 0.0
    assert independent_sampling_variance([1e200, 0.0], [0.5, 0.0]) == np.inf  # 1e400
    # u / p alone overflows; (1 - p)/p * u^2 = 2e293 does not
    assert independent_sampling_variance([1e-15], [TINY]) == pytest.approx(1e-30 / TINY,
                                                                          rel=1e-14)
    # (1 - p)/p alone overflows for p ~ 5e-309
    # relative: one term, no sums (a value of 8e-292: abs must be 0)
    assert independent_sampling_variance([2e-300], [5e-309]) == pytest.approx(
        (2e-300 / 5e-309) * 2e-300, rel=1e-14, abs=0)
    assert independent_sampling_variance([1.0, 2.0], [0.0, 1.0]) == np.inf  # never heard
    rows = independent_sampling_variance([[1e154, 1e154], [1.0, 1.0]], [[0.5, 0.5], [0.5, 0.5]])
    assert rows[0] == np.inf or rows[0] == pytest.approx(2e308)  # 2e308: beyond the range
    assert rows[1] == 2.0


def test_closed_form_as_printed_at_the_ends_of_the_range():
    p, ell = closed_form_as_printed([HUGE, 0.5 * HUGE], 1, "smallest")
    assert ell == 2 and p == pytest.approx([2 / 3, 1 / 3], rel=1e-15)
    p, ell = closed_form_as_printed([HUGE, HUGE, 1e-300, 2e-300], 3, "smallest")
    assert ell == 2 and p[:2] == [1, 1] and p[2:] == pytest.approx([1 / 3, 2 / 3], rel=1e-15)
    # the appendix reading, literally (p = m u / sum u, infeasible here): not overflowed
    p, ell = closed_form_as_printed([HUGE, 0.5 * HUGE], 2, "largest")
    assert ell == 2 and p == pytest.approx([4 / 3, 2 / 3], rel=1e-15)
    # exact inputs keep their number type
    p, _ = closed_form_as_printed([Fraction(1), Fraction(3)], 1)
    assert p == [Fraction(1, 4), Fraction(3, 4)]
    # a subnormal instance: decided and divided exactly, then rounded
    p, ell = closed_form_as_printed([TINY, 2 * TINY, 3 * TINY], 1.5)
    assert ell == 3 and p == [0.25, 0.5, 0.75]


def test_aocs_scale_safety():
    res = aocs_probabilities([HUGE] * 3, 1)
    np.testing.assert_allclose(res.p, [1 / 3] * 3, rtol=0, atol=1e-15)
    assert res.converged
    res = aocs_probabilities([HUGE, 0.5 * HUGE, 0.25 * HUGE, 0.0], 1.5, j_max=10)
    np.testing.assert_allclose(res.p, optimal_probabilities([4.0, 2.0, 1.0, 0.0], 1.5),
                               rtol=0, atol=1e-12)
    assert res.converged and res.p[3] == 0.0
    # line 6 on its own: m u_i would overflow, m (u_i / u) does not
    np.testing.assert_array_equal(client_initial_probabilities(np.array([HUGE, HUGE]),
                                                               1.5 * HUGE, 2.0), [1.0, 1.0])
    np.testing.assert_allclose(client_initial_probabilities(np.array([HUGE, 0.5 * HUGE]),
                                                            1.5 * HUGE, 1.0), [2 / 3, 1 / 3])


def test_improvement_factor_scale_safety():
    u = np.array([1.0, 1.0, 10.0])
    alpha = improvement_factor(u, 2)
    for scale in (1e-300, 1e-160, 1e160, 1e300, 1.7e307):
        # both variances overflow (or underflow) for the extreme scales: their ratio does not
        assert improvement_factor(u * scale, 2) == pytest.approx(alpha, rel=1e-14)
        assert alpha_upper_bound(u * scale) == pytest.approx(alpha_upper_bound(u), rel=1e-14)
        assert relative_improvement_factor(u * scale, 2) == pytest.approx(
            relative_improvement_factor(u, 2), rel=1e-14)
    assert improvement_factor([TINY, TINY, 10 * TINY], 2) == pytest.approx(alpha, rel=1e-14)
    assert alpha_upper_bound([TINY, TINY, 2 * TINY]) == pytest.approx(
        alpha_upper_bound([1.0, 1.0, 2.0]), rel=1e-15)
    assert improvement_factor([HUGE, HUGE], 2) == 0.0  # V_U = 0: the convention alpha = 0
    # uniform_variance: u_i^2 overflows although (n - m)/m sum u^2 does not
    assert uniform_variance([1e155, 0.0], 1.999) == pytest.approx(
        ((2 - 1.999) / 1.999 * 1e155) * 1e155, rel=1e-14)
    assert uniform_variance([1e200, 1e200], 1) == np.inf
    assert uniform_variance([1e200, 1e200], 2) == 0.0
    assert uniform_variance([1e-200, 1e-200], 1) == 0.0  # 2e-400 underflows, truly


# -------------------------------------------------------------------------------------------
# moments of the importance-sampled estimator
# -------------------------------------------------------------------------------------------

DESIGNS = [
    IndependentSampling([0.1, 0.5, 0.9, 1.0]),
    UniformWithoutReplacement(4, 2),
    ExplicitSampling([(0, 1), (2,), (0, 2, 3), (1, 3)], [0.1, 0.2, 0.3, 0.4]),
]


def _instance(seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.1, 1.0, 4), rng.normal(size=(4, 3))


@pytest.mark.parametrize("design", DESIGNS, ids=repr)
@pytest.mark.parametrize("k", [-1100, -700, 0, 700, 1000])
def test_moments_scale_with_w_zeta(design, k):
    """zeta -> 2**k zeta (and w -> 2**j w): the mean scales by 2**k, the variance by 4**k,
    with no intermediate overflow or underflow; inf only beyond the range."""
    w, zeta = _instance()
    kw, kz = (k // 2, k - k // 2) if abs(k) > 1000 else (0, k)  # keep w, zeta representable
    ws, zs = np.ldexp(w, kw), np.ldexp(zeta, kz)
    # Every comparison below is relative on purpose: the same sums, in the same order (same
    # shapes), of terms scaled by an exact power of two, at the scale 2**k or 4**k; they
    # differ from the unscaled ones by the scaling alone.
    mean, var = estimator_mean(design, w, zeta), estimator_variance(design, w, zeta)
    # relative: see above
    np.testing.assert_allclose(estimator_mean(design, ws, zs), ldexp(mean, k), rtol=1e-13)
    got = estimator_variance(design, ws, zs)
    want = ldexp(var, 2 * k)
    # relative: see above (0 where 4**k var underflows, truly)
    assert got == pytest.approx(want, rel=1e-12, abs=0) or (want == 0.0 and got < 1e-300)
    # relative: elementwise products, no sums
    np.testing.assert_allclose(importance_vectors(design, ws, zs),
                               ldexp(importance_vectors(design, w, zeta), k), rtol=1e-15)
    m_f, v_f = enumerate_moments(design, ws, zs, exact=False)
    # relative: see above
    np.testing.assert_allclose(m_f, ldexp(mean, k), rtol=1e-13)
    # relative: see above
    assert v_f == pytest.approx(want, rel=1e-12, abs=0) or (want == 0.0 and v_f < 1e-300)
    c = bound_coefficients(design.p, ws, zs)
    np.testing.assert_allclose(c, ldexp(bound_coefficients(design.p, w, zeta), 2 * k),
                               rtol=1e-14, atol=2.0**-1000)
    X = sample_estimator(design, ws, zs, np.random.default_rng(3), 50)
    # relative: see above
    np.testing.assert_allclose(X, ldexp(sample_estimator(design, w, zeta,
                                                         np.random.default_rng(3), 50), k),
                               rtol=1e-13)


def test_zero_variance_stays_zero_at_huge_scale():
    # full participation: P - p p^T = 0, however large the vectors (never inf * 0 = nan)
    assert estimator_variance(UniformWithoutReplacement(3, 3), [1.0, 1.0, 1.0],
                              np.full((3, 2), 1e300)) == 0.0
    d = UniformWithoutReplacement(4, 2)  # equal vectors a_i: the variance is 0
    assert estimator_variance(d, np.full(4, 0.25), np.full((4, 1), 1e307)) == pytest.approx(
        0.0, abs=1e-300)
    # enumeration in floating point sums E||X||^2 - ||E X||^2 over patterns: its rounding error
    # is eps * 1e614 (beyond the float range) and its sign depends on the BLAS kernel's
    # summation order (Prescott: inf, SkylakeX: 0), so only exact arithmetic can promise 0;
    # in floats: never NaN, never negative
    assert enumerate_moments(d, [0.25] * 4, [[10**307]] * 4, exact=True)[1] == 0
    v_float = enumerate_moments(d, np.full(4, 0.25), np.full((4, 1), 1e307), exact=False)[1]
    assert not np.isnan(v_float) and v_float >= 0
    # a column beyond the range next to an ordinary one: the mean keeps the ordinary column
    mean = estimator_mean(d, np.full(4, 1e300), np.array([[1e300, 1e-290]] * 4))
    assert mean[0] == np.inf and mean[1] == pytest.approx(4e10, rel=1e-14)


def test_tiny_probabilities_do_not_overflow_the_importance_weights():
    d = IndependentSampling([1e-320, 1.0])  # w / p = 1e-10 / 1e-320 overflows
    a = importance_vectors(d, [1e-10, 1.0], [[1e-100], [1.0]])
    assert np.all(np.isfinite(a)) and a[0, 0] == pytest.approx(1e-110 / 1e-320, rel=1e-13)
    v = estimator_variance(d, [1e-10, 1.0], [[1e-100], [1.0]])
    p0 = float(d.p[0])  # (1 - p0)/p0 w^2 zeta^2 with (1 - p0) = 1 in floating point
    assert v == pytest.approx((1e-110 / p0) * 1e-110, rel=1e-12)


def test_eso_bound_scale_safety():
    # w_i^2 ||zeta_i||^2 overflows on the way, c_i = 2 does not
    np.testing.assert_allclose(bound_coefficients([0.5], [1e200], [[1e-200, 0.0]]), [2.0])
    # a huge coefficient with v_i = 0 contributes 0 (not inf * 0 = nan)
    bound = eso_bound([0.5, 0.5], [0.0, 1e-300], [1e200, 1.0], [[1e200], [1.0]])
    assert bound == pytest.approx(2e-300, rel=1e-14, abs=0)  # relative: one non-zero term
    assert eso_bound([0.5, 0.5], [0.5, 0.5], [1e200, 1e200], [[1e200], [1e200]]) == np.inf
    w, zeta = _instance(1)
    p, v = np.array([0.2, 0.4, 0.6, 0.8]), np.array([0.8, 0.6, 0.4, 0.2])
    for k in (-1000, -300, 300, 1000):
        kw, kz = k // 2, k - k // 2
        # relative: non-negative terms, scaled by 4**k (exact); abs=0 for the tiny scales
        assert eso_bound(p, v, np.ldexp(w, kw), np.ldexp(zeta, kz)) == pytest.approx(
            ldexp(eso_bound(p, v, w, zeta), 2 * k), rel=1e-13, abs=0)

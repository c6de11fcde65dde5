"""OCS closed form, AOCS and the improvement factor: degenerate and invalid input, properties."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory.sampling.aocs import (
    aocs_probabilities,
    client_message,
    master_scale,
    replay_master,
    secure_sum,
)
from fedtheory.sampling.improvement import (
    alpha_upper_bound,
    gamma_from_alpha,
    improvement_factor,
    relative_improvement_factor,
    uniform_variance,
)
from fedtheory.sampling.ocs import (
    closed_form_as_printed,
    independent_sampling_variance,
    ocs_threshold,
    optimal_probabilities,
    optimal_variance,
    validate_norms,
)
from fedtheory.symbolic.kkt import kkt_points_exact

from ._tolerance import assert_close_sum

# -------------------------------------------------------------------------------------------
# strategies
# -------------------------------------------------------------------------------------------

norm_values = st.one_of(
    st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_subnormal=False),
    st.sampled_from([0.0, 1.0, 2.0, 3.0, 1e-6]),  # ties and zeros
)


@st.composite
def instances(draw, max_n=40):
    u = np.array(draw(st.lists(norm_values, min_size=1, max_size=max_n)))
    n = u.size
    frac = draw(st.floats(min_value=1e-3, max_value=1.0))
    m = draw(st.one_of(st.just(float(n)), st.just(float(max(1, n // 2))),
                       st.just(max(frac * n, 1e-3))))
    return u, min(m, float(n))


def variance_terms(u, m):
    r"""Per row of ``u``: :math:`S_l^2/(m+l-n) + \sum_{i\le l} u_{(i)}^2`, the sum of the
    absolute values of the terms of :math:`V^\star = S_l^2/(m+l-n) - \sum_{i \le l}u_{(i)}^2`
    (``tests/_tolerance.py``), which the library evaluates as
    :math:`\sum_{i\le l} u_{(i)}(t - u_{(i)})`."""
    rows = np.atleast_2d(np.sort(np.asarray(u, dtype=float), axis=-1))
    out = np.empty(rows.shape[0])
    for r, row in enumerate(rows):
        ell = ocs_threshold(row, m)
        low = row[:ell]
        out[r] = low.sum() ** 2 / (m + ell - row.size) + np.sum(low**2)
    return out if np.ndim(u) == 2 else out[0]


@st.composite
def exact_instances(draw):
    u = draw(st.lists(st.integers(0, 12), min_size=1, max_size=6))
    n = len(u)
    m = draw(st.sampled_from([Fraction(k, 2) for k in range(1, 2 * n + 1)]))
    return u, m


# -------------------------------------------------------------------------------------------
# invalid input
# -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("norms, m, match", [
    ([1.0, -1.0], 1, r"norms must be non-negative, got -1\.0"),
    ([1.0, np.nan], 1, r"norms must be finite, got nan"),
    ([1.0, np.inf], 1, r"norms must be finite, got inf"),
    ([], 1, r"norms must be non-empty"),
    (np.ones((2, 2, 2)), 1, r"norms must be 1-D \(n,\) or 2-D \(rounds, n\), got shape"),
    (3.0, 1, r"norms must be 1-D"),
    (["a", "b"], 1, r"norms must be an array of real numbers"),
    ([1.0, 2.0], 0, r"m must satisfy 0 < m <= n = 2, got 0"),
    ([1.0, 2.0], -1.5, r"m must satisfy 0 < m <= n = 2, got -1.5"),
    ([1.0, 2.0], 2.5, r"m must satisfy 0 < m <= n = 2, got 2.5"),
    ([1.0, 2.0], float("nan"), r"m must satisfy 0 < m <= n = 2, got nan"),
    ([1.0, 2.0], "two", r"m must be a real number, got 'two'"),
    ([1.0, 2.0], True, r"m must be a real number, got True"),
])
def test_invalid_input_names_argument_and_value(norms, m, match):
    for func in (optimal_probabilities, ocs_threshold, optimal_variance, improvement_factor,
                 relative_improvement_factor, uniform_variance):
        with pytest.raises(ValueError, match=match):
            func(norms, m)
    with pytest.raises(ValueError, match=match):
        aocs_probabilities(norms, m)


def test_validate_norms_returns_floats():
    u, m = validate_norms([1, 2, 3], 2)
    assert u.dtype == float and m == 2.0


def test_aocs_invalid_parameters():
    with pytest.raises(ValueError, match=r"j_max must be a non-negative integer, got -1"):
        aocs_probabilities([1.0, 2.0], 1, j_max=-1)
    with pytest.raises(ValueError, match=r"j_max must be a non-negative integer, got 2.5"):
        aocs_probabilities([1.0, 2.0], 1, j_max=2.5)
    with pytest.raises(ValueError, match=r"rtol must be a non-negative number, got -1"):
        aocs_probabilities([1.0, 2.0], 1, rtol=-1)


def test_independent_sampling_variance_validates_p():
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\], got 1\.5"):
        independent_sampling_variance([1.0, 2.0], [0.5, 1.5])
    with pytest.raises(ValueError, match=r"p must have shape \(2,\)"):
        independent_sampling_variance([1.0, 2.0], [0.5])


def test_gamma_from_alpha_validates():
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\], got 1\.5"):
        gamma_from_alpha(1.5, 10, 2)
    with pytest.raises(ValueError, match=r"n must be a positive integer, got 0"):
        gamma_from_alpha(0.5, 0, 2)
    with pytest.raises(ValueError, match=r"m must satisfy 0 < m <= n = 10, got 11"):
        gamma_from_alpha(0.5, 10, 11)


def test_closed_form_as_printed_validates():
    with pytest.raises(ValueError, match=r"norms must be positive"):
        closed_form_as_printed([0, 1], 1)
    with pytest.raises(ValueError, match=r"ordering must be 'smallest' or 'largest', got 'up'"):
        closed_form_as_printed([1, 1], 1, "up")
    with pytest.raises(ValueError, match=r"m must satisfy 0 < m <= n = 2, got 3"):
        closed_form_as_printed([1, 1], 3)


# -------------------------------------------------------------------------------------------
# degenerate but valid input
# -------------------------------------------------------------------------------------------

def test_zero_norms_get_zero_never_nan():
    np.testing.assert_array_equal(optimal_probabilities([0.0, 0.0, 0.0], 2), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(optimal_probabilities([0.0, 3.0, 0.0, 1.0], 3),
                                  [0.0, 1.0, 0.0, 1.0])
    p = optimal_probabilities([0.0, 1.0, 2.0, 3.0], 1)
    assert p[0] == 0.0 and not np.isnan(p).any()
    # subnormal sums: no overflow into inf * 0
    assert not np.isnan(optimal_probabilities([0.0, 5e-324, 1.0], 2)).any()
    assert optimal_variance([0.0, 0.0], 1) == 0.0


def test_m_covering_nonzero_norms_gives_one():
    p = optimal_probabilities([5.0, 0.0, 1.0, 0.0, 2.0], 3.5)
    np.testing.assert_array_equal(p, [1.0, 0.0, 1.0, 0.0, 1.0])
    assert optimal_variance([5.0, 0.0, 1.0, 0.0, 2.0], 3.5) == 0.0


def test_m_equal_n_gives_all_ones():
    np.testing.assert_array_equal(optimal_probabilities([0.1] * 10, 10), np.ones(10))
    np.testing.assert_array_equal(optimal_probabilities([1.0, 5.0, 2.0], 3), np.ones(3))


def test_ties_get_equal_probabilities():
    p = optimal_probabilities([1.0, 1.0, 1.0, 9.0, 9.0], 3)
    assert p[0] == p[1] == p[2] and p[3] == p[4]
    np.testing.assert_allclose(p.sum(), 3.0)
    # ties across the would-be threshold: [2, 2, 2, 2] with m = 3 is uniform 3/4
    np.testing.assert_allclose(optimal_probabilities([2.0] * 4, 3), [0.75] * 4)


def test_fractional_m():
    p = optimal_probabilities([1.0, 1.0, 2.0], 1.5)
    np.testing.assert_allclose(p, [0.375, 0.375, 0.75])
    p = optimal_probabilities([1.0, 1.0, 100.0], 1.5)
    np.testing.assert_allclose(p, [0.25, 0.25, 1.0])


def test_threshold_of_known_instance():
    assert ocs_threshold([1.0, 1.0, 10.0], 2) == 2
    assert ocs_threshold([1.0, 2.0, 3.0], 1) == 3


def test_partition_and_sort_paths_agree():
    rng = np.random.default_rng(0)
    u = rng.lognormal(0, 3, (3, 400))
    for m in (1.0, 7.5, 49.0, 200.0):  # floor(m) + 1 small -> partition; large -> sort
        p = optimal_probabilities(u, m)
        for r in range(3):
            exact = closed_form_as_printed(list(u[r]), m, "smallest")[0]
            np.testing.assert_allclose(p[r], exact, rtol=1e-12, atol=1e-15)


def test_independent_sampling_variance_conventions():
    assert independent_sampling_variance([0.0, 2.0], [0.0, 1.0]) == 0.0
    assert independent_sampling_variance([1.0, 2.0], [0.0, 1.0]) == np.inf
    assert independent_sampling_variance([1.0, 2.0], [0.5, 1.0]) == 1.0


def test_printed_readings():
    # main text: eq. (7) is the optimum; appendix: p = m u / sum u, infeasible here
    assert closed_form_as_printed([1, 1, 10], 2, "smallest") == ([0.5, 0.5, 1], 2)
    p, ell = closed_form_as_printed([Fraction(1), Fraction(1), Fraction(3)], 2, "largest")
    assert ell == 3 and p == [Fraction(2, 5), Fraction(2, 5), Fraction(6, 5)]


# -------------------------------------------------------------------------------------------
# properties (hypothesis)
# -------------------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(instances())
def test_feasible_and_spends_the_budget(inst):
    u, m = inst
    p = optimal_probabilities(u, m)
    assert p.shape == u.shape and not np.isnan(p).any()
    assert np.all((p >= 0) & (p <= 1))
    assert np.all(p[u == 0] == 0)
    nonzero = int(np.sum(u > 0))
    if nonzero <= m:
        np.testing.assert_array_equal(p[u > 0], 1.0)
    else:
        np.testing.assert_allclose(p.sum(), m, rtol=1e-9)
    assert np.all(p[u > 0] > 0)
    # monotone in the norm
    order = np.argsort(u, kind="stable")
    assert np.all(np.diff(p[order]) >= -1e-12)


@settings(max_examples=150, deadline=None)
@given(instances(), st.floats(min_value=1e-3, max_value=1e3), st.randoms(use_true_random=False))
def test_invariant_under_permutation_and_scaling(inst, scale, rnd):
    u, m = inst
    p = optimal_probabilities(u, m)
    perm = np.array(rnd.sample(range(u.size), u.size))
    np.testing.assert_allclose(optimal_probabilities(u[perm], m), p[perm], rtol=0, atol=1e-12)
    np.testing.assert_allclose(optimal_probabilities(u * scale, m), p, rtol=0, atol=1e-9)


@settings(max_examples=100, deadline=None)
@given(exact_instances())
def test_optimal_against_exact_kkt_point(inst):
    u, m = inst
    if m > len(u):
        m = Fraction(len(u))
    pts = kkt_points_exact(u, m)
    assert len(pts) == 1
    np.testing.assert_allclose(optimal_probabilities(u, float(m)),
                               [float(x) for x in pts[0].p], rtol=0, atol=1e-12)
    np.testing.assert_allclose(optimal_variance(u, float(m)), float(pts[0].value),
                               rtol=1e-12, atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.lists(instances(max_n=15), min_size=1, max_size=5))
def test_vectorised_rounds_equal_single_rounds(batch):
    n = max(u.size for u, _ in batch)
    m = min(m for _, m in batch)
    rows = np.array([np.pad(u, (0, n - u.size)) for u, _ in batch])
    m = min(m, float(n))
    p = optimal_probabilities(rows, m)
    for r in range(rows.shape[0]):
        # bit-identical: a row is solved by the same sequential code (sort, cumsum, per-row
        # reductions) whether alone or with others
        np.testing.assert_array_equal(p[r], optimal_probabilities(rows[r], m))
    assert_close_sum(optimal_variance(rows, m), [optimal_variance(r, m) for r in rows],
                     variance_terms(rows, m))


@settings(max_examples=150, deadline=None)
@given(instances())
def test_optimal_variance_matches_eq6_at_the_optimum(inst):
    u, m = inst
    p = optimal_probabilities(u, m)
    v = optimal_variance(u, m)
    direct = independent_sampling_variance(u, p)
    assert v >= 0
    np.testing.assert_allclose(v, direct, rtol=1e-7, atol=1e-9 * float(np.max(u)) ** 2)
    assert v <= uniform_variance(u, m) * (1 + 1e-9) + 1e-12


# -------------------------------------------------------------------------------------------
# AOCS
# -------------------------------------------------------------------------------------------

def test_aocs_known_run():
    res = aocs_probabilities([1.0, 1.0, 10.0], 2, j_max=4)
    np.testing.assert_allclose(res.p, [0.5, 0.5, 1.0])
    assert res.iterations == 2 and res.converged
    # without truncation one iteration certifies the initial p
    res = aocs_probabilities([1.0, 2.0, 3.0], 1, j_max=4)
    assert res.iterations == 1 and res.converged


def test_aocs_budget_can_run_out():
    u = np.geomspace(1.0, 1e6, 30)
    res = aocs_probabilities(u, 10, j_max=1)
    assert not res.converged and res.iterations == 1
    assert res.p.sum() < 10
    res0 = aocs_probabilities(u, 10, j_max=0)
    assert res0.iterations == 0 and not res0.converged
    np.testing.assert_allclose(res0.p, np.minimum(10 * u / u.sum(), 1))


def test_aocs_zero_norms_no_nan():
    res = aocs_probabilities([0.0, 0.0, 0.0], 2)
    np.testing.assert_array_equal(res.p, 0.0)
    assert res.converged
    res = aocs_probabilities([0.0, 3.0, 0.0, 1.0], 3, j_max=10)
    np.testing.assert_array_equal(res.p, [0.0, 1.0, 0.0, 1.0])
    assert res.converged and not np.isnan(res.p).any()


@settings(max_examples=100, deadline=None)
@given(instances())
def test_aocs_reaches_closed_form_within_bound(inst):
    u, m = inst
    res = aocs_probabilities(u, m, j_max=u.size + 1)
    assert res.converged
    np.testing.assert_allclose(res.p, optimal_probabilities(u, m), rtol=0, atol=1e-9)
    assert res.iterations <= u.size - ocs_threshold(u, m) + 1


def test_aocs_master_sees_sums_only():
    rng = np.random.default_rng(3)
    u = rng.lognormal(0, 2, (5, 20))
    res = aocs_probabilities(u, 4, j_max=30)
    for entry in res.transcript:
        for val in entry["received"].values():
            assert np.shape(val) == (5,)
    replay = replay_master(res.transcript, 4.0, 20)
    for a, e in zip(replay, res.transcript[1:], strict=True):
        np.testing.assert_array_equal(a, e["broadcast"]["C"])
    rows = np.array([aocs_probabilities(r, 4, j_max=30).p for r in u])
    np.testing.assert_array_equal(res.p, rows)


def test_protocol_pieces():
    np.testing.assert_array_equal(secure_sum(client_message(np.array([0.5, 1.0, 0.25]))),
                                  [2.0, 0.75])
    assert master_scale(2.0, 0.0, 2.0, 3) == 1.0  # nothing left to rescale


# -------------------------------------------------------------------------------------------
# improvement factor
# -------------------------------------------------------------------------------------------

@settings(max_examples=200, deadline=None)
@given(instances())
def test_alpha_in_unit_interval_and_below_bound(inst):
    u, m = inst
    alpha = improvement_factor(u, m)
    assert 0.0 <= alpha <= 1.0
    if np.any(u > 0):
        assert alpha <= alpha_upper_bound(u) * (1 + 1e-9) + 1e-12
    gamma = relative_improvement_factor(u, m)
    assert m / u.size * (1 - 1e-12) <= gamma <= 1.0 + 1e-12


def test_alpha_zero_cases():
    assert improvement_factor([0.0, 0.0, 4.0, 1.0], 2) == 0.0  # at most m non-zero
    assert improvement_factor([0.0, 0.0, 0.0], 1) == 0.0  # all zero (convention)
    assert improvement_factor([1.0, 2.0, 3.0], 3) == 0.0  # m = n (convention)
    assert relative_improvement_factor([0.0, 0.0, 4.0, 1.0], 2) == 1.0


def test_alpha_equal_norms_is_one():
    assert improvement_factor([2.0] * 6, 2) == pytest.approx(1.0)
    assert alpha_upper_bound([2.0] * 6) == pytest.approx(1.0)
    assert gamma_from_alpha(1.0, 6, 2) == pytest.approx(2 / 6)


def test_alpha_vectorised():
    rng = np.random.default_rng(1)
    u = rng.lognormal(0, 1, (4, 9))
    np.testing.assert_allclose(improvement_factor(u, 3), [improvement_factor(r, 3) for r in u])
    np.testing.assert_allclose(gamma_from_alpha(np.array([0.0, 1.0]), 9, 3), [1.0, 1 / 3])


@pytest.mark.parametrize(
    ("norms", "m"),
    [([0.0, 1e-320, 1.0, 1.0], 3.0), ([0.0, 1e-320, 5e-324, 1.0], 2.5), ([0.0, 0.0, 1e-310], 1.0)],
)
def test_aocs_subnormal_norms_never_nan(norms, m):
    """A subnormal sum of probabilities overflows the master's C; zero norms must stay at
    p = 0 (no 0 * inf = NaN), and an overshooting saturation is never reported converged."""
    import warnings

    from fedtheory.sampling import aocs_probabilities, optimal_probabilities

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = aocs_probabilities(np.array(norms), m, j_max=10)
    assert np.all(np.isfinite(res.p)) and res.p[0] == 0.0
    if res.converged:
        assert res.p.sum() <= m * (1 + 1e-12)
        np.testing.assert_allclose(res.p, optimal_probabilities(norms, m), atol=1e-9)


def test_variance_at_optimum_with_a_tiny_probability():
    """Found by hypothesis: (1 - q)/q overflows for q ~ 5e-309; the variance must stay finite
    and equal the optimal value."""
    from fedtheory.sampling.ocs import independent_sampling_variance, optimal_variance

    u = [4.0, 2.225e-308]
    v = independent_sampling_variance(u, optimal_probabilities(u, 1))
    assert np.isfinite(v)
    # the value (about 1e-307) is the point: both formulas reduce it to 4 * 2.225e-308
    # relative: elementwise at its own tiny scale, no sum whose order could change
    np.testing.assert_allclose(v, optimal_variance(u, 1), rtol=1e-12)

"""fedtheory.stats computes intervals and test records; it never judges (no Evidence)."""

import numpy as np
import pytest

from fedtheory import stats


def test_stats_returns_records_not_evidence():
    import fedtheory.stats as mod

    assert not hasattr(mod, "Evidence")
    assert not any(name.startswith("check_") or name == "compare_paired" for name in dir(mod))
    ci = stats.mean_interval(np.arange(40.0), alpha=1e-3, sided="one")
    assert isinstance(ci, stats.MeanInterval) and ci.replicas == 40


def test_paired_t_test_matches_the_closed_form():
    rng = np.random.default_rng(5)
    a, b = rng.normal(1.0, 1.0, 12), rng.normal(0.0, 1.0, 12)
    r = stats.paired_t_test(a, b, alpha=0.01)
    d = a - b
    se = d.std(ddof=1) / np.sqrt(12)
    assert r.mean == pytest.approx(d.mean()) and r.stderr == pytest.approx(se)
    assert r.lower == pytest.approx(d.mean() - r.t * se)
    assert r.detectable_effect == pytest.approx(stats.detectable_effect(se, 12, 0.01))
    lower_better = stats.paired_t_test(a, b, alpha=0.01, higher_is_better=False)
    assert lower_better.mean == pytest.approx(-d.mean())


def test_paired_t_test_degenerate_and_bad_input():
    # no spread: the limits are the mean itself
    r = stats.paired_t_test([2.0, 3.0], [1.0, 2.0], alpha=0.05)
    assert (r.stderr, r.lower, r.upper) == (0.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="alpha"):
        stats.paired_t_test([1.0, 2.0], [1.0, 2.0], alpha=0.7)
    with pytest.raises(ValueError, match="shapes"):
        stats.paired_t_test([1.0, 2.0], [1.0], alpha=0.05)
    with pytest.raises(ValueError, match="at least 2 pairs"):
        stats.paired_t_test([1.0], [1.0], alpha=0.05)
    with pytest.raises(ValueError, match="finite"):
        stats.paired_t_test([1.0, np.inf], [1.0, 2.0], alpha=0.05)


def test_proportion_limits_exact_and_degenerate():
    r = stats.proportion_limits([0, 10], [10, 10], [0.0, 0.5], alpha=0.01)
    # nothing observed under a zero bound: ratio 0, not exceeded; all hits: lower limit > 0.5
    assert r.ratio[0] == 0.0 and not r.exceeded[0]
    assert r.exceeded[1] and r.tightest == 1
    np.testing.assert_allclose(r.lower[1], (0.01 / 2) ** (1 / 10))
    assert np.isinf(stats.proportion_limits([1], [10], [0.0]).ratio[0])
    with pytest.raises(ValueError, match="k <= n"):
        stats.proportion_limits([11], [10], [0.5])


def test_quantiles_equal_scipy_stats_bit_for_bit() -> None:
    """stats.py calls scipy.special's quantile functions (a lighter import than scipy.stats):
    the values are those of scipy.stats's norm, t and beta, bit for bit."""
    from scipy import stats as st

    from fedtheory import stats as fs

    rng = np.random.default_rng(7)
    n = rng.integers(2, 10**6, size=400)
    k = np.minimum(rng.integers(0, 10**6, size=400), n)
    alpha = 10.0 ** rng.uniform(-12, -0.5, size=400)
    for a in alpha[:20]:
        with np.errstate(invalid="ignore", divide="ignore"):
            lo = np.where(k == 0, 0.0, st.beta.ppf(a, k, n - k + 1))
            hi = np.where(k == n, 1.0, st.beta.isf(a, k + 1, n - k))
        assert np.array_equal(fs.clopper_pearson(k, n, float(a), "lower"), lo)
        assert np.array_equal(fs.clopper_pearson(k, n, float(a), "upper"), hi)
    for a, m in zip(alpha[:50], n[:50], strict=True):
        assert fs.z_quantile(float(a), "one") == float(st.norm.isf(a))
        se = 0.37
        want = float((st.t.isf(a, m - 1) + st.t.ppf(0.8, m - 1)) * se)
        assert fs.detectable_effect(se, int(m), float(a), 0.8) == want

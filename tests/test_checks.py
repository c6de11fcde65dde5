"""The statistics-to-verdict step (fedtheory.claimkit.checks) on the records of fedtheory.stats."""

import numpy as np
import pytest

from fedtheory import stats
from fedtheory.claims import checks


def test_identity_confirms_truth_and_refutes_shift():
    rng = np.random.default_rng(1)
    x = rng.exponential(2.0, size=(20_000, 3))
    assert checks.check_identity(x, [2.0, 2.0, 2.0]).passed is True
    ev = checks.check_identity(x, [2.0, 2.0, 2.2], counterexample={"seed": 1})
    assert ev.passed is False and ev.counterexample["seed"] == 1


def test_bounds_are_one_sided():
    rng = np.random.default_rng(2)
    x = rng.normal(1.0, 1.0, 50_000)
    assert checks.check_upper_bound(x, 1.0).passed is True  # tight bound: not refuted
    assert checks.check_upper_bound(x, 0.9).passed is False
    assert checks.check_lower_bound(x, 1.0).passed is True
    assert checks.check_lower_bound(x, 1.1).passed is False


def test_paired_comparison_three_outcomes():
    rng = np.random.default_rng(3)
    a = rng.normal(0, 1, 5000)
    assert checks.check_less(a - 1, a).passed is True
    assert checks.check_less(a + 1, a).passed is False
    assert checks.check_less(a + rng.normal(0, 1, 5000), a).passed is None


def test_false_alarm_rate_is_controlled():
    """At alpha = 1e-2 about 1% of true identities are refuted (binomial 1e-6 band)."""
    rng = np.random.default_rng(4)
    x = rng.normal(0.0, 1.0, size=(4000, 200))
    fails = sum(checks.check_identity(x[:, k], 0.0, alpha=1e-2).passed is False for k in range(200))
    assert fails <= 10


def test_bad_input():
    with pytest.raises(ValueError, match="alpha"):
        stats.z_quantile(1.5)
    with pytest.raises(ValueError, match="NaN"):
        stats.mean_interval(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="shape"):
        checks.check_close([1.0, 2.0], [1.0])


def test_failed_lower_bound_reports_values_with_their_own_signs():
    # a refuted lower bound: the counterexample holds the measured mean, its upper limit and
    # the stated bound as they are (not negated), and upper limit < bound
    rng = np.random.default_rng(4)
    x = rng.normal(1.0, 1.0, 50_000)
    ev = checks.check_lower_bound(x, 1.1, counterexample={"case": "demo"})
    ce = ev.counterexample
    assert ev.passed is False and ce["case"] == "demo"
    assert ce["bound"] == 1.1 and abs(ce["measured_mean"] - x.mean()) <= 1e-12
    assert x.mean() < ce["upper_limit"] < 1.1
    assert ev.measured == ce["measured_mean"] and ev.theoretical == 1.1


def test_proportion_upper_bound_false_alarm_power_and_degenerate_cases():
    """Clopper-Pearson is exact-conservative: at the bound itself (Bin(100, 0.1), bound 0.1)
    at most alpha = 5% of the runs are refuted (binomial 1e-6 band: <= 100 + 47 of 2000); a
    frequency far above the bound is refuted; zero bounds and zero hits are handled."""
    rng = np.random.default_rng(5)
    hits = rng.binomial(100, 0.1, size=2000)
    fails = sum(checks.check_proportion_upper_bound(h, 100, 0.1, 0.05).passed is False
                for h in hits)
    assert fails <= 147
    ev = checks.check_proportion_upper_bound([5, 40], [100, 100], [0.1, 0.1], 1e-3,
                                            instance={"case": "demo"})
    assert ev.passed is False and ev.counterexample["index"] == 1
    assert ev.counterexample["case"] == "demo" and ev.ratio == pytest.approx(4.0)
    assert checks.check_proportion_upper_bound(0, 50, 0.0).passed is True  # 0 <= 0
    assert checks.check_proportion_upper_bound(0, 50, 0.0).ratio == 0.0
    assert checks.check_proportion_upper_bound(50, 50, 0.0).passed is False
    with pytest.raises(ValueError, match="k <= n"):
        checks.check_proportion_upper_bound(3, 2, 0.5)


def test_an_exact_failure_refutes_beside_an_undecided_monte_carlo_part(monkeypatch):
    """fedavg.local_steps: too few replicas leave the Monte Carlo identity undecided; unequal
    exact values must still refute (an undecided part never hides an exact failure)."""
    import fedtheory.claims.fedavg.local_steps as mod
    from fedtheory.claims import Context

    grid = (2, 4)
    data = {"params": {"rounds_grid": grid, "local_steps": 3},
            "exact_fedavg": np.array([1.0, 0.5]), "exact_sgd": np.array([1.0, 0.6]),
            "fedavg": np.ones((2, 5)), "sgd": np.ones((2, 5)),  # 5 replicas: undecided
            "bits_fedavg": np.array([1.0, 1.0]), "bits_sgd": np.array([3.0, 3.0])}
    monkeypatch.setattr(mod, "local_steps_data", lambda ctx: ({}, data))
    ctx = Context(claim_id=mod.CLAIM.id, kind=mod.CLAIM.kind, stated=mod.CLAIM.stated)
    ev = mod._same_error_fewer_rounds(ctx)
    assert ev.passed is False and ev.undecided is None and ev.counterexample
    data["exact_sgd"] = data["exact_fedavg"].copy()  # equal exact values: undecided, as before
    assert mod._same_error_fewer_rounds(ctx).passed is None

"""Every "A beats B" goes through one decision (:mod:`fedtheory.claimkit.headroom`): its
evidence carries the outcome a referee words (better by the margin, below it, a tie,
significantly worse, not testable) and the headroom, how far the set-up's best reference is
from B (issue 29)."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.claimkit.headroom import OUTCOMES, best_reference, graded_compare
from fedtheory.claims.mifa._runs import BETTER_MARGIN_DECADES, better_than_all


def test_a_tie_is_worded_as_a_tie_with_its_headroom() -> None:
    base = np.random.default_rng(0).normal(size=40)
    a = base + 1e-3 * np.random.default_rng(1).normal(size=40)
    ev = graded_compare(a, base, 0.5, 1e-6, headroom=2.0, reference="Full")
    assert ev.passed is False and ev.data["outcome"] == "tie"
    assert "outcome: tie" in ev.detail and "worse" not in ev.detail.split("outcome:")[1]
    assert "Full beats B by 2" in ev.detail
    assert ev.tests[0]["outcome"] == "tie" and ev.tests[0]["headroom"] == 2.0
    assert ev.counterexample["outcome"] == "tie"
    # the same tie where the best reference has no room for the margin: not testable
    flat = graded_compare(a, base, 0.5, 1e-6, headroom=0.1, reference="Full")
    assert flat.passed is None and flat.grade == "not testable"
    # lower is better (rounds, a loss gap): the gain is B - A
    small = graded_compare(base, base + 0.2, 0.5, 1e-6, headroom=2.0, reference="Full",
                           higher_is_better=False)
    assert small.passed is True and small.grade == "consistent (low power)"
    assert small.data["outcome"] == "better, below the margin"


def test_best_reference_names_the_best_method_and_its_room_over_b() -> None:
    assert best_reference({"full": [3.0], "b": [1.0]}, "b") == ("full", 2.0)
    assert best_reference({"x": [0.5], "b": [1.0]}, "b", higher_is_better=False) == ("x", 0.5)
    with pytest.raises(ValueError, match="include B"):
        best_reference({"x": [1.0]}, "b")


def test_mifa_comparisons_report_headroom_and_word_a_tie() -> None:
    rng = np.random.default_rng(0)
    curve = 10.0 ** rng.normal(size=(30, 1)) * np.ones((1, 10))
    noise = 10.0 ** (1e-4 * rng.normal(size=(30, 10)))
    runs = {"umifam": curve * noise, "mifa": curve, "fedavg_is": curve * 100.0,
            "mifam": curve / 100.0}
    ev = better_than_all(runs, "umifam", ["mifa", "fedavg_is", "mifam"])
    by = {t["part"]: t for t in ev.tests}
    tie = by["umifam better than mifa"]
    # MIFAm, the panel's best rule, is 2 decades ahead of MIFA: U-MIFAm's tie with it counts
    assert tie["outcome"] == "tie" and tie["headroom"] == pytest.approx(2.0, abs=1e-3)
    assert by["umifam better than fedavg_is"]["outcome"] == "better by the margin"
    assert by["umifam better than mifam"]["outcome"] == "significantly worse"
    assert ev.passed is False
    # without MIFAm no rule beats MIFA by the margin: the same tie is not testable
    ev = better_than_all(runs, "umifam", ["mifa", "fedavg_is"])
    by = {t["part"]: t for t in ev.tests}
    assert by["umifam better than mifa"]["outcome"] == "not testable"
    assert abs(by["umifam better than mifa"]["headroom"]) < BETTER_MARGIN_DECADES
    assert by["umifam better than fedavg_is"]["headroom"] == pytest.approx(2.0, abs=1e-3)


def _routed(result, names: tuple[str, ...]) -> list[dict]:
    """The test records of the named checks of a verified claim, each "better" comparison."""
    checks = {c.name: c for c in result.checks}
    recs = [t for n in names for t in checks[n].tests
            if "better" in str(t.get("hypothesis", "")) or "better" in str(t.get("part", ""))]
    assert recs, names
    return recs


def _assert_graded(recs: list[dict]) -> None:
    for t in recs:
        assert t["outcome"] in OUTCOMES, t
        assert "headroom" in t and t["headroom"] is not None, t


@pytest.mark.xdist_group("ocs")
def test_ocs_comparisons_carry_outcome_and_headroom(verified) -> None:
    from fedtheory import get_claim

    res = verified.result(get_claim("ocs.experiment"))
    recs = [t for t in _routed(res, ("between_per_round", "best_per_bit"))
            if t.get("hypothesis") == "better"]
    assert len(recs) == 10
    _assert_graded(recs)


@pytest.mark.xdist_group("mifa")
def test_mifa_panels_carry_outcome_and_headroom(verified) -> None:
    from fedtheory import get_claim

    res = verified.result(get_claim("mifa.quadratic_experiment"))
    _assert_graded(_routed(res, ("umifam_best_p0.1",)))
    rates = verified.result(get_claim("mifa.rates_table"))
    scaling = [t for c in rates.checks for t in c.tests
               if "SAGA vs FedGD" in str(t.get("what", "")) or t.get("part") ==
               "SAGA's slope below FedGD's"]
    assert scaling
    _assert_graded(scaling)


@pytest.mark.xdist_group("fedau")
def test_fedau_comparisons_carry_outcome_and_headroom(verified) -> None:
    from fedtheory import get_claim

    res = verified.result(get_claim("fedau.participation_patterns"))
    recs = _routed(res, ("better_than_biased",))
    assert len(recs) >= 8
    _assert_graded(recs)
    check = {c.name: c for c in res.checks}["better_than_biased"]
    assert "headroom" in check.detail


@pytest.mark.xdist_group("fdms")
def test_fdms_friends_and_savings_carry_outcome_and_headroom(verified) -> None:
    from fedtheory import get_claim

    res = verified.result(get_claim("fdms.experiment"))
    checks = {c.name: c for c in res.checks}
    recs = [t for n in ("friends_discovered", "complexity_reduced") for t in checks[n].tests
            if t.get("hypothesis") == "better"]
    assert recs
    _assert_graded(recs)


@pytest.mark.xdist_group("fedavg")
def test_fedavg_lecture_comparisons_share_the_rule(verified) -> None:
    from fedtheory import get_claim

    abl = verified.result(get_claim("fedavg.heterogeneity_ablation"))
    _assert_graded(_routed(abl, ("heterogeneity_lowers_accuracy",)))
    tab = verified.result(get_claim("fedavg.scaffold_table"))
    recs = _routed(tab, ("drift_correction_non_iid", "iid_no_correction_needed"))
    assert len(recs) == 6
    _assert_graded(recs)

"""The experiment claims of ocs, mifa and fedavg: their set-up cards, and the combiners behind
their verdicts (paired tests with margins, levels summed, undecided never a refutation, the
tightness ratio kept)."""

import json

import numpy as np
import pytest

from fedtheory.claimkit.setup import REQUIRED_ASPECTS
from fedtheory.claims import Evidence, get_claim
from fedtheory.claims.fedavg._common import combine
from fedtheory.claims.mifa import _runs as mifa_runs
from fedtheory.claims.mifa._floors import floor_evidence
from fedtheory.experiments.mifa_experiments import DIVERGED_LOG10

MINE = ("ocs.experiment", "mifa.quadratic_experiment", "mifa.logistic_experiment",
        "fedavg.heterogeneity", "fedavg.partial_participation", "fedavg.local_steps")


@pytest.mark.parametrize("claim_id", MINE)
def test_card_is_complete_and_goes_into_the_report(claim_id):
    claim = get_claim(claim_id)
    card = claim.setup
    assert card is not None and not card.missing(), card and card.missing()
    assert claim.restatement.strip()
    for preset in ("quick", "full"):
        d = card.to_dict(preset)
        json.dumps(d)  # JSON-ready
        assert [r["aspect"] for r in d["rows"]][:len(REQUIRED_ASPECTS)] or d["rows"]
        for row in d["rows"]:
            assert row["run"], (claim_id, row["aspect"], preset)
            # a row that says what the paper states says where; a silent paper is a choice
            # of ours, and the card says why
            if row["paper"].startswith("not stated"):
                assert row["deviation"], (claim_id, row["aspect"])
            else:
                assert row["paper_where"].strip(), (claim_id, row["aspect"])


def test_the_quick_card_differs_from_the_full_one_where_the_preset_does():
    card = get_claim("ocs.experiment").setup
    assert "rounds" in card.deviations("quick") and "rounds" not in card.deviations("full")
    rows = {r["aspect"]: r for r in card.to_dict("full")["rows"]}
    assert rows["rounds"]["run"] == "151" and rows["rounds"]["paper"].endswith("rounds'")


# ------------------------------------------------------------------ mifa combiners


def _floor_out(fedavg_is, mifa, umifa, F=1.0):
    T = 5
    return {"floor": F, "p": 0.1, "eta": 0.02, "T": T, "R": len(fedavg_is),
            "fedavg_is": np.tile(fedavg_is, (T + 1, 1)), "mifa": np.tile(mifa, (T + 1, 1)),
            "umifa": np.tile(umifa, (T + 1, 1))}


def test_floor_evidence_sums_the_levels_and_names_the_diverged_rule():
    rng = np.random.default_rng(0)
    ok = floor_evidence(_floor_out(1.0 + 0.01 * rng.random(100), 1e-6 * rng.random(100),
                                   1e-6 * rng.random(100)), {"case": "ok"})
    assert ok.passed is True and ok.alpha == pytest.approx(3e-6)
    bad = floor_evidence(_floor_out(1.0 + 0.01 * rng.random(100), 1e-6 * rng.random(100),
                                    np.full(100, np.inf)), {"case": "bad"})
    assert bad.passed is False and bad.counterexample["case"] == "U-MIFA has no floor"
    assert bad.counterexample["rule"] == "U-MIFA"
    assert bad.counterexample["runs_overflowed"] == 100


def test_floor_evidence_keeps_an_undecided_part_undecided():
    """Too few replicas to decide is 'undecided', not a refutation (the old combiner's
    ``ok &= bool(None)`` made it one)."""
    rng = np.random.default_rng(1)
    few = floor_evidence(_floor_out(1.0 + 0.01 * rng.random(5), 1e-6 * rng.random(5),
                                    1e-6 * rng.random(5)), {})
    assert few.passed is None and few.undecided and "FedAvg-IS" in few.detail


def test_better_than_all_is_one_sided_with_a_margin_and_sums_levels():
    rng = np.random.default_rng(2)
    base = rng.normal(size=(24, 10))
    tie = 0.01 * rng.normal(size=(24, 1))
    runs = {"best": 10.0 ** (base - 1.0), "a": 10.0 ** base, "b": 10.0 ** (base - 1.0 + tie)}
    ev = mifa_runs.better_than_all(runs, "best", ["a", "b"])
    # 1 decade better than a; no better than b (a tie), but no rule beats b by the 0.1-decade
    # margin either (b ties with the best): that comparison has no headroom, not testable
    assert ev.data["best better than a"]["outcome"] == "better by the margin"
    assert ev.data["best better than b"]["outcome"] == "not testable"
    assert ev.data["best better than b"]["headroom"] < mifa_runs.BETTER_MARGIN_DECADES
    assert ev.data["best better than a"]["detectable_effect"] >= 0
    assert ev.passed is True and ev.alpha == pytest.approx(1e-6)  # the testable one counted
    # where another rule beats b by the margin, the same tie refutes, worded as a tie
    runs["c"] = 10.0 ** (base - 2.0)
    ev = mifa_runs.better_than_all(runs, "best", ["a", "b", "c"])
    assert ev.alpha == pytest.approx(3e-6)
    assert ev.data["best better than b"]["outcome"] == "tie"
    assert ev.passed is False and ev.counterexample["other"] in ("b", "c")
    # diverged runs count as the worst value, so the comparison stays finite
    runs["a"] = np.full((24, 10), np.inf)
    ev = mifa_runs.better_than_all(runs, "best", ["a"])
    assert ev.passed is True
    assert ev.data["best better than a"]["mean_gain"] == pytest.approx(
        DIVERGED_LOG10 - np.mean(base[:, -1:] - 1.0), rel=1e-9)


# ------------------------------------------------------------------ fedavg combiner


def test_fedavg_combine_keeps_tightness_undecided_and_names():
    a = Evidence(True, 1.0, 2.0, "a", alpha=1e-6, ratio=0.5, instance={"x": 1})
    b = Evidence(None, 3.0, 4.0, "b", alpha=2e-6, ratio=0.9, instance={"x": 2},
                 undecided="not resolved")
    ev = combine([a, b], "both", names=["first", "second"])
    assert ev.passed is None and "second: not resolved" in ev.undecided
    assert ev.ratio == 0.9 and ev.instance == {"case": "second", "x": 2}
    assert ev.alpha == pytest.approx(3e-6)
    assert ev.measured == [1.0, 3.0] and ev.theoretical == [2.0, 4.0]
    assert ev.detail.startswith("both | a; b")
    with pytest.raises(ValueError, match="names must label every part"):
        combine([a, b], "both", names=["only one"])


def test_seed_experiment_labels_its_sensitivity_runs():
    from fedtheory.experiments import mifa_experiments as mx

    prob = mx.quadratic_problem(seed=0, n=4, d=3)
    res = mx.seed_experiment(prob, p_values=(0.5,), rounds=4, replicas=2, betas=(0.9, 0.5),
                             full_memory_p=(0.5,))
    labels = set(res["runs"][0.5])
    assert {"fedavg_is", "mifa", "umifa", "mifam", "umifam", "mifam@0.5", "umifam@0.5",
            "mifa/full", "umifa/full", "mifam/full", "umifam/full"} == labels
    # a table filled at w_0 changes the first rounds of MIFA (it starts from the gradients)
    assert not np.array_equal(res["runs"][0.5]["mifa"], res["runs"][0.5]["mifa/full"])
    with pytest.raises(ValueError, match="memory_init must be"):
        mx.run_methods(prob, 0.5, rounds=2, replicas=1, eta=0.02, memory_init="half")

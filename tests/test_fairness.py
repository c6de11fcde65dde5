"""Verdicts the authors would accept: honest statistics, honest labels, set-up cards, errata
that quote the seed, mutants that strengthen the statement, no power table for a refutation."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from fedtheory import solver_log
from fedtheory.claimkit.checks import compare_paired
from fedtheory.claimkit.power import mutant_outcome, power
from fedtheory.claimkit.setup import REQUIRED_ASPECTS, SetupCard, SetupRow
from fedtheory.claimkit.stated import ERRATUM_KINDS, Erratum, Mutant, Stated
from fedtheory.claims import Claim, ClaimKind, Evidence, Verdict, all_claims, all_of
from fedtheory.stats import detectable_effect

ALL = all_claims()

#: The claims that judge an experiment (a simulation of the paper's set-up, methods compared):
#: each carries a set-up card.
EXPERIMENTS = ("fdms.experiment", "fedau.participation_patterns", "ocs.experiment",
               "mifa.quadratic_experiment", "mifa.logistic_experiment",
               "fedavg.heterogeneity", "fedavg.partial_participation", "fedavg.local_steps",
               "fedavg.heterogeneity_ablation", "fedavg.scaffold_table")


# ------------------------------------------------------------------ the registry holds to it


@pytest.mark.parametrize("claim_id", EXPERIMENTS)
def test_every_experiment_claim_has_a_complete_setup_card(claim_id):
    claim = next(c for c in ALL if c.id == claim_id)
    assert claim.setup is not None, f"{claim_id} has no set-up card"
    assert not claim.setup.missing(), f"{claim_id}: card misses {claim.setup.missing()}"
    for row in claim.setup.rows:
        assert row.paper_where.strip() or row.paper == "not stated", (
            f"{claim_id}: row {row.aspect!r} says what the paper states but not where")


def test_every_erratum_quotes_the_seed():
    for c in ALL:
        if c.erratum is None:
            continue
        e = c.erratum
        assert e.kind in ERRATUM_KINDS, c.id
        assert len(e.quote.strip()) >= 12, f"{c.id}: the erratum quotes no line of the seed"
        assert e.location.strip(), f"{c.id}: the erratum does not say where its quote sits"
        if e.kind == "omitted hypothesis":
            assert e.hypothesis, c.id
        if e.kind == "not reproduced":
            assert c.setup is not None, f"{c.id}: 'not reproduced' needs the set-up card"


def test_a_refuted_claim_carries_an_erratum_and_a_confirmed_one_none():
    for c in ALL:
        if c.expected is Verdict.REFUTED:
            assert c.erratum is not None, c.id
        else:
            assert c.erratum is None, f"{c.id} is not refuted but carries an erratum"


# ------------------------------------------------------------------ evidence kinds


def _toy_claim(kind: str, solve: bool) -> Claim:
    claim = Claim(id="toy.kind", family="toy", seed_ref="-", title="t", statement="s",
                  kind=ClaimKind.IDENTITY, expected="confirmed")

    @claim.check(kind, "one")
    def _one(ctx):
        if solve:
            solver_log.record("toy program", "CLARABEL", "optimal")
        return Evidence(True, 1, 1)

    return claim


def test_a_convex_check_that_solves_nothing_is_an_error():
    res = _toy_claim("convex", solve=False).verify()
    assert res.verdict is Verdict.ERROR
    assert "solved no convex program" in res.checks[0].detail
    ok = _toy_claim("convex", solve=True).verify()
    assert ok.verdict is Verdict.CONFIRMED
    assert ok.checks[0].solves == [{"problem": "toy program", "solver": "CLARABEL",
                                    "status": "optimal"}]
    assert _toy_claim("exact", solve=False).verify().verdict is Verdict.CONFIRMED


def test_the_solver_log_sees_a_real_cvxpy_solve():
    from fedtheory.convex.ocs import solve_ocs_convex

    with solver_log.recording() as log:
        solve_ocs_convex(np.array([1.0, 2.0, 3.0]), 2)
    assert [(e["problem"], e["status"]) for e in log] == [("ocs sampling probabilities",
                                                           "optimal")]


# ------------------------------------------------------------------ unproven is not false


def test_unproven_is_undecided_never_a_refutation():
    ev = Evidence.unproven("derived 2K e^{-x}", "stated K e^{-x}", "sharper than derived")
    assert ev.passed is None and ev.undecided == "unproven"
    combined = all_of([("a", Evidence(True, 1, 1)), ("b", ev)])
    assert combined.passed is None and "unproven" in combined.undecided
    claim = Claim(id="toy.unproven", family="toy", seed_ref="-", title="t", statement="s",
                  kind=ClaimKind.UPPER_BOUND, stated=Stated({"c": 1}))
    claim.check("symbolic", "derive")(lambda ctx: (ctx.const("c"), ev)[1])
    res = claim.verify()
    assert res.verdict is Verdict.INCONCLUSIVE
    assert res.checks[0].undecided == "unproven"
    # an unproven check catches no mutant
    out = mutant_outcome(Mutant("constant", "c", Fraction(7, 10)),
                         claim.verify(mutant=Mutant("constant", "c", Fraction(7, 10))))
    assert out["outcome"] == "missed"


# ------------------------------------------------------------------ mutants strengthen


def test_mutants_move_each_constant_the_way_that_strengthens_the_statement():
    s = Stated({"pref": 2, "rate": "1/2"}, stronger={"rate": "larger"})
    up = {m.target: m.scale for m in s.mutants("upper bound")}
    assert up == {"pref": Fraction(7, 10), "rate": Fraction(13, 10)}
    low = {m.target: m.scale for m in Stated({"c": 1}).mutants("lower bound")}
    assert low == {"c": Fraction(13, 10)}
    with pytest.raises(ValueError, match="stronger must map"):
        Stated({"c": 1}, stronger={"c": "up"})


def test_every_rate_or_exponent_declares_that_larger_is_stronger():
    """A constant multiplying an exponent's rate or a contraction makes an upper bound
    stronger when larger: the claims that have one declare it (a x 7/10 mutant would loosen
    the statement, and its 'still true' would say nothing)."""
    for c in ALL:
        if c.stated is None or c.kind is not ClaimKind.UPPER_BOUND:
            continue
        for name in c.stated.constants:
            if name in ("rate", "exponent", "bias_exponent", "contraction"):
                assert c.stated.stronger.get(name) == "larger", (c.id, name)


def test_a_refuted_claim_gets_no_power_table():
    claim = Claim(id="toy.refuted", family="toy", seed_ref="-", title="t", statement="s",
                  kind=ClaimKind.UPPER_BOUND, stated=Stated({"c": 1}))
    claim.check("exact", "fails")(lambda ctx: Evidence(False, 2, float(ctx.const("c")),
                                                       counterexample={"x": 1}))
    assert claim.verify().verdict is Verdict.REFUTED
    assert power(claim) == []


def test_a_catch_that_does_not_change_the_statement_says_so():
    """A check that fails under a mutant although the mutated part kept its value there (it
    never read it, or read a factor equal to 1 on the instance) is reported as such."""
    claim = Claim(id="toy.unchanged", family="toy", seed_ref="-", title="t", statement="s",
                  kind=ClaimKind.UPPER_BOUND,
                  stated=Stated({"c": 1, "unused": 1}, factors=("one_here",)))

    @claim.check("exact", "bound")
    def _bound(ctx):
        stated = float(ctx.const("c")) * ctx.factor("one_here", 1.0)
        # fails under any mutant: whatever the mutant changed, or not
        return Evidence(ctx.mutant is None, 1.0, stated, counterexample={"c": stated})

    out = {m["target"]: m for m in power(claim)}
    assert out["c"]["outcome"] == "caught" and not out["c"]["statement_unchanged"]
    assert out["unused"]["outcome"] == "caught" and out["unused"]["statement_unchanged"]
    assert out["one_here"]["outcome"] == "caught" and out["one_here"]["statement_unchanged"]


# ------------------------------------------------------------------ comparisons


def test_compare_paired_decides_each_hypothesis():
    rng = np.random.default_rng(3)
    base = rng.normal(size=30)
    noise = 0.05 * rng.normal(size=30)
    better = compare_paired(base + 1 + noise, base, "better", 0.2, alpha=1e-3)
    assert better.passed is True and better.data["lower"] > 0
    worse = compare_paired(base - 1 + noise, base, "better", 0.2, alpha=1e-3)
    assert worse.passed is False and worse.counterexample["upper"] < 0
    # lower is better: the sign flips
    assert compare_paired(base - 1 + noise, base, "better", 0.2, alpha=1e-3,
                          higher_is_better=False).passed is True
    assert compare_paired(base - 0.1 + noise, base, "not worse", 0.5, alpha=1e-3).passed
    assert compare_paired(base - 1 + noise, base, "not worse", 0.5,
                          alpha=1e-3).passed is False
    assert compare_paired(base + noise, base, "equivalent", 0.1, alpha=1e-3).passed
    assert compare_paired(base + 1 + noise, base, "equivalent", 0.1,
                          alpha=1e-3).passed is False


def test_no_significant_difference_at_low_power_is_inconclusive():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=5), rng.normal(size=5)
    ev = compare_paired(a, b, "better", 0.1, alpha=1e-3)
    assert ev.passed is None and ev.undecided is None or ev.passed is None
    assert ev.data["detectable_effect"] > 1.0   # five noisy pairs resolve nothing small
    assert "smallest detectable effect" in ev.detail


def test_compare_paired_degenerate_and_bad_input():
    same = np.ones(4)
    # identical runs: no advantage at all, shown exactly
    assert compare_paired(same, same, "better", 0.1).passed is False
    assert compare_paired(same, same, "equivalent", 0.1).passed is True
    with pytest.raises(ValueError, match="hypothesis must be one of"):
        compare_paired(same, same, "beats", 0.1)
    with pytest.raises(ValueError, match="margin must be"):
        compare_paired(same, same, "better", -1.0)
    with pytest.raises(ValueError, match="needs margin > 0"):
        compare_paired(same, same, "equivalent", 0.0)
    with pytest.raises(ValueError, match="same length"):
        compare_paired(same, np.ones(3), "better", 0.1)
    with pytest.raises(ValueError, match="at least 2 pairs"):
        compare_paired([1.0], [1.0], "better", 0.1)
    with pytest.raises(ValueError, match="must be finite"):
        compare_paired([1.0, np.nan], [1.0, 1.0], "better", 0.1)
    with pytest.raises(ValueError, match="n must be at least 2"):
        detectable_effect(1.0, 1, 0.05)


def test_detectable_effect_has_its_stated_power():
    """Simulated: a true gain equal to the detectable effect is found about 80% of the time."""
    rng = np.random.default_rng(5)
    n, alpha, reps = 12, 0.01, 4000
    mde = detectable_effect(1.0 / np.sqrt(n), n, alpha)
    d = rng.normal(mde, 1.0, size=(reps, n))
    se = d.std(axis=1, ddof=1) / np.sqrt(n)
    from scipy import stats as st

    hit = (d.mean(axis=1) - st.t.isf(alpha, n - 1) * se > 0).mean()
    assert abs(hit - 0.8) < 0.04, hit


# ------------------------------------------------------------------ set-up cards and errata


def test_setup_card_validation():
    row = SetupRow("data", paper="MNIST", paper_where="Sec. 6", run="digits",
                   deviation="no offline MNIST")
    card = SetupCard([row])
    assert card.missing() == [a for a in REQUIRED_ASPECTS if a != "data"]
    assert card.to_dict("full")["deviations"] == ["data"]
    with pytest.raises(ValueError, match="listed twice"):
        SetupCard([row, row])
    with pytest.raises(ValueError, match="for every preset"):
        SetupRow("rounds", paper="500", run={"quick": "60"})
    with pytest.raises(ValueError, match="unknown presets"):
        SetupRow("rounds", paper="500", run={"quick": "60", "full": "500", "huge": "1"})
    with pytest.raises(ValueError, match="what the paper states"):
        SetupRow("rounds", paper=" ", run="60")


def test_erratum_kinds_and_omitted_hypothesis():
    assert {"omitted hypothesis", "not reproduced"} <= set(ERRATUM_KINDS)
    with pytest.raises(ValueError, match="names the hypothesis"):
        Erratum("omitted hypothesis", "Lemma 2", quote="the lemma", location="Sec. 4")
    e = Erratum("omitted hypothesis", "Lemma 2", quote="the lemma", location="Sec. 4",
                hypothesis="delta_min > 0", relied_on="Clearly, ...")
    assert e.to_dict()["hypothesis"] == "delta_min > 0"


def test_comparison_records_reach_the_report():
    """Each comparison a check decided on is in the report: test, margin, limits, level,
    detectable effect, outcome; all_of names the part it came from."""
    rng = np.random.default_rng(6)
    base = rng.normal(size=12)

    claim = Claim(id="toy.tests", family="toy", seed_ref="-", title="t", statement="s",
                  kind=ClaimKind.QUALITATIVE)

    @claim.check("monte_carlo", "ordering")
    def _ordering(ctx):
        return all_of([
            ("alpha=0.3", compare_paired(base + 1, base, "better", 0.1, alpha=1e-3,
                                         what="accuracy A - B")),
            ("alpha=0.5", compare_paired(base, base, "equivalent", 0.1, alpha=1e-3)),
        ])

    (check,) = claim.verify().checks
    assert [t["part"] for t in check.tests] == ["alpha=0.3", "alpha=0.5"]
    first = check.tests[0]
    assert first["what"] == "accuracy A - B" and first["hypothesis"] == "better"
    assert first["margin"] == 0.1 and first["alpha"] == 1e-3 and first["pairs"] == 12
    assert first["detectable_effect"] > 0 and first["lower"] > 0
    assert check.to_dict()["tests"] == check.tests
    assert claim.verify().verdict is Verdict.CONFIRMED


def test_expected_full_pins_the_full_preset():
    claim = Claim(id="toy.presets", family="toy", seed_ref="-", title="t", statement="s",
                  kind=ClaimKind.QUALITATIVE, expected="inconclusive", expected_full="confirmed")
    assert claim.expected_at("quick") is Verdict.INCONCLUSIVE
    assert claim.expected_at("full") is Verdict.CONFIRMED
    with pytest.raises(ValueError, match="preset must be one of"):
        claim.expected_at("huge")
    with pytest.raises(ValueError, match="expected_full needs expected"):
        Claim(id="toy.x", family="toy", seed_ref="-", title="t", statement="s",
              kind=ClaimKind.QUALITATIVE, expected_full="confirmed")


def test_power_reruns_only_the_checks_a_mutant_can_change():
    """Under a mutant, a check that read neither the mutated part nor the mutant itself keeps
    its base result (it would give the same); the others run again."""
    calls = {"reads_c": 0, "reads_d": 0, "looks_at_mutant": 0}
    claim = Claim(id="toy.reuse", family="toy", seed_ref="-", title="t", statement="s",
                  kind=ClaimKind.UPPER_BOUND, stated=Stated({"c": 1, "d": 1}))

    @claim.check("exact", "reads_c")
    def _c(ctx):
        calls["reads_c"] += 1
        return Evidence(float(ctx.const("c")) >= 1, 1.0, float(ctx.const("c")),
                        counterexample={"c": float(ctx.const("c"))})

    @claim.check("exact", "reads_d")
    def _d(ctx):
        calls["reads_d"] += 1
        return Evidence(float(ctx.const("d")) >= 1, 1.0, float(ctx.const("d")),
                        counterexample={"d": float(ctx.const("d"))})

    @claim.check("exact", "looks_at_mutant")
    def _m(ctx):
        calls["looks_at_mutant"] += 1
        return Evidence(True, 0, 0) if ctx.mutant is None else Evidence(True, 0, 0)

    out = {m["target"]: m for m in power(claim)}
    assert out["c"]["by"] == ["reads_c"] and out["d"]["by"] == ["reads_d"]
    # the base run, then each check once per mutant that can change it
    assert calls == {"reads_c": 2, "reads_d": 2, "looks_at_mutant": 3}


def test_a_stated_part_read_by_shared_data_counts_for_every_check_that_uses_it():
    claim = Claim(id="toy.sharedreads", family="toy", seed_ref="-", title="t", statement="s",
                  kind=ClaimKind.UPPER_BOUND, stated=Stated({"c": 1}))

    def data(ctx):
        return ctx.shared("bound", lambda: float(ctx.const("c")))

    claim.check("exact", "first")(lambda ctx: Evidence(data(ctx) >= 1, 1.0, data(ctx),
                                                        counterexample={"c": data(ctx)}))
    claim.check("exact", "second")(lambda ctx: Evidence(data(ctx) >= 1, 1.0, data(ctx),
                                                         counterexample={"c": data(ctx)}))
    res = claim.verify()
    assert [c.reads for c in res.checks] == [["c"], ["c"]]
    (m,) = power(claim, base=res)
    assert m["outcome"] == "caught" and m["by"] == ["first", "second"]

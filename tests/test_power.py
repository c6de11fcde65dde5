"""The power machinery: stated sides, mutants, tightness, the --power outcomes and reports."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

from fedtheory.claimkit.power import mutant_outcome, power
from fedtheory.claimkit.stated import Erratum, Mutant, Stated
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, checks
from fedtheory.report import power_summary, write_markdown
from fedtheory.symbolic.inequality import prove_nonnegative


def _geometric_claim(with_proof: bool, ignore_constants: bool = False) -> Claim:
    r"""E[X] <= 1/p - 1 ... stated as E[X] <= c * (1/p) * (1 - p) + 0 for a geometric X
    (failures before the first success): the bound is attained, so every mutant that lowers it
    is false."""
    claim = Claim(
        id="demo.geometric", family="demo", seed_ref="test", title="geometric mean",
        statement=r"\mathbb E X \le c\,\frac{1-p}{p}", kind=ClaimKind.UPPER_BOUND,
        stated=Stated({"c": 1}, factors=("one_minus_p",)), expected="confirmed",
    )

    @claim.check("symbolic")
    def _exact(ctx: Context) -> Evidence:
        p = sp.Symbol("p", positive=True)
        c = 1 if ignore_constants else sp.Rational(ctx.const("c"))
        bound = c * ctx.factor("one_minus_p", 1 - p) / p
        slack = sp.simplify(bound - (1 - p) / p)
        res = prove_nonnegative(slack, {p: (0, 1)}, conditions=[p <= 1])
        return Evidence(res.holds, str(slack), ">= 0", res.method,
                        counterexample=None if res.holds else {"p": res.instance["p"]},
                        proof=res.proof if with_proof else None)

    @claim.check("monte_carlo")
    def _mc(ctx: Context) -> Evidence:
        p = 0.3
        x = ctx.rng("mc").geometric(p, 100_000) - 1.0
        c = 1.0 if ignore_constants else float(ctx.const("c"))
        bound = c * ctx.factor("one_minus_p", 1 - p) / p
        ev = ctx.check_mean(x, bound, counterexample={"p": p})
        ev.ratio, ev.instance = float(x.mean() / bound), {"p": p}
        return ev

    return claim


def test_stated_declares_exact_constants_and_rejects_bad_ones():
    s = Stated({"a": 0.5, "b": "2/3", "c": 3})
    assert s.constants == {"a": Fraction(1, 2), "b": Fraction(2, 3), "c": Fraction(3)}
    with pytest.raises(ValueError, match="constant 'x' must be rational"):
        Stated({"x": 0.1 + 0.2})
    with pytest.raises(ValueError, match="distinct"):
        Stated({"a": 1}, factors=("a",))
    with pytest.raises(ValueError, match="mutant kind"):
        Mutant("typo", "a")
    with pytest.raises(ValueError, match="erratum kind"):
        Erratum("oops", "eq. 1")


def test_mutants_follow_the_claim_kind():
    s = Stated({"a": 1}, factors=("f",), step="eta <= 1/L")
    up = s.mutants("upper bound")
    assert [m.name for m in up] == ["a x 7/10", "f dropped", "step condition relaxed x 2"]
    assert s.mutants("lower bound")[0].scale == Fraction(13, 10)


def test_context_reads_the_stated_side_and_its_mutants():
    stated = Stated({"a": "1/2"}, factors=("f",), step="eta <= 1/L")
    ctx = Context(claim_id="demo.x", stated=stated)
    assert ctx.const("a") == Fraction(1, 2) and ctx.factor("f", 3.0) == 3.0
    assert ctx.step_limit(0.25) == 0.25
    ctx = Context(claim_id="demo.x", stated=stated, mutant=Mutant("factor", "f"))
    assert ctx.factor("f", np.array([2.0, 3.0])).tolist() == [1.0, 1.0]
    ctx = Context(claim_id="demo.x", stated=stated, mutant=Mutant("step", "s", Fraction(2)))
    assert ctx.step_limit(0.25) == 0.5 and ctx.step_limit(Fraction(1, 4)) == Fraction(1, 2)
    with pytest.raises(ValueError, match="declares no constant 'b'"):
        ctx.const("b")
    with pytest.raises(ValueError, match="declares no factor 'g'"):
        ctx.factor("g", 1)
    with pytest.raises(ValueError, match="declares no step condition"):
        Context(claim_id="demo.y").step_limit(1.0)


def test_power_catches_the_mutants_of_an_attained_bound():
    claim = _geometric_claim(with_proof=True)
    res = claim.verify()
    assert res.verdict.value == "confirmed"
    assert res.tightness["check"] == "mc" and 0.95 < res.tightness["ratio"] < 1.05
    out = {m["mutant"]: m for m in power(claim)}
    assert out["c x 7/10"]["outcome"] == "caught"
    assert set(out["c x 7/10"]["by"]) == {"exact", "mc"}
    # dropping (1 - p) gives 1/p >= (1-p)/p: a true, looser bound, proved by sympy
    assert out["one_minus_p dropped"]["outcome"] == "still true"
    assert out["one_minus_p dropped"]["by"] == ["exact"]


def test_power_says_missed_when_nothing_proves_the_mutant():
    claim = _geometric_claim(with_proof=False)
    out = {m["mutant"]: m for m in power(claim)}
    assert out["one_minus_p dropped"]["outcome"] == "missed"
    # checks that ignore the declared constants miss the constant's mutant
    # (a proof that never read c proves the unmutated statement, not the mutant)
    blind = {m["mutant"]: m for m in power(_geometric_claim(True, ignore_constants=True))}
    assert blind["c x 7/10"]["outcome"] == "missed"
    assert blind["one_minus_p dropped"]["outcome"] == "still true"
    res = _geometric_claim(True).verify()
    assert [c.reads for c in res.checks] == [["c", "one_minus_p"], ["c", "one_minus_p"]]


def test_an_exact_search_is_weaker_evidence_than_a_proof(tmp_path):
    """A mutant no check refutes counts as "still true" on an exact search of the mutated
    statement (said so in the entry and the report) only when no proof read it, and only when
    the search read the mutated part."""
    claim = _geometric_claim(with_proof=False)

    @claim.check("symbolic", "search")
    def _search(ctx: Context) -> Evidence:
        c = ctx.const("c")
        worst = max(Fraction(1, 1) / c, Fraction(0))  # exact (1-p)/p over c (1-p)/p, any p
        return Evidence(worst <= 1, float(worst), "<= 1", "", ratio=float(worst),
                        search=f"every p in (0, 1): largest ratio {worst}")

    out = {m["mutant"]: m for m in power(claim)}
    # c x 7/10 is refuted by the Monte Carlo and the search: caught, not "still true"
    assert out["c x 7/10"]["outcome"] == "caught"
    # dropping (1 - p): nothing proves it, the search did not read the factor: missed
    assert out["one_minus_p dropped"]["outcome"] == "missed"
    loose = Claim(id="demo.loose", family="demo", seed_ref="test", title="loose",
                  statement="0 <= c", kind=ClaimKind.UPPER_BOUND,
                  stated=Stated({"c": 2}), expected="confirmed")

    @loose.check("symbolic", "search")
    def _loose(ctx: Context) -> Evidence:
        ratio = Fraction(1, 2) / ctx.const("c")
        return Evidence(True, float(ratio), "<= 1", "", ratio=float(ratio),
                        search=f"3 exact instances: largest ratio {ratio}")

    [entry] = power(loose)
    assert entry["outcome"] == "still true" and entry["by"] == ["search"]
    assert entry["instance"]["evidence"] == "exact search"
    assert "largest ratio 5/14" in entry["instance"]["search"]
    res = loose.verify()
    res.power = [entry]
    md = write_markdown(tmp_path, [res], 0, "quick").read_text()
    assert "| c x 7/10 | still true (exact search) | search |" in md


def test_mutant_outcome_error_and_report(tmp_path):
    claim = _geometric_claim(with_proof=True)

    @claim.check("symbolic", "broken")
    def _broken(ctx: Context) -> Evidence:
        if ctx.mutant is not None:
            raise RuntimeError("boom")
        return Evidence(True, 0, 0)

    entry = mutant_outcome(Mutant("factor", "one_minus_p"),
                           claim.verify(mutant=Mutant("factor", "one_minus_p")))
    assert entry["outcome"] == "error" and entry["by"] == ["broken"]
    res = claim.verify()
    res.power = power(claim)
    assert "demo.geometric: caught 1, error 1; NOT CAUGHT: one_minus_p dropped" in \
        power_summary([res])
    md = write_markdown(tmp_path, [res], 0, "quick").read_text()
    assert "**Power**" in md and "| c x 7/10 | caught | exact, mc |" in md
    assert "**Tightness.**" in md
    d = res.to_dict()
    assert d["tightness"]["ratio"] == res.tightness["ratio"] and len(d["power"]) == 2


def test_erratum_reaches_the_json_and_the_report(tmp_path):
    claim = _geometric_claim(with_proof=True)
    claim.erratum = Erratum("typo", "eq. (3): 1/p for p", quote="G = 1/p sum_i g_i",
                            location="eq. (3)", intended_holds=True)
    res = claim.verify()
    assert res.to_dict()["erratum"] == {"kind": "typo", "where": "eq. (3): 1/p for p",
                                         "quote": "G = 1/p sum_i g_i", "location": "eq. (3)",
                                         "hypothesis": None, "relied_on": None,
                                         "intended_holds": True}
    md = write_markdown(tmp_path, [res], 0, "quick").read_text()
    assert "**Erratum** (typo): eq. (3): 1/p for p; the intended statement holds." in md
    assert "> G = 1/p sum_i g_i" in md and "> — eq. (3)" in md  # the place, as the paper names it


def test_no_tightness_for_identities_and_lower_bound_counterexample_signs():
    claim = Claim(id="demo.id", family="demo", seed_ref="t", title="t", statement="x",
                  kind=ClaimKind.IDENTITY)

    @claim.check("monte_carlo")
    def _c(ctx: Context) -> Evidence:
        ev = checks.check_identity(np.ones(100), 1.0)
        ev.ratio = 1.0
        return ev

    assert claim.verify().tightness is None


def test_inequality_search_refutes_only_with_an_admissible_instance():
    x, y = sp.symbols("x y", positive=True)
    # x - y < 0 where y > x, but the side condition y <= x/2 leaves only positive values
    r = prove_nonnegative(x - y, {x: (0, 1), y: (0, 1)}, conditions=[y <= x / 2])
    assert r.status == "not violated" and r.smallest > 0 and r.points > 0
    r = prove_nonnegative(x - y, {x: (0, 1), y: (0, 1)})
    assert r.status == "violated" and sp.Rational(r.instance["x"]) < sp.Rational(r.instance["y"])
    with pytest.raises(ValueError, match="missing"):
        prove_nonnegative(x - y, {x: (0, 1)})


def test_search_helpers_and_inequality_reject_bad_input():
    from fedtheory.experiments.search import rationalize

    with pytest.raises(ValueError, match="max_denominator must be at least 1, got 0"):
        rationalize(0.5, 0)
    assert rationalize(np.float64(0.1), 10) == Fraction(1, 10)
    x, y = sp.symbols("x y", positive=True)
    with pytest.raises(ValueError, match=r"ranges\[x\] must have lo < hi"):
        prove_nonnegative(x, {x: (1, 1)})
    with pytest.raises(ValueError, match="conditions must be <, <=, > or >= relations"):
        prove_nonnegative(x - y, {x: (0, 1), y: (0, 1)}, conditions=[sp.Eq(x, y)])

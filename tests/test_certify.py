"""fedtheory.certify: performance estimation with exact certificates (``verify --certify``).

Cheap tests run by default (one small instance each); the full quick grids of the listed
claims are ``slow``. Pinned values are exact rationals: a certificate either holds exactly or
the test fails, so the tolerance is zero wherever the status is ``exact``.
"""

from __future__ import annotations

import json
from fractions import Fraction

import jsonschema
import pytest

from fedtheory.certify import (
    Built,
    OneStep,
    OutOfScope,
    Pep,
    Vec,
    bernoulli_patterns,
    certify,
    certify_instance,
    is_psd,
    solve_exact,
    uniform_patterns,
)
from fedtheory.certify.models import dropout_patterns, unit_vectors_summing_to_zero
from fedtheory.certify.onestep import refute
from fedtheory.certify.pepit_bridge import gradient_descent_pep, gradient_descent_rate
from fedtheory.claims.registry import get_claim

Fr = Fraction


def _gd_rate(L: Fraction, mu: Fraction, h: Fraction) -> Fraction:
    return max((1 - h * mu) ** 2, (1 - h * L) ** 2)


# -- the exact algebra ------------------------------------------------------------------------
def test_is_psd_and_degenerate_matrices() -> None:
    assert is_psd([]) and is_psd([[Fr(0)]]) and is_psd([[Fr(0), Fr(0)], [Fr(0), Fr(0)]])
    assert is_psd([[Fr(1), Fr(1)], [Fr(1), Fr(1)]])                  # rank one
    assert not is_psd([[Fr(0), Fr(1)], [Fr(1), Fr(0)]])              # zero pivot, row not 0
    assert not is_psd([[Fr(1), Fr(1)], [Fr(1), Fr(1, 2)]])
    with pytest.raises(ValueError, match="symmetric"):
        is_psd([[Fr(1), Fr(2)], [Fr(0), Fr(1)]])


def test_solve_exact() -> None:
    assert solve_exact([[Fr(1), Fr(1)], [Fr(1), Fr(-1)]], [Fr(3), Fr(1)]) == [2, 1]
    assert solve_exact([[Fr(1), Fr(1)], [Fr(2), Fr(2)]], [Fr(1), Fr(3)]) is None
    assert solve_exact([[Fr(1), Fr(1)]], [Fr(2)]) == [2, 0]          # free variable: 0


def test_patterns_are_exact_laws() -> None:
    pats = bernoulli_patterns([Fr(1, 3), Fr(1, 2), Fr(1)])
    assert sum(p for _, p in pats) == 1 and all(m[2] for m, _ in pats)  # p = 1: always in
    assert len(uniform_patterns(4, 2)) == 6
    assert sum(p for _, p in uniform_patterns(4, 2)) == 1
    assert uniform_patterns(3, 0) == [((False, False, False), Fr(1))]   # nobody: one pattern
    assert dropout_patterns(3, 1, "fixed") == [((True, True, False), Fr(1))]
    for n in (2, 3, 4):
        rows = unit_vectors_summing_to_zero(n)
        assert all(sum(v * v for v in r) == 1 for r in rows)
        assert all(sum(col) == 0 for col in zip(*rows, strict=True))


@pytest.mark.parametrize("bad, match", [
    (lambda: bernoulli_patterns([Fr(0)]), "p must be"),
    (lambda: bernoulli_patterns([0.5]), "exact"),
    (lambda: uniform_patterns(2, 3), "0 <= b <= n"),
    (lambda: dropout_patterns(3, 3, "fixed"), "1 <= D < K"),
    (lambda: dropout_patterns(3, 1, "random"), "law must be"),
    (lambda: Pep().function("convex", 1), "kind must be"),
    (lambda: Pep().function("smooth_strongly_convex", 1, 1), "mu must be"),
    (lambda: Pep().function("smooth", 0), "L must be"),
    (lambda: gradient_descent_rate(1.0, 2.0, 1.0), "need L > 0"),
])
def test_bad_input_names_the_argument(bad, match) -> None:
    with pytest.raises(ValueError, match=match):
        bad()


def test_pep_without_objective_is_refused() -> None:
    with pytest.raises(ValueError, match="no objective"):
        Pep().solve()


# -- PEPit's gradient-descent example, and the same problem certified -----------------------
def test_pepit_gradient_descent_example_reproduced() -> None:
    """PEPit (the pep extra) on its own example: max((1-h mu)^2, (1-h L)^2)."""
    pytest.importorskip("PEPit")
    for L, mu, h in ((1.0, 0.1, 1.5),):
        tau = float(_gd_rate(Fr(L), Fr(mu).limit_denominator(100), Fr(h)))
        assert gradient_descent_rate(L, mu, h) == pytest.approx(tau, rel=1e-6)


@pytest.mark.parametrize("L, mu, h", [(1, Fr(1, 10), 1), (1, Fr(1, 10), Fr(3, 2)),
                                      (2, Fr(1, 3), Fr(1, 2)), (1, 0, Fr(1, 2))])
def test_gradient_descent_certified_exactly(L, mu, h) -> None:
    step = OneStep("one gradient step", lambda q: Built(gradient_descent_pep(L, mu, h), Fr(1)),
                   lambda quick: [{}])
    row = certify_instance(step, {})
    assert row["status"] == "exact"
    assert Fr(row["lower"]) == Fr(row["upper"]) == _gd_rate(Fr(L), Fr(mu), Fr(h))


def test_a_wrong_dual_certifies_nothing() -> None:
    pep = gradient_descent_pep(1, Fr(1, 10), 1)
    n = len(pep.all_constraints())
    assert pep.check_dual([Fr(0)] * n) is None                     # S = -Q0: not PSD
    assert pep.check_dual([Fr(-1)] + [Fr(0)] * (n - 1)) is None     # negative multiplier
    assert pep.check_dual([Fr(1), Fr(2), Fr(2)]) == 1               # valid, loose: 1 >= 81/100


# -- the listed claims: one cheap instance each, pinned exactly ---------------------------
@pytest.mark.parametrize("claim_id, params, worst, stated", [
    ("mifa.error_floor_step", {"n": 2, "p": Fr(1, 2), "theta": Fr(1)}, Fr(1, 16), Fr(1, 8)),
    ("mifa.mifa_error", {"n": 3, "p": Fr(1, 10)}, Fr(7, 25), Fr(3, 10)),
    ("fdms.naive_error", {"K": 4, "D": 2, "law": "uniform"}, Fr(1, 8), Fr(1, 4)),
    ("fdms.friend_error", {"K": 4, "D": 2, "law": "uniform"}, Fr(19, 96), Fr(1, 4)),
])
def test_listed_claims_certified_values(claim_id, params, worst, stated) -> None:
    row = certify_instance(get_claim(claim_id).one_step, params)
    assert row["status"] == "exact"
    assert Fr(row["lower"]) == Fr(row["upper"]) == worst and Fr(row["stated"]) == stated


def test_tightened_constant_is_refuted_by_the_peps_own_instance() -> None:
    """The floor's 1/2 is 2x the worst case: 0.45 of the stated floor (below the certified
    worst case) is refuted by the certified instance, 0.55 is not."""
    step = get_claim("mifa.error_floor_step").one_step
    params = {"n": 2, "p": Fr(1, 4), "theta": Fr(1)}
    ce = refute(step, params, Fr(9, 10) / 2)
    assert ce is not None and Fr(ce["value"]) > Fr(ce["tightened"])
    assert ce["value"] == "3/64" and ce["tightened"] == str(Fr(3, 32) * Fr(9, 20))
    assert refute(step, params, Fr(11, 20)) is None


def test_out_of_scope_and_undescribed() -> None:
    out = certify(OutOfScope("an O(.) rate"))
    assert out["status"] == "out of scope" and out["reason"] == "an O(.) rate"
    assert certify(None)["status"] == "out of scope"
    for cid in ("ocs.fedavg_strongly_convex.corrected", "ocs.fedavg_nonconvex"):
        assert isinstance(get_claim(cid).one_step, OutOfScope), cid
    for cid in ("ocs.dsgd_strongly_convex", "ocs.dsgd_strongly_convex.corrected",
                "ocs.dsgd_nonconvex"):
        assert isinstance(get_claim(cid).one_step, OneStep), cid


# -- Theorem 13 of seed 002: contraction and additive constant apart -----------------------
_H = Fr(1, 2)


@pytest.mark.parametrize("claim_id, params, worst, stated", [
    # the contraction (Z = 0, sigma = 0) on Theorem 13's own class (f_i convex, f strongly
    # convex) is 5/8 (f_1 = 0, f_2 = x^2/2), not the subclass's 19/32; stated 1 - mu eta = 3/4
    ("ocs.dsgd_strongly_convex", {"part": "contraction", "w": (_H, _H), "m": 1, "M": 0,
                                  "mu": _H, "theta": 1}, Fr(5, 8), Fr(3, 4)),
    # the corrected Z part is twice the worst case
    ("ocs.dsgd_strongly_convex.corrected", {"part": "additive", "w": (_H, _H), "m": 1, "M": 1,
                                            "sigma2": 0, "mu": _H, "theta": 1},
     Fr(1, 6), Fr(1, 3)),
])
def test_theorem13_parts_certified(claim_id, params, worst, stated) -> None:
    row = certify_instance(get_claim(claim_id).one_step, params)
    assert row["status"] == "exact"
    assert Fr(row["lower"]) == Fr(row["upper"]) == worst and Fr(row["stated"]) == stated
    assert "counterexample" not in row


def test_theorem13_additive_attained_on_its_class() -> None:
    """Equal weights, sigma^2 = 1: the stated 3/4 is attained by an instance of the class
    (the lifted subclass's Gram matrix); the upper certificate lies within 1e-6 of it."""
    row = certify_instance(get_claim("ocs.dsgd_strongly_convex").one_step, {
        "part": "additive", "w": (_H, _H), "m": 1, "M": 0, "sigma2": 1, "mu": _H,
        "theta": 1})
    assert Fr(row["lower"]) == Fr(row["stated"]) == Fr(3, 4) <= Fr(row["upper"])
    assert float(Fr(row["upper"]) - Fr(3, 4)) < 1e-6 and "counterexample" not in row
    assert row["interpolation"] == "necessary" and "convex" in row["function_class"]


def test_theorem13_contraction_on_its_class_by_hand() -> None:
    """The instance of the issue, f_1 = x^2/2, f_2 = 0, w = (1/2, 1/2), eta = 1/2, r = 1,
    as explicit quadratics: in the class (f = x^2/4 is 1/2-strongly convex, f_2 is not),
    its value 5/8; the same quadratics are outside the subclass (every f_i strongly convex),
    whose worst case is 19/32."""
    from fedtheory.certify.models import dsgd_step

    pep = get_claim("ocs.dsgd_strongly_convex").one_step.build(
        {"part": "contraction", "w": (_H, _H), "m": 1, "M": 0, "mu": _H, "theta": 1}).pep
    assert pep.interpolation == "necessary"
    # leaves r, g1, g2; values f1(r), f1(0), f2(r), f2(0)
    V, F = [[Fr(1)], [Fr(1)], [Fr(0)]], [_H, Fr(0), Fr(0), Fr(0)]
    quad = [{"hessian": [[Fr(1)]], "linear": [Fr(0)], "constant": Fr(0)},
            {"hessian": [[Fr(0)]], "linear": [Fr(0)], "constant": Fr(0)}]
    assert pep.check_witness(V, F, quad) == Fr(5, 8)
    assert pep.check_witness(V, F, [quad[1], quad[0]]) is None   # gradients do not match
    both_flat = [quad[1], quad[1]]
    assert pep.check_witness([[Fr(1)], [Fr(0)], [Fr(0)]], [Fr(0)] * 4, both_flat) is None
    sub = Pep()                                   # the subclass the toolkit modelled before
    d = dsgd_step(sub, (_H, _H), (_H, _H), _H, 1, _H, 0, 0, heterogeneous=False)
    sub.constrain(d["r2"] - 1)
    sub.maximize(d["E_dist"])
    assert sub.interpolation == "exact"
    assert sub.check_witness(V, F, quad) is None            # f_2 = 0 is not in it
    assert abs(sub.solve().value - 19 / 32) < 1e-6


def test_theorem13_refuted_by_the_peps_own_instance() -> None:
    """w = (3/4, 1/4): an instance of the class (the Gram matrix of the lifted subclass
    f_1 2/3-strongly convex, f_2 convex, rounded) adds more than 1/2 beyond the contraction
    where (20) allows 1/2; the certificates re-checked without a solver."""
    from fedtheory.certify.recheck import recheck_row

    step = get_claim("ocs.dsgd_strongly_convex").one_step
    params = {"part": "additive", "w": (Fr(3, 4), Fr(1, 4)), "m": 1, "M": 0, "sigma2": 0,
              "mu": _H, "theta": 1}
    row = certify_instance(step, params)
    ce = row["counterexample"]
    assert Fr(ce["value"]) > Fr(ce["stated"]) == _H and row["ratio"] < 1
    assert abs(float(Fr(ce["value"])) - 0.562746) < 1e-5           # the lifted subclass
    assert Fr(row["upper"]) == Fr(432, 755)                        # 0.57219 on the class
    assert ce["instance"]["moduli"] == ["2/3", "0"]
    assert recheck_row(step, json.loads(json.dumps(row)))["status"] == "ok"
    # the corrected statement holds there
    fixed = certify_instance(get_claim("ocs.dsgd_strongly_convex.corrected").one_step, params)
    assert "counterexample" not in fixed and Fr(fixed["upper"]) < Fr(fixed["stated"])


@pytest.mark.parametrize("params, worst, stated", [
    ({"w": (_H, _H), "m": 1, "theta": 1}, Fr(1, 16), Fr(1, 16)),            # attained
    ({"w": (Fr(3, 4), Fr(1, 4)), "m": 1, "theta": 1}, Fr(1, 16), Fr(3, 32)),  # 3/2 loose
])
def test_theorem15_descent_certified(params, worst, stated) -> None:
    row = certify_instance(get_claim("ocs.dsgd_nonconvex").one_step, params)
    assert row["status"] == "exact"
    assert Fr(row["lower"]) == Fr(row["upper"]) == worst and Fr(row["stated"]) == stated


def test_theorem13_bad_part_is_refused() -> None:
    step = get_claim("ocs.dsgd_strongly_convex").one_step
    with pytest.raises(ValueError, match="part must be"):
        step.build({"part": "both", "w": (_H, _H), "m": 1, "M": 0, "mu": _H, "theta": 1})


def test_certified_entry_matches_the_schema() -> None:
    from fedtheory import schema

    out = certify(get_claim("mifa.mifa_error").one_step, quick=True)
    doc = json.loads(json.dumps(out))
    jsonschema.validate(doc, schema.CERTIFIED_SCHEMA)
    # exact at equal p; the unequal-p instance's worst case is irrational: a sandwich
    assert doc["status"] == "sandwich" and doc["closed_form"]["holds"]
    assert doc["derivation"] == "proof for every n"                      # every n at once
    assert doc["derived"][0]["n"] == "every n >= 1"
    assert Fr(doc["stated"]) / Fr(doc["upper"]) == Fr(20, 19)       # n = 2, p = 1/10
    from fedtheory.certify import STATUSES

    assert schema.CERTIFIED_STATUSES == STATUSES


def test_verify_certify_without_the_extra(monkeypatch, capsys) -> None:
    from fedtheory import cli
    from fedtheory.certify import pepit_bridge

    monkeypatch.setattr(pepit_bridge, "pepit_available", lambda: False)
    rc = cli.main(["verify", "mifa.mifa_error", "--quick", "--certify", "--no-record",
                   "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and 'fedtheory[pep]' in err[0]


def test_a_users_bound_certified() -> None:
    """A one-step description that is not a claim's: the IS estimate's variance."""
    def build(q):
        n, p = q["n"], q["p"]
        pep = Pep()
        g = [pep.vector() for _ in range(n)]
        pep.constrain(sum((gi.sq() for gi in g[1:]), g[0].sq()) / n - 1)
        gbar = sum(g[1:], g[0]) / n

        def err(mask):
            est = Vec()
            for m, gi in zip(mask, g, strict=True):
                if m:
                    est = est + gi / (n * p)
            return (est - gbar).sq()

        from fedtheory.certify.models import expectation

        pep.maximize(expectation(bernoulli_patterns([p] * n), err))
        return Built(pep, 1 / (n * p))

    out = certify(OneStep("IS variance", build, lambda quick: [{"n": 2, "p": Fr(1, 4)}]))
    assert out["status"] == "exact" and Fr(out["upper"]) == Fr(3, 2)


# -- the quick grids, as `verify --quick --certify` runs them ---------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("claim_id, status, ratio", [
    # exact at every equal-p instance; the one unequal-p instance is a sandwich (its worst
    # case is not rational: an eigenvalue of a cubic, resp. a rounded instance)
    ("mifa.error_floor_step", "sandwich", 2.0),
    ("mifa.mifa_error", "sandwich", 20 / 19),
    ("fdms.naive_error", "exact", 1.0),
    ("fdms.friend_error", "exact", 1.0),
])
def test_listed_claims_quick_grids(claim_id, status, ratio) -> None:
    out = certify(get_claim(claim_id).one_step, quick=True)
    assert out["status"] == status
    assert out["ratio"] == pytest.approx(ratio, rel=1e-12)   # the exact instances' minimum
    for r in out["instances"]:
        uniform = not isinstance(r["params"].get("p"), list)
        assert r["status"] == ("exact" if uniform else "sandwich"), r["params"]
        assert Fraction(r["lower"]) <= Fraction(r["upper"])
    if "closed_form" in out:
        assert out["closed_form"]["holds"]


@pytest.mark.slow
def test_theorem13_quick_grids() -> None:
    """Both statements' quick grids: the original refuted (stated < worst at the unequal
    weights, a rational counterexample), the corrected one holding everywhere; the
    contraction never tight, the OCS ratios certified one at a time."""
    orig = certify(get_claim("ocs.dsgd_strongly_convex").one_step, quick=True)
    corr = certify(get_claim("ocs.dsgd_strongly_convex.corrected").one_step, quick=True)
    assert "refuted" in orig and Fr(orig["counterexample"]["value"]) > Fr(
        orig["counterexample"]["stated"])
    assert "refuted" not in corr and corr["status"] in ("exact", "sandwich")
    for out in (orig, corr):
        assert out["by_part"]["contraction"]["statuses"] == ["exact"]
        assert out["by_part"]["contraction"]["ratio_min"] > 1.05
        for r in out["instances"]:
            if r["lower"] is not None and r["upper"] is not None:
                assert Fraction(r["lower"]) <= Fraction(r["upper"])
    assert any(r["params"].get("ratios") for r in orig["instances"])


@pytest.mark.slow
def test_theorem15_quick_grid() -> None:
    """Theorem 15 (noise-free): exact and attained at equal weights, never refuted; the OCS
    ratio rows certify an upper bound below the stated side."""
    out = certify(get_claim("ocs.dsgd_nonconvex").one_step, quick=True)
    assert "refuted" not in out
    for r in out["instances"]:
        assert r["upper"] is not None and Fraction(r["upper"]) <= Fraction(r["stated"])
        if not r["params"].get("ratios"):
            assert r["status"] == "exact"


def test_a_certified_entry_is_written_read_back_and_rendered(tmp_path) -> None:
    """A claim with a one-step description: the entry validates, reads back and renders."""
    from fedtheory.claims import Claim, ClaimKind, Evidence
    from fedtheory.report import load_report, result_from_dict, write_json, write_markdown
    from fedtheory.runner import certify_entry

    c = Claim(id="zz.certified", family="zz", seed_ref="001, test", title="t",
              statement="x <= 1", kind=ClaimKind.UPPER_BOUND,
              one_step=OneStep("one gradient step", lambda q: Built(
                  gradient_descent_pep(1, Fr(1, 10), 1), Fr(1)), lambda quick: [{}]))

    @c.check("exact")
    def fine(ctx):
        """Holds."""
        return Evidence(True, 1, 1, "ok")

    res = c.verify()
    res.certified = certify_entry(c.one_step, "quick")
    path = tmp_path / "r.json"
    write_json(path, [res], 0, "quick", {"time": "t"})
    back = result_from_dict(load_report(path)["claims"][0])
    assert back.certified["status"] == "exact" and back.certified == json.loads(
        json.dumps(res.certified))
    md = write_markdown(tmp_path, [back], 0, "quick")
    assert "**Certified** (performance estimation): **exact**" in md.read_text()
    # the class the certificate is for, in the entry, each instance and report.md
    assert back.certified["function_class"] == "f_1: L-smooth mu-strongly convex (L = 1, " \
        "mu = 1/10)" == back.certified["instances"][0]["function_class"]
    assert "**Function class**: f_1: L-smooth mu-strongly convex" in md.read_text()


# -- tight constants derived symbolically from the dual --------------------------------------
_P = [Fr(1, 10), Fr(1, 5), Fr(1, 3), Fr(1, 2), Fr(2, 3), Fr(3, 4), Fr(9, 10)]


def test_mifa_error_worst_case_derived_symbolically() -> None:
    """n = 2, symbolic p: the fitted least-weight multipliers certify (1-p)(2-p)/4 for every
    p in (0, 1) (values cancel, S PSD by its pivots), the instance attains it; a wrong
    closed form is said to differ."""
    import sympy as sp

    from fedtheory.certify.symbolic import derive_worst_case

    step = get_claim("mifa.mifa_error").one_step
    out = derive_worst_case(step, lambda q: {"n": 2, "p": q}, _P,
                            closed_form=lambda t: (1 - t) * (2 * (1 - t) + t) / 4)
    assert out["derivation"] == "symbolic" and out["closed_form_equal"] and out["attained"]
    t = sp.Symbol("p", positive=True)
    assert sp.simplify(sp.sympify(out["worst"], locals={"p": t}) - (1 - t) * (2 - t) / 4) == 0
    assert all(out["checks"].values())
    wrong = derive_worst_case(step, lambda q: {"n": 2, "p": q}, _P,
                              closed_form=lambda t: (1 - t) / 2)
    assert wrong["closed_form_equal"] is False
    with pytest.raises(ValueError, match="samples"):
        derive_worst_case(step, lambda q: {"n": 2, "p": q}, _P[:3])


@pytest.mark.slow
def test_error_floor_step_worst_case_derived_symbolically() -> None:
    """Every n, symbolic p, θ, L: worst case η^2 L c/4, certified by the client-symmetric
    dual at the stated and at the relaxed step; the entry says "proof for every n"."""
    out = certify(get_claim("mifa.error_floor_step").one_step, quick=True)
    assert out["derivation"] == "proof for every n"
    stated, relaxed = out["derived"]
    assert stated["closed_form_equal"] and stated["attained"] and relaxed["attained"]


def test_report_lines_show_a_refutation_and_a_derivation() -> None:
    """report.md names the PEP's refuting instance and the derived worst case."""
    from fedtheory.report import certified_lines

    entry = {"status": "sandwich", "ratio": 0.9, "at": {"w": ["3/4", "1/4"]}, "instances": [],
             "refuted": "stated < worst at 1 of 8 instances",
             "counterexample": {"params": {"w": ["3/4", "1/4"]}, "value": "6/11",
                                "stated": "1/2", "from": "the PEP's instance"},
             "derived": [{"derivation": "symbolic", "n": 2, "parameter": "p",
                          "worst": "(p - 2)*(p - 1)/4", "attained": True,
                          "closed_form_equal": True}]}
    text = "\n".join(certified_lines(entry))
    assert "Refuted by the certificate" in text and "6/11 against the stated 1/2" in text
    assert "Worst case derived** (symbolic, n = 2, in p): `(p - 2)*(p - 1)/4`" in text
    assert "Refuted" not in "\n".join(certified_lines({**entry, "refuted": None}))


# -- certificates in the report, re-checked without a solver ----------------------------------
def _gd_claim_report(tmp_path, claim_id="ocs.dsgd_strongly_convex"):
    """A report with one certified claim entry written by the toolkit's own writer."""
    from fedtheory.report import load_report, result_from_dict, write_json
    from fedtheory.runner import certify_entry

    claim = get_claim(claim_id)
    step = claim.one_step
    row = certify_instance(step, step.grid(True)[0])
    entry = certify_entry(OutOfScope("x"), "quick")
    entry.update({"status": row["status"], "instances": [row], "lower": row["lower"],
                  "upper": row["upper"], "ratio": row["ratio"], "solver": "CLARABEL"})
    res = claim.verify(preset="quick", only=(claim.checks[0].name,))
    res.certified = entry
    path = tmp_path / "r.json"
    write_json(path, [res], 0, "quick", {"time": "t"})
    return path, load_report(path), result_from_dict


def test_recheck_a_report_and_its_tampered_copies(tmp_path, capsys) -> None:
    from fedtheory import cli

    path, doc, _ = _gd_claim_report(tmp_path)
    assert cli.main(["recheck", "--from", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("ocs.dsgd_strongly_convex ") and ": ok: exact; upper 5/8" in out[0]
    assert "explicit quadratics in the class" in out[0] and "1 certificate(s) hold" in out[-1]

    def tampered(change):
        bad = json.loads(path.read_text())
        change(bad["claims"][0]["certified"]["instances"][0])
        p = tmp_path / "bad.json"
        p.write_text(json.dumps(bad))
        rc = cli.main(["recheck", "--from", str(p)])
        return rc, capsys.readouterr().out

    cert = lambda row: row["certificate"]  # noqa: E731
    cases = [
        (lambda r: cert(r)["upper"]["multipliers"][0].__setitem__(1, "1/1000"), "upper"),
        (lambda r: r.__setitem__("upper", "1/2"), "upper"),
        (lambda r: cert(r)["lower"]["vectors"][0].__setitem__(0, "2"), "lower"),
        (lambda r: cert(r)["lower"].__setitem__("functions", []), "functions"),
        (lambda r: cert(r)["lower"].pop("functions"), "explicit functions"),
        (lambda r: cert(r)["lower"]["values"].__setitem__(0, "9" * 5000), "fraction string"),
        (lambda r: cert(r)["lower"].__setitem__("vectors", [["1"] * 100] * 3), "1 to 64"),
        (lambda r: cert(r)["upper"]["multipliers"].append([10**9, "1"]), "constraint index"),
        (lambda r: r["params"].__setitem__("theta", "7"), "not one of the claim's"),
        (lambda r: r.__setitem__("status", "sandwich"), "status"),
        (lambda r: r.__setitem__("stated", "1"), "stated"),
        (lambda r: r.pop("certificate"), "no certificate"),
    ]
    for change, says in cases:
        rc, text = tampered(change)
        assert rc == 1 and "FAILED" in text and says in text, (says, text)
    p = tmp_path / "junk.json"
    p.write_text("{not json")
    assert cli.main(["recheck", "--from", str(p)]) == 2
    assert "fedtheory: error:" in capsys.readouterr().err


def test_solver_messages_on_fd2_go_to_the_log(capfd) -> None:
    """What a solver's native code prints on file descriptor 2 (Clarabel's Rust panics) is
    kept in the solve's log entry, not shown on the terminal."""
    import os

    from fedtheory import solver_log
    from fedtheory.certify.pep import _solve_quietly

    class Noisy:
        status = "optimal"

        def solve(self, solver):
            os.write(2, b"thread '<unnamed>' panicked: Eigval error\n")

    with solver_log.recording() as log:
        text = _solve_quietly(Noisy(), "CLARABEL")
        solver_log.record("p", "CLARABEL", "optimal", text)
    assert "Eigval error" in log[0]["messages"]
    assert "Eigval" not in capfd.readouterr().err
    with solver_log.recording() as outer:          # a recording inside another: kept in both
        with solver_log.recording() as inner:
            solver_log.record("q", "CLARABEL", "optimal")
    assert inner == outer == [{"problem": "q", "solver": "CLARABEL", "status": "optimal"}]
    # certify keeps its solves and the solver's messages in the entry
    step = OneStep("one gradient step", lambda q: Built(gradient_descent_pep(1, Fr(1, 10), 1),
                                                         Fr(1)), lambda quick: [{}])
    out = certify(step)
    assert out["solves"] >= 1 and out["solver_messages"] == []


# -- PEPit's own examples, with the toolkit's builder beside them ------------------------------
def _certified(pep):
    return certify_instance(OneStep("x", lambda q: Built(pep, Fr(1)), lambda quick: [{}]), {})


@pytest.mark.parametrize("L, h, n, worst", [(3, Fr(1, 3), 1, Fr(1, 2)), (1, 1, 3, Fr(1, 14))])
def test_pepit_gradient_descent_function_value(L, h, n, worst) -> None:
    """f(x_n) - f* <= L/(2(2nLh + 1)) ||x_0 - x*||^2: PEPit and the toolkit's builder agree,
    the toolkit's lower certificate is the closed form exactly."""
    pytest.importorskip("PEPit")
    from fedtheory.certify.pepit_bridge import gradient_descent_value_pep, pepit_examples

    row = _certified(gradient_descent_value_pep(L, h, n))
    assert Fr(row["lower"]) == worst == Fr(L) / (2 * (2 * n * L * h + 1))
    assert Fr(row["upper"]) >= worst and float(Fr(row["upper"]) - worst) < 1e-6
    pepit = pepit_examples("gradient_descent", L=L, gamma=float(h), n=n)
    assert pepit == pytest.approx(float(worst), rel=1e-6)


@pytest.mark.parametrize("args, pepit_args, closed", [
    ((1, Fr(1, 10), 1, 1, 4, 5), {"L": 1, "mu": 0.1, "gamma": 1, "v": 1, "R": 2, "n": 5},
     5.0416523),
    ((1, 0, Fr(2, 3), 3, 1, 2), {"L": 1, "mu": 0, "gamma": 2 / 3, "v": 3 ** 0.5, "R": 1, "n": 2},
     25 / 9),
])
def test_pepit_sgd(args, pepit_args, closed) -> None:
    """One SGD step (PEPit's sgd example): 5.0416523 (irrational: a sandwich around it) and
    25/9 (exact), PEPit and the builder within solver tolerance."""
    pytest.importorskip("PEPit")
    from fedtheory.certify.pepit_bridge import pepit_examples, sgd_pep

    row = _certified(sgd_pep(*args))
    lo, up = Fr(row["lower"]), Fr(row["upper"])
    assert float(lo) <= closed + 1e-7 and float(up) >= closed - 1e-7   # both sides of it
    assert float(up - lo) < 1e-4 * closed                                # the rounding's gap
    assert row["solver_value"] == pytest.approx(closed, rel=1e-6)
    if closed == 25 / 9:
        assert row["status"] == "exact" and lo == Fr(25, 9)
    assert pepit_examples("sgd", **pepit_args) == pytest.approx(closed, rel=1e-6)


@pytest.mark.parametrize("L, mu, h", [(1, Fr(1, 10), 1), (1, Fr(1, 10), Fr(3, 2)),
                                      (2, Fr(1, 3), Fr(1, 2)), (1, Fr(1, 4), Fr(7, 4))])
def test_pepit_gradient_descent_rate(L, mu, h) -> None:
    """The rate example: one gradient step on L-smooth mu-strongly convex functions contracts
    ||x - x*||^2 by max(|1 - hL|, |1 - h mu|)^2: the toolkit's exact certificate is the closed
    form, PEPit agrees within solver tolerance."""
    pytest.importorskip("PEPit")
    from fedtheory.certify.pepit_bridge import pepit_examples

    rate = max(abs(1 - h * L), abs(1 - h * mu)) ** 2
    row = _certified(gradient_descent_pep(L, mu, h))
    assert row["status"] == "exact" and Fr(row["lower"]) == Fr(row["upper"]) == rate
    assert pepit_examples("gradient_descent_strongly_convex", L=float(L), mu=float(mu),
                          gamma=float(h)) == pytest.approx(float(rate), rel=1e-6, abs=1e-8)


def test_recheck_refuses_a_flood_and_odd_shapes(tmp_path, capsys) -> None:
    """More instances than any claim has (and a beyond list of the wrong type): a FAILED
    line naming why (never a traceback), before any arithmetic."""
    from fedtheory.recheck import MAX_ROWS, recheck_report

    path, _, _ = _gd_claim_report(tmp_path)
    doc = json.loads(path.read_text())
    cert = doc["claims"][0]["certified"]
    cert["instances"] = cert["instances"] * (MAX_ROWS + 1)
    cert["beyond_stated_condition"] = 7
    p = tmp_path / "flood.json"
    p.write_text(json.dumps(doc))
    lines: list[str] = []
    assert recheck_report(p, lines.append) == 1
    assert "more than the 500 read for one claim" in lines[0] and len(lines) == 2


@pytest.mark.parametrize("n", [5, 6])
def test_error_floor_step_builder_at_any_n(n) -> None:
    """The full PEP's builder takes n >= 5: its explicit instance (the quadratic at its
    minimiser, n unit heterogeneity vectors summing to zero) attains η²Lc/4 exactly."""
    step = get_claim("mifa.error_floor_step").one_step
    built = step.build({"n": n, "p": Fr(1, 2), "theta": Fr(1)})
    c = Fr(2, n) * (2 - 1)
    eta = 1 / (1 + c)
    assert built.pep.check_primal(*built.instance) == eta**2 * c / 4 == built.stated / 2

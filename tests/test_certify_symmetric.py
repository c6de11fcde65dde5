"""fedtheory.certify.symmetric: client-symmetric certificates proved for every n, and the
symmetry-reduced PEP against the full one."""

from __future__ import annotations

from fractions import Fraction

import pytest
import sympy as sp

from fedtheory.certify.onestep import derivation_label
from fedtheory.certify.symmetric import (
    Form,
    SymmetricStep,
    client_sum,
    derive_multiplier,
    expect,
    nonnegative,
    prove,
    sq,
    symmetric_psd,
)
from fedtheory.certify.symmetric_pep import fedavg_is_model, mifa_error_model, solve_symmetric
from fedtheory.claims import get_claim

N, P = sp.Symbol("n", positive=True), sp.Symbol("p", positive=True)
L, TH = sp.Symbol("L", positive=True), sp.Symbol("theta", positive=True)
M, Q, S = (sp.Symbol(v, nonnegative=True) for v in ("m", "q", "s"))
POS = {N: 1 + M, P: 1 / (1 + Q), TH: 1 / (1 + S)}
MIFA_WORST = (1 - P) * ((1 - P) * N + P) / N**2


def _floor(eta: sp.Expr, mu: sp.Expr | None = None) -> SymmetricStep:
    return fedavg_is_model(N, P, eta, L, mu=eta**2 * L * (1 / P - 1) / (2 * N**2)
                           if mu is None else mu, kappa=(1, 0), positive=POS,
                           closed_form=eta**2 * L * (1 / P - 1) / (2 * N))


_C = 2 / N * (1 / P - 1)


def test_nonnegative_proves_and_refuses() -> None:
    assert nonnegative((1 - P) ** 2 * N, POS)
    assert nonnegative(1 - TH, POS) and not nonnegative(TH - sp.Rational(1, 2), POS)
    assert not nonnegative(P - sp.Rational(1, 2), POS)
    assert nonnegative((P - sp.Rational(1, 2)) ** 2, POS)      # an even power needs no sign


def test_expectation_of_a_pattern_form_by_its_moments() -> None:
    """E||Σ_{i∈S} e_i||^2 = (p - p^2) Σ||e_i||^2 + p^2 ||Σ e_i||^2 (Bernoulli(p))."""
    step = mifa_error_model(N, P)
    e = expect(step, sq({"σe": 1}), P, P**2)
    assert sp.simplify(e.A[0, 0] - (P - P**2)) == 0 and sp.simplify(e.B[0, 0] - P**2) == 0
    cross = expect(step, Form(q={("Σe", "σe"): 2}), P, P**2)   # 2<Σ, σ> -> 2p ||Σ||^2
    assert sp.simplify(cross.B[0, 0] - 2 * P) == 0 and cross.A[0, 0] == 0
    h = client_sum(step, sq({"e": 1, "Σe": -1 / N}))       # Σ_i ||e_i - ē||^2
    assert h.A[0, 0] == 1 and sp.simplify(h.B[0, 0] + 1 / N) == 0


def test_mifa_error_proved_for_every_n() -> None:
    """S = (1-p)^2 (nI - J)/n^2: A = (1-p)^2/n, M = 0; attained at equal e_i."""
    out = prove(mifa_error_model(N, P, lam=MIFA_WORST, positive=POS, closed_form=MIFA_WORST))
    assert out["derivation"] == "proof for every n" and all(out["checks"].values())
    assert out["closed_form_equal"] and out["attained"]
    assert out["pivots"]["M"] == ["0"]
    assert sp.simplify(sp.sympify(out["pivots"]["A"][0], locals={"n": N, "p": P})
                       - (1 - P) ** 2 / N) == 0


def test_mifa_error_proof_fails_with_a_smaller_multiplier() -> None:
    """A multiplier below the worst case cannot certify: S is not PSD (the proof can fail)."""
    out = prove(mifa_error_model(N, P, lam=(1 - P) ** 2 / N, positive=POS,
                                 closed_form=MIFA_WORST))
    assert out["derivation"] == "instances only" and not out["checks"]["symmetric_psd"]
    assert derivation_label([out]) == "instances only"


def test_error_floor_step_proved_for_every_n() -> None:
    """The referee's certificate: P(S) on each (0, S), η^2 L (1/p - 1)/(2n^2) on each
    heterogeneity constraint, residual Σ_S P(S)/(4L)||.||^2 + (η/2)(1 - ηL(1 + c/2))||∇f||^2;
    worst case η^2 L c/4 for every n, attained by (L/2)||x||^2 at its minimiser."""
    out = prove(_floor(TH / (L * (1 + _C))))
    assert out["derivation"] == "proof for every n" and all(out["checks"].values())
    assert out["closed_form_equal"] and out["attained"]
    assert out["pivots"]["local (per pattern, times P(S))"] == ["1/(4*L)"]
    # the mean block's pivot: (η/2)(1 - ηL(1 + c/2)), on ||∇f||^2 (= ||mean of the g_i||^2)
    eta = TH / (L * (1 + _C))
    piv = sp.sympify(out["pivots"]["M"][0], locals={"n": N, "p": P, "L": L, "theta": TH})
    assert sp.simplify(piv - eta / 2 * (1 - eta * L * (1 + _C / 2))) == 0


def test_error_floor_step_relaxed_step_and_its_limit() -> None:
    """Proved at ηL(1 + c/2) <= 1 as well; 10% beyond it the gradient pivot is negative for
    small θ-slack and the proof is refused."""
    assert prove(_floor(TH / (L * (1 + _C / 2))))["derivation"] == "proof for every n"
    out = prove(_floor(sp.Rational(11, 10) * TH / (L * (1 + _C / 2))))
    assert out["derivation"] == "instances only" and not out["checks"]["symmetric_psd"]


def test_wrong_heterogeneity_multiplier_is_refused() -> None:
    """Half the heterogeneity multiplier leaves the values cancelling but A < 0."""
    eta = TH / (L * (1 + _C))
    out = prove(_floor(eta, mu=eta**2 * L * (1 / P - 1) / (4 * N**2)))
    assert out["derivation"] == "instances only" and not out["checks"]["symmetric_psd"]


def test_symmetric_psd_reduction() -> None:
    """A form Σ||x_i||^2 - (1/n)||Σx||^2 >= 0 (A = 1, M = 0); -Σ||x_i||^2 is not PSD."""
    step = mifa_error_model(N, P)
    ok, piv = symmetric_psd(client_sum(step, sq({"e": 1, "Σe": -1 / N})), N, POS)
    assert ok and piv == {"A": ["1"], "M": ["0"]}
    assert not symmetric_psd(client_sum(step, -sq({"e": 1})), N, POS)[0]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_reduced_pep_agrees_with_the_full_pep(n: int) -> None:
    """The symmetry-reduced dual's value equals the full PEP's at n = 2, 3, 4."""
    p = sp.Rational(1, 4)
    full = get_claim("mifa.mifa_error").one_step.build({"n": n, "p": Fraction(1, 4)})
    red = solve_symmetric(mifa_error_model(N, p), n)
    assert red["value"] == pytest.approx(full.pep.solve().value, rel=1e-6, abs=1e-8)
    c = 2 / N * (1 / p - 1)
    fl = get_claim("mifa.error_floor_step").one_step.build(
        {"n": n, "p": Fraction(1, 4), "theta": Fraction(1)})
    red = solve_symmetric(fedavg_is_model(N, p, 1 / (1 + c), sp.Integer(1)), n)
    assert red["value"] == pytest.approx(fl.pep.solve().value, rel=1e-6, abs=1e-8)


def test_reduced_pep_runs_at_n8() -> None:
    """n = 8 (the full PEP's Gram matrix would be 264 x 264): the reduced value is the
    closed forms (1-p)((1-p)n + p)/n^2 and η^2 L c/4."""
    p, n = sp.Rational(1, 10), 8
    red = solve_symmetric(mifa_error_model(N, p), n)
    assert red["value"] == pytest.approx(float(MIFA_WORST.subs({N: n, P: p})), rel=1e-6)
    c = 2 / sp.Integer(n) * (1 / p - 1)
    red = solve_symmetric(fedavg_is_model(N, p, 1 / (1 + c), sp.Integer(1)), n)
    assert red["value"] == pytest.approx(float(c / (4 * (1 + c) ** 2)), rel=1e-6)


def test_derivation_label() -> None:
    proof, fit = {"derivation": "proof for every n"}, {"derivation": "symbolic"}
    assert derivation_label([proof, proof]) == "proof for every n"
    assert derivation_label([proof, fit]) == "symbolic"
    assert derivation_label([proof, {"derivation": "instances only"}]) == "instances only"
    assert derivation_label([{**proof, "closed_form_equal": False}]) == "instances only"
    assert derivation_label([]) == "instances only"


def test_multipliers_derived_not_restated() -> None:
    """The free multiplier is a root of a reduced pivot: (1-p)((1-p)n + p)/n^2 for MIFA's
    error (A's root p(1-p)/n^2 is tried first and fails), the referee's η^2 L (1/p - 1)/(2n^2)
    for the FedAvg-IS step."""
    lam, roots = derive_multiplier(lambda v: mifa_error_model(N, P, lam=v, positive=POS))
    assert sp.simplify(lam - MIFA_WORST) == 0 and len(roots) == 2
    eta = TH / (L * (1 + _C))
    mu, _ = derive_multiplier(lambda v: fedavg_is_model(N, P, eta, L, mu=v, kappa=(1, 0),
                                                        positive=POS))
    assert sp.simplify(mu - eta**2 * L * (1 / P - 1) / (2 * N**2)) == 0
    for cid in ("mifa.mifa_error", "mifa.error_floor_step"):
        derived = get_claim(cid).one_step.derive(True)
        assert all(d["multiplier_derived"] for d in derived)

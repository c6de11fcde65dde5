"""Claim-side glue shared by the claims of family ``fdms`` (not discovered: ``_`` prefix).

The substitution-error instances: client updates :math:`\\Delta^i = m_i + \\xi_i` with
independent Gaussian noise, :math:`\\mathbb E\\|\\xi_i\\|^2 = v_i`, so that Assumption 4 holds
with equality, :math:`\\sigma^2_{ij} = \\|m_i - m_j\\|^2 + v_i + v_j`; one engine round of a
registered rule on them gives samples of :math:`\\|e_t\\|^2`; exact values come from
enumerating the dropout law (:mod:`fedtheory.experiments.fdms_constants`), computed here a
second, independent way (noise moments, not the polarisation identity).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory import stats
from fedtheory.algorithms import get_rule
from fedtheory.certify import Built, OneStep, Pep
from fedtheory.certify.models import substitution_error
from fedtheory.claims import Evidence, all_of, checks
from fedtheory.experiments import fdms_constants as fc
from fedtheory.experiments.fdms_constants import noise_expectation
from fedtheory.symbolic.inequality import prove_nonnegative

__all__ = ["ALPHA", "direct_error2", "engine_error2", "exact_and_bound", "exact_error_evidence",
           "fmt", "noise_expectation", "proved_every_dropout", "rational_instance",
           "searched_evidence", "worst_mask"]

ALPHA = stats.DEFAULT_ALPHA


def fmt(a: Any) -> Any:
    """Rationals (array or scalar) as strings, ready for JSON."""
    if isinstance(a, np.ndarray):
        return np.vectorize(str, otypes=[object])(a).tolist()
    return str(a)


def direct_error2(means: np.ndarray, var: np.ndarray, law: list[tuple[np.ndarray, Any]],
                  friends: np.ndarray | None = None) -> Any:
    r"""Exact :math:`\mathbb E\|e_t\|^2` from the noise moments: for each mask,
    :math:`e_t = \sum_j c_j(m_j + \xi_j)`, so :math:`\mathbb E\|e_t\|^2 = \|\sum_j c_jm_j\|^2 +
    \sum_j c_j^2v_j` (independent of the polarisation identity used by
    :func:`~fedtheory.experiments.fdms_constants.exact_error2`)."""
    exact = np.asarray(means).dtype == object
    total: Any = Fraction(0) if exact else 0.0
    for mask, prob in law:
        src = None
        if friends is not None:
            allowed = ~mask[:, None] & mask[None, :] & friends
            src = np.where(allowed.any(axis=1), np.argmax(allowed, axis=1), -1)
        c = fc.error_coefficients(mask, fc.substitution_matrix(mask, src, exact=exact))
        mean_e = c @ means
        total += prob * ((mean_e * mean_e).sum() + (c * c * var).sum())
    return total


def worst_mask(means: np.ndarray, var: np.ndarray, n_drop: int,
               friends: np.ndarray | None = None) -> tuple[np.ndarray, Any]:
    """The mask with ``n_drop`` dropped clients (and, with ``friends``, Assumption 5) that
    maximises the exact error: the adversary's choice of which clients drop."""
    best, val = None, None
    for mask, _ in fc.dropout_law(len(var), Fraction(n_drop, len(var)), "max"):
        if friends is not None and not fc.assumption5_holds(mask, friends):
            continue
        v = direct_error2(means, var, [(mask, Fraction(1))], friends)
        if val is None or v > val:
            best, val = mask, v
    if best is None:
        raise ValueError(f"no mask with {n_drop} dropped clients meets Assumption 5")
    return best, val


def rational_instance(rng: np.random.Generator, n: int, d: int, scale: int = 4
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Random rational means ``(n, d)`` in [-scale, scale] (denominator 4) and variances
    ``(n,)`` in [0, 1] (denominator 8), as object arrays of Fractions."""
    m = rng.integers(-4 * scale, 4 * scale + 1, size=(n, d))
    v = rng.integers(0, 9, size=n)
    means = np.vectorize(lambda x: Fraction(int(x), 4), otypes=[object])(m)
    var = np.vectorize(lambda x: Fraction(int(x), 8), otypes=[object])(v)
    return means, var


def engine_error2(rule: str, means: np.ndarray, var: np.ndarray, masks: np.ndarray,
                  rng: np.random.Generator, **params: Any) -> np.ndarray:
    r"""One round of the registered ``rule`` on ``R`` replicas (``masks (R, n)``) with updates
    :math:`m_i + \xi_i`, :math:`\xi_i\sim\mathcal N(0, v_iI_d/d)`; returns the samples of
    :math:`\|e_t\|^2 = \|G_t - \frac1K\sum_i\Delta^i\|^2`, ``(R,)``."""
    m = np.asarray(means, dtype=float)
    v = np.asarray(var, dtype=float)
    R, (n, d) = masks.shape[0], m.shape
    U = m[None] + rng.standard_normal((R, n, d)) * np.sqrt(v / d)[None, :, None]
    r = get_rule(rule, **params)
    G, _ = r.step(r.init(R, n, d), masks, U)
    e = G - U.mean(axis=1)
    return np.einsum("rd,rd->r", e, e)


# -- the one-round substitution inequality, for `verify --certify` (performance estimation) --
def substitution_one_step(claim: Any, rule: str, sigma: str, substitute: str, pairs: str,
                          closed_form: Any, closed_form_text: str) -> OneStep:
    r"""The :class:`~fedtheory.certify.OneStep` of a substitution-error bound
    (``fdms.naive_error``, ``fdms.friend_error``): maximise :math:`E\|e_t\|^2` over the
    client updates (free vectors: their Gram matrix holds the second moments, so noise is
    covered) with ``pairs`` bounded by :math:`\sigma^2 = 1`, D of K clients dropped (uniformly
    at random, or a fixed set) and replaced by ``substitute`` under ``rule``; the stated side
    is :math:`\alpha^2\sigma^2` with :math:`\alpha = D/K`. A fixed set's worst case is built
    directly: the active clients at 0, the dropped ones at 1."""
    def build(params: dict[str, Any]) -> Built:
        assert claim.stated is not None
        K, D, law = params["K"], params["D"], params["law"]
        pep = Pep()
        pep.maximize(substitution_error(pep, K, D, law, rule))
        inst = ([[Fraction(int(j >= K - D))] for j in range(K)], []) if law == "fixed" else None
        return Built(pep, claim.stated.constants["bound"] * Fraction(D, K) ** 2, inst)

    return OneStep(
        description=(f"one aggregation with D of K clients dropped and replaced by {substitute}; "
                     "client updates free vectors (their Gram matrix = second moments, so "
                     f"noise is covered) with {pairs} <= {sigma}^2 = 1; laws: D of K uniformly "
                     "at random, and a fixed dropped set; metric E||e_t||^2 against "
                     f"α^2 {sigma}^2, α = D/K"),
        build=build,
        grid=lambda quick: [{"K": K, "D": D, "law": law}
                            for K in ((2, 3, 4) if quick else (2, 3, 4, 5))
                            for D in range(1, K) for law in ("fixed", "uniform")],
        closed_form=closed_form, closed_form_text=closed_form_text)


def proved_every_dropout(slack: Callable[[int, int], Any], ranges: dict[Any, tuple[Any, Any]],
                         k_max: int, meaning: dict[str, str] | None = None) -> Evidence:
    """``slack(K, D) >= 0`` (bound minus exact, a sympy expression) for ``K = 2..k_max`` and
    every number ``D = 1..K-1`` of dropped clients: proved by sign (non-negative terms), or the
    first violation found exactly (``meaning`` joins its counterexample)."""
    proofs, ce = [], None
    for K in range(2, k_max + 1):
        for D in range(1, K):
            res = prove_nonnegative(slack(K, D), ranges, random_points=50)
            if res.status == "violated":
                ce = {"K": K, "D": D, "instance": res.instance, "slack": str(res.value),
                      **(meaning or {})}
                break
            proofs.append(res.status == "proved")
        if ce:
            break
    ok = ce is None
    proved = ok and all(proofs)
    return Evidence(ok, "bound - exact", ">= 0",
                    f"K = 2..{k_max}, all D: {'proved (non-negative terms)' if proved else ok}",
                    counterexample=ce,
                    proof=f"bound - exact is a sum of non-negative terms (sympy), K = 2..{k_max}, "
                          "all D" if proved else None)


def exact_error_evidence(direct: Any, polar: Any, bound: Any, inst: dict[str, Any],
                         note: str = "") -> Evidence:
    """An exact instance: ``E||e_t||^2`` (``direct``, with its ``polar``-isation value) against
    the stated ``bound``, with the ratio (0 for a zero bound) and, when above, the instance
    with both values as the counterexample."""
    ok = direct <= bound
    ratio = direct / bound if bound else Fraction(0)
    return Evidence(
        ok, str(direct), str(bound),
        f"E = {direct} (polarisation {polar}), bound {bound}, ratio {float(ratio):.4f}{note}",
        counterexample=None if ok else {**inst, "E": str(direct), "bound": str(bound)},
        ratio=float(ratio), instance=inst)


def searched_evidence(best: dict[str, Any], alpha: Any, means: np.ndarray, var: np.ndarray,
                      mask: np.ndarray, val: Any, bound: Any, search: str) -> Evidence:
    """The exact re-check of an adversarial search's best point (``best`` from
    :func:`fedtheory.experiments.search.maximize`): ``val`` against ``bound`` at the
    rationalised instance (``alpha``, ``means``, ``var``, the dropped ``mask``)."""
    ok = val <= bound
    r = Fraction(val) / bound if bound else Fraction(0)
    inst = {"alpha": str(alpha), "means": fmt(means), "var": fmt(var),
            "mask": mask.astype(int).tolist()}
    return Evidence(ok, str(val), str(bound),
                    f"best of {best['evaluations']} evaluations: float ratio "
                    f"{best['value']:.5f}; exact re-check: E = {val}, bound {bound}, ratio "
                    f"{float(r):.5f}", counterexample=None if ok else inst, ratio=float(r),
                    instance=inst, search=search)


def exact_and_bound(ident: Evidence, err: np.ndarray, bound: float,
                    inst: dict[str, Any]) -> Evidence:
    """A Monte Carlo instance whose exact value is known: ``ident`` (the two-sided check of it)
    and the one-sided check of ``bound`` on the same samples ``err``, with the bound's
    tightness at ``inst``."""
    up = checks.check_bound(err, bound, "upper", inst, what="E||e_t||^2 (bound)",
                            counterexample=inst)
    ev = all_of([("exact", ident), ("bound", up)])
    ev.ratio, ev.instance = up.ratio, up.instance
    return ev

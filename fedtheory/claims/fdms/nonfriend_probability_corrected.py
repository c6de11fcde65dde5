"""``fdms.nonfriend_probability.corrected`` (seed 004, Lemma 2 with its missing hypothesis): if
delta_min > 0 and the dropout process is independent of the updates, FL-FDMS gives a dropped
client a non-friend in round t with probability at most 2K exp(-beta delta_min^2 t / 2)."""

from __future__ import annotations

import numpy as np
from scipy import stats as _st

from fedtheory.claims import Claim, ClaimKind, Context, Evidence
from fedtheory.experiments import fdms_friends as ff
from fedtheory.experiments.search import maximize, rationalize
from fedtheory.theory import fdms as th

from ._friends import lemma_bound, lemma_symbolic
from .nonfriend_probability import (
    DERIVATION,
    STATED,
    simulated,
    simulations_data,
    tight_exact,
)


def search(ctx: Context) -> Evidence:
    """Adversarial search over the tight family (q in [0.55, 0.98], beta = 1, t in [1, 300])
    for the largest P(non-friend) / bound where the bound is below 1: a grid, then
    :func:`maximize` in q at the best t, then an exact re-check at the rationalised q."""
    ts = np.arange(1, 301)

    def ratios(q: float) -> np.ndarray:  # where the bound is informative (< 1) only
        b = lemma_bound(ctx, ts.astype(float), 3, 1.0, 2 * q - 1)
        return np.where(b < 1, _st.binom.cdf(ts // 2, ts, q) / b, 0.0)

    grid = np.linspace(0.55, 0.98, 44)
    table = np.array([ratios(q) for q in grid])
    i, j = np.unravel_index(np.argmax(table), table.shape)
    best = maximize(lambda x: float(ratios(float(x[0]))[j]), [(0.55, 0.98)], ctx.rng("search"),
                    starts=ctx.size(quick=2, full=8), maxiter=40)
    if float(table.max()) >= best["value"]:
        best["x"], best["value"] = np.array([grid[i]]), float(table.max())
    t = int(ts[j])
    q = rationalize(best["x"][0], 100)
    inst = ff.lemma_tight_instance(q)
    fr = th.friendship(inst["model"].sigma2(), inst["sigma_F2"] * (1 + 1e-12))
    delta = th.gap_constants(inst["model"].mu(), fr)["delta_min"]
    exact = ff.lemma_tight_probability(q, t)
    bound = float(lemma_bound(ctx, float(t), 3, 1.0, delta))
    ok = float(exact) <= bound
    point = {"instance": f"lemma_tight_instance({q})", "t": t, "beta": 1.0, "K": 3,
             "delta_min": delta}
    return Evidence(ok, float(exact), bound,
                    f"grid {grid.size} x {ts.size}, then q refined ({best['evaluations']} "
                    f"evaluations): largest ratio "
                    f"{best['value']:.4g}; exact re-check at q = {q}, t = {t}: P = "
                    f"{float(exact):.4g} vs bound {bound:.4g}", ratio=float(exact) / bound,
                    instance=point, counterexample=None if ok else {
                        **point, "exact": str(exact), "bound": bound},
                    search="tight family, q in [0.55, 0.98], t <= 300, exact re-check")


CLAIM = Claim(
    datasets=(simulations_data,),
    id="fdms.nonfriend_probability.corrected", family="fdms",
    seed_ref="004, Lemma 2 (with delta_min > 0)",
    title="Lemma 2 with delta_min > 0: P(non-friend in round t) <= 2K exp(-beta delta^2 t/2)",
    statement=(r"\delta_{\min} > 0,\ \mathcal S_t\ \text{independent of the updates}"
               r"\ \Longrightarrow\ P\big(\phi_t(k)\notin\mathcal B_k\big) \le (K-1)e^{-\beta"
               r"\delta_{\min}^2t/2} \le 2K\exp\!\Big(-\frac{\beta\delta_{\min}^2t}{2}\Big)"),
    kind=ClaimKind.UPPER_BOUND, expected="confirmed", stated=STATED, derivation=DERIVATION,
    finding=("Holds with the hypothesis delta_min > 0 (and Assumption 5, and dropout "
             "independent of the updates); the Hoeffding + union argument even gives "
             "(K-1) for 2K. On the tightest instance (Hoeffding's exponent attained) the "
             "exact probability stays below 0.1 of the bound: the 2K and the split of "
             "delta_min into two halves cost a constant factor."),
)

CLAIM.check("symbolic", "hoeffding_union")(lemma_symbolic)
CLAIM.check("exact", "tight_exact")(tight_exact)
CLAIM.check("monte_carlo", "simulated")(simulated)
CLAIM.check("exact", "search")(search)

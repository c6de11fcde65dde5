"""``fdms.dropout_is_substitution`` (seed 004, eq. 5): averaging the active clients equals
substituting each dropped client's update with the mean of the active ones."""

from __future__ import annotations

import numpy as np
import sympy as sp

from fedtheory.algorithms import get_rule
from fedtheory.claimkit.stated import Stated
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, all_of, checks
from fedtheory.participation import DropoutParticipation

AVG = "1/S_t (average of the active)"
FULL = "1/K (substituted full average)"

CLAIM = Claim(
    id="fdms.dropout_is_substitution", family="fdms", seed_ref="004, eq. (4)-(5)",
    title="Dropout = substitution of every dropped update by the mean of the active ones",
    statement=(r"\frac{1}{S_t}\sum_{k\in\mathcal S_t}\Delta^k_t = \frac1K\Big(\sum_{k\in"
               r"\mathcal S_t}\Delta^k_t + \sum_{k\in\mathcal K\setminus\mathcal S_t}"
               r"\tilde\Delta^k_t\Big),\quad \tilde\Delta^k_t = \frac1{S_t}\sum_{j\in"
               r"\mathcal S_t}\Delta^j_t"),
    kind=ClaimKind.IDENTITY, expected="confirmed",
    contract=(
        "(eq. 5): averaging the active clients equals substituting each dropped client's update "
        "with the mean of the active ones."
    ),
    stated=Stated(factors=(AVG, FULL)),
    derivation=(
        r"With $\bar\Delta_{\mathcal S} = \frac1{S_t}\sum_{\mathcal S_t}\Delta^k$ substituted "
        r"for each of the $K - S_t$ dropped clients, the right side is "
        r"$\frac1K\big(S_t\bar\Delta_{\mathcal S} + (K - S_t)\bar\Delta_{\mathcal S}\big) = "
        r"\bar\Delta_{\mathcal S}$, the left side (eq. 4). Checks: the identity in sympy for "
        r"$K = 2..7$ and every number of dropped clients $1..K-1$ (scalar updates: the "
        r"identity is linear, so it holds coordinatewise); the engine's Dropout rule "
        r"(``fedavg``, eq. 4) against the substitution form computed independently in numpy on "
        r"random updates and random masks of the dropout process, with the float tolerance "
        r"$2(K+4)\varepsilon\max|\Delta|$ (two sums of at most $K$ terms, each off by at "
        r"most $(K+2)\varepsilon\max|\Delta|$ after the division, weights $1/K$ included)."),
)


@CLAIM.check("symbolic")
def _identity(ctx: Context) -> Evidence:
    """sympy: K = 2..7, D = 1..K-1 dropped clients; lhs (eq. 4) - rhs (eq. 5) == 0."""
    rows, ce = [], None
    for K in range(2, 8):
        d = sp.symbols(f"Delta1:{K + 1}")
        for D in range(1, K):
            active, dropped = d[D:], d[:D]
            S = K - D
            mean_active = sum(active) / S  # the substitute: the mean of the active updates
            lhs = ctx.factor(AVG, sp.Rational(1, S)) * sum(active)
            substitutes = [mean_active for _ in dropped]
            rhs = ctx.factor(FULL, sp.Rational(1, K)) * (sum(active) + sum(substitutes))
            gap = sp.simplify(lhs - rhs)
            rows.append({"K": K, "dropped": D, "gap": str(gap)})
            if gap != 0 and ce is None:
                ce = {"K": K, "dropped": D, "lhs": str(lhs), "rhs": str(sp.expand(rhs)),
                      "difference": str(gap)}
    ok = ce is None
    return Evidence(ok, "lhs - rhs", {"lhs - rhs": 0, "weights": _weights(ctx)},
                    f"K = 2..7, every D: identity {ok}", counterexample=ce, data={"cases": rows},
                    proof="sympy identity for K = 2..7, all D" if ok else None)


def _weights(ctx: Context) -> dict[str, str]:
    """The stated side's two weights as the context states them (a mutant drops one to 1):
    what the identity compares."""
    S, K = sp.Symbol("S_t", positive=True), sp.Symbol("K", positive=True)
    return {"eq. (4)": str(ctx.factor(AVG, 1 / S)), "eq. (5)": str(ctx.factor(FULL, 1 / K))}


@CLAIM.check("exact", "engine")
def _engine(ctx: Context) -> Evidence:
    """The engine's Dropout rule (fedavg) on random updates and dropout masks vs the
    substitution form in numpy (alpha in {0.3, 0.5, 0.7}, K = 20, d = 7)."""
    parts = []
    K, d = 20, 7
    R = ctx.size(quick=2000, full=20000)
    eps = np.finfo(float).eps
    for alpha in (0.3, 0.5, 0.7):
        rng = ctx.rng(f"engine-{alpha}")
        masks = DropoutParticipation(K, alpha).sample(rng, R, 1)[0]
        U = rng.standard_normal((R, K, d)) * rng.uniform(0.1, 10.0, size=(R, K, 1))
        rule = get_rule("fedavg")
        G, _ = rule.step(rule.init(R, K, d), masks, U)
        S = masks.sum(axis=1)
        act = np.where(masks[:, :, None], U, 0.0)
        mean_active = act.sum(axis=1) / S[:, None]
        subst = np.where(masks[:, :, None], U, mean_active[:, None, :])  # eq. (5)'s terms
        full = ctx.factor(FULL, 1.0 / K) * subst.sum(axis=1)
        lhs = ctx.factor(AVG, 1.0 / S)[:, None] * act.sum(axis=1)
        atol = 2 * (K + 4) * eps * float(np.abs(U).max())
        worst = int(np.argmax(np.abs(G - full).max(axis=1)))
        ce = {"alpha": alpha, "replica": worst, "mask": masks[worst].astype(int).tolist(),
              "updates": U[worst].tolist()}
        ev_rule = checks.check_close(G, full, rtol=0.0, atol=atol, counterexample=ce,
                                    what="Dropout rule - substitution form")
        ev_eq4 = checks.check_close(lhs, full, rtol=0.0, atol=atol, counterexample=ce,
                                   what="eq. (4) - eq. (5)")
        for ev, got in ((ev_rule, G), (ev_eq4, lhs)):  # the report: the gap, not R x d numbers
            ev.measured = {"max |difference|": float(np.abs(got - full).max()), "replicas": R}
            ev.theoretical = {"max |difference| allowed": atol, "weights": _weights(ctx)}
        parts.append((f"alpha={alpha}", all_of([("rule", ev_rule), ("eq4", ev_eq4)])))
    return all_of(parts)

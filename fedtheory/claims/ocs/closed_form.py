"""``ocs.closed_form`` (refuted): the closed form (7) / Lemma 20 (33) of the optimal independent
sampling, both printed orderings read literally (seed 002)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import sympy as sp

from fedtheory.claimkit.stated import Erratum, Stated
from fedtheory.claims import Claim, ClaimKind, Context, Evidence
from fedtheory.symbolic.kkt import kkt_points_exact
from fedtheory.theory.ocs import (
    FLOAT_RTOL,
    compare_with_cvxpy,
    exact_instances,
    float_instances,
    smallest_appendix_counterexample,
    stated_closed_form,
)

from ._common import CLOSED_FORM_FACTORS, closed_form_parts, instance_evidence, statuses

_CF_STATEMENT = (
    r"p_i=\begin{cases}(m+l-n)\dfrac{\|\tilde U_i\|}{\sum_{j=1}^{l}\|\tilde U_{(j)}\|},"
    r"& i\notin A\\ 1,& i\in A\end{cases},\quad l=\max\Big\{l: 0<m+l-n\le"
    r"\frac{\sum_{i\le l}\|\tilde U_{(i)}\|}{\|\tilde U_{(l)}\|}\Big\},\quad "
    r"A=\{i:\|\tilde U_i\|\ge\|\tilde U_{(l+1)}\|\},"
    r"\ \text{with } \|\tilde U_{(j)}\| \text{ the } j\text{-th smallest (eq. 7) / "
    r"largest (Lemma 20)}"
)

CLAIM = Claim(
    id="ocs.closed_form",
    family="ocs",
    seed_ref="002, eq. (7) and Appendix B, Lemma 20",
    title="The optimal independent sampling has the closed form (7) / (33)",
    statement=_CF_STATEMENT,
    kind=ClaimKind.CLOSED_FORM,
    contract=(
        "(eq. 7, and Lemma 20 in Appendix B): the optimal p of min Σ (1 − p_i)/p_i ‖Ũ_i‖² s.t. 0 ≤ "
        "p_i ≤ 1, Σ p_i ≤ m. The main text sorts \"j-th smallest\", the appendix \"j-th largest\": "
        "verify each as printed, against cvxpy."
    ),
    expected="refuted",
    stated=Stated(factors=CLOSED_FORM_FACTORS),
    erratum=Erratum(
        "typo",
        "Appendix B, Lemma 20 (eq. (33)): '||U~_(j)|| is the j-th largest' should read "
        "'the j-th smallest', as in eq. (7) of the main text and as the appendix's own later "
        "step 'm ||U~_(n)|| <= sum_i ||U~_i||' (u_(n) the largest) uses. As printed, the "
        "condition on l holds for every l, so l = n and p = m u / sum_j u_j, infeasible as "
        "soon as m max_i u_i > sum_j u_j (norms (1, 2), m = 2: p = (2/3, 4/3); with m < n: "
        "norms (1, 1, 3), m = 2). The intended ordering gives the KKT point "
        "(ocs.closed_form.corrected)",
        quote=(r"\left\lVert\tilde{U}_{(j)}^{k}\right\rVert is the j-th largest value among "
               r"the values \left\lVert\tilde{U}_{1}^{k}\right\rVert,\left\lVert\tilde{U}_"
               r"{2}^{k}\right\rVert,\dots,\left\lVert\tilde{U}_{n}^{k}\right\rVert"),
        location="002, Appendix B, Lemma 20, the sentence after eq. (33)",
        intended_holds=True),
    finding=(
        "Lemma 20's 'j-th largest' ordering gives infeasible probabilities (norms (1, 2), m = 2: "
        "p = (2/3, 4/3)); the main text's 'j-th smallest' is the KKT point "
        '(ocs.closed_form.corrected).'
    ),
    derivation=r"""
The problem: $\min_p \sum_i \frac{1 - p_i}{p_i}\|\tilde U_i\|^2$ subject to $0 \le p_i \le 1$,
$\sum_i p_i \le m$. The main text (eq. 7) takes $\|\tilde U_{(j)}\|$ as the $j$-th smallest norm,
the appendix (Lemma 20, eq. 33) as the $j$-th largest; both readings are implemented literally
(`fedtheory.theory.ocs.stated_closed_form`, form "printed", the same transcription as
`fedtheory.sampling.ocs.closed_form_as_printed` but with the two places where $m + l - n$
multiplies a norm read as the claim's stated factors) and checked against the unique KKT point
(exact rationals) and cvxpy. The printed inequality divides by $\|\tilde U_{(l)}\|$, so the
literal readings are tested on positive norms.

Finding: the Lemma 20 reading fails. With the $j$-th largest ordering (and
$u_{(i)} = \|\tilde U_{(i)}\|$), $\sum_{i\le l} u_{(i)}/u_{(l)} \ge l \ge m + l - n$ for every
$l$, so the condition holds for all admissible $l$: $l = n$, $A$ is empty and
$p_i = m u_i/\sum_j u_j$, which exceeds 1 (infeasible, with a negative "variance") as soon as
$m \max_i u_i > \sum_j u_j$. The main text's reading is the KKT point (see
`ocs.kkt_derivation`). The appendix's later step "with
$m\|\tilde U_{(n)}\| \le \sum_i\|\tilde U_i\|$" is the no-truncation case $l = n$ under the
main-text ordering. The consistent statement, with zero norms, ties and fractional $m$ made
explicit, is `ocs.closed_form.corrected`.

Erratum: a typo ("largest" for "smallest") in Lemma 20; the intended statement, eq. (7), holds
(`ocs.closed_form.corrected`, confirmed). Stated factors (dropped by `--power`): $m + l - n$ in
$p_i$ and in the condition on $l$; the main-text checks catch either drop on instances with
truncation.
""",
)


def _exact_reading_check(ctx: Context, ordering: str) -> Evidence:
    rng = ctx.rng("exact")
    count = ctx.size(quick=25, full=120)
    inst = exact_instances(rng, count, zeros=False)
    parts = closed_form_parts(ctx)

    def printed_form(u: list[Any], m: Any) -> tuple[list[Any], int]:
        return stated_closed_form(u, m, ordering, "printed", **parts)

    bad = []
    for u, m in inst:
        printed, ell = printed_form([sp.Integer(x) for x in u], sp.Rational(m))
        pts = kkt_points_exact(u, m)
        if len(pts) != 1 or list(pts[0].p) != printed:
            bad.append((u, m, printed, ell, pts))
    if ordering == "largest":
        found = smallest_appendix_counterexample(closed_form=printed_form)
        ok = not bad and not found
        ce = None
        if not ok:
            ce = dict(found[0]) if found else {"norms": bad[0][0], "m": str(bad[0][1])}
            if len(found) > 1:
                ce["smallest_with_m_below_n"] = found[1]
            ce["failed_random_instances"] = f"{len(bad)} of {len(inst)}"
        detail = (f"Lemma 20 reading (j-th largest) vs the unique exact KKT point: "
                  f"{len(inst) - len(bad)} of {len(inst)} random instances agree")
        if found:
            f0 = found[0]
            detail += (f"; smallest failure: norms {f0['norms']}, m = {f0['m']}: printed "
                       f"p = {f0['printed_p']} (l = {f0['l']}, max p = {f0['printed_max_p']} > 1, "
                       f"'variance' {f0['printed_objective']}), optimum p = {f0['optimal_p']}")
        return Evidence(passed=ok, measured=f"{len(inst) - len(bad)}/{len(inst)} agree",
                        theoretical="all agree", detail=detail, counterexample=ce,
                        data={"search": found})
    ce = None
    if bad:
        u, m, printed, ell, pts = bad[0]
        ce = {"norms": u, "m": str(m), "printed_p": [str(x) for x in printed], "l": ell,
              "kkt_points": [[str(x) for x in pt.p] for pt in pts]}
    return instance_evidence(
        len(inst), bad,
        f"eq. (7) as printed (j-th smallest), exact rationals, {len(inst)} instances "
        f"(n <= 7, ties, integer and half-integer m): equal to the unique KKT point "
        f"on {len(inst) - len(bad)}",
        "agree", counterexample=ce)


def _convex_reading_check(ctx: Context, ordering: str) -> Evidence:
    rng = ctx.rng("convex")
    inst = [(k, u, m) for k, u, m in float_instances(rng, ctx.quick) if np.all(u > 0)]
    parts = closed_form_parts(ctx)
    rows = []
    for kind, u, m in inst:
        printed, _ = stated_closed_form(list(u), m, ordering, "printed", **parts)
        cmp = compare_with_cvxpy(u, m, printed)
        rows.append((kind, u, m, printed, cmp))
    bad = [r for r in rows if not r[4]["ok"]]
    ce = None
    if bad:
        kind, u, m, printed, cmp = min(bad, key=lambda r: r[1].size)
        ce = {"kind": kind, "norms": u, "m": m, "printed_p": printed,
              "max_printed_p": float(np.max(printed)), "sum_printed_p": float(np.sum(printed)),
              "cvxpy_p": cmp["p_solver"], "cvxpy_status": cmp["status"],
              "V_printed": cmp["V_candidate"], "V_cvxpy": cmp["V_solver"]}
    name = "eq. (7), j-th smallest" if ordering == "smallest" else "Lemma 20, j-th largest"
    infeasible = sum(not r[4]["feasible"] for r in rows)
    return instance_evidence(
        len(rows), bad,
        f"{name} vs cvxpy (Clarabel) on {len(rows)} positive instances "
        f"(n <= {max(r[1].size for r in rows)}; lognormal, heavy tails, ties, m near n, "
        f"fractional m, geometric, one huge): {len(bad)} fail (infeasible: {infeasible}); "
        f"criteria: p feasible, V(p) <= V(solver's point), first-order condition toward "
        f"it, KKT certificate <= {FLOAT_RTOL:g}; solver status "
        f"{statuses([r[4] for r in rows])}",
        "certified", counterexample=ce,
        data={"solver_max_dp": np.nanmax([r[4]["max_dp"] for r in rows])})


def _add_reading_check(kind: str, name: str, run: Callable[[Context, str], Evidence],
                       ordering: str, doc: str) -> None:
    """Register ``run(ctx, ordering)`` as the check ``name`` of the claim."""
    def check(ctx: Context) -> Evidence:
        return run(ctx, ordering)

    check.__doc__ = doc
    CLAIM.check(kind, name)(check)


# each reading, "smallest" (eq. (7)) and "largest" (Lemma 20), exactly and against cvxpy
_add_reading_check("exact", "main_text_reading_exact", _exact_reading_check, "smallest",
                   "Eq. (7) as printed (j-th smallest), exact rationals, vs the unique KKT point.")
_add_reading_check("exact", "appendix_reading_exact", _exact_reading_check, "largest",
                   "Lemma 20 as printed (j-th largest), exact rationals; smallest-counterexample "
                   "search.")
_add_reading_check("convex", "main_text_reading_vs_cvxpy", _convex_reading_check, "smallest",
                   "Eq. (7) (j-th smallest) vs cvxpy on random and adversarial float instances.")
_add_reading_check("convex", "appendix_reading_vs_cvxpy", _convex_reading_check, "largest",
                   "Lemma 20 (j-th largest) vs cvxpy on the same instances.")

r"""Optimal client sampling (seed 002, Section 2 and Appendix B): the instances the ``ocs``
claims test the closed form on, the smallest counterexample to Lemma 20's reading, and the
comparison of a candidate with a cvxpy solve.

The formulas themselves live in :mod:`fedtheory.sampling.ocs`, :mod:`fedtheory.sampling.aocs`,
:mod:`fedtheory.sampling.improvement`, :mod:`fedtheory.convex.ocs` and
:mod:`fedtheory.symbolic.kkt`.

Floating-point allowances (never tolerances on the statements): a float computation compared
with an exact rational one, or with the same quantity computed another way, may differ by
rounding; :data:`FLOAT_RTOL` (1e-9, relative to the problem's scale) covers that.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from fedtheory.sampling.ocs import closed_form_as_printed
from fedtheory.symbolic.kkt import kkt_points_exact

__all__ = [
    "FLOAT_RTOL",
    "compare_with_cvxpy",
    "exact_instances",
    "float_instances",
    "instance_scale",
    "smallest_appendix_counterexample",
    "stated_closed_form",
    "stated_optimal_variance",
]

#: Rounding allowance between two float computations of the same quantity (relative).
FLOAT_RTOL = 1e-9


def float_instances(rng: np.random.Generator, quick: bool) -> list[tuple[str, np.ndarray, float]]:
    """Random and adversarial OCS instances ``(kind, norms, m)``.

    Log-normal norms of moderate and large spread, heavy tails (Pareto with infinite mean),
    ties, zeros, :math:`m` close to :math:`n`, fractional :math:`m`, geometric norms (many
    truncations) and one huge norm. Sizes up to 100 (quick) or 1000 (full).
    """
    sizes = (6, 20, 100) if quick else (6, 20, 100, 300, 1000)
    reps = 1 if quick else 3
    out: list[tuple[str, np.ndarray, float]] = []
    for n in sizes:
        for _ in range(reps):
            out += [
                ("lognormal sigma=1", rng.lognormal(0.0, 1.0, n), float(max(1, n // 10))),
                ("lognormal sigma=3 (fractional m)", rng.lognormal(0.0, 3.0, n), n / 5 + 0.5),
                ("pareto a=0.7 (heavy tail)", rng.pareto(0.7, n) + 1e-3, float(max(1, n // 4))),
                ("ties", rng.integers(1, 4, n).astype(float), float(max(1, n // 2))),
                ("zeros", rng.lognormal(0.0, 1.0, n) * (rng.random(n) < 0.4),
                 float(max(1, n // 5))),
                ("m close to n", rng.lognormal(0.0, 1.0, n), n - 0.5),
                ("geometric", np.geomspace(1.0, 1e8, n)[rng.permutation(n)],
                 float(max(1, n // 3))),
                ("one huge", np.r_[np.ones(n - 1), 1e6][rng.permutation(n)],
                 float(max(2, n // 10))),
            ]
    return out


def exact_instances(rng: np.random.Generator, count: int, zeros: bool,
                    max_n: int = 7) -> list[tuple[list[int], Fraction]]:
    """Small exact instances: integer norms (ties likely), integer or half-integer ``m``.

    With ``zeros=True`` a third of the instances get zero norms (sometimes more than
    :math:`n - m` of them, so that :math:`m` covers every non-zero norm).
    """
    out = []
    for k in range(count):
        n = int(rng.integers(2, max_n + 1))
        u = [int(x) for x in rng.integers(1, 10, n)]
        if k % 4 == 1:  # a large one forces truncation
            u[int(rng.integers(n))] = int(rng.integers(20, 60))
        if zeros and k % 3 == 0:
            for i in rng.choice(n, size=int(rng.integers(1, n)), replace=False):
                u[int(i)] = 0
        m = Fraction(int(rng.integers(1, n + 1)))
        if k % 2 and m > 1:
            m -= Fraction(1, 2)
        out.append((u, m))
    return out


def smallest_appendix_counterexample(
    max_n: int = 4, max_norm: int = 3,
    closed_form: Callable[[list[Any], Any], tuple[list[Any], int]] | None = None,
) -> list[dict[str, Any]]:
    """Search the Lemma 20 reading ("j-th largest") for its smallest failures.

    Instances are visited by increasing :math:`n`, then :math:`m = 1, \\dots, n`, then
    non-decreasing integer norm vectors in :math:`\\{1, \\dots, \\text{max\\_norm}\\}^n`
    (order does not matter: both readings are permutation-equivariant). Returns the first
    failure overall and the first with :math:`m < n` (exact rationals). ``closed_form(norms,
    m) -> (p, l)`` is the reading searched (default: :func:`closed_form_as_printed` with the
    "largest" ordering; a claim passes :func:`stated_closed_form` with its stated factors).
    """
    if closed_form is None:
        def closed_form(u: list[Any], m: Any) -> tuple[list[Any], int]:
            return closed_form_as_printed(u, m, "largest")
    found: list[dict[str, Any]] = []
    want_m_below_n = True
    for n in range(1, max_n + 1):
        for m in range(1, n + 1):
            for u in itertools.combinations_with_replacement(range(1, max_norm + 1), n):
                if found and (m == n or not want_m_below_n):
                    continue
                printed, ell = closed_form([sp.Integer(x) for x in u], sp.Integer(m))
                pts = kkt_points_exact(list(u), m)
                opt = list(pts[0].p)
                if printed != opt:
                    v_printed = sum((1 - q) / q * x**2 for q, x in zip(printed, u, strict=True))
                    found.append({
                        "reading": "Lemma 20: u_(j) is the j-th largest",
                        "norms": list(u), "m": m, "l": ell,
                        "printed_p": [str(q) for q in printed],
                        "printed_sum_p": str(sum(printed)),
                        "printed_max_p": str(max(printed)),
                        "printed_objective": str(v_printed),
                        "optimal_p": [str(q) for q in opt],
                        "optimal_objective": str(pts[0].value),
                    })
                    if m < n:
                        return found
    return found


def instance_scale(u: np.ndarray) -> float:
    """The scale of an instance's objective: the largest squared norm (1 if all vanish).

    >>> instance_scale(np.array([1.0, 3.0]))
    9.0
    """
    return float(np.max(u) ** 2) if np.max(u) > 0 else 1.0


def compare_with_cvxpy(u: np.ndarray, m: float, p: Sequence[float]) -> dict[str, Any]:
    r"""Compare a candidate :math:`p` with a cvxpy (Clarabel) solve and certify it.

    Criteria (all must hold): the candidate is feasible; :math:`V(p) \le V(q)` up to rounding
    (:math:`q` the solver's point, made feasible by clipping and rescaling to the budget: a
    feasible point bounds the optimum whatever the solver's status); the first-order condition
    :math:`\nabla V(p)\cdot(q - p) \ge 0` (which equals
    :math:`V(q) - V(p) - \sum_i u_i^2 (q_i - p_i)^2 / (p_i^2 q_i)`: the solver's distance from
    :math:`p` is bounded by its objective excess); and the KKT certificate of :math:`p`
    (stationarity, complementarity, feasibility, duality gap) vanishes. The solver's
    accuracy on :math:`p` is reported (``max_dp``), never used as the criterion; a solve that
    returns no point (status other than optimal / optimal_inaccurate) is reported as such.
    """
    # cvxpy (imported by fedtheory.convex) costs about a second to import: only the convex
    # comparison needs it, not the closed forms and instances this module is mostly used for
    from fedtheory.convex.ocs import kkt_certificate, solve_ocs_convex

    p = np.asarray(p, dtype=float)
    sol = solve_ocs_convex(u, m)
    scale = instance_scale(u)
    feasible = bool(np.all(p >= 0) and np.all(p <= 1 + FLOAT_RTOL) and p.sum() <= m * (1 + 1e-12))
    pc = np.clip(p, 0.0, 1.0)
    cert = kkt_certificate(u, m, p=p)
    with np.errstate(divide="ignore", invalid="ignore"):
        v_p = float(np.sum(np.where(u > 0, (1 - pc) / pc * u**2, 0.0)))
        grad = np.where(u > 0, -(u**2) / pc**2, 0.0)
    solved = sol.status in ("optimal", "optimal_inaccurate", "trivial")
    if solved:
        # the solver's point, made feasible: any feasible point bounds the optimum from above,
        # whatever the status says about its accuracy
        q = np.clip(sol.p, 0.0, 1.0)
        if q.sum() > m:
            q = q * (m / q.sum())
        with np.errstate(divide="ignore", invalid="ignore"):
            v_q = float(np.sum(np.where(u > 0, (1 - q) / q * u**2, 0.0)))
        directional = float(np.sum(grad * (q - pc))) / scale
        not_worse = v_p <= v_q * (1 + FLOAT_RTOL) + FLOAT_RTOL * scale
        consistent = not_worse and directional >= -FLOAT_RTOL
    else:
        q, v_q, directional, consistent = np.full_like(u, np.nan), np.nan, np.nan, True
    ok = feasible and cert.certified(FLOAT_RTOL) and consistent
    return {
        "ok": bool(ok), "solved": solved, "status": sol.status, "feasible": feasible,
        "V_candidate": v_p, "V_solver": v_q,
        "solver_excess": (v_q - v_p) / max(v_p, FLOAT_RTOL * scale) if solved else np.nan,
        "directional_derivative": directional,
        "max_dp": float(np.max(np.abs(q - pc))) if solved else np.nan,
        "certificate": cert.summary(), "certified": cert.certified(FLOAT_RTOL),
        "y_solver": sol.budget_dual, "p_solver": q,
    }


def _identity(c: Any) -> Any:
    return c


def stated_closed_form(
    norms: Sequence[Any], m: Any, ordering: str = "smallest", form: str = "corrected", *,
    budget: Callable[[Any], Any] | None = None, condition: Callable[[Any], Any] | None = None,
) -> tuple[list[Any], int]:
    r"""Eq. (7) of seed 002 (Lemma 20's (33) with ``ordering="largest"``), from its parts.

    With :math:`u_{(1)}, \dots, u_{(n)}` the norms in the given order, :math:`c_l = m + l - n`
    and :math:`S_l = \sum_{j\le l} u_{(j)}`:

    .. math::

        l = \max\{l : 0 < c_l,\ \mathrm{condition}(c_l)\,u_{(l)} \le S_l\}, \qquad
        p_i = \begin{cases} 1, & i \in A = \{i : u_i \ge u_{(l+1)}\}\\
              \mathrm{budget}(c_l)\,u_i/S_l, & \text{otherwise} \end{cases}
        \ (\texttt{form="printed"}),

    or :math:`p_i = \min\{1, \mathrm{budget}(c_l)\,u_i/S_l\}`, :math:`p_i = 0` for
    :math:`u_i = 0` and :math:`p_i = 1` for :math:`u_i > 0 = S_l` (``form="corrected"``, the
    statement of ``ocs.closed_form.corrected``). ``budget`` and ``condition`` (default: the
    identity) are the two places where :math:`m + l - n` multiplies a norm; a claim passes its
    stated factors (``ctx.factor``) so that ``--power`` can drop them. The printed inequality
    :math:`c_l \le S_l/u_{(l)}` is taken multiplied by :math:`u_{(l)}` (equivalent for positive
    norms; the printed form needs positive norms). Generic in the number type (int,
    :class:`~fractions.Fraction`, sympy ``Rational``, float); a loop with running sums, no
    safeguards for overflow (see :func:`fedtheory.sampling.ocs.closed_form_as_printed`).

    Returns ``(p, l)``.

    >>> stated_closed_form([1, 1, 10], 2, form="printed")
    ([0.5, 0.5, 1], 2)
    >>> stated_closed_form([Fraction(1), Fraction(2)], 2, "largest", "printed")
    ([Fraction(2, 3), Fraction(4, 3)], 2)
    >>> stated_closed_form([0, 5, 0, 1], 3)
    ([0, 1, 0, 1], 2)
    >>> stated_closed_form([1, 1, 10], 2, budget=lambda c: 1)  # the budget factor dropped
    ([0.5, 0.5, 1], 2)
    >>> stated_closed_form([1, 2, 10], 2, budget=lambda c: 1)[0][:2]
    [0.3333333333333333, 0.6666666666666666]
    """
    if ordering not in ("smallest", "largest"):
        raise ValueError(f"ordering must be 'smallest' or 'largest', got {ordering!r}")
    if form not in ("printed", "corrected"):
        raise ValueError(f"form must be 'printed' or 'corrected', got {form!r}")
    budget = budget or _identity
    condition = condition or _identity
    values = list(norms)
    n = len(values)
    if n == 0:
        raise ValueError("norms must be non-empty, got []")
    if any(v < 0 for v in values) or (form == "printed" and not all(v > 0 for v in values)):
        raise ValueError(f"norms must be {'positive' if form == 'printed' else 'non-negative'}"
                         f", got {values!r}")
    if not (0 < m <= n):
        raise ValueError(f"m must satisfy 0 < m <= n = {n}, got {m!r}")
    srt = sorted(values, reverse=(ordering == "largest"))
    ell, total, totals = None, srt[0] * 0, []
    for cand in range(1, n + 1):
        total = total + srt[cand - 1]
        totals.append(total)
        coef = m + (cand - n)
        if 0 < coef and condition(coef) * srt[cand - 1] <= total:
            ell = cand
    if ell is None:  # cannot happen unless a dropped factor makes no l admissible
        raise ValueError(f"no admissible l for norms={values!r}, m={m!r}")
    coef, s_l = budget(m + (ell - n)), totals[ell - 1]
    p: list[Any] = []
    for v in values:
        if form == "printed":
            p.append(1 if ell < n and v >= srt[ell] else coef * v / s_l)
        elif v == 0:
            p.append(v * 0)
        else:
            p.append(1 if s_l == 0 else min(1, coef * v / s_l))
    return p, ell


def stated_optimal_variance(norms: Sequence[Any], m: Any,
                            coefficient: Callable[[Any], Any] | None = None) -> Any:
    r"""The appendix's optimal variance from its parts:
    :math:`\mathrm{coefficient}\big(\tfrac{1}{m-(n-l)}\big)\,S_l^2 - \sum_{i\le l}u_{(i)}^2`,
    with the increasing order and the :math:`l` of eq. (7) (:func:`stated_closed_form`), zero
    norms included (they add nothing). Generic in the number type; ``coefficient`` defaults to
    the identity (a claim passes its stated factor).

    >>> stated_optimal_variance([Fraction(1), Fraction(1), Fraction(10)], Fraction(2))
    Fraction(2, 1)
    """
    _, ell = stated_closed_form(norms, m)
    srt = sorted(norms)[:ell]
    s_l = sum(srt[1:], srt[0])
    q_l = sum((x * x for x in srt[1:]), srt[0] * srt[0])
    inverse = 1 / (m - (len(norms) - ell))
    return (coefficient or _identity)(inverse) * s_l * s_l - q_l

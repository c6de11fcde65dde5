"""Claim-side glue shared by the claims of family ``mifa`` (not discovered: ``_`` prefix)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from fedtheory import stats
from fedtheory.claimkit.evidence import derivation_evidence, identity_evidence
from fedtheory.claims import Claim, Context, Evidence, all_of, checks
from fedtheory.claims.mifa._runs import (
    add_per_p_checks,
    error_samples,
    figure_evidence,
    mc_state,
    umifam_best_evidence,
)
from fedtheory.experiments import mifa_experiments as mx
from fedtheory.theory.mifa import condition, exact_error2, exact_rows, exact_state, one_round

__all__ = ["ALPHA", "TableRound", "add_seed_experiment_checks", "derivation_evidence",
           "error_round", "exact_error_case", "exact_row_mean", "fmt_frac",
           "identity_and_bound", "identity_evidence", "pathwise_upper_bound", "table_round",
           "z_reject"]

ALPHA = stats.DEFAULT_ALPHA


def fmt_frac(a: Any) -> Any:
    """Rationals (an array or nested list) as nested lists of strings, ready for JSON."""
    return np.vectorize(str, otypes=[object])(np.asarray(a, dtype=object)).tolist()


def z_reject(samples: np.ndarray, value: np.ndarray, alpha: float = ALPHA
              ) -> tuple[bool, float, float]:
    """Whether ``E[samples] == value`` is rejected in every component (two-sided, Bonferroni).

    Returns (all rejected, smallest |z|, threshold).
    """
    ci = stats.mean_interval(samples, alpha, "two")
    z = np.abs(ci.mean - value) / np.maximum(ci.stderr, 1e-300)
    return bool(np.all(z > ci.z)), float(np.min(z)), float(ci.z)


def identity_and_bound(ident: Evidence, up: Evidence, theoretical: Any, bound_label: str = "",
                        data: dict[str, Any] | None = None) -> Evidence:
    """One verdict from a two-sided check of the exact value and a one-sided check of a bound
    on the same samples, combined by :func:`~fedtheory.claims.all_of`: failed when either
    fails (its counterexample), undecided when neither fails and one is undecided, passed
    otherwise; the level is the sum of the two (Bonferroni)."""
    ev = all_of([("exact value", ident), ("bound", up)])
    ev.measured, ev.theoretical = ident.measured, theoretical
    ev.detail = f"{ident.detail}. {bound_label}{up.detail}"
    ev.data = data if data is not None else {}
    ev.ratio, ev.instance = up.ratio, up.instance  # the bound's tightness, where it is reached
    return ev


def add_seed_experiment_checks(claim: Claim, kind: str,
                               p_values: tuple[float, ...] = (0.01, 0.1, 0.5)) -> None:
    """The checks of seed 000's experiment on problem ``kind`` ("quadratic" or "logistic"):
    the figure, then one paired U-MIFAm-against-every-rule check per ``p``."""
    def figure(ctx: Context) -> Evidence:
        """Median and 10-90% bands of f - f* over the seeds, p in {0.01, 0.1, 0.5}."""
        return figure_evidence(ctx, kind)

    claim.check("figure", "figure")(figure)
    add_per_p_checks(claim, p_values, "umifam_best",
                     lambda ctx, pv: umifam_best_evidence(ctx, kind, pv),
                     "p = {p}: U-MIFAm against each other rule, paired over seeds (check_less "
                     "on the tail log10 gap)")


def exact_row_mean(rule: str, n: int = 3
                   ) -> tuple[np.ndarray, np.ndarray, list[Fraction], np.ndarray]:
    r"""Exact :math:`\mathbb E[G_t^{(i)}\mid\mathcal F_{t-1}]` of ``rule``'s memory rows
    ("mifa" or "umifa"), over all :math:`2^n` patterns from the rational state
    :func:`~fedtheory.theory.mifa.exact_state`. Returns (Δ, memory, p, mean), object arrays."""
    delta, memory, p = exact_state(n)
    mean = mx.exact_expectation(lambda m: exact_rows(rule, m, delta, memory, p), n, p)
    return delta, memory, p, mean


class TableRound(NamedTuple):
    """One engine round of a table rule from a fixed state, and how to re-create it."""

    G: np.ndarray  #: directions (R, d)
    table: np.ndarray  #: new memory tables (R, n, d)
    delta: np.ndarray  #: client updates (n, d)
    memory: np.ndarray  #: memory table before the round (n, d)
    p: np.ndarray  #: participation probabilities (n,)
    replicas: int
    counterexample: dict[str, Any]


def table_round(ctx: Context, rule: str, stream: str) -> TableRound:
    r"""One round of the engine's ``rule`` from a fixed random table (n = 10), with
    heterogeneous :math:`p_i` from 0.05 to 0.95; state and masks from the named stream."""
    delta, memory, R = mc_state(ctx, stream)
    p_i = np.linspace(0.05, 0.95, delta.shape[0])
    G, table, _ = one_round(rule, delta, memory, p_i, R, ctx.rng(stream))
    ce = {"seed": ctx.seed, "replicas": R, "p": p_i, "delta": delta, "memory": memory}
    return TableRound(G, table, delta, memory, p_i, R, ce)


def exact_error_case(rule: str) -> tuple[np.ndarray, Fraction, Fraction, dict[str, Any]]:
    r"""Exact :math:`\mathbb E\|\nabla f(w_t)-G_t\|^2` of one round of ``rule`` over all
    :math:`2^3` patterns (:func:`~fedtheory.theory.mifa.exact_error2`, :math:`p = 1/10`).

    Returns the memory errors :math:`e_i = \nabla f_i(w_t) - G_{t-1}^{(i)}` (object array),
    p, the expectation and the instance as a counterexample."""
    grads, memory, p_val, value = exact_error2(rule)
    ce = {"grads": fmt_frac(grads), "memory": fmt_frac(memory), "p": str(p_val)}
    return grads - memory, p_val, value, ce


def error_round(ctx: Context, rule: str, stream: str, p_val: float
                ) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    r"""Per-replica :math:`\|\nabla f(w_t)-G_t\|^2` after one engine round of ``rule`` with
    equal p from a fixed table; returns the samples, the memory errors :math:`e_i` (n, d)
    and the instance as a counterexample."""
    err2, grads, memory, R = error_samples(rule, ctx, stream, p_val)
    ce = {"seed": ctx.seed, "replicas": R, "p": p_val, "grads": grads, "memory": memory}
    return err2, grads - memory, ce


def pathwise_upper_bound(r: dict[str, Any], eta_val: float, lhs: np.ndarray, rhs: Any,
                         ce: dict[str, Any], what: str, rtol: float = 0.0,
                         instance: dict[str, Any] | None = None
                         ) -> tuple[Evidence, np.ndarray, int]:
    r"""A bound stated on every path of the event :math:`1-\eta L-\eta^2L^2\tau_{\max}^2\ge0`
    of the long MIFA runs ``r``: the conditional mean of ``lhs`` is checked one-sided against
    :math:`\max` ``rhs``, and any path of the event with ``lhs > rhs (1 + rtol)`` refutes it.
    With ``instance``, the tightness is the largest ``lhs / rhs`` over the event's paths, at
    ``instance`` and that path (``"replica"``).

    Returns the evidence, the event (per path) and the number of violating paths."""
    cond = condition(eta_val, r["L"], r["tau_max"]) >= 0
    viol = int(np.sum(cond & (lhs > rhs * (1 + rtol))))
    ev = checks.check_upper_bound(lhs[cond], float(np.max(rhs)), counterexample=ce, what=what)
    if viol:  # a path of the event where the bound fails: a concrete counterexample
        ev.passed = False
        ev.counterexample = {**ce, "pathwise_violations": viol}
    if instance is not None and cond.any():
        ratios = lhs[cond] / np.broadcast_to(rhs, lhs.shape)[cond]
        ev.ratio = float(np.max(ratios))
        ev.instance = {**instance, "replica": int(np.flatnonzero(cond)[np.argmax(ratios)])}
    return ev, cond, viol

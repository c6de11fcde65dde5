r"""Claim-side glue shared by the claims of family ``is`` (not discovered: ``_`` prefix)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy as sp

from fedtheory import stats
from fedtheory.claimkit.evidence import identity_evidence
from fedtheory.claims import Context, Evidence, checks
from fedtheory.sampling.designs import IndependentSampling
from fedtheory.sampling.moments import sample_estimator

__all__ = [
    "ALPHA",
    "check_identity",
    "identity_evidence",
    "independent_average",
    "mismatch",
    "power_note",
    "seed000_instance",
]

ALPHA = stats.DEFAULT_ALPHA


def power_note(ev: Evidence, theory: float) -> str:
    """The relative half-width of the interval: the smallest relative deviation detectable."""
    se = ev.data.get("stderr")
    if se is None or ev.tolerance is None or theory == 0:
        return ""
    half = float(np.max(np.asarray(se))) * ev.tolerance
    return f"; detects relative deviations above {half / abs(theory):.2%}"


def check_identity(samples: np.ndarray, theory: Any, *, alpha: float, what: str,
                   counterexample: dict[str, Any], scale: float | None = None) -> Evidence:
    """:func:`fedtheory.claimkit.checks.check_identity` (two-sided), its detail followed by the
    :func:`power_note` relative to ``scale`` (default: ``theory``)."""
    ev = checks.check_identity(samples, theory, alpha=alpha, what=what,
                              counterexample=counterexample)
    ev.detail += power_note(ev, theory if scale is None else scale)
    return ev


def seed000_instance(ctx: Context, loc: float, scale: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Seed 000's Monte Carlo setting from the stream ``"mc"``: :math:`n` clients (10 quick,
    100 full) with marginals :math:`p_i \sim U(0.05, 1)` and updates
    :math:`g_i \sim N(\mathrm{loc}, \mathrm{scale}^2 I_4)`, i.i.d.; returns ``(p, g)``."""
    rng = ctx.rng("mc")
    n = ctx.size(quick=10, full=100)
    p = rng.uniform(0.05, 1.0, n)
    return p, rng.normal(loc, scale, (n, 4))


def independent_average(p: np.ndarray, g: np.ndarray, rng: np.random.Generator,
                        replicas: int, w: np.ndarray | None = None) -> np.ndarray:
    r"""Draws of seed 000's :math:`G = \frac1n\sum_i 1_i g_i/p_i` under independent
    Bernoulli(:math:`p_i`) participation, shape ``(replicas, d)`` (``w``: weights other than
    :math:`1/n`, for a mutated estimator)."""
    w = np.full(len(p), 1.0 / len(p)) if w is None else w
    return sample_estimator(IndependentSampling(p), w, g, rng, replicas)


def mismatch(derived: Any, stated: Any, point: Mapping[Any, Any]) -> dict[str, Any]:
    """A symbolic identity that failed, as a counterexample a reader can re-run: the concrete
    admissible ``point`` (exact rationals) and the derived (measured) and stated values there.

    >>> x = sp.Symbol("x")
    >>> mismatch(x**2, x, {x: sp.Rational(1, 2)})
    {'inputs': {'x': '1/2'}, 'measured': '1/4', 'stated': '1/2'}
    """
    pt = dict(point)
    return {"inputs": {str(k): str(v) for k, v in pt.items()},
            "measured": str(sp.simplify(sp.sympify(derived).subs(pt))),
            "stated": str(sp.simplify(sp.sympify(stated).subs(pt)))}

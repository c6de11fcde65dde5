r"""Exact values (``Fraction``, sympy numbers, arrays of them) for the one bound check
(:func:`fedtheory.claimkit.checks.check_bound`): recognised, validated and compared exactly.

>>> from fractions import Fraction
>>> is_exact([Fraction(1, 2), 1.0]), is_exact([0.5, 1.0])
(True, False)
>>> exact_array("bound", [Fraction(1, 2), 0.5]).tolist()
[1/2, 1/2]
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import sympy

from fedtheory.claimkit.evidence import Evidence

__all__ = ["exact_array", "exact_bound_evidence", "is_exact"]


def is_exact(value: Any) -> bool:
    """Whether a quantity is exact: a Fraction or a sympy number, or an array of them (a
    float array is samples)."""
    if isinstance(value, np.ndarray) and value.dtype != object:
        return False
    try:
        flat = np.asarray(value, dtype=object).ravel()
    except (TypeError, ValueError):
        return False
    return any(isinstance(v, (Fraction, sympy.Basic)) for v in flat)


def exact_array(name: str, value: Any, trivial: int = 0) -> np.ndarray:
    r"""``value`` as an object array of real sympy numbers, or a ``ValueError`` naming
    ``name`` (NaN, complex, non-numbers, and infinities other than the one of sign
    ``trivial`` refused, as for the check's float values); floats are read as their exact binary
    rationals."""
    arr = np.asarray(value, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        where = "" if arr.ndim == 0 else f" at index {idx}"
        if isinstance(v, (bool, np.bool_)) or not isinstance(
                v, (int, float, np.integer, np.floating, Fraction, sympy.Basic)):
            raise ValueError(f"{name} must be real numbers, got {v!r}{where}")
        if isinstance(v, (float, np.floating)):
            f = float(v)
            s = sympy.nan if np.isnan(f) else sympy.oo * int(np.sign(f)) if np.isinf(f) \
                else sympy.Rational(f)
        elif isinstance(v, Fraction):
            s = sympy.Rational(v.numerator, v.denominator)
        else:
            s = sympy.sympify(v)
        if s is sympy.nan:
            raise ValueError(f"{name} must be a number (not NaN), got nan{where}")
        if not (s.is_number and s.is_extended_real):
            raise ValueError(f"{name} must be real numbers, got {v!r}{where}")
        if s.is_infinite and (1 if s.is_extended_positive else -1) != trivial:
            raise ValueError(f"{name} must be finite, got {s}{where}")
        out[idx] = s
    return out


def exact_bound_evidence(quantity: Any, stated: Any, side: str, trivial: int,
                         instance_at: Callable[[int, int], dict[str, Any]],
                         counterexample: dict[str, Any] | None, what: str) -> Evidence:
    """``quantity <= stated`` (``side="upper"``) or ``>=`` (``"lower"``), exactly and
    componentwise: the exact branch of :func:`fedtheory.claimkit.checks.check_bound`, whose
    docstring states the ratio and its conventions. ``trivial`` is the sign of the infinite
    stated side that holds (+1 upper, -1 lower); ``instance_at(k, size)`` the instance of
    entry ``k`` of ``size``."""
    q = exact_array("quantity", quantity)
    b = exact_array("bound", stated, trivial=trivial)
    try:
        q, b = np.broadcast_arrays(q, b)
    except ValueError:
        raise ValueError(f"quantity and bound must have one shape, got {q.shape} and "
                         f"{b.shape}") from None
    qf, bf = q.ravel(), b.ravel()
    bad = np.array([bool(x > y) if side == "upper" else bool(x < y)
                    for x, y in zip(qf, bf, strict=True)], dtype=bool)
    num, den = (qf, bf) if side == "upper" else (bf, qf)
    r = np.array([(1.0 if n == 0 else float(sympy.sign(n)) * np.inf) if d == 0
                  else float(n / d) for n, d in zip(num, den, strict=True)])
    k = int(np.argmax(r)) if r.size > 1 else 0
    instance = instance_at(k, r.size)
    rel = "<=" if side == "upper" else ">="
    which = "measured/stated" if side == "upper" else "stated/measured"
    detail = (f"{what} {rel} stated (exact): largest {which} {r[k]:.6g}"
              + ("" if r.size == 1 else f" at {instance}")
              + f" (measured {qf[k]}, stated {bf[k]}); {int(bad.sum())} of {bad.size} violated")
    ce = None
    if bad.any():
        j = int(np.argmax(np.where(bad, r, -np.inf)))
        ce = {**(counterexample or {}), **instance_at(j, r.size), "measured": qf[j],
              "bound": bf[j]}
    return Evidence(not bool(bad.any()), _scalar(q), _scalar(b), detail, counterexample=ce,
                    ratio=float(r[k]), instance=instance)


def _scalar(a: np.ndarray) -> Any:
    return a.item() if a.size == 1 else a

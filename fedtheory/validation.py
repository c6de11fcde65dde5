"""Argument checks shared by the library: a ``ValueError`` naming the argument and its value.

>>> positive_real("lr", 0.5)
0.5
>>> positive_real("lr", 0)
Traceback (most recent call last):
...
ValueError: lr must be a positive real number, got 0
>>> integer_at_least("rounds", 0, 0)
0
>>> finite_array("x0", [1.0, float("nan"), 3.0], [(3,)])
Traceback (most recent call last):
...
ValueError: x0 must be finite, but it has 1 NaN entry (at index 1)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["finite_array", "integer_at_least", "positive_real"]

#: Indices of non-finite entries named in a message before it is shortened.
_MAX_LISTED = 5


def positive_real(name: str, value: Any) -> float:
    """``value`` as a finite float > 0, or a ValueError naming ``name``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive real number, got {value!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a positive real number, got {value!r}")
    return v


def integer_at_least(name: str, value: Any, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum`` (bools rejected), or a ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _where(mask: np.ndarray) -> str:
    """The indices where ``mask`` holds, for a message: ``1``, ``(0, 2)``, shortened if many."""
    idx = np.argwhere(mask)
    items = [str(int(i[0])) if mask.ndim == 1 else str(tuple(int(k) for k in i))
             for i in idx[:_MAX_LISTED]]
    more = f", ... ({len(idx)} in all)" if len(idx) > _MAX_LISTED else ""
    return ("index " if len(idx) == 1 else "indices ") + ", ".join(items) + more


def finite_array(name: str, value: Any, shapes: Sequence[tuple[int, ...]],
                 shape_text: str | None = None) -> np.ndarray:
    """``value`` as a float array of one of the ``shapes`` with finite entries only.

    Otherwise a ValueError naming ``name``: not numbers; the wrong shape (described by
    ``shape_text``, default the shapes themselves); or NaN / infinite entries, counted and
    located (their indices, the first few).

    >>> finite_array("x0", [[0.0, 1.0], [float("inf"), float("-inf")]], [(2, 2)])
    Traceback (most recent call last):
    ...
    ValueError: x0 must be finite, but it has 2 infinite entries (at indices (1, 0), (1, 1))
    >>> finite_array("x0", [1.0, 2.0], [(3,)])
    Traceback (most recent call last):
    ...
    ValueError: x0 must be finite with shape (3,), got shape (2,)
    """
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got {value!r}") from None
    if arr.shape not in [tuple(s) for s in shapes]:
        text = shape_text or " or ".join(str(tuple(s)) for s in shapes)
        raise ValueError(f"{name} must be finite with shape {text}, got shape {arr.shape}")
    finite = np.isfinite(arr)
    if not finite.all():
        parts = []
        for label, mask in (("NaN", np.isnan(arr)), ("infinite", np.isinf(arr))):
            count = int(mask.sum())
            if count:
                plural = "entry" if count == 1 else "entries"
                parts.append(f"{count} {label} {plural} (at {_where(mask)})")
        raise ValueError(f"{name} must be finite, but it has {' and '.join(parts)}")
    return arr

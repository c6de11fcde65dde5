"""Argument checks shared by the library: a ``ValueError`` naming the argument and its value.

>>> positive_real("lr", 0.5)
0.5
>>> positive_real("lr", 0)
Traceback (most recent call last):
...
ValueError: lr must be a positive real number, got 0
>>> integer_at_least("rounds", 0, 0)
0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["integer_at_least", "positive_real"]


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

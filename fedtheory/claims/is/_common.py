"""Claim-side glue shared by the claims of family ``is`` (not discovered: ``_`` prefix)."""

from __future__ import annotations

import numpy as np

from fedtheory import stats
from fedtheory.claims import Evidence

__all__ = ["ALPHA", "power_note"]

ALPHA = stats.DEFAULT_ALPHA


def power_note(ev: Evidence, theory: float) -> str:
    """The relative half-width of the interval: the smallest relative deviation detectable."""
    se = ev.data.get("stderr")
    if se is None or ev.tolerance is None or theory == 0:
        return ""
    half = float(np.max(np.asarray(se))) * ev.tolerance
    return f"; detects relative deviations above {half / abs(theory):.2%}"

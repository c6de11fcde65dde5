"""Claim-side glue shared by the claims of family ``mifa`` (not discovered: ``_`` prefix)."""

from __future__ import annotations

from typing import Any

import numpy as np

from fedtheory import stats
from fedtheory.claims import Claim, Context, Evidence, combined_alpha

__all__ = ["ALPHA", "add_seed_experiment_checks", "fmt_frac", "identity_and_bound", "z_reject"]

ALPHA = stats.DEFAULT_ALPHA


def fmt_frac(a: Any) -> Any:
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
    on the same samples: passed when both pass, inconclusive when the identity is."""
    ok = bool(ident.passed) and bool(up.passed)
    return Evidence(passed=ok if ident.passed is not None else None, measured=ident.measured,
                    theoretical=theoretical, detail=f"{ident.detail}. {bound_label}{up.detail}",
                    alpha=combined_alpha([ident, up]),
                    counterexample=ident.counterexample or up.counterexample,
                    data=data if data is not None else {})


def add_seed_experiment_checks(claim: Claim, kind: str,
                               p_values: tuple[float, ...] = (0.01, 0.1, 0.5)) -> None:
    """The checks of seed 000's experiment on problem ``kind`` ("quadratic" or "logistic"):
    the figure, then one paired U-MIFAm-against-every-rule check per ``p``."""
    from fedtheory.experiments.mifa_runs import figure_evidence, umifam_best_evidence

    def figure(ctx: Context) -> Evidence:
        """Median and 10-90% bands of f - f* over the seeds, p in {0.01, 0.1, 0.5}."""
        return figure_evidence(ctx, kind)

    claim.check("figure", "figure")(figure)
    for pv in p_values:
        def umifam_best(ctx: Context, pv: float = pv) -> Evidence:
            return umifam_best_evidence(ctx, kind, pv)

        umifam_best.__doc__ = (f"p = {pv:g}: U-MIFAm against each other rule, paired over "
                               "seeds (check_less on the tail log10 gap)")
        claim.check("monte_carlo", f"umifam_best_p{pv:g}")(umifam_best)

"""Every claim id listed in ``docs/claims.md``, by family: the contract, so that coverage can be
tested.

Each id below becomes exactly one registered claim. Once a family has a registered claim, the
test suite asserts that every id of that family is registered. ``<id>.corrected`` claims (a
corrected statement derived after a refutation) are registered in addition to these ids; so may
be claims of a researcher's own, outside the contract.
"""

from __future__ import annotations

CATALOG: dict[str, tuple[str, ...]] = {
    "is": (
        "is.unbiased",
        "is.variance_independent",
        "is.variance_arbitrary_sampling",
        "is.independent_minimises_variance",
        "is.variance_without_replacement",
    ),
    "mifa": (
        "mifa.biased",
        "mifa.umifa_unbiased",
        "mifa.mifa_error",
        "mifa.umifa_error",
        "mifa.error_floor_step",
        "mifa.error_floor_average",
        "mifa.zero_floor",
        "mifa.saga_equivalence",
        "mifa.quadratic_experiment",
        "mifa.logistic_experiment",
        "mifa.rates_table",
    ),
    "fedau": (
        "fedau.objective_inconsistency",
        "fedau.weight_mean",
        "fedau.weight_error",
        "fedau.cutoff_choice",
        "fedau.participation_patterns",
    ),
    "ocs": (
        "ocs.independent_variance",
        "ocs.closed_form",
        "ocs.kkt_derivation",
        "ocs.optimal_variance",
        "ocs.aocs",
        "ocs.improvement_factor",
        "ocs.dsgd_strongly_convex",
        "ocs.dsgd_nonconvex",
        "ocs.fedavg_strongly_convex",
        "ocs.fedavg_nonconvex",
        "ocs.experiment",
    ),
    "fdms": (
        "fdms.dropout_is_substitution",
        "fdms.naive_error",
        "fdms.friend_error",
        "fdms.nonfriend_probability",
        "fdms.discovery_error",
        "fdms.psi_bound",
        "fdms.complexity_reduction",
        "fdms.experiment",
    ),
    "fedavg": (
        "fedavg.heterogeneity",
        "fedavg.partial_participation",
        "fedavg.local_steps",
        "fedavg.heterogeneity_ablation",
        "fedavg.scaffold_table",
    ),
}

#: Seed files per family (numbers of :data:`fedtheory.papers.PAPERS`).
SEEDS: dict[str, tuple[str, ...]] = {
    "is": ("000", "002", "003"),
    "mifa": ("000",),
    "fedau": ("001",),
    "ocs": ("002",),
    "fdms": ("004",),
    "fedavg": ("003",),
}

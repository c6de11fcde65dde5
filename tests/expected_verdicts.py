"""The verdict each registered claim is expected to reach with the quick preset and seed 0.

This pins findings: a claim that was refuted stays refuted unless someone shows why the seed
is right after all, and a confirmed claim that starts failing is a regression.
"""

EXPECTED: dict[str, str] = {
    "mifa.biased": "confirmed",
    "mifa.umifa_unbiased": "confirmed",
    "mifa.mifa_error": "confirmed",
    "mifa.umifa_error": "confirmed",
    "mifa.error_floor_step": "confirmed",
    "mifa.error_floor_average": "refuted",
    "mifa.error_floor_average.corrected": "confirmed",
    "is.unbiased": "confirmed",
    "is.variance_independent": "confirmed",
    "is.variance_arbitrary_sampling": "confirmed",
    "is.independent_minimises_variance": "refuted",
    "is.independent_minimises_variance.corrected": "confirmed",
    "is.variance_without_replacement": "confirmed",
    "ocs.independent_variance": "confirmed",
    "ocs.closed_form": "refuted",
    "ocs.closed_form.corrected": "confirmed",
    "ocs.kkt_derivation": "confirmed",
    "ocs.optimal_variance": "confirmed",
    "ocs.aocs": "confirmed",
    "ocs.improvement_factor": "confirmed",
    "ocs.dsgd_strongly_convex": "refuted",
    "ocs.dsgd_strongly_convex.corrected": "confirmed",
    "ocs.dsgd_nonconvex": "confirmed",
    "ocs.fedavg_strongly_convex": "refuted",
    "ocs.fedavg_strongly_convex.corrected": "confirmed",
    "ocs.fedavg_nonconvex": "confirmed",
    "fedavg.heterogeneity": "confirmed",
    "fedavg.partial_participation": "confirmed",
    "fedavg.local_steps": "confirmed",
    "ocs.experiment": "confirmed",
}

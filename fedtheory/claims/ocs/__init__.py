r"""Family ``ocs`` (seed 002): Optimal Client Sampling, its closed form, AOCS, the improvement
factor, the convergence theorems of DSGD / FedAvg with OCS, and the Section 5 experiment.

The objects: the aggregation variance of independent sampling (eq. (6)), its minimiser over the
participation probabilities (eq. (7), Lemma 20 and its KKT derivation), the optimal variance,
AOCS (Algorithm 2: the same probabilities with aggregation only), the improvement factor
:math:`\alpha` and :math:`\gamma = m/(\alpha(n-m)+m)` (Definition 11), the one-step recursions
of Theorems 13, 15, 17 and 18, and FedAvg with full / uniform / OCS / AOCS participation on an
unbalanced federated split of ``load_digits`` (Section 5).

The evidence: sympy (indicator algebra, the KKT system, the theorems' constants:
:mod:`fedtheory.symbolic.kkt` and the ``fedtheory.symbolic.ocs_*`` modules, one per derived
quantity: ``ocs_independent_variance``, ``ocs_optimal_variance``, ``ocs_improvement_bound``,
``ocs_dsgd_step_error``, ``ocs_dsgd_uniform_rate``, ``ocs_dsgd_descent``,
``ocs_fedavg_z_coefficient``, ``ocs_fedavg_corrected_constants``, ``ocs_fedavg_descent``),
exact rational enumeration of participation patterns and KKT points, cvxpy with a KKT
certificate (:mod:`fedtheory.convex.ocs`), and Monte Carlo judged by :mod:`fedtheory.stats` at
:math:`\alpha = 10^{-6}` per check. The math lives in :mod:`fedtheory.sampling.ocs`,
:mod:`fedtheory.sampling.aocs` and :mod:`fedtheory.sampling.improvement`; the instances and the
cvxpy comparison in :mod:`fedtheory.theory.ocs`; the theorems' step-size limits and right-hand
sides in :mod:`fedtheory.theory.ocs_theorems`, the one-step draws from a fixed iterate in
:mod:`fedtheory.theory.ocs_one_step`, the exact counterexamples in
:mod:`fedtheory.theory.ocs_counterexamples`; their Monte Carlo scenarios (and the
slack figure's data) in :mod:`fedtheory.experiments.ocs_theorems`; the Section 5 experiment in
:mod:`fedtheory.experiments.ocs_fedavg`; every figure in :mod:`fedtheory.plotting.ocs`.

Floating-point allowances (never tolerances on the statements): a float computation compared
with an exact rational one, or with the same quantity computed another way, may differ by
rounding; :data:`fedtheory.theory.ocs.FLOAT_RTOL` (1e-9, relative to the problem's scale)
covers that.

The theorems are one-step recursions, checked exactly as stated as conditional expectations from
a fixed iterate :math:`x^k` on quadratic problems whose stochastic gradients meet Assumptions
7/8 with equality; :math:`\gamma` is estimated with a confidence interval from an independent
stream and the theorem's step sizes and right-hand side are evaluated at the end of that
interval least favourable to a refutation (see :mod:`fedtheory.theory.ocs_theorems`).

One claim per module, named after the last part of its id: ``independent_variance``,
``closed_form`` (and ``closed_form_corrected``), ``kkt_derivation``, ``optimal_variance``,
``aocs``, ``improvement_factor``, ``dsgd_strongly_convex`` (and
``dsgd_strongly_convex_corrected``), ``dsgd_nonconvex``, ``fedavg_strongly_convex`` (and
``fedavg_strongly_convex_corrected``), ``fedavg_nonconvex``, ``experiment``.

Findings:

* ``ocs.closed_form`` is refuted: Lemma 20's "j-th largest" ordering gives infeasible
  probabilities (norms (1, 2), m = 2: p = (2/3, 4/3)); the main text's "j-th smallest" is the
  KKT point (``ocs.closed_form.corrected``).
* ``ocs.dsgd_strongly_convex`` (Theorem 13) is refuted with non-uniform weights (exact:
  93/2048 > 327/8192): the proof bounds a weighted sum of :math:`f_i(x) - f_i(x^\star)` by
  :math:`W(f(x) - f^\star)`, which needs :math:`f_i(x) \ge f_i(x^\star)` for every :math:`i`;
  corrected constants in ``ocs.dsgd_strongly_convex.corrected``.
* ``ocs.fedavg_strongly_convex`` (Theorem 17) is refuted (exact, n = 8, m = 1, R = 2): a factor
  :math:`1/\gamma` is lost in the proof; the corrected recursion is
  ``ocs.fedavg_strongly_convex.corrected``.
"""

from fedtheory.claims.family_packages import Family

__all__: list[str] = []

#: The family's title, place and reading order (:mod:`fedtheory.claims.family_packages`).
FAMILY = Family(
    title="optimal client sampling",
    position=4,
    order=(
        "independent_variance", "closed_form", "kkt_derivation", "optimal_variance",
        "aocs", "improvement_factor", "dsgd_strongly_convex", "dsgd_nonconvex",
        "fedavg_strongly_convex", "fedavg_nonconvex", "experiment",
    ),
)

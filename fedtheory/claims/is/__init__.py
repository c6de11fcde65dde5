r"""Family ``is``: unbiased importance-sampled aggregation (seeds 000, 002, 003).

The object of every claim here is the importance-sampled aggregate of seed 002 (eq. (2),
Lemma 1),

.. math:: X = \sum_{i \in S} \frac{w_i \zeta_i}{p_i},

with a random participating set :math:`S` (marginals :math:`p`, pair matrix
:math:`\mathbf P`), weights :math:`w_i` and client vectors :math:`\zeta_i`; seed 000's
:math:`G = \frac1n \sum_i 1_i g_i / p_i` is the case :math:`w_i = 1/n`, :math:`\zeta_i = g_i`
under independent sampling, and seed 000/003's :math:`\frac1b \sum_{i\in S} g_i` the case
:math:`w_i = 1/n`, :math:`p_i = b/n` under :math:`b`-of-:math:`n` sampling.

The evidence: symbolic derivations by indicator algebra (:mod:`fedtheory.symbolic.indicators`,
:mod:`fedtheory.symbolic.estimator_mean`, :mod:`fedtheory.symbolic.estimator_variance`,
:mod:`fedtheory.symbolic.sign_averaged_variance`), exact rational enumeration of every
participation pattern for small :math:`n` (:func:`fedtheory.sampling.moments.enumerate_moments`),
the ESO semidefinite program (:mod:`fedtheory.convex.eso`), and vectorised Monte Carlo
(:func:`fedtheory.sampling.moments.sample_estimator`) judged by :mod:`fedtheory.stats` at
:math:`\alpha = 10^{-6}` per check (split by Bonferroni over the sub-tests of a check). The
seeds' closed forms and the scenario builders are in :mod:`fedtheory.theory.importance_sampling`,
the figure's data in :mod:`fedtheory.experiments.importance_sampling` and its plot in
:mod:`fedtheory.plotting.importance_sampling`.

One claim per module, named after the last part of its id: ``unbiased``,
``variance_independent``, ``variance_arbitrary_sampling``, ``independent_minimises_variance``
(and ``independent_minimises_variance_corrected``), ``variance_without_replacement``.

Finding: ``is.independent_minimises_variance`` (seed 002, after Algorithm 1) is refuted: the
left-hand side of (5) is *not* minimised by independent sampling; e.g. :math:`n = 2`,
:math:`p = (\tfrac12, \tfrac12)`, :math:`w = (\tfrac12, \tfrac12)`, :math:`\zeta_1 = \zeta_2 = 1`:
sampling one client uniformly gives variance 0, independent sampling 1/2. What is true is
registered as ``is.independent_minimises_variance.corrected``. Its erratum: a false statement
(the document's reasons prove that independent sampling minimises the right-hand side of (5), not
the left-hand side).

Power (``fedtheory verify --power``): every identity and bound declares its stated side
(constants and droppable factors, :class:`~fedtheory.claimkit.stated.Stated`) and every check
reads it through the context. The bounds are checked as inequalities
(:func:`fedtheory.symbolic.inequality.prove_nonnegative`) and where they are attained: equal
deviations :math:`\|g_i - \bar G\|^2` for the :math:`\sigma_G^2` bound of
``is.variance_without_replacement``, independent sampling and all-or-nothing sampling with
equal updates for (5), independent sampling for the corrected lower bound; adversarial
searches (:func:`fedtheory.theory.importance_sampling.hill_climb`, exact re-check) report the
largest ratio found.
"""

from fedtheory.claims.family_packages import Family

__all__: list[str] = []

#: The family's title, place and reading order (:mod:`fedtheory.claims.family_packages`).
FAMILY = Family(
    title="unbiased importance-sampled aggregation",
    position=1,
    order=(
        "unbiased", "variance_independent", "variance_arbitrary_sampling",
        "independent_minimises_variance", "variance_without_replacement",
    ),
)

r"""Sampling designs: random subsets :math:`S \subseteq [n]` of participating clients.

A design (a "sampling" in seed 002, Section 2) is described, for everything the estimators
of this package need, by its marginals and its pair-inclusion matrix,

.. math::

    p_i = \Pr(i \in S), \qquad \mathbf P_{ij} = \Pr(\{i, j\} \subseteq S),
    \qquad \mathbf P_{ii} = p_i .

The protocol is :class:`SamplingDesign` (:mod:`fedtheory.sampling.base`); this module gathers
the designs of the package, each in its own file, a small class whose constructor stores and
validates its parameters:

* :class:`IndependentSampling` (:mod:`~fedtheory.sampling.independent`) -- client :math:`i`
  joins with probability :math:`p_i`, independently of the others (Bernoulli participation):
  :math:`\mathbf P_{ij} = p_i p_j`.
* :class:`UniformWithoutReplacement` (:mod:`~fedtheory.sampling.without_replacement`) --
  :math:`b` of the :math:`n` clients, every :math:`b`-subset equally likely (":math:`b`-nice"
  sampling): :math:`p_i = b/n`, :math:`\mathbf P_{ij} = b(b-1)/(n(n-1))` for :math:`i \ne j`.
* :class:`ExplicitSampling` (:mod:`~fedtheory.sampling.explicit`) -- an explicit distribution
  over a list of subsets (small :math:`n`): :math:`\mathbf P = M^\top \mathrm{Diag}(\pi) M`
  for the 0/1 matrix :math:`M` of subsets and their probabilities :math:`\pi`.

A participation process declares its round's design in its own file (``process.design()``;
the designs of new schemes live there, beside the process: docs/architecture.md).

Every design offers the same API (:class:`SamplingDesign`): ``n``, ``p``, ``P`` (exact, in
floating point), ``p_exact`` / ``P_exact`` (as :class:`fractions.Fraction`, for exact
checks), ``sample(rng, replicas)`` (boolean masks of shape ``(replicas, n)``, drawn
vectorised, no Python loop over replicas) and ``enumerate()`` (every subset with positive
probability and its probability, for exact expectations when :math:`n` is small).

A design is *proper* (seed 002) when every :math:`p_i > 0`. :class:`IndependentSampling`
and :class:`UniformWithoutReplacement` are always proper; :class:`ExplicitSampling` allows
clients that never participate (``p_i = 0``, reported by :attr:`SamplingDesign.proper`); the
importance-sampled estimators of :mod:`fedtheory.sampling.moments` reject such designs.

Examples
--------
>>> import numpy as np
>>> d = UniformWithoutReplacement(4, 2)
>>> d.p
array([0.5, 0.5, 0.5, 0.5])
>>> d.P_exact[0, 1]  # 2*1 / (4*3)
Fraction(1, 6)
>>> d.sample(np.random.default_rng(0), 3).sum(axis=1)
array([2, 2, 2])
>>> masks, probs = ExplicitSampling([(0,), (0, 1)], [0.25, 0.75]).enumerate()
>>> masks.astype(int).tolist(), probs.tolist()
([[1, 0], [1, 1]], [0.25, 0.75])
"""


from __future__ import annotations

from fedtheory.sampling.base import MAX_ENUMERATE, SamplingDesign
from fedtheory.sampling.base import _as_fraction as _as_fraction  # (moved: its home is base)
from fedtheory.sampling.explicit import PROB_SUM_TOL, ExplicitSampling
from fedtheory.sampling.independent import IndependentSampling
from fedtheory.sampling.shuffle import _partial_shuffle as _partial_shuffle  # (moved)
from fedtheory.sampling.shuffle import _shuffle_work as _shuffle_work  # (moved)
from fedtheory.sampling.without_replacement import UniformWithoutReplacement

__all__ = [
    "DESIGN_CLASSES",
    "MAX_ENUMERATE",
    "PROB_SUM_TOL",
    "ExplicitSampling",
    "IndependentSampling",
    "SamplingDesign",
    "UniformWithoutReplacement",
]

#: Every public design class (the common test battery asserts each one is exercised).
DESIGN_CLASSES: tuple[type[SamplingDesign], ...] = (
    IndependentSampling,
    UniformWithoutReplacement,
    ExplicitSampling,
)

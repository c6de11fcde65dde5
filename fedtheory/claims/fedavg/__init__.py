r"""Family ``fedavg``: the lecture on FedAvg, SAGA and SCAFFOLD (seed 003).

The lecture's rates are :math:`\mathcal O(\cdot)` statements (Theorems 1-3). Each claim is
turned into measurable, falsifiable statements on quadratics
:math:`f_i(x) = \tfrac12(x-c_i)^\top A_i(x-c_i)`, where FedAvg's dynamics are affine in the
iterate and the noise, so that every expectation is available exactly:

* ``fedavg.heterogeneity`` (Theorem 1 vs Theorem 2): FedAvg's error floor is an increasing
  (exactly affine) function of the heterogeneity :math:`\zeta^2`; SCAFFOLD's and SAGA's floors
  do not depend on it.
* ``fedavg.partial_participation`` (Theorem 3): the variance of the server update under
  :math:`m`-of-:math:`n` participation is :math:`\frac{\gamma^2K}{m}\big(\sigma^2 +
  K\zeta^2(1-\frac mn)\frac{n}{n-1}\big)` to leading order, and the stationary error grows
  accordingly.
* ``fedavg.local_steps`` (Theorem 1's remark): FedAvg with :math:`K` local steps and
  :math:`R` rounds reaches the error of parallel SGD with :math:`KR` steps, both
  :math:`\propto 1/\sqrt{KR}` with the same constant, with :math:`K` times fewer rounds.

These three test the rate structure on quadratics (their titles say so), not the lecture's
experiments. The two experiments the lecture shows are run on an offline stand-in (digits,
multinomial logistic regression, the engine; :mod:`fedtheory.experiments.fedavg_lecture_tables`):

* ``fedavg.heterogeneity_ablation`` (line 153, Table 2 of Mendieta et al.): FedAvg's test
  accuracy for Dirichlet label splits :math:`\alpha \in \{0.1, 0.5, 2.5\}` and a homogeneous
  split, over a declared range of round budgets;
* ``fedavg.scaffold_table`` (lines 313-322, Table 3 of Karimireddy et al.): rounds to a target
  test accuracy of SGD, SCAFFOLD and FedAvg (1 and 5 epochs) at 0 %, 10 % and 100 % similarity.

Layout: one claim per file (``heterogeneity.py``, ``partial_participation.py``,
``local_steps.py``, ``heterogeneity_ablation.py``, ``scaffold_table.py``, each defining
``CLAIM``). The symbolic derivations are public functions
(``derive_*``) in :mod:`fedtheory.symbolic` (``local_sgd``, ``fedavg_drift``,
``scaffold_fixed_point``, ``subset_average_variance``, ``fedavg_update_variance``,
``fedavg_round_map``, ``fedavg_rate_constants``) so that ``notebooks/fedavg_derivations.ipynb``
shows exactly what the checks compute; the exact moments are in :mod:`fedtheory.theory.fedavg`,
the engine runs in :mod:`fedtheory.experiments.fedavg_experiments` and
:mod:`fedtheory.claims.fedavg._data`, the figures in :mod:`fedtheory.plotting.fedavg`.
The derivations use one-dimensional clients :math:`f_i = \tfrac{a_i}2(x-c_i)^2`: FedAvg on a
diagonal quadratic runs coordinate by coordinate, so a per-coordinate identity gives the vector
one by summing over coordinates. Local SGD is solved in closed form with
:func:`sympy.rsolve`; participation moments come from
:func:`fedtheory.symbolic.indicators.uniform_without_replacement_moments`.

Findings (quick preset, seed 0; all three confirmed): FedAvg's floor is exactly affine in
:math:`\zeta_\star^2` -- but only when the Hessians differ; with equal Hessians (the only
quadratics on which Assumption 2 holds globally) FedAvg has no drift at all, so the
:math:`\zeta^{2/3}/R^{2/3}` term of Theorem 1 is an upper bound such problems do not attain.
Theorem 3's heterogeneity factor is exactly :math:`\zeta^2(1-m/n)\cdot\frac{n}{n-1}` for
sampling without replacement (the constant :math:`n/(n-1)` is hidden by the
:math:`\mathcal O`). SAGA's memory removes the dependence on :math:`\zeta^2` but its floor at
:math:`\zeta^2 = 0` is higher than FedAvg's (stale noisy gradients in the memory). At finite
:math:`R` the exponent of FedAvg's and SGD's error is not exactly :math:`-1/2`; the distance
decays like :math:`R^{-1/2}`.
"""

from fedtheory.claims.family_packages import Family

__all__: list[str] = []

#: The family's title, place and reading order (:mod:`fedtheory.claims.family_packages`).
FAMILY = Family(
    title="FedAvg in the lecture",
    position=6,
    order=(
        "heterogeneity", "partial_participation", "local_steps",
    ),
)

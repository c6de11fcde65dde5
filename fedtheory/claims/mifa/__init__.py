r"""Family ``mifa``: memory-based aggregation under partial participation (seed 000).

The rules (seed 000, setups i-v; implemented in :mod:`fedtheory.algorithms`):

* FedAvg-IS: :math:`G_t = \frac1n\sum_{i\in\mathcal A(t)}\Delta_i/p_i`;
* MIFA: :math:`G_t^{(i)} = \Delta_i` if :math:`i\in\mathcal A(t)`, else :math:`G_{t-1}^{(i)}`;
  :math:`G_t = \frac1n\sum_i G_t^{(i)}`;
* U-MIFA: :math:`G_t^{(i)} = \Delta_i/p_i - (1/p_i - 1)G_{t-1}^{(i)}` if active, else
  :math:`G_{t-1}^{(i)}`;
* MIFAm, U-MIFAm: heavy ball :math:`v_t = \beta v_{t-1} + G_t`, :math:`w_t = w_{t-1}-\eta v_t`.

Participation is independent, :math:`1_i\sim\mathrm{Bernoulli}(p_i)`; the document's analyses take
exact client gradients :math:`\Delta_i = \nabla f_i(w_t)` and equal :math:`p_i = p`.

The symbolic derivations are public functions (``derive_*`` in :mod:`fedtheory.symbolic`)
so that the notebook ``notebooks/mifa_derivations.ipynb`` shows exactly what the checks
compute. Conditional
expectations over the participation of one round are derived with
:func:`bernoulli_expectation` (:math:`\mathbb E 1_i = p_i`, :math:`1_i^2 = 1_i`, independence)
and, independently, by exact enumeration of all :math:`2^n` patterns with rational numbers.
Squared norms are derived per coordinate: every identity below is a quadratic form applied
coordinatewise, so a scalar (one-coordinate) identity valid for all values gives the vector one
by summing over coordinates.

Main findings (quick preset, seed 0): the one-round identities hold exactly; the document's summed
FedAvg-IS floor :math:`\frac{\eta^2Lc}2\sigma_G^2` is wrong (summing gives
:math:`\eta L c\,\sigma_G^2`); MIFA's printed bound has the denominator :math:`\eta T-1`
(negative for :math:`T<1/\eta`); U-MIFA as printed multiplies each client's memory error by
:math:`-(1/p-1)` whenever the client is active, so its memory error grows like
:math:`((1-p)/p)^t` in mean square and the method diverges for :math:`p<1/2` (the document's own
:math:`p = 0.1`); SAGA and U-MIFA share the one-step direction but not the memory; the
tables' convex FedPGD row puts its floor inside :math:`1/T`, and the row "SAGA/U-MIFA" holds for
SAGA (measured slope of evaluations-to-:math:`\epsilon` in :math:`n` about 0.7 against FedGD's 1)
but not for U-MIFA as printed. The seed's "U-MIFAm works better in practice" is refuted on both
experiments (at :math:`p = 0.5` MIFAm is the fastest).
"""

from fedtheory.claims.family_packages import Family

__all__: list[str] = []

#: The family's title, place and reading order (:mod:`fedtheory.claims.family_packages`).
FAMILY = Family(
    title="memory-based aggregation",
    position=2,
    order=(
        "biased", "umifa_unbiased", "mifa_error", "umifa_error", "error_floor_step",
        "error_floor_average", "zero_floor", "saga_equivalence", "quadratic_experiment",
        "logistic_experiment", "rates_table",
    ),
    intro=(
        "Algorithms (Δ_i = client update, p_i participation probability, A(t) active set): "
        "FedAvg-IS; MIFA (G_t^i = Δ_i if active else G_{t−1}^i; G_t = mean of the table); U-MIFA "
        "(active: G_t^i = Δ_i/p_i − (1/p_i − 1) G_{t−1}^i); MIFAm and U-MIFAm (heavy ball: "
        "v_t = β v_{t−1} + G_t, w_t = w_{t−1} − η v_t)."
    ),
)

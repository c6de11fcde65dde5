r"""Seed 000's experiment under its SAGA reading: U-MIFA as the SAGA step the seed names it.

Seed 000 prints U-MIFA's memory row as
:math:`G_t^{(i)} = \frac1{p_i}\Delta_i - (\frac1{p_i}-1)G_{t-1}^{(i)}` (lines 22 and 47): as
printed, a client's memory error is multiplied by :math:`-(1/p_i - 1)` each time it takes
part, so the rule diverges for every :math:`p < 1/2`. The same seed names the method SAGA
("Equivalence between variance reduction methods ... SAG, SAGA", lines 115-121; the rate
table's rows "SAGA/U-MIFA", lines 189 and 203), whose direction is
:math:`G_t = \bar u_{t-1} + \sum_{i\in\mathcal A(t)}\frac{w_i}{p_i}(\Delta_i - u_i)` with the
table storing :math:`\Delta_i` (:class:`fedtheory.algorithms.saga.SAGA`; the same direction
as U-MIFA's for the same table, :mod:`fedtheory.claims.mifa.saga_equivalence`). Under that
reading U-MIFAm is SAGA with the server's heavy ball
:math:`v_t = \beta v_{t-1} + G_t,\ w_t = w_{t-1} - \eta v_t` (the engine's ``momentum``,
the same recursion as :class:`~fedtheory.algorithms.mifa.UMIFAm`'s).

The seed gives no :math:`\beta`, so the reading is run over a declared range
:data:`READING_BETAS` (see its comment); MIFAm takes the same :math:`\beta` (the seed's two
momentum rules share one :math:`v_t` recursion). Every rule runs from the same start as the
seed experiment's main runs (tables at 0, the same :math:`w_0`, :math:`\eta = 0.02`, the same
seeds and so the same participation masks: paired).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fedtheory.experiments.mifa_experiments import _setting

__all__ = ["READING_BETAS", "reading_labels", "reading_specs", "run_reading", "saga_reading"]

#: The momenta the SAGA reading is run at. The seed gives no β ('v_t = β v_{t-1} + G_t',
#: lines 41 and 51): heavy-ball practice spans 0.5 (mild) to 0.95 (strong), 0.9 being the
#: usual default (and the seed experiment's main run); β = 0 is not momentum (U-MIFAm is then
#: U-MIFA itself), β >= 1 does not converge.
READING_BETAS = (0.5, 0.8, 0.9, 0.95)


def reading_labels(betas: Sequence[float] = READING_BETAS) -> list[tuple[str, str, float]]:
    """``(label, rule, beta)`` of each run: FedAvg-IS, MIFA and SAGA (U-MIFA read as SAGA)
    without momentum; SAGA with heavy ball (``"sagam@beta"``) and MIFAm (``"mifam@beta"``)
    at each β.

    >>> [lab for lab, _, _ in reading_labels((0.9,))]
    ['fedavg_is', 'mifa', 'saga', 'sagam@0.9', 'mifam@0.9']
    """
    out = [("fedavg_is", "fedavg_is", 0.0), ("mifa", "mifa", 0.0), ("saga", "saga", 0.0)]
    for b in betas:
        out += [(f"sagam@{b:g}", "saga", b), (f"mifam@{b:g}", "mifam", b)]
    return out


def run_reading(problem: Any, p: float, *, rule: str, beta: float, rounds: int,
                replicas: int, eta: float, seed: int, x0: np.ndarray | None,
                record_every: int) -> dict[str, Any]:
    """One run of :func:`saga_reading`: ``rule`` (``"saga"`` with server momentum ``beta``,
    ``"mifam"`` with its own ``beta``, or a rule without momentum), tables at 0. Returns
    ``{"rounds", "f_gap": (R, k)}``."""
    from fedtheory.algorithms import get_rule
    from fedtheory.participation import BernoulliParticipation
    from fedtheory.simulate import simulate

    if rule == "saga":
        made, momentum = get_rule("saga", memory_init="zeros"), beta
    elif rule == "mifam":
        made, momentum = get_rule("mifam", beta=beta), 0.0
    elif beta == 0:
        made, momentum = get_rule(rule), 0.0
    else:
        raise ValueError(f"rule {rule!r} takes no beta, got {beta!r}")
    with np.errstate(over="ignore", invalid="ignore"):
        res = simulate(problem, made, BernoulliParticipation(p, n=problem.n), rounds=rounds,
                       replicas=replicas, lr=eta, x0=x0, seed=seed, keep_replicas=True,
                       record_every=record_every, momentum=momentum)
    return {"rounds": res.rounds, "f_gap": res.f_gap.replicas}


def reading_specs(kind: str, *, quick: bool, seed: int = 0,
                  p_values: Sequence[float] = (0.01, 0.1, 0.5),
                  betas: Sequence[float] = READING_BETAS) -> list[dict[str, Any]]:
    """The keyword dicts of :func:`run_reading` for every (p, label), in
    :func:`saga_reading`'s order; the problem, rounds, seeds and start of the seed
    experiment's ``kind`` (:func:`fedtheory.experiments.mifa_experiments.seed_setting`)."""
    prob, kw = _setting(kind, quick=quick, seed=seed)
    common = {"problem": prob, "rounds": kw["rounds"], "replicas": kw["replicas"],
              "eta": kw["eta"], "seed": seed, "x0": kw["x0"],
              "record_every": kw["record_every"]}
    return [{**common, "p": pv, "rule": rule, "beta": b}
            for pv in p_values for _, rule, b in reading_labels(betas)]


def saga_reading(kind: str, *, quick: bool, seed: int = 0,
                 p_values: Sequence[float] = (0.01, 0.1, 0.5),
                 betas: Sequence[float] = READING_BETAS,
                 run_many: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None
                 ) -> dict[str, Any]:
    """Seed 000's experiment ``kind`` under the SAGA reading. Returns ``{"p_values",
    "betas", "rounds", "replicas", "eta", "problem", "runs": {p: {label: (R, k) f_gap}}}``
    (labels of :func:`reading_labels`)."""
    specs = reading_specs(kind, quick=quick, seed=seed, p_values=p_values, betas=betas)
    results = (run_many or (lambda ss: [run_reading(**x) for x in ss]))(specs)
    labels = [lab for _ in p_values for lab, _, _ in reading_labels(betas)]
    runs: dict[float, dict[str, np.ndarray]] = {pv: {} for pv in p_values}
    for spec, label, res in zip(specs, labels, results, strict=True):
        runs[spec["p"]][label] = res["f_gap"]
    return {"p_values": tuple(p_values), "betas": tuple(betas), "rounds": results[0]["rounds"],
            "replicas": specs[0]["replicas"], "eta": specs[0]["eta"],
            "problem": repr(specs[0]["problem"]), "runs": runs}

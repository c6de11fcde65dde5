r"""Aggregation rules for federated learning under partial participation.

Each rule is a small object with explicit state: ``state = rule.init(R, n, d, p=...)`` and
``G, state = rule.step(state, active, updates, p)``; :func:`get_rule` builds one by name.

======================  =====================================================  ============
name                    rule                                                   memory
======================  =====================================================  ============
``"fedavg"``            average of the participants                            none
``"fedavg_is"``         :math:`\frac1n\sum_{\mathcal A}\Delta_i/p_i`             none
``"fedpgd"``            :math:`\frac1b\sum_{\mathcal A}\Delta_i`                 none
``"full"``              every client's update (asks for all of them)            none
``"mifa"``              MIFA                                                    table
``"umifa"``             U-MIFA                                                  table
``"mifam"``             MIFA + heavy ball                                       table
``"umifam"``            U-MIFA + heavy ball                                     table
``"saga"``              SAGA (importance-weighted over the active set)          table
``"scaffold"``          SCAFFOLD (corrects the local steps)                     table
``"fedvarp"``           FedVARP-style, normalised by the realised participants  table
``"fedau"``             FedAU: weights from participation intervals            counters
``"fedavg_weighted"``   time-constant weights omega_n (seed 001)               none
``"fedavg_all"``        "average all": sum over the active / n                 none
``"fl_fdms"``           FL-FDMS: best discovered friend substitutes (004)      similarity
``"oracle"``            an active true friend substitutes (seed 004)            none
======================  =====================================================  ============

>>> rule = get_rule("umifa")
>>> rule.name, rule.table, rule.importance_weighted
('umifa', True, True)
"""

from __future__ import annotations

from typing import Any

from fedtheory.algorithms.base import (
    Participants,
    Rule,
    TableRule,
    as_participants,
    segment_sum,
    validate_probabilities,
    validate_weights,
)
from fedtheory.algorithms.fedau import FedAU, FedAvgAll, FedAvgWeighted, fedau_weights
from fedtheory.algorithms.fedavg import FedAvg, FedAvgIS, FedPGD, FullParticipation
from fedtheory.algorithms.fedvarp import FedVARP
from fedtheory.algorithms.mifa import MIFA, UMIFA, MIFAm, UMIFAm
from fedtheory.algorithms.saga import SAGA
from fedtheory.algorithms.scaffold import SCAFFOLD
from fedtheory.algorithms.stack import RuleStack
from fedtheory.algorithms.substitution import FLFDMS, FriendOracle
from fedtheory.validation import build_registered

__all__ = [
    "MIFA",
    "RULES",
    "RuleStack",
    "SAGA",
    "SCAFFOLD",
    "UMIFA",
    "FedAU",
    "FedAvg",
    "FedAvgAll",
    "FedAvgIS",
    "FedAvgWeighted",
    "FedPGD",
    "FedVARP",
    "FLFDMS",
    "FriendOracle",
    "FullParticipation",
    "MIFAm",
    "Participants",
    "Rule",
    "TableRule",
    "UMIFAm",
    "as_participants",
    "fedau_weights",
    "get_rule",
    "segment_sum",
    "validate_probabilities",
    "validate_weights",
]

#: name -> rule class, every registered aggregation rule.
RULES: dict[str, type[Rule]] = {
    cls.name: cls
    for cls in (
        FedAvg, FedAvgIS, FedPGD, FullParticipation, MIFA, UMIFA, MIFAm, UMIFAm, SAGA,
        SCAFFOLD, FedVARP, FedAU, FedAvgWeighted, FedAvgAll,
        FLFDMS, FriendOracle,
    )
}


def get_rule(name: str | Rule, **params: Any) -> Rule:
    """The rule registered under ``name``, built with ``params`` (e.g. ``beta``,
    ``memory_init``, ``b``); a :class:`Rule` instance is returned as it is.

    >>> get_rule("mifam", beta=0.5).beta
    0.5
    """
    if isinstance(name, Rule):
        if params:
            raise ValueError(f"params {sorted(params)} given with a rule object {name!r}")
        return name
    return build_registered(RULES, name, params, "rule", "rule")

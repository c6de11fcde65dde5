"""Participation processes: which clients take part in each round, for many replicas at once.

>>> proc = get_process("bernoulli", p=0.1, n=10)
>>> proc.stationary.sum().round(12)
np.float64(1.0)
"""

from __future__ import annotations

from typing import Any

from fedtheory.participation.aocs import AOCSParticipation
from fedtheory.participation.base import (
    ParticipationProcess,
    RNGLike,
    RoundAwareProcess,
    RoundView,
    Selection,
    uniforms,
    validate_n,
    validate_probability_vector,
)
from fedtheory.participation.bernoulli import BernoulliParticipation
from fedtheory.participation.custom import CustomParticipation
from fedtheory.participation.cyclic import CyclicParticipation
from fedtheory.participation.dropout import (
    ClusterDropout,
    CorrelatedDropout,
    DropoutParticipation,
)

# last: it reads the FL-FDMS rule's discovery (fedtheory.algorithms imports the dropout
# processes above)
from fedtheory.participation.fdms import FDMSFriendChoice  # noqa: E402
from fedtheory.participation.grouped_dropout import GroupedDropout
from fedtheory.participation.markov import MarkovParticipation
from fedtheory.participation.ocs import OCSParticipation
from fedtheory.participation.power_of_choice import PowerOfChoice
from fedtheory.participation.replay import ReplayParticipation
from fedtheory.participation.uniform import UniformParticipation

__all__ = [
    "PROCESSES",
    "AOCSParticipation",
    "CustomParticipation",
    "FDMSFriendChoice",
    "OCSParticipation",
    "PowerOfChoice",
    "RoundAwareProcess",
    "RoundView",
    "Selection",
    "BernoulliParticipation",
    "ClusterDropout",
    "CorrelatedDropout",
    "CyclicParticipation",
    "DropoutParticipation",
    "GroupedDropout",
    "MarkovParticipation",
    "ParticipationProcess",
    "RNGLike",
    "ReplayParticipation",
    "UniformParticipation",
    "get_process",
    "uniforms",
    "validate_n",
    "validate_probability_vector",
]

#: name -> process class.
PROCESSES: dict[str, type[ParticipationProcess]] = {
    cls.name: cls
    for cls in (
        BernoulliParticipation,
        UniformParticipation,
        MarkovParticipation,
        CyclicParticipation,
        DropoutParticipation,
        ClusterDropout,
        CorrelatedDropout,
        GroupedDropout,
        ReplayParticipation,
        OCSParticipation,
        AOCSParticipation,
        PowerOfChoice,
        CustomParticipation,
        FDMSFriendChoice,
    )
}


def get_process(name: str, **params: Any) -> ParticipationProcess:
    """Build the process registered under ``name`` with ``params``."""
    if name not in PROCESSES:
        raise ValueError(f"participation process must be one of {sorted(PROCESSES)}, got {name!r}")
    try:
        return PROCESSES[name](**params)
    except TypeError as exc:
        raise ValueError(f"bad parameters {params!r} for process {name!r}: {exc}") from None

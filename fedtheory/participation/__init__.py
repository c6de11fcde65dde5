"""Participation processes: which clients take part in each round, for many replicas at once.

A process registers itself (``register=True``) in its own file, and a memoryless one declares
its round's sampling design (``design_class``, ``design()``, ``from_design``): this package
imports every module it holds, so a new scheme is one new file (docs/architecture.md).

>>> proc = get_process("bernoulli", p=0.1, n=10)
>>> proc.stationary.sum().round(12)
np.float64(1.0)
>>> from fedtheory.sampling import UniformWithoutReplacement
>>> process_of_design(UniformWithoutReplacement(5, 2))
UniformParticipation(n=5, b=2)
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import numpy as np

from fedtheory.participation import fedau_sampler  # (its classes stay outside PROCESSES)
from fedtheory.participation.aocs import AOCSParticipation
from fedtheory.participation.base import (
    ParticipationProcess,
    RNGLike,
    RoundAwareProcess,
    RoundView,
    Selection,
    process_of_design,
    registered_processes,
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
from fedtheory.participation.stack import ProcessStack
from fedtheory.participation.uniform import UniformParticipation
from fedtheory.participation.with_replacement import WithReplacementParticipation

# still importable from here, as before (their home is fedtheory.sampling)
from fedtheory.sampling.designs import IndependentSampling as IndependentSampling
from fedtheory.sampling.designs import SamplingDesign as SamplingDesign
from fedtheory.sampling.designs import UniformWithoutReplacement as UniformWithoutReplacement
from fedtheory.validation import build_registered

__all__ = [
    "KNOWN_PROCESSES",
    "PROCESSES",
    "AOCSParticipation",
    "CustomParticipation",
    "FDMSFriendChoice",
    "OCSParticipation",
    "PowerOfChoice",
    "ProcessStack",
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
    "WithReplacementParticipation",
    "get_process",
    "process_name",
    "process_of_design",
    "process_parameters",
    "uniforms",
    "validate_n",
    "validate_probability_vector",
]



def _import_every_module() -> None:
    """Import every module of the package, so that a scheme in its own file registers itself
    (``register=True``, ``design_class``) without being named here."""
    for info in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{info.name}")


_import_every_module()

#: name -> process class: every process that registered itself (``register=True``), in the
#: order the classes were defined.
PROCESSES: dict[str, type[ParticipationProcess]] = registered_processes()


#: Every participation process of the package by name: :data:`PROCESSES` and the authors'
#: FedAU patterns (:mod:`fedtheory.participation.fedau_sampler`), kept out of
#: :data:`PROCESSES`'s generic battery of tests. The one vocabulary of who takes part: the
#: exact formulas of :mod:`fedtheory.theory.fedau` name their patterns by these names (or take
#: the process objects), resolved by :func:`process_name`.
KNOWN_PROCESSES: dict[str, type[ParticipationProcess]] = {
    **PROCESSES, **{cls.name: cls for cls in (fedau_sampler.JoinRateMarkov,
                                              fedau_sampler.OffsetCyclic)}}


def process_name(process: str | ParticipationProcess | type[ParticipationProcess],
                 argument: str = "participation process") -> str:
    """The name of a participation process: a process object's or class's ``name``, or a name
    of :data:`KNOWN_PROCESSES` itself. Anything else is a ``ValueError`` naming ``argument``
    and listing the known names (the one place a process is named).

    >>> process_name(BernoulliParticipation(0.5, n=2)), process_name("markov")
    ('bernoulli', 'markov')
    >>> process_name("poisson")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: participation process must be one of ['aocs', ...], got 'poisson'
    """
    if isinstance(process, ParticipationProcess) or (
            isinstance(process, type) and issubclass(process, ParticipationProcess)):
        name = process.name
    else:
        name = process
    if not isinstance(name, str) or name not in KNOWN_PROCESSES:
        raise ValueError(f"{argument} must be one of {sorted(KNOWN_PROCESSES)}, "
                         f"got {process!r}")
    return name


def process_parameters(process: str | ParticipationProcess, names: tuple[str, ...],
                       given: dict[str, Any]) -> dict[str, Any]:
    """The parameters ``names`` of a pattern: those ``given``, the others read from the
    process object (e.g. a :class:`MarkovParticipation`'s ``correlation``); a ``ValueError``
    naming a parameter that is neither given nor held by ``process``.

    >>> process_parameters(CyclicParticipation(0.5, 4, n=2), ("period",), {})
    {'period': 4}
    """
    out = dict(given)
    for key in names:
        if key in out:
            continue
        value = getattr(process, key, None) if not isinstance(process, str) else None
        if value is None:
            raise ValueError(f"pattern {process_name(process)!r} needs the parameter {key!r}: "
                             f"pass {key}= or a process object that has it, got {process!r}")
        out[key] = value.item() if isinstance(value, np.generic) else value
    return out


def get_process(name: str, **params: Any) -> ParticipationProcess:
    """Build the process registered under ``name`` with ``params``."""
    return build_registered(PROCESSES, name, params, "participation process", "process")

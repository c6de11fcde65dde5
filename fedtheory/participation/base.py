r"""What every participation process shares: the state/step interface, random draws per
replica, validation.

A process decides, round after round, which of the :math:`n` clients take part, for ``R``
independent replicas at once::

    state = proc.init(rng, replicas)
    mask, state = proc.step(state, rng)      # mask: bool (replicas, n)

``rng`` is either one :class:`numpy.random.Generator` shared by all replicas, or a sequence of
one generator per replica. With per-replica generators, replica ``r``'s masks depend only on
its own generator, so splitting the replicas into chunks never changes them (the simulator
relies on this). Every process draws only uniforms, row by row, so the two forms cost the same
arithmetic.

Each process exposes :attr:`ParticipationProcess.stationary`, the probability
:math:`p_i = P(1_i^t = 1)` that client :math:`i` takes part in a round (the same in every
round: chains start in their stationary law, cycles at a uniformly random phase).

Processes that see the round
----------------------------
Some schemes choose the participants from the round itself: optimal client sampling (OCS,
AOCS; seed 002) from the norms of the clients' updates, FL-FDMS's friend choice (seed 004)
from their similarities, power-of-choice (Cho, Wang, Joshi 2020) from the clients' current
losses. A :class:`RoundAwareProcess` (``sees_round = True``) is stepped by the engine with a
read-only :class:`RoundView` of round :math:`t`::

    selection, state = proc.select(state, rng, view)   # a Selection

The view holds the iterates :math:`x_t` ``(R, d)`` and, **lazily, only when the process asks**
(:meth:`RoundView.updates`, :meth:`RoundView.norms`, :meth:`RoundView.similarities`), every
client's local update of this round

.. math:: \Delta_{r,i} = \sum_{k<\tau_i}\big(\nabla f_i(y^k_{r,i}) + \xi^k_{r,i}\big),
    \qquad y^0_{r,i} = x_{t,r},

computed by the engine through its one local-work path (the same noise streams, in the same
order, as when those clients take part), counted in ``grad_evals`` and ``client_rounds``
(every client of every replica computed its update), and reused by the aggregation: the
clients selected send the very updates the process looked at. The client losses
:math:`f_i(x_{t,r})` (:meth:`RoundView.losses`) need no local work.

A :class:`Selection` is the mask :math:`1^t_{r,i}` and, optionally, per-pair aggregation
coefficients :math:`a_{r,i}` that a rule with ``pair_coefficients`` (``"fedavg_is"``) applies,

.. math:: G_{t,r} = \sum_{i:\,1^t_{r,i}=1} a_{r,i}\,\Delta_{r,i},

unbiased for :math:`\sum_i w_i\Delta_{r,i}` when :math:`a_{r,i} = w_i/p^t_{r,i}` and client
:math:`i` is included with probability :math:`p^t_{r,i}` given the round
(:math:`\mathbb E[G \mid x_t, \Delta] = \sum_i p^t_i\, w_i\Delta_i/p^t_i`; clients with
:math:`p^t_i = 0` must have :math:`w_i\Delta_i = 0`, as OCS's zero norms do), and the floats
each replica sent besides the updates (``extra_floats``, e.g. OCS's norms), which the engine
adds to the ``bits`` metric.

A process that never asks for the updates costs nothing more; the processes that do not see
the round (Bernoulli, Markov, cyclic, dropout, ...) are stepped exactly as before, with
bit-identical masks and costs. Determinism: a round-aware process draws from the same
per-replica participation stream, and computes row :math:`r` from replica :math:`r`'s view
only, so chunking the replicas never changes its choices.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from fedtheory.budget import check_memory
from fedtheory.sampling.base import SamplingDesign
from fedtheory.validation import positive_integer, probabilities

__all__ = [
    "ParticipationProcess",
    "RNGLike",
    "RoundAwareProcess",
    "RoundView",
    "Selection",
    "process_of_design",
    "registered_processes",
    "uniforms",
    "validate_dropout_rate",
    "validate_n",
    "validate_probability_vector",
]

#: One generator for all replicas, or one per replica.
RNGLike = np.random.Generator | Sequence[np.random.Generator]


def uniforms(rng: RNGLike, replicas: int, *shape: int) -> np.ndarray:
    """Uniforms on [0, 1), shape ``(replicas, *shape)``: row ``r`` from ``rng[r]`` when ``rng``
    is a sequence of per-replica generators.

    >>> u = uniforms([np.random.default_rng(s) for s in (1, 2, 3)], 3, 4)
    >>> v = uniforms([np.random.default_rng(s) for s in (2, 3)], 2, 4)
    >>> bool(np.array_equal(u[1:], v))
    True
    """
    if isinstance(rng, np.random.Generator):
        return rng.random((replicas, *shape))
    if len(rng) != replicas:
        raise ValueError(f"rng must hold one generator per replica ({replicas}), got {len(rng)}")
    out = np.empty((replicas, *shape))
    for r, g in enumerate(rng):
        g.random(out=out[r])
    return out


#: Bytes a process plans per client (a few ``(n,)`` float arrays: its probabilities, their
#: copies, a chain's transition rows) when it checks ``n`` against the memory budget.
_BYTES_PER_CLIENT = 64

#: Bytes per (replica, client) pair of one round: the uniforms drawn (8), the mask (1) and a
#: state array of the same shape (8), rounded up.
_BYTES_PER_PAIR = 24


def validate_dropout_rate(alpha: Any) -> float:
    """``alpha``, the fraction of clients a dropout process drops, as a float in [0, 1), or a
    ValueError naming it.

    >>> validate_dropout_rate(0.25)
    0.25
    """
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be in [0, 1), got {alpha!r}") from None
    if not 0.0 <= a < 1.0:
        raise ValueError(f"alpha must be in [0, 1), got {alpha!r}")
    return a


def validate_n(n: Any, name: str = "n") -> int:
    """``n`` as a positive int, or ``ValueError``. A number of clients (``name="n"``) is also
    held to the memory budget (:func:`fedtheory.budget.check_memory`): a process over
    ``n`` clients keeps a few ``(n,)`` arrays.

    >>> validate_n(3)
    3
    >>> validate_n(10**15)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fedtheory.budget.BudgetError: a participation process over n clients would need about ...
    """
    positive_integer(name, n)
    if name == "n":
        check_memory("a participation process over n clients", _BYTES_PER_CLIENT * int(n),
                     {"n": int(n)})
    return int(n)


def _check_rounds_memory(what: str, n: int, replicas: int, rounds: int = 1,
                         per_pair: int = _BYTES_PER_PAIR) -> None:
    """The memory budget of ``rounds`` rounds of ``replicas`` x ``n`` arrays, ``per_pair``
    bytes per entry."""
    check_memory(what, float(per_pair) * rounds * replicas * n,
                 {"rounds": rounds, "replicas": replicas, "n": n} if rounds > 1
                 else {"replicas": replicas, "n": n})


def validate_probability_vector(p: Any, n: int | None, name: str = "p") -> np.ndarray:
    """``p`` as an ``(n,)`` float array with entries in (0, 1]; a scalar needs ``n``
    (:func:`fedtheory.validation.probabilities`)."""
    return probabilities(name, p, None if n is None else validate_n(n))


#: name -> the process classes that registered themselves (``register=True``), in the order
#: they were defined: :data:`fedtheory.participation.PROCESSES`.
_REGISTERED: dict[str, type[ParticipationProcess]] = {}

#: design class -> the memoryless process whose every round is a draw of it (each process
#: class that declares a ``design_class``): the lookup of :func:`process_of_design`.
_BY_DESIGN: dict[type[SamplingDesign], type[ParticipationProcess]] = {}


def _register(table: dict[Any, type[ParticipationProcess]], key: Any,
              cls: type[ParticipationProcess], what: str) -> None:
    """``table[key] = cls``, refusing a second class under one key (a module imported again
    replaces its own class)."""
    old = table.get(key)
    if old is not None and (old.__module__, old.__qualname__) != (cls.__module__,
                                                                   cls.__qualname__):
        raise ValueError(f"{what} {key!r} is already registered by {old.__module__}."
                         f"{old.__qualname__}; {cls.__module__}.{cls.__qualname__} cannot "
                         f"take it")
    table[key] = cls


class ParticipationProcess:
    """Base class: subclasses set :attr:`name`, :attr:`n`, :attr:`stationary` and implement
    ``_init(state, rng)`` and ``_step(state, rng) -> mask``.

    A class registers itself in :data:`fedtheory.participation.PROCESSES` with the class
    keyword ``register=True`` (``class Poisson(ParticipationProcess, register=True)``). A
    memoryless process (every round an independent draw of one sampling design) declares
    :attr:`design_class` and implements :meth:`design` and :meth:`from_design`; the design is
    then found back by :func:`process_of_design`.
    """

    name: ClassVar[str] = ""
    n: int
    #: The class of the sampling design of one round (:class:`~fedtheory.sampling.base.
    #: SamplingDesign`: marginals, pair matrix, exact moments, enumeration), when every round
    #: is an independent draw of it; None otherwise.
    design_class: ClassVar[type[SamplingDesign] | None] = None

    def __init_subclass__(cls, register: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if register:
            if not cls.__dict__.get("name"):
                raise TypeError(f"{cls.__qualname__} registers itself but sets no name")
            _register(_REGISTERED, cls.name, cls, "participation process")
        design_class = cls.__dict__.get("design_class")
        if design_class is not None:
            if not (isinstance(design_class, type) and issubclass(design_class, SamplingDesign)):
                raise TypeError(f"{cls.__qualname__}.design_class must be a SamplingDesign "
                                f"subclass, got {design_class!r}")
            if "design" not in cls.__dict__ or "from_design" not in cls.__dict__:
                raise TypeError(f"{cls.__qualname__} declares design_class, so it implements "
                                "design() and from_design()")
            _register(_BY_DESIGN, design_class, cls, "design class")

    @classmethod
    def examples(cls) -> list[ParticipationProcess]:
        """Small random instances for the common battery of checks (tests/test_participation.py:
        shapes, the empirical frequencies against :attr:`stationary`, chunking): a new scheme
        that declares them is checked with no edit of the tests. None by default."""
        return []

    def design(self) -> SamplingDesign:
        """The law of one round's participants as a sampling design (its exact moments,
        estimators and enumeration: :mod:`fedtheory.sampling`), for a memoryless process."""
        raise ValueError(f"{type(self).__name__} is not a memoryless process: its rounds are "
                         "not independent draws of one sampling design")

    @classmethod
    def from_design(cls, design: SamplingDesign) -> ParticipationProcess:
        """The process whose every round is drawn from ``design`` (of :attr:`design_class`)."""
        raise ValueError(f"{cls.__name__} has no sampling design")
    #: :math:`R` when the process holds one part per replica of a run (the run's ``replicas``
    #: must then be :math:`R`, and the engine asks :meth:`for_replicas` for each block), else
    #: None (one process for every replica).
    replicas: int | None = None

    def for_replicas(self, start: int, stop: int) -> ParticipationProcess:
        """The process of a run's replicas ``start .. stop - 1``, the block the engine
        simulates: itself, unless the process holds one part per replica."""
        return self

    @property
    def stationary(self) -> np.ndarray:
        """``(n,)``: :math:`P(\\text{client } i \\text{ takes part in a round})`."""
        raise NotImplementedError

    @property
    def expected_participants(self) -> float:
        """:math:`\\sum_i p_i`, the expected number of participants per round."""
        return float(np.sum(self.stationary))

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({params})"

    def init(self, rng: RNGLike, replicas: int) -> dict[str, Any]:
        """The state of ``replicas`` independent copies of the process before round 0."""
        replicas = validate_n(replicas, "replicas")
        _check_rounds_memory(f"{type(self).__name__}.init", int(self.n), replicas)
        state: dict[str, Any] = {"replicas": replicas, "t": 0}
        self._init(state, rng)
        return state

    def step(self, state: dict[str, Any], rng: RNGLike) -> tuple[np.ndarray, dict[str, Any]]:
        """The participation mask of the next round, bool ``(replicas, n)``, and the state."""
        mask = self._step(state, rng)
        state["t"] += 1
        return mask, state

    def sample(self, rng: RNGLike, replicas: int, rounds: int) -> np.ndarray:
        """``rounds`` consecutive masks from a fresh state: bool ``(rounds, replicas, n)``."""
        rounds = validate_n(rounds, "rounds")
        _check_rounds_memory(f"{type(self).__name__}.sample", int(self.n),
                             validate_n(replicas, "replicas"), rounds, per_pair=1)
        state = self.init(rng, replicas)
        out = np.empty((rounds, state["replicas"], self.n), dtype=bool)
        for t in range(rounds):
            out[t], state = self.step(state, rng)
        return out

    def _init(self, state: dict[str, Any], rng: RNGLike) -> None:
        """Add the process's arrays to ``state`` (stateless processes add nothing)."""

    def _step(self, state: dict[str, Any], rng: RNGLike) -> np.ndarray:
        raise NotImplementedError


def registered_processes() -> dict[str, type[ParticipationProcess]]:
    """name -> every process class registered so far (``register=True``), in definition
    order."""
    return dict(_REGISTERED)


def process_of_design(design: SamplingDesign) -> ParticipationProcess:
    r"""The memoryless process whose every round is drawn from ``design``: the lookup the
    processes fill by declaring their ``design_class`` (an
    :class:`~fedtheory.sampling.IndependentSampling` is
    :class:`~fedtheory.participation.BernoulliParticipation`, a
    :class:`~fedtheory.sampling.UniformWithoutReplacement` is
    :class:`~fedtheory.participation.UniformParticipation`; their ``design()`` goes back). A
    design no process declares is a ``ValueError`` naming those that are.
    """
    if isinstance(design, SamplingDesign):
        for klass in type(design).__mro__:
            process = _BY_DESIGN.get(klass)
            if process is not None:
                return process.from_design(design)
    known = ", ".join(sorted(k.__name__ for k in _BY_DESIGN))
    raise ValueError(f"design must be the design of a memoryless process ({known}), "
                     f"got {design!r}")


def _read_only(a: np.ndarray) -> np.ndarray:
    v = a.view()
    v.flags.writeable = False
    return v


class RoundView:
    r"""A read-only view of one round for a :class:`RoundAwareProcess`, vectorised over
    replicas.

    Attributes
    ----------
    t
        The round :math:`t \ge 1` being decided.
    x
        The iterates :math:`x_t`, ``(R, d)``, read-only.
    weights
        The objective weights :math:`w_i`, ``(n,)``.
    sizes
        The clients' data sizes ``(n,)`` when the problem has them, else None.

    Everything else is computed on first request and kept for the round: :meth:`updates`
    (the engine's local work for every client, counted as such), :meth:`norms`,
    :meth:`similarities`, :meth:`losses`.
    """

    def __init__(self, t: int, x: np.ndarray, weights: np.ndarray,
                 compute_updates: Callable[[np.ndarray | None], np.ndarray],
                 compute_losses: Callable[[], np.ndarray] | None = None,
                 sizes: np.ndarray | None = None) -> None:
        self.t = int(t)
        self.x = _read_only(np.asarray(x))
        self.weights = _read_only(np.asarray(weights, dtype=float))
        self.sizes = None if sizes is None else _read_only(np.asarray(sizes))
        self.replicas, self.d = self.x.shape
        self.n = int(self.weights.shape[0])
        self._compute_updates = compute_updates
        self._compute_losses = compute_losses
        self._cache: dict[str, np.ndarray] = {}

    @property
    def asked_updates(self) -> bool:
        """Whether the process asked for the clients' updates this round."""
        return "updates" in self._cache

    def updates(self, only: np.ndarray | None = None) -> np.ndarray:
        r"""The clients' local updates :math:`\Delta_{r,i}` of this round, ``(R, n, d)``,
        read-only (computed once, by the engine's local work, and counted).

        ``only``: bool ``(R, n)``, compute just these pairs' updates (the others' rows are 0):
        e.g. FL-FDMS reads the updates of the clients that did not drop; the selection must
        then stay within ``only``. One request per round (a second with another ``only`` is
        an error: the noise of the round is drawn once)."""
        if only is not None:
            only = np.asarray(only)
            if only.dtype != bool or only.shape != (self.replicas, self.n):
                raise ValueError(f"only must be bool of shape {(self.replicas, self.n)}, got "
                                 f"{only.dtype} {only.shape}")
        if "updates" in self._cache:
            before = self._cache.get("only")
            if not (before is None and only is None) and (
                    before is None or only is None or not np.array_equal(before, only)):
                raise ValueError("updates were already computed this round for another set "
                                 "of clients (only=): one request per round")
            return self._cache["updates"]
        upd = np.asarray(self._compute_updates(only))
        if upd.shape != (self.replicas, self.n, self.d):
            raise ValueError(f"the engine's updates must have shape "
                             f"{(self.replicas, self.n, self.d)}, got {upd.shape}")
        self._cache["updates"] = _read_only(upd)
        if only is not None:
            self._cache["only"] = _read_only(only.copy())
        return self._cache["updates"]

    def norms(self) -> np.ndarray:
        r""":math:`\|\Delta_{r,i}\|`, ``(R, n)``, in float64."""
        if "norms" not in self._cache:
            u = self.updates().astype(float, copy=False)
            self._cache["norms"] = _read_only(np.sqrt(np.einsum("rnd,rnd->rn", u, u)))
        return self._cache["norms"]

    def weighted_norms(self) -> np.ndarray:
        r""":math:`u_{r,i} = w_i\|\Delta_{r,i}\|`, ``(R, n)`` (seed 002's norms of
        :math:`\tilde U_i`)."""
        return self.norms() * self.weights

    def similarities(self) -> np.ndarray:
        r"""Cosine similarities :math:`\langle\Delta_i,\Delta_j\rangle/(\|\Delta_i\|
        \|\Delta_j\|)`, ``(R, n, n)``; 0 where a norm is 0."""
        if "similarities" not in self._cache:
            u = self.updates().astype(float, copy=False)
            nrm = self.norms()
            gram = np.einsum("rid,rjd->rij", u, u)
            den = nrm[:, :, None] * nrm[:, None, :]
            sim = np.zeros_like(gram)
            np.divide(gram, den, out=sim, where=den > 0)
            self._cache["similarities"] = _read_only(sim)
        return self._cache["similarities"]

    def losses(self) -> np.ndarray:
        r"""The client losses :math:`f_i(x_{t,r})`, ``(R, n)`` (no local work)."""
        if "losses" not in self._cache:
            if self._compute_losses is None:
                raise ValueError("this problem has no client_losses: the view cannot give the "
                                 "clients' losses")
            loss = np.asarray(self._compute_losses(), dtype=float)
            if loss.shape != (self.replicas, self.n):
                raise ValueError(f"client losses must have shape {(self.replicas, self.n)}, "
                                 f"got {loss.shape}")
            self._cache["losses"] = _read_only(loss)
        return self._cache["losses"]


@dataclass(frozen=True)
class Selection:
    r"""What a :class:`RoundAwareProcess` decides for a round.

    Attributes
    ----------
    mask
        Bool ``(R, n)``: who takes part.
    coef
        ``(R, n)`` aggregation coefficients :math:`a_{r,i}` (read at the participants; e.g.
        :math:`w_i/p^t_{r,i}`), applied by rules with ``pair_coefficients``; None: the rule's
        own.
    extra_floats
        ``(R,)`` floats each replica's clients sent besides their updates this round (norms,
        AOCS's messages, losses), counted in ``bits``; None: nothing.
    """

    mask: np.ndarray
    coef: np.ndarray | None = None
    extra_floats: np.ndarray | None = None


class RoundAwareProcess(ParticipationProcess):
    r"""Base class of processes that see the round (see the module docstring): subclasses
    implement ``_select(state, rng, view) -> Selection``.

    :attr:`stationary` is the process's *nominal* marginal (e.g. :math:`m/n` for a budget
    :math:`m`): the per-round probabilities depend on the round, and the unbiased weights travel
    with the selection (``Selection.coef``); the nominal marginal sizes the engine's chunks
    and serves rules that read :math:`p` when the selection carries no coefficients.
    """

    sees_round: ClassVar[bool] = True
    #: The selections carry aggregation coefficients (the rule must have ``pair_coefficients``).
    sets_coefficients: ClassVar[bool] = False

    def select(self, state: dict[str, Any], rng: RNGLike,
               view: RoundView) -> tuple[Selection, dict[str, Any]]:
        """The next round's :class:`Selection` given its :class:`RoundView`, and the state."""
        sel = self._select(state, rng, view)
        if not isinstance(sel, Selection):
            sel = Selection(np.asarray(sel, dtype=bool))
        mask = np.asarray(sel.mask)
        if mask.dtype != bool or mask.shape != (state["replicas"], self.n):
            raise ValueError(f"{type(self).__name__}'s mask must be bool of shape "
                             f"{(state['replicas'], self.n)}, got {mask.dtype} {mask.shape}")
        state["t"] += 1
        return sel, state

    def step(self, state: dict[str, Any], rng: RNGLike) -> tuple[np.ndarray, dict[str, Any]]:
        raise ValueError(f"participation {type(self).__name__} sees the round: it is stepped by "
                         "the engine (fedtheory.simulate) with a RoundView, through select()")

    def _select(self, state: dict[str, Any], rng: RNGLike, view: RoundView) -> Selection:
        raise NotImplementedError

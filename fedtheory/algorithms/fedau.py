r"""FedAU (seed 001): FedAvg with pluggable aggregation weights, and the weights of Algorithm 2.

Seed 001, Algorithm 1: the server adds :math:`\frac{\eta}{N}\sum_{n=1}^N \omega_t^n\Delta_t^n`,
:math:`\Delta_t^n = 0` for an absent client. In this package's convention (the engine steps
:math:`x_{t+1} = x_t - \eta_g\eta\,G_t` with pseudo-gradients :math:`\Delta_i`) the rules return

.. math:: G_t = \sum_{n\in\mathcal A(t)} w_n\,\omega_t^n\,\Delta_n
    \;=\; \frac1N\sum_{n\in\mathcal A(t)}\omega_t^n\Delta_n \quad (w_n = 1/N).

Rules:

* ``"fedau"`` (:class:`FedAU`): :math:`\omega_t^n` from Algorithm 2 with cutoff ``K``
  (:func:`fedau_weights`); the interval counters live in the rule's model state;
* ``"fedavg_weighted"`` (:class:`FedAvgWeighted`): time-constant weights :math:`\omega_n`
  (Theorem 1's setting); ``omega=None`` is :math:`\omega_n = 1`;
* ``"fedavg_all"`` (:class:`FedAvgAll`): "average all", :math:`\omega_n = 1`.

The seed's other baselines are ``"fedavg"`` ("average participating") and ``"fedavg_is"``
("known participation statistics", :math:`\omega_n = 1/p_n`).
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any, ClassVar

import numpy as np

from fedtheory.algorithms.base import Participants, Rule, add_scaled_sums
from fedtheory.validation import real_array, whole_block

__all__ = ["FedAU", "FedAvgAll", "FedAvgWeighted", "fedau_state", "fedau_weights",
           "validate_cutoff"]


def validate_cutoff(K: Any) -> float:
    """``K`` as a float (a positive integer or ``math.inf``), or ``ValueError`` naming it."""
    if isinstance(K, bool) or not isinstance(K, Real):
        raise ValueError(f"K must be a positive integer or math.inf, got {K!r}")
    k = float(K)
    if math.isnan(k) or k < 1 or (math.isfinite(k) and k != int(k)):
        raise ValueError(f"K must be a positive integer or math.inf, got {K!r}")
    return k


def _validate_mask(mask: Any) -> np.ndarray:
    m = np.asarray(mask)
    if m.dtype != bool:
        raise ValueError(f"mask must be a boolean array, got dtype {m.dtype}")
    if m.ndim not in (2, 3) or m.shape[0] < 1 or m.shape[-1] < 1:
        raise ValueError(f"mask must have shape (T, n) or (R, T, n), got shape {m.shape}")
    return m


def _init_counters(shape: tuple[int, ...]) -> dict[str, np.ndarray]:
    """Algorithm 2's per-client variables before round 1: :math:`M_n = 0`,
    :math:`S_n^\\diamond = 0`, :math:`\\omega_0^n = 1`."""
    return {"omega": np.ones(shape), "count": np.zeros(shape, dtype=np.int64),
            "counter": np.zeros(shape, dtype=np.int64)}


def _advance(st: dict[str, np.ndarray], previous: np.ndarray, K: float) -> None:
    r"""One iteration ``t`` of Algorithm 2's loop (lines 4-11), in place: ``previous`` is
    :math:`1_{t-1}^n`; afterwards ``st["omega"]`` is :math:`\omega_t^n`."""
    st["counter"] += 1
    done = previous | (st["counter"] >= K)
    if done.any():
        S = st["counter"][done].astype(float)
        M = st["count"][done]
        st["omega"][done] = (M * st["omega"][done] + S) / (M + 1)  # M = 0 gives S
        st["count"][done] += 1
        st["counter"][done] = 0


def fedau_state(mask: Any, K: Any = math.inf) -> dict[str, np.ndarray]:
    r"""Algorithm 2 run over a whole participation record: the weights and the number of
    intervals averaged in each of them.

    Returns ``{"omega": ..., "intervals": ...}``, both of ``mask``'s shape:
    ``omega[..., t, n]`` is :math:`\omega_t^n` and ``intervals[..., t, n]`` is :math:`M_n`
    (intervals recorded) as it stands when :math:`\omega_t^n` is used. See
    :func:`fedau_weights` for the conventions.
    """
    m = _validate_mask(mask)
    k = validate_cutoff(K)
    mt = np.moveaxis(m, -2, 0)  # (T, ..., n)
    st = _init_counters(mt.shape[1:])
    omega = np.empty(mt.shape)
    count = np.empty(mt.shape, dtype=np.int64)
    omega[0], count[0] = st["omega"], st["count"]
    for t in range(1, mt.shape[0]):
        _advance(st, mt[t - 1], k)
        omega[t], count[t] = st["omega"], st["count"]
    return {"omega": np.moveaxis(omega, 0, -2), "intervals": np.moveaxis(count, 0, -2)}


def fedau_weights(mask: Any, K: Any = math.inf) -> np.ndarray:
    r"""FedAU's aggregation weights :math:`\omega_t^n` (seed 001, Algorithm 2), vectorised.

    For every client, the interval counter :math:`S^\diamond` grows by one each round
    :math:`t\ge1`; when the client took part in round :math:`t-1` or the counter reaches the
    cutoff :math:`K`, the interval :math:`S = S^\diamond` is recorded, the weight becomes the
    running mean of the :math:`M+1` recorded intervals and the counter restarts:

    .. math::

        \omega_t^n = \begin{cases} S, & M_n = 0\\
        \dfrac{M_n\,\omega_{t-1}^n + S}{M_n+1}, & M_n\ge 1\end{cases}
        \quad\text{if } 1_{t-1}^n = 1 \text{ or } S^\diamond = K,
        \qquad \omega_t^n = \omega_{t-1}^n \text{ otherwise},

    with :math:`\omega_0^n = 1`. So :math:`\omega_t^n` depends on rounds :math:`< t` only.

    Parameters
    ----------
    mask
        Boolean participation indicators :math:`1_t^n`, shape ``(T, n)`` or ``(R, T, n)``
        (``R`` independent replicas; rounds on the second-to-last axis).
    K
        The cutoff, a positive integer, or ``math.inf`` (no cutoff: intervals are never cut).

    Returns
    -------
    numpy.ndarray
        Floats of ``mask``'s shape: ``out[..., t, n]`` is :math:`\omega_t^n`.

    Notes
    -----
    ``K = 1`` records an interval of 1 every round, so :math:`\omega_t^n = 1`. A client that
    never takes part (and ``K = inf``) keeps :math:`\omega_t^n = 1`. The loop runs over
    rounds; replicas and clients are array axes.

    Examples
    --------
    >>> m = np.array([[1], [0], [0], [1], [0], [0], [0]], dtype=bool)
    >>> fedau_weights(m, K=2)[:, 0].tolist()
    [1.0, 1.0, 1.0, 1.5, 1.3333333333333333, 1.3333333333333333, 1.5]
    """
    return fedau_state(mask, K)["omega"]


class FedAvgWeighted(Rule):
    r"""FedAvg with time-constant pluggable weights :math:`\omega_n` (seed 001, Theorem 1):

    .. math:: G_t = \sum_{n\in\mathcal A(t)} w_n\,\omega_n\,\Delta_n .

    ``omega=None`` means :math:`\omega_n = 1` ("average all"); an ``(R, n)`` array gives
    replica :math:`r` of a run its own weights :math:`\omega_{r,n}` (row :math:`r`; the run's
    ``replicas`` must be :math:`R`: e.g. :math:`1/p_{r,n}` for instances with their own
    participation means). No memory.

    >>> rule = FedAvgWeighted(omega=[1.0, 2.0])
    >>> st = rule.init(1, 2, 1)
    >>> rule.step(st, np.array([True, True]), np.array([[1.0], [1.0]]))[0].tolist()
    [1.5]
    """

    name: ClassVar[str] = "fedavg_weighted"

    def __init__(self, omega: Any = None) -> None:
        if omega is not None:
            w = real_array("omega", omega)
            if w.ndim not in (1, 2) or w.size < 1 or not np.all(np.isfinite(w)) \
                    or np.any(w < 0):
                raise ValueError(f"omega must be an (n,) or (R, n) array of finite "
                                 f"non-negative weights, got {omega!r}")
            omega = w
        self.omega = omega

    @property
    def replicas(self) -> int | None:  # type: ignore[override]
        """:math:`R` when ``omega`` has a row per replica, else None (shared by all)."""
        return None if self.omega is None or self.omega.ndim == 1 else int(self.omega.shape[0])

    def for_replicas(self, start: int, stop: int) -> FedAvgWeighted:
        """The rule of the run's replicas ``start .. stop - 1`` (their rows of ``omega``)."""
        if self.replicas is None or whole_block(start, stop, self.replicas):
            return self
        return FedAvgWeighted(self.omega[start:stop])

    def _omega(self, state: dict[str, Any]) -> np.ndarray:
        if self.omega is None:
            return np.ones(state["n"])
        shapes = [(state["n"],), (state["replicas"], state["n"])]
        if self.omega.shape not in shapes:
            raise ValueError(f"omega must have shape ({state['n']},) or ({state['replicas']}, "
                             f"{state['n']}), got {self.omega.shape}")
        return self.omega

    def begin(self, state: dict[str, Any], part: Participants,
              p: np.ndarray | None = None) -> dict[str, Any]:
        acc = super().begin(state, part, p)
        acc["coef"] = (state["weights"] * self._omega(state)).astype(state["dtype"])
        acc["num"] = self._zeros(state, state["d"])
        return acc

    def accumulate(self, state: dict[str, Any], acc: dict[str, Any], block: Participants,
                   updates: np.ndarray, consume: bool = False) -> None:
        coef = acc["coef"]
        picked = coef[block.rows, block.cols] if coef.ndim == 2 else coef[block.cols]
        add_scaled_sums(acc["num"], updates, block, picked[:, None])

    def finish(self, state: dict[str, Any], acc: dict[str, Any]) -> np.ndarray:
        return acc["num"]


class FedAvgAll(FedAvgWeighted):
    r""""Average all" (seed 001's baseline): :math:`G_t = \sum_{n\in\mathcal A(t)} w_n\Delta_n`,
    i.e. :math:`\frac1N\sum_{\mathcal A(t)}\Delta_n`. No memory."""

    name: ClassVar[str] = "fedavg_all"

    def __init__(self) -> None:
        super().__init__(None)


class FedAU(Rule):
    r"""FedAU (seed 001, Algorithms 1 and 2): :math:`G_t = \sum_{n\in\mathcal A(t)} w_n
    \omega_t^n\Delta_n` with :math:`\omega_t^n` from the participation of rounds :math:`< t`
    (:func:`fedau_weights`, cutoff ``K``).

    Model state: ``fedau_omega`` (:math:`\omega_t`), ``fedau_count`` (:math:`M`) and
    ``fedau_counter`` (:math:`S^\diamond`), each ``(R, n)``; a step uses :math:`\omega_t` and
    then advances them with this round's mask (Algorithm 2's iteration :math:`t+1`).

    >>> rule = FedAU(K=math.inf)
    >>> st = rule.init(1, 2, 1)
    >>> for _ in range(3):
    ...     G, st = rule.step(st, np.array([True, False]), np.array([[1.0], [1.0]]))
    >>> st["fedau_omega"].tolist(), G.tolist()
    ([[1.0, 1.0]], [0.5])
    """

    name: ClassVar[str] = "fedau"

    def __init__(self, K: float = math.inf) -> None:
        self.K = validate_cutoff(K)

    def _init(self, state: dict[str, Any], initial: np.ndarray | None) -> None:
        st = _init_counters((state["replicas"], state["n"]))
        state["fedau_omega"] = st["omega"]
        state["fedau_count"] = st["count"]
        state["fedau_counter"] = st["counter"]

    def begin(self, state: dict[str, Any], part: Participants,
              p: np.ndarray | None = None) -> dict[str, Any]:
        acc = super().begin(state, part, p)
        acc["coef"] = (state["fedau_omega"] * state["weights"]).astype(state["dtype"])
        acc["num"] = self._zeros(state, state["d"])
        st = {"omega": state["fedau_omega"], "count": state["fedau_count"],
              "counter": state["fedau_counter"]}
        _advance(st, part.mask, self.K)  # the weights of the next round
        return acc

    def accumulate(self, state: dict[str, Any], acc: dict[str, Any], block: Participants,
                   updates: np.ndarray, consume: bool = False) -> None:
        coef = acc["coef"][block.rows, block.cols][:, None]
        add_scaled_sums(acc["num"], updates, block, coef)

    def finish(self, state: dict[str, Any], acc: dict[str, Any]) -> np.ndarray:
        return acc["num"]

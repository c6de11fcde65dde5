r"""Friend discovery of FL-FDMS on generative models of client updates (seed 004, Section 5).

**Models.** Updates are drawn afresh each round, independently across clients and rounds, from
a per-client law (the setting of Lemma 2: :math:`\mathbb E_t r^{i,j}_t = \mu^{i,j}` constant):

- :class:`DiscreteClients`: each client's update takes finitely many values (vectors) with
  given probabilities; :math:`\mu^{i,j}` and :math:`\sigma^2_{i,j} = \mathbb E\|\Delta^i -
  \Delta^j\|^2` are exact. With :math:`d = 1` and values :math:`\pm1` the eq. (14) score is
  :math:`\{0, 1\}`-valued, the largest variance a score in :math:`[0, 1]` can have: the
  tightest instances of a Hoeffding argument.
- :class:`GaussianClusters`: client :math:`i` of cluster :math:`c(i)` draws
  :math:`m_{c(i)} + s\,\xi`, :math:`\xi\sim N(0, I_d)`: identical laws inside a cluster,
  :math:`\sigma^2_{i,j} = \|m_{c(i)} - m_{c(j)}\|^2 + 2ds^2`; :math:`\mu` by Monte Carlo.

**Instances** (client order matters: ties go to the lowest index):
:func:`lemma_tight_instance` (scores of the friend and of the non-friend sum to 1: Hoeffding's
exponent is attained), :func:`negative_gap_instance` (a friend by Definition 1 whose cosine
score is lower than a non-friend's: :math:`\delta_{\min} < 0`), :func:`orthogonal_instance`
(three groups that drop in turn, each with a private friend: eq. (16)/(17) attained as
:math:`t\to\infty`), with their exact non-friend probabilities and errors.

**Dropout masks** ``(T, n)`` (independent of the updates): :func:`drop_schedule`,
:func:`rotation_schedule`, :func:`random_friend_dropout` (keeps a friend of every dropped
client active), :func:`whole_cluster_dropout` (violates Assumption 5).

:func:`simulate_discovery` runs FL-FDMS's friend discovery (with or without the complexity
reduction of Section 5.3) on the engine: the model as a problem whose updates are its draws
(:class:`ModelUpdates`), the dropout replayed, the discovery the round-aware process
:class:`~fedtheory.participation.FDMSFriendChoice` (the FL-FDMS rule's own discovery,
:func:`~fedtheory.sampling.friend_selection.discovery_round`), and an ``observe`` callback
recording its choices. It has no round loop of its own.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.special import ndtr

from fedtheory.engine import RoundRecord
from fedtheory.participation import FDMSFriendChoice, ReplayParticipation
from fedtheory.problems.base import Capability
from fedtheory.problems.noise import GaussianNoise
from fedtheory.sampling import friend_selection as fs
from fedtheory.sampling.friend_selection import complexity_threshold
from fedtheory.simulate import simulate
from fedtheory.stats import clopper_pearson
from fedtheory.theory.fdms import (
    estimate_similarity_means,
    friendship,
    gap_constants,
    gap_interval,
    lemma2_bound,
    realised_beta,
)

__all__ = [
    "DiscreteClients",
    "ModelUpdates",
    "GaussianClusters",
    "drop_schedule",
    "lemma_tight_instance",
    "lemma_tight_probability",
    "negative_gap_instance",
    "negative_gap_probability",
    "orthogonal_error",
    "orthogonal_instance",
    "random_friend_dropout",
    "rotation_schedule",
    "complexity_figure_data",
    "complexity_runs",
    "nonfriend_figure_data",
    "twenty_clusters",
    "simulate_discovery",
    "skip_discovery",
    "spread_elimination_probability",
    "spread_friends_instance",
    "tight_curve",
    "whole_cluster_dropout",
]


@dataclass(frozen=True)
class DiscreteClients:
    """Client ``i`` draws ``values[i][l]`` (a ``d``-vector) with probability ``probs[i][l]``."""

    values: tuple[np.ndarray, ...]
    probs: tuple[np.ndarray, ...]

    @classmethod
    def build(cls, values: list[Any], probs: list[Any]) -> DiscreteClients:
        vs = tuple(np.atleast_2d(np.asarray(v, dtype=float)) for v in values)
        ps = tuple(np.asarray([float(x) for x in np.atleast_1d(p)]) for p in probs)
        if len(vs) != len(ps) or not vs:
            raise ValueError(f"values and probs must be non-empty lists of one length, got "
                             f"{len(vs)} and {len(ps)}")
        d = vs[0].shape[1]
        for i, (v, p) in enumerate(zip(vs, ps, strict=True)):
            if v.shape != (p.size, d) or np.any(p < 0) or abs(p.sum() - 1) > 1e-12:
                raise ValueError(f"client {i}: values must be ({p.size}, {d}) and probs a "
                                 f"distribution, got {v.shape} and {p.tolist()}")
        return cls(vs, ps)

    @property
    def n(self) -> int:
        return len(self.values)

    def _padded(self) -> tuple[np.ndarray, np.ndarray]:
        L = max(p.size for p in self.probs)
        d = self.values[0].shape[1]
        V = np.zeros((self.n, L, d))
        P = np.zeros((self.n, L))
        for i, (v, p) in enumerate(zip(self.values, self.probs, strict=True)):
            V[i, :p.size], P[i, :p.size] = v, p
        return V, P

    def mu(self) -> np.ndarray:
        r"""Exact :math:`\mu^{i,j} = \sum_{a,b}p_i(a)p_j(b)\,r(a, b)` (eq. 14; diagonal 1)."""
        V, P = self._padded()
        norm = np.linalg.norm(V, axis=2, keepdims=True)
        U = np.divide(V, norm, out=np.zeros_like(V), where=norm > 0)
        r = 0.5 * (np.clip(np.einsum("ald,bmd->ablm", U, U), -1, 1) + 1.0)
        mu = np.einsum("al,bm,ablm->ab", P, P, r)
        np.fill_diagonal(mu, 1.0)
        return mu

    def sigma2(self) -> np.ndarray:
        r"""Exact :math:`\sigma^2_{i,j} = \mathbb E\|\Delta^i\|^2 + \mathbb E\|\Delta^j\|^2
        - 2\,\mathbb E\Delta^i\cdot\mathbb E\Delta^j` (independent clients; diagonal 0)."""
        V, P = self._padded()
        m = np.einsum("al,ald->ad", P, V)
        s2 = np.einsum("al,ald->a", P, V**2)
        out = s2[:, None] + s2[None, :] - 2.0 * m @ m.T
        np.fill_diagonal(out, 0.0)
        return np.maximum(out, 0.0)

    @property
    def dim(self) -> int:
        """The dimension :math:`d` of the updates."""
        return int(self.values[0].shape[1])

    def from_normals(self, clients: np.ndarray, z: np.ndarray) -> np.ndarray:
        r"""``(K, d)``: client ``clients[k]``'s draw from the standard normals ``z[k]``
        ``(K, d)``: the value :math:`l` with :math:`F(l-1) \le \Phi(z_{k,1}) < F(l)` (the
        inverse distribution function of its law at a uniform).

        >>> m = DiscreteClients.build([[[1.0], [-1.0]]], [[0.5, 0.5]])
        >>> m.from_normals(np.array([0, 0]), np.array([[-1.0], [1.0]])).tolist()
        [[1.0], [-1.0]]
        """
        V, cum, last = self._inverse_table
        c = np.asarray(clients, dtype=np.intp)
        u = ndtr(np.asarray(z, dtype=float)[:, 0])
        idx = (u[:, None] >= cum[c]).sum(axis=1)
        return V[c, np.minimum(idx, last[c])]

    @functools.cached_property
    def _inverse_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The padded values, cumulative probabilities and last index of each client (a pure
        memo of this immutable model, built on first use)."""
        V, P = self._padded()
        return V, np.cumsum(P, axis=1), np.array([p.size - 1 for p in self.probs])

    def sample(self, rng: np.random.Generator, R: int) -> np.ndarray:
        """``(R, n, d)`` independent draws."""
        V, P = self._padded()
        cum = np.cumsum(P, axis=1)
        cum[:, -1] = np.inf
        idx = (rng.random((R, self.n))[..., None] >= cum[None, :, :]).sum(axis=2)
        return V[np.arange(self.n)[None, :], idx]


@dataclass(frozen=True)
class GaussianClusters:
    r"""Client ``i`` draws ``means[cluster[i]] + s * N(0, I_d)``."""

    means: np.ndarray
    cluster: np.ndarray
    s: float

    @property
    def n(self) -> int:
        return int(self.cluster.size)

    def sigma2(self) -> np.ndarray:
        m = self.means[self.cluster]
        d = m.shape[1]
        out = np.sum((m[:, None] - m[None, :]) ** 2, axis=2) + 2.0 * d * self.s**2
        np.fill_diagonal(out, 0.0)
        return out

    @property
    def dim(self) -> int:
        """The dimension :math:`d` of the updates."""
        return int(self.means.shape[1])

    def from_normals(self, clients: np.ndarray, z: np.ndarray) -> np.ndarray:
        r"""``(K, d)``: :math:`m_{c(i_k)} + s\,z_k`, client ``clients[k]``'s draw from the
        standard normals ``z`` ``(K, d)``."""
        return self.means[self.cluster[np.asarray(clients, dtype=np.intp)]] + self.s * z

    def sample(self, rng: np.random.Generator, R: int) -> np.ndarray:
        """``(R, n, d)`` independent draws."""
        m = self.means[self.cluster]
        return m[None] + self.s * rng.standard_normal((R, *m.shape))


# ------------------------------------------------------------------ instances with exact laws


def lemma_tight_instance(q: Fraction) -> dict[str, Any]:
    r"""Clients ``[g, f, k]`` (:math:`d = 1`): ``g`` always :math:`-1`, ``f`` always
    :math:`+1`, ``k`` is :math:`+1` with probability :math:`q > 1/2`, else :math:`-1`.

    :math:`\sigma^2_{k,f} = 4(1-q) = \sigma_F^2 < \sigma^2_{k,g} = 4q < \sigma^2_{f,g} = 4`, so
    ``f`` is ``k``'s only friend; :math:`r^{k,f}_t + r^{k,g}_t = 1`, :math:`\delta_{\min} =
    \delta_k = 2q - 1`, and a dropped ``k`` picks ``g`` iff its running frequency of :math:`+1`
    is :math:`\le 1/2` (ties to ``g``, index 0): :func:`lemma_tight_probability`."""
    qf = float(q)
    model = DiscreteClients.build([[-1.0], [1.0], [[1.0], [-1.0]]], [[1.0], [1.0], [qf, 1 - qf]])
    return {"model": model, "sigma_F2": 4 * (1 - qf), "k": 2, "K": 3}


def lemma_tight_probability(q: Fraction, N: int) -> Fraction:
    r""":math:`P(\mathrm{Bin}(N, q) \le N/2)`, exactly: the non-friend probability of
    :func:`lemma_tight_instance` after :math:`N` co-active rounds."""
    q = Fraction(q)
    a, b = q.numerator, q.denominator  # integer arithmetic, one division at the end
    num = sum(math.comb(N, c) * a**c * (b - a) ** (N - c) for c in range(N // 2 + 1))
    return Fraction(num, b**N)


def negative_gap_instance(q: Fraction = Fraction(1, 2), big: float = 3.0) -> dict[str, Any]:
    r"""Clients ``[f, g, k]`` (:math:`d = 1`): ``f`` is :math:`+1` w.p. :math:`q`, else
    :math:`-1`; ``g`` always ``big`` :math:`> 1`; ``k`` always :math:`+1`.

    ``f`` is ``k``'s friend (:math:`\sigma^2_{k,f} = 4(1-q) = \sigma_F^2 < (big-1)^2 =
    \sigma^2_{k,g}`), yet :math:`\mu^{k,f} = q < 1 = \mu^{k,g}`: :math:`\delta_k = q - 1 < 0`.
    A dropped ``k`` keeps ``f`` only while every score of ``f`` was 1 (ties to ``f``, index 0):
    non-friend probability :math:`1 - q^N` (:func:`negative_gap_probability`)."""
    qf = float(q)
    model = DiscreteClients.build([[[1.0], [-1.0]], [big], [1.0]], [[qf, 1 - qf], [1.0], [1.0]])
    return {"model": model, "sigma_F2": 4 * (1 - qf), "k": 2, "K": 3}


def negative_gap_probability(q: Fraction, N: int) -> Fraction:
    r""":math:`1 - q^N`: the non-friend probability of :func:`negative_gap_instance`."""
    return 1 - Fraction(q) ** N


def orthogonal_instance(q: float, group: int = 1) -> dict[str, Any]:
    r"""Three groups :math:`A_0, A_1, A_2` of ``group`` clients each, always :math:`e_i` (the
    unit vectors of :math:`\mathbb R^3`), then three clients :math:`f_i = \pm e_i`
    (:math:`P(+) = q > 1/2`). :math:`f_i` is the only friend of :math:`A_i` outside
    :math:`A_i` (:math:`\sigma_F^2 = 4(1-q) < 2 = \sigma_P^2`, every other pair of different
    clients at :math:`\sigma^2 = 2`); every score is exactly 0, 1/2 or 1 (no rounding ties).
    :math:`\delta_{\min} = q - 1/2`. With :func:`rotation_schedule` one group drops per round:
    :func:`orthogonal_error` is :math:`\mathbb E\|e_t\|^2` exactly."""
    e = np.eye(3)
    vals = [e[i] for i in range(3) for _ in range(group)] + [np.stack([e[i], -e[i]])
                                                              for i in range(3)]
    probs = [[1.0]] * (3 * group) + [[q, 1 - q]] * 3
    groups = [np.arange(i * group, (i + 1) * group) for i in range(3)]
    return {"model": DiscreteClients.build(vals, probs), "sigma_F2": 4 * (1 - q),
            "sigma_P2": 2.0, "groups": groups, "K": 3 * group + 3, "q": q,
            "alpha": group / (3 * group + 3)}


def orthogonal_error(q: Fraction, N: int, alpha: Fraction) -> dict[str, Fraction]:
    r"""Exact law of the choice of a dropped group :math:`A_i` of :func:`orthogonal_instance`
    after :math:`N` co-active rounds with :math:`f_i`: :math:`R^{A_i,f_i} = c/N`,
    :math:`c\sim\mathrm{Bin}(N, q)`, every non-friend scores exactly 1/2, so a non-friend
    (:math:`A_j`, the lowest tied index) is chosen iff :math:`c \le N/2`:
    :math:`P_{nf} =` :func:`lemma_tight_probability`, and

    .. math:: \mathbb E\|e_t\|^2 = \alpha^2\big((1-P_{nf})\,4(1-q) + P_{nf}\cdot 2\big)
        = \alpha^2\big(\sigma_F^2 + P_{nf}(\sigma_P^2 - \sigma_F^2)\big)

    (all of :math:`A_i` choose alike; the current round's update is independent of the
    choice)."""
    q, alpha = Fraction(q), Fraction(alpha)
    p = lemma_tight_probability(q, N)
    sF2 = 4 * (1 - q)
    return {"p_nonfriend": p, "e2": alpha**2 * (sF2 + p * (2 - sF2))}


def spread_friends_instance(q: Fraction = Fraction(3, 10)) -> dict[str, Any]:
    r"""Clients ``[A, A', f, B]`` (:math:`d = 1`, every client active in every round): ``A``
    and ``A'`` always :math:`+1`, ``B`` always :math:`-1`, ``f`` is :math:`+1` with probability
    :math:`q < 1/2`, else :math:`-1`. With :math:`\sigma_F^2 = 4(1-q)`: ``A``'s friends are
    ``A'`` (:math:`\mu = 1`) and ``f`` (:math:`\mu = q`), ``f``'s are ``A, A', B``, ``B``'s is
    ``f`` (:math:`\mu = 1 - q`); :math:`\delta_f = 1 - q`, :math:`\delta_{\min} = q > 0`,
    :math:`B_{\max} = 3`, :math:`eta = 1`. Friends far apart in score: a threshold whose
    :math:`\delta_f` term is too small eliminates ``f`` from ``A``'s candidates
    (:func:`spread_elimination_probability`)."""
    qf = float(q)
    model = DiscreteClients.build([[1.0], [1.0], [[1.0], [-1.0]], [-1.0]],
                                  [[1.0], [1.0], [qf, 1 - qf], [1.0]])
    return {"model": model, "sigma_F2": 4 * (1 - qf), "K": 4, "q": q}


def spread_elimination_probability(q: Fraction, theta: Any, active: Any = None) -> float:
    r"""The probability that a friend leaves a candidate set of :func:`spread_friends_instance`
    within the rounds :math:`t = 1..T` of ``theta`` (:math:`\Theta_1..\Theta_T`), by an exact
    chain over :math:`c`, the number of :math:`+1` of ``f`` in its :math:`N_t` active rounds
    (float arithmetic, no sampling). ``active`` ``(T,)`` bool: the rounds ``f`` takes part in
    (default all; ``A, A', B`` always do); round 1 must be one of them.

    Scores are 0 or 1: :math:`R^{A,f}_t = R^{A',f}_t = c/N_t`, :math:`R^{f,B}_t = 1 - c/N_t`,
    :math:`R^{A,A'} = 1`. A friend leaves some candidate set in round :math:`t` (the pruning
    runs every round, on the running means) iff :math:`1 - c/N_t \ge \Theta_t` (``f`` from
    ``A``'s, leader ``A'``), or :math:`1 - 2c/N_t \ge \Theta_t` (``A``, ``A'`` from ``f``'s,
    leader ``B``; implied by the first), or :math:`2c/N_t - 1 \ge \Theta_t` (``B`` from
    ``f``'s, leader ``A``)."""
    th = np.asarray(theta, dtype=float)
    T = th.size
    act = np.ones(T, dtype=bool) if active is None else np.asarray(active, dtype=bool)
    if act.shape != (T,) or not act[0]:
        raise ValueError(f"active must be a bool array of shape ({T},) with round 1 active, "
                         f"got {active!r}")
    qf = float(q)
    dist = np.zeros(T + 1)
    dist[0] = 1.0
    c = np.arange(T + 1, dtype=float)
    out, N = 0.0, 0
    for t in range(1, T + 1):
        if act[t - 1]:
            N += 1
            dist[1:N + 1] = dist[1:N + 1] * (1 - qf) + dist[0:N] * qf
            dist[0] *= 1 - qf
        r = c[: N + 1] / N
        hit = (1 - r >= th[t - 1]) | (2 * r - 1 >= th[t - 1])
        out += float(dist[: N + 1][hit].sum())
        dist[: N + 1][hit] = 0.0
    return out


# ------------------------------------------------------------------ dropout masks


def drop_schedule(n: int, T: int, who: Any, rounds: Any) -> np.ndarray:
    """``(T, n)`` mask: the clients ``who`` drop at the given ``rounds``, all else active."""
    m = np.ones((T, n), dtype=bool)
    r = np.asarray(rounds, dtype=int)
    m[np.ix_(r[(r >= 0) & (r < T)], np.atleast_1d(np.asarray(who, dtype=int)))] = False
    return m


def rotation_schedule(n: int, T: int, groups: list[Any], warmup: int) -> np.ndarray:
    """``(T, n)``: no dropout in rounds ``< warmup``; then group ``(t - warmup) % len(groups)``
    drops in round ``t``."""
    m = np.ones((T, n), dtype=bool)
    for t in range(warmup, T):
        m[t, groups[(t - warmup) % len(groups)]] = False
    return m


def random_friend_dropout(rng: np.random.Generator, R: int, T: int, friends: np.ndarray,
                          p_drop: float, warmup: int = 0) -> np.ndarray:
    """``(R, T, n)``: each client drops w.p. ``p_drop`` independently, then every dropped
    client whose friends all dropped brings its lowest-index friend back (Assumption 5); no
    dropout before ``warmup``. Independent of the updates."""
    n = friends.shape[0]
    drop = rng.random((R, T, n)) < p_drop
    drop[:, :warmup] = False
    has_friend = friends.any(axis=1)
    first = np.argmax(friends, axis=1)
    alive_friend = np.einsum("rtj,kj->rtk", (~drop).astype(np.int64), friends.astype(np.int64))
    lonely = drop & (alive_friend == 0) & has_friend[None, None, :]
    revive = np.zeros_like(drop)
    rr, tt, kk = np.nonzero(lonely)
    revive[rr, tt, first[kk]] = True
    return ~(drop & ~revive)


def whole_cluster_dropout(n: int, T: int, members: Any, period: int, warmup: int) -> np.ndarray:
    """``(T, n)``: the whole cluster ``members`` drops every ``period``-th round after
    ``warmup`` (no friend of theirs is active then: Assumption 5 fails)."""
    return drop_schedule(n, T, members, np.arange(warmup + period - 1, T, period))


# ------------------------------------------------------------------ simulation


class ModelUpdates:
    r"""A generative model of client updates as a :class:`~fedtheory.problems.Problem`, so that
    the engine runs FL-FDMS's discovery on it (:func:`simulate_discovery`).

    The objective is zero (:math:`f_i \equiv 0`): the updates say nothing about the iterate;
    what the model gives is the law of client :math:`i`'s update in a round, drawn afresh
    each round (Lemma 2's setting). The engine's one local-work path (one local step,
    ``local_steps=1``) hands each (replica, client) pair a row :math:`z` of standard normals
    from the replica's noise stream (``noise=GaussianNoise(d)``, :math:`\sigma_\xi = 1`);
    the problem's closed form (capability ``FUSED_LOCAL_STEPS``) maps it to the model's draw,
    :meth:`DiscreteClients.from_normals` / :meth:`GaussianClusters.from_normals`:
    :math:`\Delta_i = m_{c(i)} + s z` for Gaussian clusters, the inverse distribution
    function of client :math:`i`'s law at :math:`\Phi(z_1)` for a discrete one. The draws
    are exact values of the model (no rounding of the values themselves: the exact-score
    instances keep their exact scores).
    """

    capabilities = frozenset({Capability.FUSED_LOCAL_STEPS})
    can_fuse_local_steps = True
    L = 0.0
    mu = 0.0
    f_star = 0.0

    def __init__(self, model: Any) -> None:
        if not callable(getattr(model, "from_normals", None)):
            raise ValueError(f"model must offer from_normals(clients, z), got {model!r}")
        self.model = model
        self.n = int(model.n)
        self.d = int(model.dim)
        self.weights = np.full(self.n, 1.0 / self.n)
        self.x_star = np.zeros(self.d)

    def __repr__(self) -> str:
        return f"ModelUpdates({type(self.model).__name__}, n={self.n}, d={self.d})"

    def loss(self, x: np.ndarray) -> np.ndarray:
        """0, ``(..., d)`` -> ``(...)``."""
        return np.zeros(np.shape(x)[:-1])

    def client_losses(self, x: np.ndarray) -> np.ndarray:
        """0, ``(..., d)`` -> ``(..., n)``."""
        return np.zeros((*np.shape(x)[:-1], self.n))

    def grad(self, x: np.ndarray) -> np.ndarray:
        """0, ``(..., d)`` -> ``(..., d)``."""
        return np.zeros(np.shape(x))

    def client_grads(self, x: np.ndarray) -> np.ndarray:
        """0, ``(..., d)`` -> ``(..., n, d)``."""
        return np.zeros((*np.shape(x)[:-1], self.n, self.d))

    def client_gradients(self, y: np.ndarray, clients: np.ndarray) -> np.ndarray:
        """0, ``(K, d)``: the mean-free part of an update is the model's draw (the noise)."""
        return np.zeros((len(clients), self.d))

    def heterogeneity(self, x: np.ndarray) -> np.ndarray:
        """0, ``(..., d)`` -> ``(...)``."""
        return np.zeros(np.shape(x)[:-1])

    def fused_local_steps(self, y: np.ndarray, clients: np.ndarray, lr: float, steps: int, *,
                          correction: np.ndarray | None = None,
                          normals: np.ndarray | None = None, noise_sd: float = 0.0,
                          out: np.ndarray | None = None) -> np.ndarray:
        r"""The pairs' updates: the model's draws for ``clients`` from the standard normals
        ``normals`` ``(K, d)`` (one step, no correction, ``noise_sd`` 1)."""
        if steps != 1 or correction is not None or normals is None or noise_sd != 1.0:
            raise ValueError(f"ModelUpdates draws one update per round from the engine's "
                             f"standard normals (local_steps=1, noise=GaussianNoise(d), no "
                             f"correction), got steps={steps!r}, noise_sd={noise_sd!r}, "
                             f"normals {'absent' if normals is None else 'given'}")
        draw = self.model.from_normals(np.asarray(clients), normals)
        if out is None:
            return draw
        out[...] = draw
        return out


class _DiscoveryRecorder:
    """The ``observe`` callback of :func:`simulate_discovery`: per round, the substitutes'
    non-friend flags, the error, the scores computed and the first friend eliminated, read
    from the process's state (rows placed by the block's first replica)."""

    def __init__(self, R: int, T: int, n: int, friends: np.ndarray, eliminates: bool) -> None:
        self.fr = friends
        self.nonfriend = np.zeros((R, T, n), dtype=bool)
        self.e2 = np.zeros((R, T))
        self.computations = np.zeros((R, T), dtype=np.int64)
        self.eliminated = np.full(R, -1)
        self.mean_sim = np.full((R, n, n), np.nan)
        self.eliminates, self.T = eliminates, T
        self._nonfriend_flat = ~friends.reshape(-1)  # [k * n + j]: j is no friend of k
        self._row_start = np.arange(friends.shape[0]) * friends.shape[0]
        self._before: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # per block

    def __call__(self, rec: RoundRecord) -> None:
        st = rec.participation_state
        assert st is not None
        disc = st["discovery"]
        b, t = rec.start, rec.t - 1
        act = rec.mask
        rows = slice(b, b + act.shape[0])
        phi = st["friends"]
        ok = phi >= 0
        ok &= ~act
        # ok & ~fr[k, phi_k] (phi_k read as 0 where not ok)
        self.nonfriend[rows, t] = ok & self._nonfriend_flat[self._row_start + phi * ok]
        self.e2[rows, t] = st["error2"]
        comps = disc["computations"]
        before = self._before.get(b)
        self.computations[rows, t] = comps if before is None else comps - before[0]
        cand = disc["candidates"]
        if self.eliminates:
            if before is not None:
                if cand is before[1]:  # not pruned this round: nothing was lost
                    lost = None
                else:
                    lost = (before[1] & ~cand & self.fr[None]).any(axis=(1, 2))
            else:  # the first round: the sets started full
                lost = (~cand & self.fr[None]).any(axis=(1, 2))
            if lost is not None:
                e = self.eliminated[rows]
                self.eliminated[rows] = np.where((e < 0) & lost, t, e)
        self._before[b] = (comps, cand)  # (the process replaces them, never writes into them)
        if rec.t == self.T:
            self.mean_sim[rows] = fs.mean_similarity({"sum": disc["similarity_sum"],
                                                       "count": disc["similarity_count"]})


def simulate_discovery(model: Any, mask: np.ndarray, R: int, rng: np.random.Generator,
                       friends: np.ndarray, *, theta: Any = None,
                       kind: str = "cosine") -> dict[str, np.ndarray]:
    r"""FL-FDMS's friend discovery over :math:`T` rounds on ``R`` replicas, run by the engine
    (:func:`fedtheory.simulate.simulate`): the model as a problem (:class:`ModelUpdates`),
    the dropout as a :class:`~fedtheory.participation.ReplayParticipation` of ``mask``
    (``(T, n)``, or ``(R, T, n)`` one per replica), the discovery as the round-aware process
    :class:`~fedtheory.participation.FDMSFriendChoice` (measuring the error), aggregated by
    ``"fedavg_is"`` with its substitution coefficients, and an ``observe`` callback recording
    what the process decided.

    Each round: every client's update is drawn (the dropped clients' only to measure
    :math:`e_t`), the active pairs scored (only the candidate pairs with the complexity
    reduction), the running means updated (eq. 15), a substitute chosen for every dropped
    client, and (with ``theta``, an array of :math:`\Theta_t`, :math:`t < T`, applied after
    round :math:`t + 1`; ``inf``: none) the candidate sets pruned.

    Randomness: one engine seed drawn from ``rng`` (``rng.integers(2**63)``), then replica
    :math:`r`'s updates from the engine's noise stream of replica :math:`r`
    (:mod:`fedtheory.simulate`): a run that follows another on ``rng`` gets the same numbers
    whether or not the first was simulated (:func:`skip_discovery`), and any chunking of the
    replicas gives the same numbers.

    Returns ``nonfriend`` ``(R, T, n)`` bool (dropped and given a non-friend), ``dropped``
    ``(R, T, n)``, ``e2`` ``(R, T)`` (:math:`\|e_t\|^2`, :math:`e_t = \frac1K\sum_{k\notin
    \mathcal S_t}(\Delta^{\phi_t(k)}_t - \Delta^k_t)`), ``computations`` ``(R, T)``
    (similarity scores computed), ``eliminated`` ``(R,)`` (first round, from 0, after which
    a true friend left a candidate set, ``-1`` if never), ``mean_sim`` (the final
    :math:`R^{i,j}_T`).
    """
    m = np.asarray(mask, dtype=bool)
    if m.ndim not in (2, 3) or (m.ndim == 3 and m.shape[0] != R):
        raise ValueError(f"mask must be bool (T, n) or (R, T, n) = ({R}, T, n), got shape "
                         f"{m.shape}")
    T, n = m.shape[-2:]
    if n != model.n:
        raise ValueError(f"mask must have n = {model.n} clients (the model's), got {n}")
    fr = np.asarray(friends, dtype=bool)
    if fr.shape != (n, n):
        raise ValueError(f"friends must be bool ({n}, {n}), got shape {fr.shape}")
    th = None if theta is None else np.broadcast_to(np.asarray(theta, dtype=float), (T,))
    seed = int(rng.integers(2**63))
    base = ReplayParticipation(m if m.ndim == 2 else np.swapaxes(m, 0, 1), p=1.0)
    proc = FDMSFriendChoice(base, similarity=kind, thresholds=th, measure_error=True)
    rec = _DiscoveryRecorder(R, T, n, fr, th is not None)
    prob = ModelUpdates(model)
    simulate(prob, "fedavg_is", proc, rounds=T, replicas=R, lr=1.0,
             noise=GaussianNoise(float(prob.d)), fuse_local_steps=True, seed=seed,
             record_every=T, chunk=R if m.ndim == 3 else None, observe=rec)
    return {"nonfriend": rec.nonfriend, "dropped": np.broadcast_to(~m, (R, T, n)).copy(),
            "e2": rec.e2, "computations": rec.computations, "eliminated": rec.eliminated,
            "mean_sim": rec.mean_sim}


def skip_discovery(model: Any, T: int, R: int, rng: np.random.Generator) -> None:
    """Advance ``rng`` past the draws of :func:`simulate_discovery` (its only draw from
    ``rng``: the engine seed), without simulating: a run that follows another on the same
    generator gets its numbers without the first. (``model``, ``T`` and ``R`` do not change
    what is drawn; kept for the callers.)"""
    rng.integers(2**63)


def tight_curve(q: Fraction, t_max: int, period: int) -> dict[str, Any]:
    r"""Exact non-friend probability of :func:`lemma_tight_instance` against the round: ``k``
    active only in rounds :math:`t \equiv 0 \pmod{period}` (``period = 1``: ``k`` active in
    rounds :math:`0..t-1`, dropped in round :math:`t`, :math:`\beta = 1`). Returns ``t``,
    ``N``, ``P`` (floats of the exact rationals), ``beta`` (realised), ``delta`` and ``K``."""
    inst = lemma_tight_instance(q)
    model = inst["model"]
    fr = friendship(model.sigma2(), inst["sigma_F2"] * (1 + 1e-12))
    delta = gap_constants(model.mu(), fr)["delta_min"]
    if period == 1:
        t = np.arange(1, t_max + 1, 3)
        N, beta = t, 1.0
    else:
        t = np.array([s for s in range(1, t_max + 1) if s % period != 0])
        N = t // period + 1
        beta = realised_beta(drop_schedule(3, t_max + 1, inst["k"], t))
    P = np.array([float(lemma_tight_probability(q, int(n))) for n in N])
    return {"t": t, "N": N, "P": P, "beta": beta, "delta": delta, "K": inst["K"]}


def complexity_runs(model: Any, friends: np.ndarray, mask: np.ndarray, rng: np.random.Generator,
                    *, p: float, beta: float, delta_f: float,
                    scales: tuple[float, ...] = (1.0, 0.5),
                    only: Collection[str] | None = None) -> dict[str, dict[str, Any]]:
    r"""FL-FDMS without the complexity reduction and with :math:`c\,\Theta_t` for each
    :math:`c` in ``scales`` (Theorem 2's threshold with the given :math:`p, \beta, \delta_f`,
    :math:`T` and :math:`B_{\max}` of the instance) on the same ``(R, T, n)`` mask, one after
    the other on ``rng``. Per run (``"none"``, ``"1 Theta_t"``, ...): mean similarity
    computations per round, their total per replica, the fraction of runs that lost a friend
    and the non-friend rate of the substitutions.

    ``only``: the runs to simulate (default all); the draws of the others are skipped
    (:func:`skip_discovery`), so that each gets the numbers it gets in the whole sequence and
    ``rng`` ends where it does."""
    R, T, n = mask.shape
    base = complexity_threshold(np.arange(T), n_clients=n, horizon=T,
                                max_friends=int(friends.sum(axis=1).max()), beta=beta, p=p,
                                delta_f=delta_f)
    runs = [("none", None)] + [(f"{c:g} Theta_t", c * base) for c in scales]
    unknown = set(only or ()) - {name for name, _ in runs}
    if unknown:
        raise ValueError(f"only must name runs among {[name for name, _ in runs]}, got "
                         f"{sorted(unknown)}")
    out: dict[str, dict[str, Any]] = {}
    for name, theta in runs:
        if only is not None and name not in only:
            skip_discovery(model, T, R, rng)
            continue
        sim = simulate_discovery(model, mask, R, rng, friends, theta=theta)
        out[name] = {"per_round": sim["computations"].mean(axis=0),
                     "total": float(sim["computations"].sum(axis=1).mean()),
                     "friend_eliminated": float((sim["eliminated"] >= 0).mean()),
                     "nonfriend_rate": float(sim["nonfriend"].sum()
                                             / max(int(sim["dropped"].sum()), 1))}
    return out


def twenty_clusters() -> tuple[GaussianClusters, float]:
    """The seed's clustered setting in miniature: 20 clients in 5 clusters of 4, orthogonal
    unit means in :math:`\\mathbb R^{10}`, noise :math:`s = 0.3`; returns (model,
    :math:`\\sigma_F^2 = 2ds^2`, the within-cluster :math:`\\sigma^2`)."""
    d, s = 10, 0.3
    return GaussianClusters(np.eye(5, d), np.repeat(np.arange(5), 4), s), 2 * d * s * s


def nonfriend_figure_data(preset: str = "quick", seed: int = 0,
                          alpha: float = 1e-6) -> dict[str, Any]:
    """Data of the non-friend figure: exact curves of :func:`tight_curve` (:math:`q = 3/4`,
    :math:`\\beta = 1` and period 4) with Lemma 2's bound, and FL-FDMS simulated on the tight
    instance (``k`` active in even rounds) with two-sided Clopper-Pearson bands at ``alpha``."""
    q = Fraction(3, 4)
    t_max = 150 if preset == "quick" else 400
    curves = {}
    for period in (1, 4):
        c = tight_curve(q, t_max, period)
        curves[period] = {**c, "bound": lemma2_bound(c["t"], c["K"], c["beta"], c["delta"])}
    inst = lemma_tight_instance(q)
    T = 41
    drops = np.arange(1, T, 2)
    mask = drop_schedule(3, T, inst["k"], drops)
    fr = friendship(inst["model"].sigma2(), inst["sigma_F2"] * (1 + 1e-12))
    R = 2000 if preset == "quick" else 20000
    sim = simulate_discovery(inst["model"], mask, R, np.random.default_rng([seed, 4, 99]), fr)
    hits = sim["nonfriend"][:, drops, inst["k"]].sum(axis=0)
    beta = realised_beta(mask)
    return {"curves": curves, "mc": {
        "t": drops, "rate": hits / R, "lower": clopper_pearson(hits, R, alpha / 2, "lower"),
        "upper": clopper_pearson(hits, R, alpha / 2, "upper"),
        "bound": lemma2_bound(drops, 3, beta, curves[1]["delta"]), "beta": beta, "R": R},
        "alpha": alpha}


def complexity_figure_data(preset: str = "quick", seed: int = 0, p: float = 0.1
                           ) -> dict[str, Any]:
    """Data of the complexity figure: :func:`complexity_runs` on :func:`twenty_clusters` with
    random dropout (each client w.p. 0.3, a friend always kept), :math:`\\delta_f` the upper
    end of its estimated interval; plus :math:`\\Theta_t` itself."""
    model, sF2 = twenty_clusters()
    rng = np.random.default_rng([seed, 4, 98])
    est = estimate_similarity_means(model.sample, 20000, rng)
    fr = friendship(model.sigma2(), sF2 * (1 + 1e-12))
    df = gap_interval(est["lower"], est["upper"], fr)["delta_f"][1]
    T = 1000 if preset == "quick" else 3000
    R = 4 if preset == "quick" else 20
    mask = random_friend_dropout(rng, R, T, fr, 0.3, warmup=5)
    beta = realised_beta(mask)
    runs = complexity_runs(model, fr, mask, rng, p=p, beta=beta, delta_f=df)
    theta = complexity_threshold(np.arange(1, T), n_clients=20, horizon=T,
                                 max_friends=int(fr.sum(1).max()), beta=beta, p=p, delta_f=df)
    return {"runs": runs, "theta": theta, "T": T, "beta": beta, "delta_f": df, "p": p}

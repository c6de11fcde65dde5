r"""The client-update models, instances and dropout masks of
:mod:`fedtheory.experiments.fdms_friends` (FL-FDMS's friend discovery, seed 004, Section 5):
:class:`DiscreteClients` and :class:`GaussianClusters`; the instances with exact laws
(:func:`lemma_tight_instance`, :func:`negative_gap_instance`, :func:`orthogonal_instance`,
:func:`spread_friends_instance`) with their exact non-friend probabilities and errors; the
``(T, n)`` dropout masks."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy.special import ndtr

__all__ = [
    "DiscreteClients",
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
    "spread_elimination_probability",
    "spread_friends_instance",
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

r"""The constants of seed 004's analysis, exact for a model and measured on a problem.

**The substitution error, exactly.** In round :math:`t` (weights :math:`1/K`), a dropped
client :math:`k\in\mathcal D_t = \mathcal K\setminus\mathcal S_t` is substituted by a linear
combination of the active updates, :math:`\tilde\Delta^k = \sum_j A_{kj}\Delta^j` with
:math:`\sum_j A_{kj} = 1` (Dropout: :math:`A_{kj} = 1/S_t` on :math:`\mathcal S_t`; a
friend: :math:`A_{k\phi(k)} = 1`). Then

.. math::

    e_t = \Delta_t - \bar\Delta_t = \frac1K\sum_{k\in\mathcal D_t}(\tilde\Delta^k - \Delta^k)
        = \sum_j c_j\Delta^j,\qquad c = \frac1K\sum_{k\in\mathcal D_t}(A_k - \mathbf e_k),
    \qquad \sum_j c_j = 0,

and because the coefficients sum to zero, pathwise (polarisation)

.. math:: \|e_t\|^2 = -\frac12\sum_{i,j} c_i c_j \|\Delta^i - \Delta^j\|^2 ,

so, for a dropout set that does not depend on the round's samples,
:math:`\mathbb E\|e_t\|^2 = -\frac12\sum_{i,j} c_ic_j\,\bar\sigma^2_{ij}` with
:math:`\bar\sigma^2_{ij} = \mathbb E\|\Delta^i - \Delta^j\|^2` (Assumption 4's tightest
:math:`\sigma^2_{ij}`). For updates :math:`\Delta^i = m_i + \xi_i` with independent zero-mean
noise of :math:`\mathbb E\|\xi_i\|^2 = v_i`, :math:`\bar\sigma^2_{ij} = \|m_i - m_j\|^2 + v_i +
v_j` (:math:`i\ne j`).

**Measured.** :func:`measure_constants` estimates, on a problem and at given points
:math:`w`, every client's update law by repeated local runs (the engine's
``local_updates``) and from it :math:`\sigma^2_{ij}` (Assumption 4, the largest over the
points), :math:`\sigma_P^2`, the friend sets :math:`\mathcal B_k` for a given
:math:`\sigma_F^2`, :math:`\mu^{k,i} = \mathbb E r(\Delta^k,\Delta^i)` (eq. 14),
:math:`\delta_{\min}`, :math:`\delta_f`, :math:`B_{\max}`, each with its standard error;
:func:`~fedtheory.participation.dropout.realised_beta` gives :math:`\beta` of a mask history.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb
from typing import Any

import numpy as np
import sympy as sp

from fedtheory.algorithms import Participants, get_rule
from fedtheory.engine import Engine, EngineConfig, LocalWork, Run
from fedtheory.participation import BernoulliParticipation
from fedtheory.sampling import friend_selection as fs

__all__ = [
    "assumption5_holds",
    "assumption5_probability",
    "dropout_law",
    "error2_from_pairwise",
    "error_coefficients",
    "exact_error2",
    "friend_sets",
    "gap_constants",
    "measure_constants",
    "noise_expectation",
    "pairwise_sigma2",
    "random_dropout_error2",
    "substitution_matrix",
]


def substitution_matrix(active: np.ndarray, friends: np.ndarray | None = None,
                        exact: bool = False) -> np.ndarray:
    r"""The matrix :math:`A` (``(n, n)``) of one round: row :math:`k` of a dropped client is its
    substitute's coefficients; rows of active clients are 0.

    ``friends`` None: Dropout (:math:`A_{kj} = 1/S` for active :math:`j`); else ``friends[k]``
    is the active client substituting :math:`k`. ``exact``: :class:`Fraction` entries.

    >>> substitution_matrix(np.array([True, True, False]), exact=True)[2].tolist()
    [Fraction(1, 2), Fraction(1, 2), Fraction(0, 1)]
    """
    a = np.asarray(active, dtype=bool)
    n = a.size
    S = int(a.sum())
    if S == 0:
        raise ValueError("active must contain at least one client (alpha < 1)")
    A = np.zeros((n, n), dtype=object if exact else float)
    if exact:
        A[:] = Fraction(0)
    for k in np.flatnonzero(~a):
        if friends is None:
            A[k, a] = Fraction(1, S) if exact else 1.0 / S
        else:
            j = int(friends[k])
            if not 0 <= j < n or not a[j]:
                raise ValueError(f"friends[{k}] = {j} is not an active client")
            A[k, j] = Fraction(1) if exact else 1.0
    return A


def error_coefficients(active: np.ndarray, A: np.ndarray) -> np.ndarray:
    r""":math:`c = \frac1K\sum_{k\in\mathcal D}(A_k - \mathbf e_k)`, so that
    :math:`e_t = \sum_j c_j\Delta^j` (exact when ``A`` holds Fractions)."""
    a = np.asarray(active, dtype=bool)
    n = a.size
    eye = np.eye(n, dtype=int).astype(A.dtype)
    drop = np.flatnonzero(~a)
    c = (A[drop] - eye[drop]).sum(axis=0) if drop.size else np.zeros(n, dtype=A.dtype) * 0
    return c / n if A.dtype != object else np.array([Fraction(x) / n for x in c], dtype=object)


def error2_from_pairwise(c: np.ndarray, S2: np.ndarray) -> Any:
    r""":math:`-\frac12\sum_{i,j}c_ic_j S2_{ij}` (``S2`` with zero diagonal): the mean square of
    :math:`\sum_j c_j\Delta^j` when :math:`\sum_j c_j = 0` and
    :math:`S2_{ij} = \mathbb E\|\Delta^i - \Delta^j\|^2`."""
    return -(c @ S2 @ c) / 2


def pairwise_sigma2(means: np.ndarray, var: np.ndarray) -> np.ndarray:
    r""":math:`\bar\sigma^2_{ij} = \|m_i - m_j\|^2 + v_i + v_j` (:math:`i \ne j`), 0 on the
    diagonal: ``means (n, d)``, ``var (n,)`` (object arrays of Fractions stay exact).

    >>> pairwise_sigma2(np.array([[0.0], [1.0]]), np.array([0.5, 0.25])).tolist()
    [[0.0, 1.75], [1.75, 0.0]]
    """
    m = np.asarray(means)
    v = np.asarray(var)
    diff = m[:, None, :] - m[None, :, :]
    S2 = (diff * diff).sum(axis=2) + v[:, None] + v[None, :]
    n = S2.shape[0]
    S2[np.arange(n), np.arange(n)] = 0 * S2[0, 0]
    return S2


def random_dropout_error2(S2: np.ndarray, n_drop: int) -> Any:
    r"""Closed form of :math:`\mathbb E\|e_t\|^2` for Dropout when a uniformly random set of
    :math:`D` of the :math:`K` clients drops (:class:`DropoutParticipation` ``"max"``):

    .. math:: \mathbb E\|e_t\|^2 = \frac{D}{KS}\cdot\frac{1}{K(K-1)}\sum_{i<j}
        \bar\sigma^2_{ij},\qquad S = K - D .

    Derivation: a pair is split between the active and the dropped sets with probability
    :math:`2SD/(K(K-1))`, inside the active set with :math:`S(S-1)/(K(K-1))`, inside the
    dropped set with :math:`D(D-1)/(K(K-1))`; with the per-mask coefficients
    :math:`\frac{D}{K^2S}`, :math:`-\frac{D^2}{K^2S^2}`, :math:`-\frac1{K^2}` the bracket is
    :math:`\frac{D}{K^2}(2D - \frac{D(S-1)}{S} - (D-1)) = \frac{D}{KS}`. So the bound
    :math:`\alpha^2\sigma_P^2` is loose by the factor :math:`\frac{K}{2DS}\cdot
    \frac{\text{mean}\,\bar\sigma^2}{\sigma_P^2}` under random dropout.
    Exact for an object array of Fractions.

    >>> S2 = np.array([[0, 4, 4], [4, 0, 4], [4, 4, 0]])
    >>> float(random_dropout_error2(S2, 1))  # D/(KS) * 12/6 = 1/6 * 2
    0.3333333333333333
    """
    S2 = np.asarray(S2)
    K = S2.shape[0]
    D = int(n_drop)
    if not 0 <= D < K:
        raise ValueError(f"n_drop must be in [0, {K - 1}], got {n_drop!r}")
    S = K - D
    pairs = sum(S2[i, j] for i in range(K) for j in range(i + 1, K))
    if S2.dtype == object:
        return Fraction(D, K * S) * Fraction(1, K * (K - 1)) * pairs
    return D / (K * S) * pairs / (K * (K - 1))


def dropout_law(n: int, alpha: Any, distribution: str = "max") -> list[tuple[np.ndarray, Fraction]]:
    r"""Every mask of :class:`~fedtheory.participation.DropoutParticipation` with its exact
    probability: :math:`D = \lfloor\alpha n\rfloor` (``"max"``) or :math:`D` uniform on
    :math:`\{0..\lfloor\alpha n\rfloor\}` (``"uniform"``), then a uniform :math:`D`-subset.

    >>> [(m.astype(int).tolist(), str(p)) for m, p in dropout_law(2, Fraction(1, 2))]
    [([0, 1], '1/2'), ([1, 0], '1/2')]
    """
    a = Fraction(alpha) if not isinstance(alpha, float) else Fraction(alpha).limit_denominator(
        10**6)
    if not 0 <= a < 1:
        raise ValueError(f"alpha must be in [0, 1), got {alpha!r}")
    if distribution not in ("max", "uniform"):
        raise ValueError(f"distribution must be 'max' or 'uniform', got {distribution!r}")
    dmax = min(n - 1, int(a * n))
    counts = [dmax] if distribution == "max" else list(range(dmax + 1))
    out = []
    for D in counts:
        subsets = list(itertools.combinations(range(n), D))
        for sub in subsets:
            m = np.ones(n, dtype=bool)
            m[list(sub)] = False
            out.append((m, Fraction(1, len(counts) * len(subsets))))
    return out


def exact_error2(S2: np.ndarray, law: list[tuple[np.ndarray, Any]],
                 friends: np.ndarray | None = None) -> Any:
    r""":math:`\mathbb E\|e_t\|^2 = \sum_{\text{masks}} P(\text{mask})\,(-\tfrac12 c^\top S2\,c)`
    over a law of masks independent of the samples; ``friends`` ``(n, n)`` bool (substitute:
    the lowest-index active friend; every dropped client must have one, Assumption 5) or None
    (Dropout). Exact for an object array ``S2`` of Fractions and Fraction probabilities."""
    exact = np.asarray(S2).dtype == object
    total: Any = Fraction(0) if exact else 0.0
    for mask, prob in law:
        src = None
        if friends is not None:
            src = _lowest_active_friend(mask, friends)
        A = substitution_matrix(mask, src, exact=exact)
        c = error_coefficients(mask, A)
        total += prob * error2_from_pairwise(c, S2)
    return total


def _lowest_active_friend(mask: np.ndarray, friends: np.ndarray) -> np.ndarray:
    allowed = ~mask[:, None] & mask[None, :] & np.asarray(friends, dtype=bool)
    src = np.where(allowed.any(axis=1), np.argmax(allowed, axis=1), -1)
    bad = ~mask & (src < 0)
    if bad.any():
        raise ValueError(f"client {int(np.flatnonzero(bad)[0])} dropped without an active "
                         "friend: Assumption 5 fails for this mask")
    return src


def friend_sets(S2: np.ndarray, sigma_F2: float) -> np.ndarray:
    r""":math:`\mathcal B_k = \{i\ne k: \sigma^2_{ki}\le\sigma_F^2\}` (Definition 1): ``(n, n)``
    bool."""
    S2 = np.asarray(S2, dtype=float)
    F = S2 <= sigma_F2
    np.fill_diagonal(F, False)
    return F


def assumption5_holds(masks: np.ndarray, friends: np.ndarray) -> np.ndarray:
    r"""Whether every dropped client has an active friend (Assumption 5): ``masks (..., n)``
    -> ``(...)`` bool."""
    m = np.asarray(masks, dtype=bool)
    has = (m[..., None, :] & np.asarray(friends, dtype=bool)).any(axis=-1)
    return np.all(m | has, axis=-1)


def assumption5_probability(n: int, clusters: int, n_drop: int) -> Fraction:
    r""":math:`P(\text{Assumption 5})` when :math:`D` of :math:`K` clients in :math:`C` equal
    clusters of friends (size :math:`m = K/C`) drop uniformly at random: no cluster drops
    entirely (inclusion-exclusion over the clusters that drop whole),

    .. math:: 1 - \sum_{j \ge 1}(-1)^{j+1}\binom Cj\binom{K - jm}{D - jm}\Big/\binom KD .

    >>> str(assumption5_probability(4, 2, 2))  # 2 of the 6 pairs are whole clusters
    '2/3'
    """
    if n % clusters:
        raise ValueError(f"clusters must divide n={n}, got {clusters!r}")
    if not 0 <= n_drop < n:
        raise ValueError(f"n_drop must be in [0, {n - 1}], got {n_drop!r}")
    m = n // clusters
    bad = sum((-1) ** (j + 1) * comb(clusters, j) * comb(n - j * m, n_drop - j * m)
              for j in range(1, clusters + 1) if j * m <= n_drop)
    return 1 - Fraction(bad, comb(n, n_drop))


def gap_constants(mu: np.ndarray, friends: np.ndarray) -> dict[str, Any]:
    r""":math:`\delta_k = \min_{i\in\mathcal B_k}\mu^{k,i} - \max_{i\notin\mathcal B_k,
    i\ne k}\mu^{k,i}`, :math:`\delta_{\min} = \min_k\delta_k`, :math:`\delta_f = \max_k(\max_{
    \mathcal B_k}\mu^{k,i} - \min_{\mathcal B_k}\mu^{k,i})`, :math:`B_{\max} = \max_k B_k`
    (clients without friends or without non-friends are left out of the min / max)."""
    mu = np.asarray(mu, dtype=float)
    F = np.asarray(friends, dtype=bool)
    n = mu.shape[0]
    off = ~np.eye(n, dtype=bool)
    nf = off & ~F
    fmin = np.where(F, mu, np.inf).min(axis=1)
    fmax = np.where(F, mu, -np.inf).max(axis=1)
    nmax = np.where(nf, mu, -np.inf).max(axis=1)
    ok = F.any(axis=1) & nf.any(axis=1)
    delta_k = np.where(ok, fmin - nmax, np.nan)
    spread = np.where(F.any(axis=1), fmax - fmin, np.nan)
    return {"delta_k": delta_k,
            "delta_min": float(np.nanmin(delta_k)) if ok.any() else float("nan"),
            "delta_f": float(np.nanmax(spread)) if F.any() else 0.0,
            "B": F.sum(axis=1), "B_max": int(F.sum(axis=1).max())}


def measure_constants(problem: Any, points: np.ndarray, *, lr: float, local_steps: int,
                      noise: Any, samples: int, sigma_F2: float, seed: int = 0
                      ) -> dict[str, Any]:
    r"""Estimate the constants of Assumptions 4-6 and Lemma 2 on ``problem``.

    At each point :math:`w` of ``points`` (``(P, d)``), every client runs its local steps
    ``samples`` times (the engine's ``local_updates``, independent noise), giving
    :math:`\hat\sigma^2_{ij}(w)` (mean of :math:`\|\Delta^i - \Delta^j\|^2` over independent
    draws) and :math:`\hat\mu^{k,i}(w)` (mean of eq. 14). Returned: ``sigma2`` (the largest
    over the points, ``(n, n)``) and its standard error, ``sigma_P2``, the friend sets for
    ``sigma_F2``, ``mu`` (averaged over the points: the seed's :math:`\mu^{k,i}` is an
    expectation over rounds) with its standard error, and :func:`gap_constants`.
    """
    pts = np.atleast_2d(np.asarray(points, dtype=float))
    n, d = problem.n, problem.d
    R = int(samples)
    cfg = EngineConfig(problem=problem, rule=get_rule("full"),
                       participation=BernoulliParticipation(1.0, n=n),
                       run=Run(rounds=1, replicas=R, seed=seed),
                       local=LocalWork(lr=lr, steps=local_steps, noise=noise))
    eng = Engine(cfg)
    full = Participants.full(R, n)
    s2_all, s2_se, mu_all = [], [], []
    for j, w in enumerate(pts):
        rngs = [np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(j, r)))
                for r in range(R)]
        x = np.broadcast_to(w, (R, d)).copy()
        upd, _ = eng.local_updates(x, full, None, rngs, {})
        U = np.array(upd, dtype=float).reshape(R, n, d)
        diff = U[:, :, None, :] - U[:, None, :, :]
        sq = np.einsum("rijd,rijd->rij", diff, diff)
        s2_all.append(sq.mean(axis=0))
        s2_se.append(sq.std(axis=0, ddof=1) / np.sqrt(R))
        sims = fs.similarity_matrix(U, np.ones((R, n), dtype=bool))
        mu_all.append(sims)
    s2 = np.stack(s2_all)
    worst = np.argmax(s2, axis=0)
    sigma2 = np.take_along_axis(s2, worst[None], axis=0)[0]
    sigma2_se = np.take_along_axis(np.stack(s2_se), worst[None], axis=0)[0]
    sims = np.concatenate(mu_all)
    mu = sims.mean(axis=0)
    mu_se = sims.std(axis=0, ddof=1) / np.sqrt(sims.shape[0])
    F = friend_sets(sigma2, sigma_F2)
    return {"sigma2": sigma2, "sigma2_se": sigma2_se, "sigma_P2": float(sigma2.max()),
            "sigma_F2": float(sigma_F2), "friends": F, "mu": mu, "mu_se": mu_se,
            **gap_constants(mu, F)}


def noise_expectation(expr: sp.Expr, xis: list[sp.Symbol], vs: list[sp.Symbol]) -> sp.Expr:
    r""":math:`\mathbb E` of a polynomial of degree :math:`\le 2` in independent zero-mean
    :math:`\xi_i` with :math:`\mathbb E\xi_i^2 = v_i`: :math:`\xi_i\xi_j \to 0` (:math:`i\ne j`),
    :math:`\xi_i^2\to v_i`, :math:`\xi_i\to 0`."""
    poly = sp.Poly(sp.expand(expr), *xis)
    out = sp.Integer(0)
    for mon, coef in poly.terms():
        deg = sum(mon)
        if deg == 0:
            out += coef
        elif deg == 2 and max(mon) == 2:
            out += coef * vs[mon.index(2)]
        elif deg > 2:
            raise ValueError(f"expr must have degree <= 2 in the noise, got monomial {mon}")
    return sp.expand(out)

r"""Friend discovery of FL-FDMS (seed 004, Section 5): similarity scores, their running means,
the friend choice for dropped clients, and the complexity reduction of Section 5.3.

Pure vectorised functions; the replicas are the leading axis (``R``), clients the next
(``n``). API (names and signatures are stable; rules import them):

- :func:`similarity_matrix` ``(updates (R, n, d), active (R, n), kind="cosine") -> (R, n, n)``:
  the score :math:`r^{i,j}_t` of eq. (14) for pairs of active clients, NaN elsewhere.
- :func:`init_similarity` ``(R, n) -> {"sum", "count"}``, :func:`update_similarity`
  ``(state, sims, active, computed=None) -> state`` (eq. 15), :func:`mean_similarity`
  ``(state) -> (R, n, n)`` (:math:`R^{i,j}_t`, NaN where :math:`N^{i,j}_t = 0`).
- :func:`choose_friends` ``(mean_sim, active, candidates=None, *, fallback="active") -> (R, n)``:
  :math:`\phi_t(k)` for each dropped client, ``-1`` for active clients.
- :func:`complexity_threshold` (Theorem 2's :math:`\Theta_t`, times ``scale``),
  :func:`init_candidates`, :func:`prune_candidates` ``(mean_sim, candidates, theta,
  active_next=None) -> (candidates, computations)``, :func:`count_computations`.

Conventions (each tested in ``tests/test_fdms_friend_selection.py``):

- **Zero updates.** Eq. (14) is :math:`0/0` when an update is zero. A zero vector has no
  direction; we take its cosine with anything to be 0 (the convention of normalising a zero
  vector to zero), hence :math:`r = 1/2`, the midpoint of :math:`[0, 1]`: an uninformative score
  that neither attracts nor repels.
- **Diagonal.** :math:`r^{i,i}_t` is eq. (14) applied to :math:`(\Delta^i_t, \Delta^i_t)`: 1 for
  an active client with a non-zero update, 1/2 for a zero update, NaN for a dropped one. A
  client is never its own friend or candidate: :func:`choose_friends` only looks at active
  clients for a dropped one, and candidate masks have a ``False`` diagonal.
- **Ties** in :math:`\arg\max` go to the lowest client index.
- **No co-active history** (:math:`N^{k,i}_t = 0`, mean NaN) ranks below every client with a
  history (score :math:`-\infty`); if no allowed client has a history, the lowest-index allowed
  active client is chosen. Such clients are never pruned (there is no evidence against them).
- **Empty candidate set.** If no candidate of a dropped client is active, ``fallback="active"``
  chooses among all active clients (as FL-FDMS without complexity reduction would),
  ``fallback="none"`` returns ``-1``. If no client is active the round is skipped: all ``-1``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from fedtheory.validation import finite_real, positive_integer, real_array

__all__ = [
    "SIMILARITIES",
    "choose_friends",
    "complexity_threshold",
    "count_computations",
    "discovery_round",
    "init_candidates",
    "init_similarity",
    "mean_similarity",
    "prune_candidates",
    "similarity_matrix",
    "substitution_coefficients",
    "update_similarity",
]


def _cosine(updates: np.ndarray) -> np.ndarray:
    r"""Eq. (14) for all pairs: :math:`\frac12(\langle u_i, u_j\rangle + 1)` with
    :math:`u_i = \Delta^i/\|\Delta^i\|` (:math:`u_i = 0` for a zero update)."""
    # guards the norm from under/overflow
    scale = np.maximum.reduce(np.abs(updates), axis=2, keepdims=True)
    y = np.divide(updates, scale, out=np.zeros_like(updates), where=scale > 0)
    norm = np.sqrt(np.add.reduce(y * y, axis=2, keepdims=True))  # = np.linalg.norm's
    u = np.divide(y, norm, out=np.zeros_like(y), where=norm > 0)
    cos = u @ np.swapaxes(u, 1, 2)
    np.minimum(np.maximum(cos, -1.0, out=cos), 1.0, out=cos)  # = np.clip, without its wrapper
    cos += 1.0
    cos *= 0.5
    return cos


def _negative_distance(updates: np.ndarray) -> np.ndarray:
    r""":math:`-\|\Delta^i - \Delta^j\|` (the seed's other example), from the Gram matrix."""
    gram = updates @ np.swapaxes(updates, 1, 2)
    sq = np.einsum("rii->ri", gram)
    d2 = np.maximum(sq[:, :, None] + sq[:, None, :] - 2.0 * gram, 0.0)
    idx = np.arange(updates.shape[1])
    d2[:, idx, idx] = 0.0
    return -np.sqrt(d2)


#: Registered similarity scores: name -> function ``(R, n, d) -> (R, n, n)`` over all pairs.
SIMILARITIES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "cosine": _cosine,
    "negative_distance": _negative_distance,
}


def _check_active(active: Any, R: int, n: int, name: str = "active") -> np.ndarray:
    a = np.asarray(active)
    if a.dtype != np.bool_:
        raise ValueError(f"{name} must be a boolean array, got dtype {a.dtype}")
    if a.shape != (R, n):
        raise ValueError(f"{name} must have shape {(R, n)}, got {a.shape}")
    return a


def _check_square(x: Any, name: str, dtype: Any = None) -> np.ndarray:
    a = np.asarray(x)
    if a.ndim != 3 or a.shape[1] != a.shape[2]:
        raise ValueError(f"{name} must have shape (R, n, n), got {a.shape}")
    if dtype is bool and a.dtype != np.bool_:
        raise ValueError(f"{name} must be a boolean array, got dtype {a.dtype}")
    return a


def similarity_matrix(updates: Any, active: Any, kind: str = "cosine") -> np.ndarray:
    r"""Pairwise similarity scores of one round (eq. 14 of seed 004 by default).

    .. math:: r^{i,j}_t = \frac12\left(\frac{\langle\Delta^i_t, \Delta^j_t\rangle}
        {\|\Delta^i_t\|\,\|\Delta^j_t\|} + 1\right) \in [0, 1], \qquad i, j \in \mathcal S_t .

    Parameters
    ----------
    updates
        ``(R, n, d)`` finite float array, the local updates :math:`\Delta^i_t` (rows of dropped
        clients are ignored).
    active
        ``(R, n)`` bool, the active set :math:`\mathcal S_t` of each replica.
    kind
        A name in :data:`SIMILARITIES`: ``"cosine"`` (eq. 14) or ``"negative_distance"``
        (:math:`-\|\Delta^i_t - \Delta^j_t\|`).

    Returns
    -------
    ``(R, n, n)`` float, symmetric; NaN unless both clients are active. A zero update scores
    1/2 against everything under ``"cosine"`` (module docstring); the diagonal is the formula on
    :math:`(\Delta^i_t, \Delta^i_t)`.

    >>> u = np.array([[[1.0, 0.0], [0.0, 2.0], [-3.0, 0.0]]])
    >>> similarity_matrix(u, np.array([[True, True, True]]))[0].tolist()
    [[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]]
    """
    if kind not in SIMILARITIES:
        raise ValueError(f"kind must be one of {sorted(SIMILARITIES)}, got {kind!r}")
    u = real_array("updates", updates)
    if u.ndim != 3:
        raise ValueError(f"updates must have shape (R, n, d), got {u.shape}")
    R, n, _ = u.shape
    a = _check_active(active, R, n)
    u = np.where(a[:, :, None], u, 0.0)  # dropped clients' rows may hold anything
    if not np.isfinite(u).all():
        raise ValueError("updates of active clients must be finite")
    sims = SIMILARITIES[kind](u)
    both = a[:, :, None] & a[:, None, :]
    return np.where(both, sims, np.nan)


def init_similarity(R: int, n: int) -> dict[str, np.ndarray]:
    """Empty running-mean state: ``{"sum": zeros (R, n, n), "count": zeros (R, n, n) int}``.

    >>> s = init_similarity(2, 3)
    >>> s["sum"].shape, s["count"].dtype.kind
    ((2, 3, 3), 'i')
    """
    for name, v in (("R", R), ("n", n)):
        positive_integer(name, v)
    return {"sum": np.zeros((R, n, n)), "count": np.zeros((R, n, n), dtype=np.int64)}


def update_similarity(
    state: dict[str, np.ndarray], sims: Any, active: Any, computed: Any = None
) -> dict[str, np.ndarray]:
    r"""One round of eq. (15): add :math:`r^{i,j}_t` to the pairs where both are active.

    .. math:: R^{i,j}_t = \frac{N^{i,j}_{t-1}}{N^{i,j}_{t-1}+1} R^{i,j}_{t-1}
        + \frac{r^{i,j}_t}{N^{i,j}_{t-1}+1} = \frac{\sum_{s \le t:\, i,j\in\mathcal S_s}
        r^{i,j}_s}{N^{i,j}_t},

    kept as the sum and the count :math:`N^{i,j}_t` (the recursion, unrolled, is this ratio).

    Parameters
    ----------
    state
        From :func:`init_similarity`; not modified (a new dict is returned).
    sims
        ``(R, n, n)`` scores of this round (:func:`similarity_matrix`); must be finite on the
        pairs that are updated.
    active
        ``(R, n)`` bool active set.
    computed
        Optional ``(R, n, n)`` bool: only these pairs were scored this round (complexity
        reduction); the others keep their mean and count.

    >>> s = init_similarity(1, 2)
    >>> r = np.array([[[1.0, 0.25], [0.25, 1.0]]])
    >>> s = update_similarity(s, r, np.array([[True, True]]))
    >>> s = update_similarity(s, r * 3, np.array([[True, True]]))
    >>> float(mean_similarity(s)[0, 0, 1]), int(s["count"][0, 0, 1])
    (0.5, 2)
    """
    total, count = state["sum"], state["count"]
    R, n, _ = total.shape
    r = _check_square(sims, "sims")
    if r.shape != (R, n, n):
        raise ValueError(f"sims must have shape {(R, n, n)}, got {r.shape}")
    a = _check_active(active, R, n)
    upd = a[:, :, None] & a[:, None, :]
    if computed is not None:
        c = _check_square(computed, "computed", bool)
        if c.shape != (R, n, n):
            raise ValueError(f"computed must have shape {(R, n, n)}, got {c.shape}")
        upd = upd & c
    if not (np.isfinite(r) | ~upd).all():
        raise ValueError("sims must be finite where both clients are active (and computed)")
    return {"sum": total + np.where(upd, r, 0.0), "count": count + upd}


def mean_similarity(state: dict[str, np.ndarray]) -> np.ndarray:
    r"""The running means :math:`R^{i,j}_t` (eq. 15); NaN where :math:`N^{i,j}_t = 0`."""
    count = state["count"]
    return np.divide(state["sum"], count, out=np.full(count.shape, np.nan), where=count > 0)


def choose_friends(
    mean_sim: Any, active: Any, candidates: Any = None, *, fallback: str = "active"
) -> np.ndarray:
    r"""The substitute :math:`\phi_t(k) = \arg\max_{i \in \mathcal S_t \cap \mathcal C^k_t}
    R^{k,i}_t` of every dropped client :math:`k`.

    Parameters
    ----------
    mean_sim
        ``(R, n, n)`` running means (:func:`mean_similarity`), NaN = no co-active history.
    active
        ``(R, n)`` bool active set of this round.
    candidates
        Optional ``(R, n, n)`` bool, row ``k`` = the candidate set :math:`\mathcal C^k_t`.
    fallback
        ``"active"``: a dropped client none of whose candidates is active chooses among all
        active clients; ``"none"``: it gets ``-1``.

    Returns
    -------
    ``(R, n)`` int: the chosen active client for dropped clients, ``-1`` for active clients (and
    when no client is active). Ties go to the lowest index; a NaN mean ranks below any number.

    >>> m = np.array([[[np.nan, 0.9, 0.9], [0.9, np.nan, 0.2], [0.9, 0.2, np.nan]]])
    >>> choose_friends(m, np.array([[False, True, True]])).tolist()
    [[1, -1, -1]]
    """
    m = _check_square(mean_sim, "mean_sim")
    R, n, _ = m.shape
    a = _check_active(active, R, n)
    if fallback not in ("active", "none"):
        raise ValueError(f"fallback must be 'active' or 'none', got {fallback!r}")
    m = real_array("mean_sim", m)
    allowed = ~a[:, :, None] & a[:, None, :]
    if candidates is not None:
        c = _check_square(candidates, "candidates", bool)
        if c.shape != (R, n, n):
            raise ValueError(f"candidates must have shape {(R, n, n)}, got {c.shape}")
        restricted = allowed & c
        if fallback == "active":
            empty = ~restricted.any(axis=2, keepdims=True)
            restricted = np.where(empty, allowed, restricted)
        allowed = restricted
    score = np.where(np.isnan(m), -np.inf, m)
    best = np.max(np.where(allowed, score, -np.inf), axis=2, keepdims=True)
    hit = allowed & (score == best)
    return np.where(hit.any(axis=2), np.argmax(hit, axis=2), -1)


def complexity_threshold(
    t: Any, *, n_clients: int, horizon: int, max_friends: int, beta: float, p: float,
    delta_f: float, scale: float = 1.0,
) -> np.ndarray:
    r"""Theorem 2's elimination threshold, times ``scale`` (the seed's experiments use 1, 0.5):

    .. math:: \Theta_t = \sqrt{\frac{2\ln(2K^2 T B_{\max}) - 2\ln p}{\beta t}} + \delta_f .

    ``t`` (array-like, rounds :math:`\ge 1`; :math:`\Theta_0 = \infty`, nothing is eliminated
    before any evidence). Returns an array of the shape of ``t``.

    >>> th = complexity_threshold([1, 4], n_clients=1, horizon=1, max_friends=1, beta=1.0,
    ...                           p=0.5, delta_f=0.1)
    >>> np.round((th - 0.1) ** 2 / np.log(2), 12).tolist()  # (2 ln 2 + 2 ln 2) / t
    [4.0, 1.0]
    """
    tt = real_array("t", t)
    beta, p = finite_real("beta", beta), finite_real("p", p)
    delta_f, scale = finite_real("delta_f", delta_f), finite_real("scale", scale)
    if np.any(tt < 0) or not np.all(np.isfinite(tt)):
        raise ValueError(f"t must be finite and >= 0, got {t!r}")
    for name, v in (("n_clients", n_clients), ("horizon", horizon), ("max_friends", max_friends)):
        positive_integer(name, v)
    if not 0.0 < beta <= 1.0:
        raise ValueError(f"beta must be in (0, 1], got {beta!r}")
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p!r}")
    if not delta_f >= 0.0:
        raise ValueError(f"delta_f must be >= 0, got {delta_f!r}")
    if not scale > 0.0:
        raise ValueError(f"scale must be > 0, got {scale!r}")
    num = 2.0 * np.log(2.0 * n_clients**2 * horizon * max_friends) - 2.0 * np.log(p)
    with np.errstate(divide="ignore"):
        root = np.sqrt(num / (beta * tt))
    return scale * (root + delta_f)


def init_candidates(R: int, n: int) -> np.ndarray:
    r"""Initial candidate sets :math:`\mathcal C^k_0 = \mathcal K \setminus \{k\}`: ``(R, n, n)``
    bool, ``True`` off the diagonal."""
    init_similarity(R, n)  # validates R, n
    return np.broadcast_to(~np.eye(n, dtype=bool), (R, n, n)).copy()


def count_computations(candidates: Any, active: Any = None) -> np.ndarray:
    r"""Similarity scores to compute: unordered pairs :math:`\{i, j\}`, :math:`i \ne j`, with
    :math:`j \in \mathcal C^i` or :math:`i \in \mathcal C^j` (and both active, if ``active`` is
    given). Without reduction (full candidate sets) this is :math:`\binom{S_t}{2}`.

    >>> count_computations(init_candidates(1, 4), np.array([[True, True, True, False]])).tolist()
    [3]
    """
    c = _check_square(candidates, "candidates", bool)
    R, n, _ = c.shape
    need = c | np.swapaxes(c, 1, 2)
    if active is not None:
        a = _check_active(active, R, n)
        need &= a[:, :, None]
        need &= a[:, None, :]
    need &= _upper(n)
    return need.sum(axis=(1, 2))


@functools.lru_cache(maxsize=64)
def _upper(n: int) -> np.ndarray:
    """The strict upper triangle ``(n, n)`` bool (read-only; a memo of a constant)."""
    up = np.triu(np.ones((n, n), dtype=bool), k=1)
    up.flags.writeable = False
    return up


def prune_candidates(
    mean_sim: Any, candidates: Any, theta: Any, active_next: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    r"""One elimination step of Section 5.3 (Hoeffding race):

    .. math:: \phi_t(k) = \arg\max_{i\in\mathcal C^k_t} R^{k,i}_t,\quad
        g_{k,i} = R^{k,\phi_t(k)}_t - R^{k,i}_t,\quad
        \mathcal C^k_{t+1} = \mathcal C^k_t \setminus \{i : g_{k,i} \ge \Theta_t\}.

    Parameters
    ----------
    mean_sim
        ``(R, n, n)`` running means :math:`R^{k,i}_t` (NaN = no history: never eliminated, and
        not a reference for the best).
    candidates
        ``(R, n, n)`` bool current sets (the diagonal is ignored and returned ``False``).
    theta
        Scalar or ``(R,)`` threshold :math:`\Theta_t` (:func:`complexity_threshold`).
    active_next
        Optional ``(R, n)`` bool active set of the next round, for the count.

    Returns
    -------
    (candidates, computations)
        The new ``(R, n, n)`` mask, and ``(R,)`` the number of similarity scores the next round
        needs (:func:`count_computations`). The best candidate always survives (:math:`g = 0 <
        \Theta_t` for :math:`\Theta_t > 0`).

    >>> m = np.array([[[np.nan, 0.9, 0.5], [0.9, np.nan, 0.5], [0.5, 0.5, np.nan]]])
    >>> c, k = prune_candidates(m, init_candidates(1, 3), 0.3)
    >>> c[0].astype(int).tolist(), k.tolist()
    ([[0, 1, 0], [1, 0, 0], [1, 1, 0]], [3])
    """
    m = real_array("mean_sim", _check_square(mean_sim, "mean_sim"))
    c = _check_square(candidates, "candidates", bool)
    if c.shape != m.shape:
        raise ValueError(f"candidates must have shape {m.shape}, got {c.shape}")
    R, n, _ = m.shape
    th = real_array("theta", theta)
    if th.ndim == 1 and th.shape != (R,) or th.ndim > 1:
        raise ValueError(f"theta must be a scalar or have shape {(R,)}, got shape {th.shape}")
    if np.any(np.isnan(th)) or np.any(th <= 0):
        raise ValueError(f"theta must be > 0, got {theta!r}")
    th = th.reshape(-1, 1, 1) if th.ndim == 1 else th
    new = _prune(m, c, th)
    return new, count_computations(new, active_next)


def _prune(m: np.ndarray, c: np.ndarray, th: Any) -> np.ndarray:
    """:func:`prune_candidates`' new sets, of validated arguments (without the count)."""
    c = c & _off_diagonal(m.shape[1])
    known = c & ~np.isnan(m)
    best = np.maximum.reduce(np.where(known, m, -np.inf), axis=2, keepdims=True)
    with np.errstate(invalid="ignore"):
        eliminate = known & (best - m >= th)
    return c & ~eliminate


@functools.lru_cache(maxsize=64)
def _off_diagonal(n: int) -> np.ndarray:
    """``~eye(n)`` bool (read-only; a memo of a constant)."""
    off = ~np.eye(n, dtype=bool)
    off.flags.writeable = False
    return off


def discovery_round(state: dict[str, Any], active: np.ndarray, updates: np.ndarray,
                    similarity: str, theta: Callable[[int], float] | None) -> np.ndarray:
    r"""One round of FL-FDMS's friend discovery on ``state`` (updated in place): the scores
    of eq. (14) of the active pairs (only candidate pairs when ``theta`` is given), the running
    means of eq. (15), the friends :math:`\phi_t` (:func:`choose_friends`) and, with the
    complexity reduction, the pruning with :math:`\Theta_t` = ``theta(t)``.

    ``state`` holds ``similarity_sum``, ``similarity_count``, ``candidates`` ``(R, n, n)``,
    ``t`` and ``computations`` ``(R,)`` (as :class:`~fedtheory.algorithms.FLFDMS`'s state).
    Returns the friends ``(R, n)`` (-1 for active clients). Used by the rule ``"fl_fdms"`` and
    by the participation process :class:`~fedtheory.participation.FDMSFriendChoice`.
    """
    state["t"] += 1
    cand = state["candidates"] if theta is not None else None
    sims = similarity_matrix(updates, active, similarity)
    computed = None if cand is None else (cand | np.swapaxes(cand, 1, 2))
    sim = update_similarity({"sum": state["similarity_sum"],
                             "count": state["similarity_count"]}, sims, active, computed)
    state["similarity_sum"], state["similarity_count"] = sim["sum"], sim["count"]
    if cand is None:  # the sets stay full: every active pair, binom(S_t, 2)
        s_t = np.count_nonzero(active, axis=1).astype(np.int64)
        state["computations"] = state["computations"] + s_t * (s_t - 1) // 2
    else:
        state["computations"] = state["computations"] + count_computations(cand, active)
    mean = mean_similarity(sim)
    friends = choose_friends(mean, active, cand)
    if cand is not None and theta is not None:
        th = float(theta(state["t"]))
        if not th > 0:
            raise ValueError(f"theta must be > 0, got {th!r} (round {state['t']})")
        if th != np.inf:  # (inf eliminates nothing: the sets stay as they are)
            state["candidates"] = _prune(mean, cand, th)
    return friends


def substitution_coefficients(active: np.ndarray, source: np.ndarray,
                              weights: np.ndarray) -> np.ndarray:
    r"""The coefficients :math:`a_{r,i}` of seed 004's eq. (5) on the active clients' own
    updates, ``(R, n)`` (0 for dropped clients), so that the substituted aggregate is
    :math:`\sum_i a_{r,i}\Delta^i` (:func:`fedtheory.algorithms.substitution.
    substituted_aggregate`):

    .. math:: a_i = w_i + \sum_{k\notin\mathcal S:\ s_k = i} w_k
        + W_{\text{none}}\,\frac{w_i}{\sum_{j\in\mathcal S} w_j}\qquad (i\in\mathcal S),

    :math:`s_k` = ``source[r, k]`` the active substitute of dropped client :math:`k` (-1: none,
    then the weighted active mean substitutes; its weight :math:`W_{\text{none}}`).

    >>> substitution_coefficients(np.array([[True, True, False]]), np.array([[-1, -1, 1]]),
    ...                           np.full(3, 0.25)).tolist()
    [[0.25, 0.5, 0.0]]
    """
    a = np.asarray(active, dtype=bool)
    R, n = a.shape
    w = np.asarray(weights, dtype=float)
    src = np.asarray(source)
    coef = np.where(a, w, 0.0)
    W_act = coef.sum(axis=1)
    dropped = ~a
    has = dropped & (src >= 0)
    rr, kk = np.nonzero(has)
    if rr.size:
        bad = ~a[rr, src[rr, kk]]
        if bad.any():
            r0, k0 = int(rr[bad][0]), int(kk[bad][0])
            raise ValueError(f"source[{r0}, {k0}] = {int(src[r0, k0])} is not an active client")
        np.add.at(coef, (rr, src[rr, kk]), w[kk])
    none = dropped & (src < 0)
    if not none.any():  # no W_none: the term below would add +0 to every coefficient
        return coef
    W_none = np.where(none, w, 0.0).sum(axis=1)
    scale = np.divide(W_none, W_act, out=np.zeros(R), where=W_act > 0)
    coef += scale[:, None] * np.where(a, w, 0.0)
    return coef

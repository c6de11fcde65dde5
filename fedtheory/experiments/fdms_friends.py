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

from collections.abc import Collection
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.engine import RoundRecord
from fedtheory.experiments.fdms_instances import (
    DiscreteClients,
    GaussianClusters,
    drop_schedule,
    lemma_tight_instance,
    lemma_tight_probability,
    negative_gap_instance,
    negative_gap_probability,
    orthogonal_error,
    orthogonal_instance,
    random_friend_dropout,
    rotation_schedule,
    spread_elimination_probability,
    spread_friends_instance,
    whole_cluster_dropout,
)
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

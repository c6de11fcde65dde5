r"""Computations behind the ``mifa`` family (seed 000): exact enumerations, closed forms on
isotropic quadratics, pathwise runs with realised staleness, and the seed's experiments.

Everything here computes data; the claims in :mod:`fedtheory.claims.mifa` test it and
:mod:`fedtheory.plotting.mifa` plots it (for the scripts in ``paper_figures/``). The
aggregation rules themselves live in :mod:`fedtheory.algorithms` (MIFA, U-MIFA, MIFAm,
U-MIFAm, FedAvg-IS, FedPGD, SAGA); the multi-replica simulations use
:func:`fedtheory.simulate.simulate`.

Notation: :math:`n` clients, independent participation :math:`1_i\sim\mathrm{Bernoulli}(p)`,
step :math:`\eta`, :math:`f=\frac1n\sum_i f_i` :math:`L`-smooth, exact client gradients
(:math:`\Delta_i = \nabla f_i(w_t)`, one local step).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fedtheory.algorithms import RULES, get_rule
from fedtheory.engine import RoundRecord
from fedtheory.participation import BernoulliParticipation
from fedtheory.simulate import DivergenceWarning, simulate
from fedtheory.symbolic.enumeration import (
    all_masks,
    exact_expectation,
    fractions,
    mask_probabilities,
)
from fedtheory.theory.mifa import isotropic_problem  # moved there: theory sits below experiments
from fedtheory.validation import positive_integer, positive_real, probability

__all__ = [
    "DEFAULT_BETA",
    "DIVERGED_LOG10",
    "SEED_METHODS",
    "all_masks",
    "band",
    "exact_expectation",
    "fedpgd_moments",
    "fractions",
    "isotropic_fedavg_is_moments",
    "isotropic_fedavg_is_floor",
    "floor_experiment",
    "isotropic_problem",
    "logistic_problem",
    "quadratic_problem",
    "run_methods",
    "seed_experiment",
    "seed_experiment_specs",
    "seed_setting",
    "seed_setting_specs",
    "steps_to_eps",
    "tail_log10",
    "pathwise_run",
    "mask_probabilities",
    "staleness",
    "validate_p",
]


# ---------------------------------------------------------------------------- validation
def validate_p(p: Any, name: str = "p") -> float:
    """Return the participation probability ``p`` as a float in (0, 1], or raise ValueError.

    >>> validate_p(0.1)
    0.1
    >>> validate_p(0)
    Traceback (most recent call last):
    ...
    ValueError: p must be in (0, 1], got 0
    """
    return probability(name, p)


def staleness(masks: np.ndarray) -> np.ndarray:
    r"""Staleness :math:`\tau(t, i)` of every client's memory under MIFA.

    ``masks`` has shape ``(T, ..., n)`` (rounds first). Round 0 is the initialisation round in
    which every client reports (``G_0^{(i)} = \nabla f_i(w_0)``), whatever ``masks[0]`` says;
    afterwards

    .. math:: \tau(t,i) = t - \max\{s \le t : s = 0 \text{ or } i\in\mathcal A(s)\}.

    Returns an integer array of the same shape. Vectorised over replicas and clients (the loop
    runs over rounds).

    >>> m = np.array([[0, 0], [1, 0], [0, 0], [0, 1]], dtype=bool)
    >>> staleness(m).tolist()
    [[0, 0], [0, 1], [1, 2], [2, 0]]
    """
    m = np.asarray(masks, dtype=bool)
    if m.ndim < 2:
        raise ValueError(f"masks must have shape (T, ..., n), got shape {m.shape}")
    tau = np.zeros(m.shape, dtype=np.int64)
    for t in range(1, m.shape[0]):
        tau[t] = np.where(m[t], 0, tau[t - 1] + 1)
    return tau


# ---------------------------------------------------------------------------- closed forms
def isotropic_fedavg_is_moments(
    T: int, *, eta: float, L: float, n: int, p: float, h2_sum: float, u0_sq: float = 0.0
) -> np.ndarray:
    r"""Exact :math:`\mathbb E\|\nabla f(w_t)\|^2`, :math:`t = 0..T`, for FedAvg-IS on an
    isotropic quadratic with exact client gradients.

    Every client has the Hessian :math:`L I`: :math:`\nabla f_i(w) = L(w - w^\star) + h_i` with
    :math:`\sum_i h_i = 0`. With :math:`u_t = w_t - w^\star` and
    :math:`G_t = \frac1n\sum_{i\in\mathcal A(t)}\nabla f_i(w_t)/p`,

    .. math::

        \mathbb E\|u_{t+1}\|^2 = (1-\eta L)^2\,\mathbb E\|u_t\|^2
        + \frac{\eta^2}{n^2}\Big(\frac1p-1\Big)\Big(\sum_i\|h_i\|^2
        + nL^2\,\mathbb E\|u_t\|^2\Big),

    and :math:`\|\nabla f(w_t)\|^2 = L^2\|u_t\|^2`. ``h2_sum`` is :math:`\sum_i\|h_i\|^2`,
    ``u0_sq`` is :math:`\|u_0\|^2`.

    >>> m = isotropic_fedavg_is_moments(2, eta=0.125, L=4.0, n=2, p=0.5, h2_sum=32.0)
    >>> m.tolist()
    [0.0, 2.0, 2.75]
    """
    T = positive_integer("T", T)
    eta = positive_real("eta", eta)
    L = positive_real("L", L)
    n = positive_integer("n", n)
    p = validate_p(p)
    if not (np.isfinite(h2_sum) and h2_sum >= 0):
        raise ValueError(f"h2_sum must be a non-negative real number, got {h2_sum!r}")
    if not (np.isfinite(u0_sq) and u0_sq >= 0):
        raise ValueError(f"u0_sq must be a non-negative real number, got {u0_sq!r}")
    a = (1.0 / p - 1.0) / n**2
    u = np.empty(T + 1)
    u[0] = u0_sq
    for t in range(T):
        u[t + 1] = (1 - eta * L) ** 2 * u[t] + eta**2 * a * (h2_sum + n * L**2 * u[t])
    return L**2 * u


def isotropic_fedavg_is_floor(*, eta: float, L: float, n: int, p: float, h2_sum: float
                              ) -> float:
    r"""The stationary :math:`\lim_t\mathbb E\|\nabla f(w_t)\|^2` of FedAvg-IS on the isotropic
    quadratic of :func:`isotropic_fedavg_is_moments`:

    .. math::

        \lim_{t\to\infty}\mathbb E\|\nabla f(w_t)\|^2
        = \frac{\eta L\, a\, S}{2 - \eta L(1 + n a)},\qquad a = \frac{1/p - 1}{n^2},\
        S = \sum_i \|h_i\|^2,

    finite when :math:`\eta L (1 + na) < 2`, infinite otherwise.

    >>> isotropic_fedavg_is_floor(eta=0.125, L=4.0, n=2, p=0.5, h2_sum=32.0)
    3.2
    """
    eta = positive_real("eta", eta)
    L = positive_real("L", L)
    n = positive_integer("n", n)
    p = validate_p(p)
    a = (1.0 / p - 1.0) / n**2
    den = 2.0 - eta * L * (1.0 + n * a)
    if den <= 0:
        return float("inf")
    return float(eta * L * a * h2_sum / den)


# ---------------------------------------------------------------------------- pathwise runs
def pathwise_run(
    problem: Any,
    rule: Any,
    *,
    p: float,
    rounds: int,
    replicas: int,
    eta: float,
    rng: np.random.Generator,
    x0: np.ndarray | None = None,
    participation: Any = None,
    beta: float | None = None,
) -> dict[str, np.ndarray]:
    r"""Run an aggregation rule with exact client gradients and record every round: a call of
    :func:`fedtheory.simulate.simulate` (one local step, ``lr = eta``, no noise) that also
    keeps what the ``mifa`` claims need and the traces do not: the realised staleness and
    :math:`\|G_t\|^2` per replica (read every round through ``simulate``'s ``observe``).

    Round :math:`t` draws :math:`\mathcal A(t)` from the process, aggregates the clients'
    gradients at :math:`w_t` with the rule and steps :math:`w_{t+1} = w_t - \eta G_t`. Table
    rules given by name start from a full memory, :math:`G_{-1}^{(i)} = \nabla f_i(w_0)`
    (``memory_init="full"``: round 0 then sees fresh rows whatever its mask, the
    memory-initialisation round of the seed's MIFA analysis).

    Parameters
    ----------
    problem:
        A :class:`fedtheory.problems.base.Problem`.
    rule:
        A rule name or object of :mod:`fedtheory.algorithms` (``memory_init="full"`` is used
        for the rules given by name whose class keeps a ``table``); ``beta`` is passed to
        momentum rules.
    p:
        Participation probability: Bernoulli(p) unless ``participation`` is given, whose
        stationary probabilities must then be ``p`` (the rules' :math:`p_i`).
    rounds, replicas, eta, x0:
        Horizon :math:`T`, number of independent runs, step and the start :math:`w_0` (the
        origin by default).
    rng:
        Randomness: one draw from it seeds the run (``simulate``'s per-replica streams).

    Returns
    -------
    dict with ``grad_norm2`` and ``f_gap`` of shape ``(T + 1, R)`` (rounds 0..T),
    ``G_norm2`` ``(T, R)``, ``tau_max`` ``(R,)`` (largest staleness over rounds
    :math:`1..T-1`, counted from 0) and ``x`` ``(R, d)`` the final iterates.
    """
    rounds = positive_integer("rounds", rounds)
    replicas = positive_integer("replicas", replicas)
    eta = positive_real("eta", eta)
    p = validate_p(p)
    n = problem.n
    if isinstance(rule, str):
        params: dict[str, Any] = {}
        if rule in RULES and RULES[rule].table:
            params["memory_init"] = "full"
        if beta is not None:
            params["beta"] = beta
        rule = get_rule(rule, **params)
    proc = participation if participation is not None else BernoulliParticipation(p, n=n)
    if getattr(proc, "n", None) != n:
        raise ValueError(f"participation must be a process over problem.n={n} clients, got "
                         f"{proc!r} with n={getattr(proc, 'n', None)!r}")
    if not np.allclose(np.asarray(proc.stationary, dtype=float), p, rtol=1e-12, atol=0):
        raise ValueError(f"p must be the participation's stationary probabilities, got p={p!r} "
                         f"and {proc!r}")
    Gn2 = np.empty((rounds, replicas))
    tau = np.zeros((replicas, n), dtype=np.int64)
    tau_max = np.zeros(replicas, dtype=np.int64)

    def observe(rec: RoundRecord) -> None:  # one block of all replicas (chunk = R)
        nonlocal tau
        Gn2[rec.t - 1] = np.einsum("rd,rd->r", rec.G, rec.G)
        if rec.t > 1:
            tau = np.where(rec.mask, 0, tau + 1)
            np.maximum(tau_max, tau.max(axis=1), out=tau_max)

    with warnings.catch_warnings():  # a diverging run is the caller's to judge
        warnings.simplefilter("ignore", DivergenceWarning)
        res = simulate(problem, rule, proc, rounds=rounds, replicas=replicas, lr=eta,
                       x0=x0, seed=int(rng.integers(2**63)), chunk=replicas, workers=1,
                       keep_replicas=True, observe=observe)
    return {"grad_norm2": res.grad_norm2.replicas.T.copy(), "f_gap": res.f_gap.replicas.T.copy(),
            "G_norm2": Gn2, "tau_max": tau_max, "x": res.x}


# ---------------------------------------------------------------------------- experiments
#: The five rules of seed 000's experiments, in the seed's order.
SEED_METHODS: tuple[str, ...] = ("fedavg_is", "mifa", "umifa", "mifam", "umifam")

#: Momentum used for MIFAm / U-MIFAm (the seed gives none).
DEFAULT_BETA = 0.9

#: log10 of a loss gap that overflowed (or exceeded the largest float): the value used for a
#: diverged run in paired comparisons.
DIVERGED_LOG10 = 300.0


def quadratic_problem(seed: int = 0, n: int = 10, d: int = 10) -> Any:
    r"""The heterogeneous quadratic of the ``mifa`` experiments: :math:`L = 1`,
    :math:`\mu = 0.2`, :math:`\sum_i w_i\|\nabla f_i(x^\star)\|^2 = 1`, diagonal Hessians drawn
    with ``default_rng(seed)`` (:meth:`QuadraticProblem.heterogeneous`)."""
    from fedtheory.problems.quadratic import QuadraticProblem

    return QuadraticProblem.heterogeneous(n, d, L=1.0, mu=0.2, sigma_G2=1.0,
                                          rng=np.random.default_rng(seed))


def logistic_problem(n_clients: int = 10) -> Any:
    r"""Logistic regression on scikit-learn's breast-cancer data, split non-iid over
    ``n_clients`` clients (Dirichlet(0.5) labels), :math:`\lambda = 10^{-3}`, uniform weights
    :math:`f = \frac1n\sum_i f_i` (the seed's objective (1))."""
    from fedtheory.problems.logistic import make_logistic_problem

    return make_logistic_problem("breast_cancer", n_clients=n_clients, alpha=0.5, seed=0,
                                 lam=1e-3, weights="uniform")


def run_methods(problem: Any, p: float, *, methods: Sequence[str] = SEED_METHODS,
                rounds: int, replicas: int, eta: float, beta: float = DEFAULT_BETA,
                seed: int = 0, x0: np.ndarray | None = None, record_every: int = 1,
                memory_init: str = "zeros") -> dict[str, Any]:
    r"""Run each rule with :func:`fedtheory.simulate.simulate` under Bernoulli(``p``).

    Every rule sees the same participation masks in replica :math:`r` (the simulator's
    per-replica streams), so results are paired across rules. Momentum rules (``"mifam"``,
    ``"umifam"``) get ``beta``. Memory tables start at zero (the engine's default) or, with
    ``memory_init="full"``, at every client's update at :math:`w_0`.

    Returns ``{"rounds": (k,), "f_gap": {rule: (R, k)}, "grad_norm2": {rule: (R, k)},
    "seconds": {rule: float}}`` with overflowing runs left as ``inf``/``nan``.
    """
    from fedtheory.algorithms import get_rule
    from fedtheory.participation import BernoulliParticipation
    from fedtheory.simulate import simulate

    p = validate_p(p)
    out: dict[str, Any] = {"f_gap": {}, "grad_norm2": {}, "seconds": {}}
    proc = BernoulliParticipation(p, n=problem.n)
    if memory_init not in ("zeros", "full"):
        raise ValueError(f"memory_init must be 'zeros' or 'full', got {memory_init!r}")
    for name in methods:
        params: dict[str, Any] = {"beta": beta} if name in ("mifam", "umifam") else {}
        if memory_init != "zeros":
            params["memory_init"] = memory_init
        rule = get_rule(name, **params)
        with np.errstate(over="ignore", invalid="ignore"):
            res = simulate(problem, rule, proc, rounds=rounds, replicas=replicas, lr=eta,
                           x0=x0, seed=seed, keep_replicas=True, record_every=record_every)
        out["rounds"] = res.rounds
        out["f_gap"][name] = res.f_gap.replicas
        out["grad_norm2"][name] = res.grad_norm2.replicas
        out["seconds"][name] = res.seconds
    return out


def tail_log10(values: np.ndarray, tail: float = 0.1) -> np.ndarray:
    r"""Per replica, the mean of :math:`\log_{10}` of the last ``tail`` fraction of recorded
    values (``(R, k)`` -> ``(R,)``); overflowed or non-finite runs count as
    :data:`DIVERGED_LOG10`, exact zeros as :math:`-300`.

    >>> tail_log10(np.array([[1.0, 10.0, 100.0], [1.0, np.inf, np.inf]]), tail=0.5).tolist()
    [1.5, 300.0]
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 2 or v.shape[1] == 0:
        raise ValueError(f"values must have shape (replicas, rounds), got {v.shape}")
    if not 0 < tail <= 1:
        raise ValueError(f"tail must be in (0, 1], got {tail!r}")
    k = max(1, int(round(tail * v.shape[1])))
    with np.errstate(divide="ignore", invalid="ignore"):
        lg = np.log10(np.abs(v[:, -k:]))
    lg = np.where(np.isfinite(lg), lg, np.where(np.isneginf(lg), -300.0, DIVERGED_LOG10))
    return np.minimum(lg, DIVERGED_LOG10).mean(axis=1)


def _seed_labels(p_values: Sequence[float], betas: Sequence[float],
                 full_memory_p: Sequence[float]) -> list[tuple[float, str, float, str, str]]:
    """One ``(p, rule, beta, memory, label)`` per run of :func:`seed_experiment`."""
    labels = [(pv, name, b, "zeros", name if b == betas[0] else f"{name}@{b:g}")
              for pv in p_values
              for b in betas
              for name in (SEED_METHODS if b == betas[0] else ("mifam", "umifam"))]
    labels += [(pv, name, betas[0], "full", f"{name}/full") for pv in full_memory_p
               for name in ("mifa", "umifa", "mifam", "umifam")]
    return labels


def seed_experiment_specs(problem: Any, *, p_values: Sequence[float] = (0.01, 0.1, 0.5),
                          rounds: int, replicas: int, eta: float = 0.02,
                          betas: Sequence[float] = (DEFAULT_BETA,), seed: int = 0,
                          x0: np.ndarray | None = None, record_every: int = 1,
                          full_memory_p: Sequence[float] = ()) -> list[dict[str, Any]]:
    """The runs of :func:`seed_experiment` (its arguments), one keyword dict of
    :func:`run_methods` per (p, rule, beta, memory), in the order it hands them to
    ``run_many``."""
    common = {"problem": problem, "rounds": rounds, "replicas": replicas, "eta": eta,
              "seed": seed, "x0": x0, "record_every": record_every}
    return [{**common, "p": pv, "methods": (name,), "beta": b, "memory_init": mem}
            for pv, name, b, mem, _ in _seed_labels(p_values, betas, full_memory_p)]


def seed_experiment(problem: Any, *, p_values: Sequence[float] = (0.01, 0.1, 0.5),
                    rounds: int, replicas: int, eta: float = 0.02,
                    betas: Sequence[float] = (DEFAULT_BETA,), seed: int = 0,
                    x0: np.ndarray | None = None, record_every: int = 1,
                    full_memory_p: Sequence[float] = (),
                    run_many: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None
                    = None) -> dict[str, Any]:
    r"""Seed 000's experiment: the five rules for each :math:`p`, and the momentum rules for
    each :math:`\beta` in ``betas`` (the first is the main one); for each :math:`p` in
    ``full_memory_p`` also the three table rules with their memory filled at :math:`w_0`
    (``memory_init="full"``, the first :math:`\beta`). Each (p, rule, beta, memory) is one
    :func:`run_methods` call, all of them made by ``run_many`` (a list of keyword dicts to a
    list of results; default: here, one after the other; e.g. as tasks,
    :func:`fedtheory.tasks.gather_calls`).

    Returns ``{"p_values", "betas", "rounds", "runs": {p: {label: (R, k) f_gap}},
    "grad_norm2": {p: {label: (R, k)}}}``; labels are the rule names, with ``"@beta"``
    appended for the extra momenta and ``"/full"`` for the filled memory.
    """
    labels = _seed_labels(p_values, betas, full_memory_p)
    specs = seed_experiment_specs(problem, p_values=p_values, rounds=rounds, replicas=replicas,
                                  eta=eta, betas=betas, seed=seed, x0=x0,
                                  record_every=record_every, full_memory_p=full_memory_p)
    results = (run_many or (lambda ss: [run_methods(**x) for x in ss]))(specs)
    runs: dict[float, dict[str, np.ndarray]] = {pv: {} for pv in p_values}
    grads: dict[float, dict[str, np.ndarray]] = {pv: {} for pv in p_values}
    for (pv, name, _, _, label), res in zip(labels, results, strict=True):
        runs[pv][label] = res["f_gap"][name]
        grads[pv][label] = res["grad_norm2"][name]
    rounds_axis = results[0]["rounds"]
    return {"p_values": tuple(p_values), "betas": tuple(betas), "rounds": rounds_axis,
            "runs": runs, "grad_norm2": grads, "eta": eta, "replicas": replicas}


def seed_setting(kind: str, *, quick: bool, seed: int = 0,
                 run_many: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None
                 ) -> dict[str, Any]:
    r"""Seed 000's experiment exactly as the ``mifa`` claims and figure scripts run it.

    ``kind`` is ``"quadratic"`` (:func:`quadratic_problem`, :math:`w_0 = w^\star + \mathbf 1`,
    1000 rounds quick / 3000 full) or ``"logistic"`` (:func:`logistic_problem`,
    :math:`w_0 = 0`, 600 / 3000 rounds); both: 10 clients, :math:`p\in\{0.01, 0.1, 0.5\}`,
    :math:`\eta = 0.02`, :math:`\beta = 0.9` and 0.5, 24 seeds quick / 100 full, metrics
    every 10 rounds; at the seed's :math:`p = 0.1` also the table rules with their memory
    filled at :math:`w_0` (a sensitivity run: the seed does not say how the tables start).
    Returns :func:`seed_experiment`'s dict plus ``"problem"`` (its repr).
    """
    prob, kw = _setting(kind, quick=quick, seed=seed)
    res = seed_experiment(prob, run_many=run_many, **kw)
    res["problem"] = repr(prob)
    return res


def _setting(kind: str, *, quick: bool, seed: int) -> tuple[Any, dict[str, Any]]:
    """The problem and the keywords of :func:`seed_experiment` of :func:`seed_setting`."""
    if kind == "quadratic":
        prob = quadratic_problem(seed=seed)
        x0 = prob.x_star + np.ones(prob.d)
        rounds = 1000 if quick else 3000
    elif kind == "logistic":
        prob = logistic_problem()
        x0 = np.zeros(prob.d)
        rounds = 600 if quick else 3000
    else:
        raise ValueError(f"kind must be 'quadratic' or 'logistic', got {kind!r}")
    return prob, {"rounds": rounds, "replicas": 24 if quick else 100, "eta": 0.02,
                  "betas": (DEFAULT_BETA, 0.5), "seed": seed, "x0": x0, "record_every": 10,
                  "full_memory_p": (0.1,)}


def seed_setting_specs(kind: str, *, quick: bool, seed: int = 0) -> list[dict[str, Any]]:
    """The runs of :func:`seed_setting` (:func:`seed_experiment_specs` of its set-up), in the
    order it hands them to ``run_many``."""
    prob, kw = _setting(kind, quick=quick, seed=seed)
    return seed_experiment_specs(prob, **kw)


def band(values: np.ndarray, q: tuple[float, float] = (0.1, 0.9)) -> tuple[np.ndarray, ...]:
    """Median and a quantile band over replicas (axis 0), ignoring overflowed runs' NaNs.

    >>> m, lo, hi = band(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    >>> m.tolist()
    [3.0, 4.0]
    """
    v = np.asarray(values, dtype=float)
    v = np.where(np.isfinite(v), np.minimum(v, 1e300), 1e300)  # overflowed runs sort last
    return (np.quantile(v, 0.5, axis=0), np.quantile(v, q[0], axis=0),
            np.quantile(v, q[1], axis=0))


def fedpgd_moments(T: int, *, eta: float, L: float, n: int, b: int, h2_mean: float,
                   u0_sq: float = 0.0) -> np.ndarray:
    r"""Exact :math:`\mathbb E\|\nabla f(w_t)\|^2`, :math:`t = 0..T`, for FedPGD (:math:`b` of
    :math:`n` without replacement, :math:`G_t = \frac1b\sum_{i\in S_t}\nabla f_i(w_t)`) on the
    isotropic quadratic (every Hessian :math:`LI`, :math:`\nabla f_i - \nabla f = h_i`):

    .. math::

        \mathbb E\|u_{t+1}\|^2 = (1-\eta L)^2\,\mathbb E\|u_t\|^2 + \eta^2 V,\qquad
        V = \frac{n-b}{b(n-1)}\cdot\frac1n\sum_i\|h_i\|^2
          = \frac{n/b-1}{n-1}\,\overline{\|h\|^2},

    :math:`\|\nabla f(w_t)\|^2 = L^2\|u_t\|^2`; ``h2_mean`` is :math:`\frac1n\sum_i\|h_i\|^2`.

    >>> fedpgd_moments(1, eta=0.5, L=1.0, n=10, b=1, h2_mean=1.0).tolist()
    [0.0, 0.25]
    """
    T = positive_integer("T", T)
    eta = positive_real("eta", eta)
    L = positive_real("L", L)
    n = positive_integer("n", n)
    b = positive_integer("b", b)
    if b > n:
        raise ValueError(f"b must be at most n = {n}, got {b!r}")
    V = 0.0 if n == 1 else (n / b - 1.0) / (n - 1.0) * h2_mean
    u = np.empty(T + 1)
    u[0] = u0_sq
    for t in range(T):
        u[t + 1] = (1 - eta * L) ** 2 * u[t] + eta**2 * V
    return L**2 * u


def steps_to_eps(grad_norm2: np.ndarray, eps: float) -> np.ndarray:
    """Per replica, the first recorded index with ``grad_norm2 <= eps`` (``-1`` if never).

    >>> steps_to_eps(np.array([[4.0, 2.0, 0.5], [4.0, 3.0, 2.0]]), 1.0).tolist()
    [2, -1]
    """
    g = np.asarray(grad_norm2, dtype=float)
    hit = np.nan_to_num(g, nan=np.inf) <= eps
    return np.where(hit.any(axis=1), np.argmax(hit, axis=1), -1)


def floor_experiment(p: float, *, rounds: int, replicas: int, eta: float = 0.02,
                     rng_problem: np.random.Generator, rngs: dict[str, np.random.Generator],
                     n: int = 10, d: int = 5) -> dict[str, Any]:
    r"""FedAvg-IS, MIFA and U-MIFA (exact gradients, :func:`pathwise_run`) on the isotropic
    quadratic (:math:`L = 1`, :math:`\|h_i\|^2 = 1`) from :math:`w^\star + \mathbf 1`, with the
    floors: the exact stationary FedAvg-IS value :math:`F`, the seed's printed
    :math:`\frac{\eta^2Lc}2\sigma_G^2` and the derived :math:`\eta Lc\sigma_G^2`.

    Returns ``{"fedavg_is" | "mifa" | "umifa": (T + 1, R) ||∇f(w_t)||^2, "floor": F,
    "floor_printed", "floor_derived", "p", "eta", "T", "R"}``.
    """
    p = validate_p(p)
    prob = isotropic_problem(n, d, L=1.0, sigma_G2_max=1.0, rng=rng_problem)
    x0 = prob.x_star + np.ones(d)
    out: dict[str, Any] = {"T": rounds, "R": replicas, "p": p, "eta": eta}
    for rule in ("fedavg_is", "mifa", "umifa"):
        with np.errstate(over="ignore", invalid="ignore"):
            res = pathwise_run(prob, rule, p=p, rounds=rounds, replicas=replicas, eta=eta,
                               rng=rngs[rule], x0=x0)
        out[rule] = res["grad_norm2"]
    c = 2.0 / n * (1.0 / p - 1.0)
    out["floor"] = isotropic_fedavg_is_floor(eta=eta, L=1.0, n=n, p=p, h2_sum=float(n))
    out["floor_printed"] = eta**2 * c / 2
    out["floor_derived"] = eta * c
    return out

"""Exact formulas, scenario builders and exact enumerations of the ``mifa`` family (seed 000).

One engine round from a fixed memory table, the rows of seed 000's definitions in rational
arithmetic, the quadratics of the floor checks, and exact enumerations over every
participation sequence of small rational instances (FedAvg-IS, MIFA, SAGA vs U-MIFA). Used by
the claims in :mod:`fedtheory.claims.mifa` and by :mod:`fedtheory.claims.mifa._runs`.
Theory sits below the experiments: this module imports none of them
(:func:`isotropic_problem`, the problem of seed 000's experiments, lives here for that reason).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.algorithms import get_rule
from fedtheory.participation import BernoulliParticipation
from fedtheory.problems.quadratic import QuadraticProblem
from fedtheory.symbolic.enumeration import (
    all_masks,
    exact_expectation,
    fractions,
    mask_probabilities,
)
from fedtheory.validation import positive_integer, positive_real

__all__ = [
    "TINY", "ZF_TINY", "c_of", "condition", "exact_error2", "exact_fedavg_is_1d",
    "exact_mifa_paths", "exact_rows", "exact_saga_umifa", "exact_state", "floor_problems",
    "heterogeneous", "isotropic_problem", "one_round", "one_step_fedavg_is", "slopes",
    "step_bound", "tiny_sigma2",
]


def one_round(rule_name: str, delta: np.ndarray, memory: np.ndarray, p: Any, replicas: int,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One round of a table rule of :mod:`fedtheory.algorithms` from a fixed state.

    Every replica starts from the memory table ``memory`` (n, d) and receives the updates
    ``delta`` (n, d) from its active clients, drawn by Bernoulli(p) participation. Returns the
    directions ``(R, d)``, the new tables ``(R, n, d)`` and the masks ``(R, n)``.
    """
    n, d = delta.shape
    rule = get_rule(rule_name, memory_init="full")
    # a C-contiguous initial table (the engine writes rows through a reshaped view)
    initial = np.ascontiguousarray(np.broadcast_to(memory, (replicas, n, d)))
    state = rule.init(replicas, n, d, p=p, initial=initial)
    proc = BernoulliParticipation(p, n=n)
    mask, _ = proc.step(proc.init(rng, replicas), rng)
    G, state = rule.step(state, mask, np.broadcast_to(delta, (replicas, n, d)))
    return G, np.array(state["table"]), mask


def exact_rows(rule_name: str, mask: np.ndarray, delta: np.ndarray, memory: np.ndarray,
                p: list[Fraction]) -> np.ndarray:
    """The new memory rows of seed 000's definitions, in exact arithmetic (object arrays)."""
    rows = memory.copy()
    for i in np.flatnonzero(mask):
        if rule_name == "mifa":
            rows[i] = delta[i]
        else:  # umifa
            rows[i] = delta[i] / p[i] - (1 / p[i] - 1) * memory[i]
    return rows


def exact_state(n: int = 3) -> tuple[np.ndarray, np.ndarray, list[Fraction]]:
    """A small rational state: updates, memory (n, 2) and probabilities (for enumeration)."""
    delta = fractions([[1, -2], ["1/2", 3], [-4, "2/3"], [2, 2], [0, 1]][:n])
    memory = fractions([[3, 1], [-1, "5/2"], [1, "-1/3"], [0, 0], [1, 1]][:n])
    p = [Fraction(1, 10), Fraction(1, 3), Fraction(3, 4), Fraction(1, 2), Fraction(1, 5)][:n]
    return delta, memory, p


def exact_error2(rule_name: str) -> tuple[np.ndarray, np.ndarray, Fraction, Fraction]:
    """Exact E||∇f(w_t) - G_t||^2 of one round of ``rule_name`` over all 2^3 patterns.

    The state of :func:`exact_state` (updates = exact client gradients), p = 1/10 for every
    client; returns (grads, memory, p, the expectation).
    """
    grads, memory, _ = exact_state(3)
    p_val = Fraction(1, 10)
    pl = [p_val] * 3
    gbar = grads.sum(axis=0) / 3

    def err2(m: np.ndarray) -> Fraction:
        G = exact_rows(rule_name, m, grads, memory, pl).sum(axis=0) / 3
        return sum((gbar - G) ** 2)

    return grads, memory, p_val, exact_expectation(err2, 3, p_val)


def c_of(n: int, p_val: float) -> float:
    return 2.0 / n * (1.0 / p_val - 1.0)


def heterogeneous(rng: np.random.Generator, n: int = 10, d: int = 5) -> Any:
    """The heterogeneous quadratic of the checks: L = 1, μ = 0.1, σ_G² = 1."""
    return QuadraticProblem.heterogeneous(n, d, L=1.0, mu=0.1, sigma_G2=1.0, rng=rng)


def isotropic_problem(n: int, d: int, *, L: float, sigma_G2_max: float,
                      rng: np.random.Generator) -> Any:
    r"""A quadratic with every Hessian :math:`LI` and :math:`\|h_i\|^2 = \sigma_G^2` for all
    clients, :math:`x^\star = 0`.

    Then :math:`\nabla f_i(x) - \nabla f(x) = h_i` is constant, so the seed's per-client
    assumption :math:`\|\nabla f_i - \nabla f\|^2\le\sigma_G^2` holds with equality at every
    :math:`x`, and the :math:`L`-smoothness upper model is exact.

    >>> prob = isotropic_problem(4, 3, L=2.0, sigma_G2_max=1.0, rng=np.random.default_rng(0))
    >>> h = prob.client_grads(prob.x_star)
    >>> np.allclose(np.sum(h**2, -1), 1.0), np.allclose(h.sum(0), 0.0), prob.L
    (True, True, 2.0)
    """
    n = positive_integer("n", n)
    d = positive_integer("d", d)
    L = positive_real("L", L)
    if n < 2:
        raise ValueError(f"n must be at least 2 for heterogeneous clients, got {n!r}")
    if not (np.isfinite(sigma_G2_max) and sigma_G2_max >= 0):
        raise ValueError(f"sigma_G2_max must be a non-negative real number, got {sigma_G2_max!r}")
    # n unit vectors summing to zero: pairs +-v, plus (n odd) three at 120 degrees in a plane
    k = n // 2 - (n % 2)
    v = rng.standard_normal((k, d))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    parts = [v, -v]
    if n % 2:
        if d < 2:
            raise ValueError(f"d must be at least 2 for an odd number of clients, got d={d!r}")
        q, _ = np.linalg.qr(rng.standard_normal((d, 2)))
        ang = np.array([0.0, 2 * np.pi / 3, 4 * np.pi / 3])
        parts.append(np.cos(ang)[:, None] * q[:, 0] + np.sin(ang)[:, None] * q[:, 1])
    h = np.concatenate(parts)
    h = h * np.sqrt(sigma_G2_max)
    # grad f_i(x) = L (x - c_i) = L x + h_i  =>  c_i = -h_i / L ; x* = mean c = 0
    return QuadraticProblem(np.full((n, d), L), -h / L)


def floor_problems(rng: np.random.Generator, n: int = 10, d: int = 5) -> list[tuple[str, Any]]:
    """The quadratics of the FedAvg-IS floor checks: isotropic and heterogeneous Hessians."""
    return [
        ("isotropic", isotropic_problem(n, d, L=1.0, sigma_G2_max=1.0, rng=rng)),
        ("heterogeneous", heterogeneous(rng, n, d)),
    ]


def one_step_fedavg_is(problem: Any, w: np.ndarray, masks: np.ndarray, p_val: float,
                        eta_val: float) -> np.ndarray:
    """f(w - η G) - f(w) for each mask row (engine FedAvg-IS, exact client gradients)."""
    R = masks.shape[0]
    rule = get_rule("fedavg_is")
    state = rule.init(R, problem.n, problem.d, p=p_val)
    grads = np.broadcast_to(problem.client_grads(w), (R, problem.n, problem.d))
    G, _ = rule.step(state, masks, grads)
    return problem.loss(w - eta_val * G) - problem.loss(w)


def step_bound(problem: Any, w: np.ndarray, p_val: float) -> tuple[float, float, float]:
    """(η_max, σ_G² = max_i ||∇f_i(w) - ∇f(w)||², the seed's one-step bound at η_max)."""
    n = problem.n
    c = c_of(n, p_val)
    eta_max = 1.0 / (problem.L * (1.0 + c))
    g = problem.client_grads(w)
    s2 = float(np.max(np.sum((g - g.mean(axis=0)) ** 2, axis=1)))
    gn2 = float(np.sum(problem.grad(w) ** 2))
    bound = -eta_max / 2 * gn2 + eta_max**2 * problem.L * c / 2 * s2
    return eta_max, s2, bound


def exact_fedavg_is_1d(T_val: int, eta_r: Fraction, L_r: Fraction, centers: list[Fraction],
                        p_r: Fraction, w0: Fraction) -> tuple[Fraction, Fraction]:
    """Exact E[(1/T) Σ_{t<T} |f'(w_t)|^2] and f(w_0) - f* for FedAvg-IS on 1-D quadratics
    f_i = (L/2)(w - c_i)^2, by enumerating every participation sequence (merging equal w)."""
    n = len(centers)
    cbar = sum(centers) / n
    probs = mask_probabilities(all_masks(n), p_r, exact=True)
    masks = all_masks(n)
    dist: dict[Fraction, Fraction] = {w0: Fraction(1)}
    total = Fraction(0)
    for t in range(T_val):
        total += sum(pr * (L_r * (w - cbar)) ** 2 for w, pr in dist.items())
        if t == T_val - 1:
            break
        new: dict[Fraction, Fraction] = {}
        for w, pw in dist.items():
            for m, pm in zip(masks, probs, strict=True):
                G = sum((L_r * (w - centers[i]) / p_r for i in range(n) if m[i]), Fraction(0)) / n
                w1 = w - eta_r * G
                new[w1] = new.get(w1, Fraction(0)) + pw * pm
        dist = new
    gap0 = L_r / 2 * (w0 - cbar) ** 2  # f(w) - f* = (L/2)(w - cbar)^2 for equal curvatures
    return total / T_val, gap0


#: The smallest counterexample: n = 2, p = 1/2, L = 4, η = 1/(L(1+c)) = 1/8, w_0 = w* = 0.
TINY = {"n": 2, "p": Fraction(1, 2), "L": Fraction(4), "eta": Fraction(1, 8),
         "centers": [Fraction(1), Fraction(-1)]}


def tiny_sigma2() -> Fraction:
    # ||grad f_i - grad f||^2 = (L (cbar - c_i))^2 = 16 for both clients
    return (TINY["L"] * 1) ** 2


def exact_mifa_paths(T_val: int, eta_r: Fraction, A: list[Fraction], centers: list[Fraction],
                      w0: Fraction) -> list[dict[str, Any]]:
    """Every MIFA path (1-D quadratics f_i = (a_i/2)(w - c_i)^2, exact gradients, rationals).

    Round 0 refreshes every row (memory initialisation); rounds 1..T-1 run over every pattern.
    Returns per path: the pattern sequence, ||∇f(w_t)||^2 for t = 0..T-1, f(w_0) - f*,
    f(w_1) - f* and the realised largest staleness.
    """
    n = len(A)
    abar = sum(A) / n
    xstar = sum(a * c for a, c in zip(A, centers, strict=True)) / n / abar

    def f(w: Fraction) -> Fraction:
        return sum(a * (w - c) ** 2 / 2 for a, c in zip(A, centers, strict=True)) / n

    fstar = f(xstar)
    masks = all_masks(n)
    paths = []
    for seq in np.ndindex(*([len(masks)] * (T_val - 1))):
        w = w0
        mem = [a * (w - c) for a, c in zip(A, centers, strict=True)]
        tau = np.zeros(n, dtype=int)
        tau_max = 0
        gn2 = []
        w_hist = []
        for t in range(T_val):
            w_hist.append(w)
            g = [a * (w - c) for a, c in zip(A, centers, strict=True)]
            gn2.append((sum(g) / n) ** 2)
            if t > 0:
                m = masks[seq[t - 1]]
                tau = np.where(m, 0, tau + 1)
                tau_max = max(tau_max, int(tau.max()))
                mem = [g[i] if m[i] else mem[i] for i in range(n)]
            else:
                mem = g
            w = w - eta_r * sum(mem) / n
        paths.append({"patterns": [masks[s].astype(int).tolist() for s in seq],
                      "grad_norm2": gn2, "gap0": f(w_hist[0]) - fstar,
                      "gap1": f(w_hist[1]) - fstar if T_val > 1 else None,
                      "tau_max": tau_max})
    return paths


def condition(eta_val: Any, L_val: Any, tau_max: Any) -> Any:
    return 1 - eta_val * L_val - eta_val**2 * L_val**2 * tau_max**2


#: Smallest instance for the denominator: n = 2, p = 1/2, L = 1, η = 1/50 (the seed's 0.02).
ZF_TINY = {"A": [Fraction(1), Fraction(1)], "centers": [Fraction(1), Fraction(-1)],
            "w0": Fraction(1), "eta": Fraction(1, 50), "T": 2}


def exact_saga_umifa(T_val: int, eta_r: Fraction, p_r: Fraction, centers: list[Fraction],
                      w0: Fraction, pattern: list[list[int]]) -> dict[str, list[Fraction]]:
    """SAGA and U-MIFA on f_i = (w - c_i)^2/2 (1-D, rationals), same masks, memory ∇f_i(w_0)."""
    n = len(centers)
    out: dict[str, list[Fraction]] = {}
    for rule in ("saga", "umifa"):
        w = w0
        mem = [w - c for c in centers]
        ws = [w]
        for t in range(T_val):
            m = pattern[t % len(pattern)]
            g = [w - c for c in centers]
            if rule == "saga":
                G = sum(mem) / n + sum((g[i] - mem[i]) / p_r for i in range(n) if m[i]) / n
                mem = [g[i] if m[i] else mem[i] for i in range(n)]
            else:
                mem = [g[i] / p_r - (1 / p_r - 1) * mem[i] if m[i] else mem[i]
                       for i in range(n)]
                G = sum(mem) / n
            w = w - eta_r * G
            ws.append(w)
        out[rule] = ws
    return out


def slopes(ns: list[int], evals: list[np.ndarray]) -> np.ndarray:
    """Per replica, the least-squares slope of log(evals) against log(n)."""
    x = np.log(np.asarray(ns, dtype=float))
    Y = np.log(np.stack(evals, axis=1))  # (R, len(ns))
    xc = x - x.mean()
    return (Y - Y.mean(axis=1, keepdims=True)) @ xc / (xc @ xc)


def exact_error2_at(rule_name: str, grads: np.ndarray, memory: np.ndarray, p: Any) -> Any:
    r"""Exact :math:`\mathbb E\|\nabla f(w_t)-G_t\|^2` of one round of ``rule_name`` ("mifa"
    or "umifa") from the memory table ``memory`` with exact client gradients ``grads`` (object
    arrays of :class:`~fractions.Fraction`, shape (n, d)), over all :math:`2^n` patterns of
    independent Bernoulli(``p``) participation (``p`` a Fraction, or one per client).

    >>> g = fractions([[1], [3]]); m = fractions([[0], [0]])
    >>> exact_error2_at("mifa", g, m, Fraction(1, 2))  # (1/4)(1/4)(16 + 9 + 1 + 0)
    Fraction(13, 8)
    """
    n = grads.shape[0]
    if memory.shape != grads.shape:
        raise ValueError(f"memory must have the shape of grads {grads.shape}, got {memory.shape}")
    pl = [Fraction(x) for x in p] if np.ndim(p) else [Fraction(p)] * n
    gbar = grads.sum(axis=0) / n

    def err2(m: np.ndarray) -> Any:
        G = exact_rows(rule_name, m, grads, memory, pl).sum(axis=0) / n
        return sum((gbar - G) ** 2)

    return exact_expectation(err2, n, pl)

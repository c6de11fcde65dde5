r"""Monte Carlo scenarios for seed 002's Theorems 13, 15, 17 and 18 (``ocs`` family).

Every theorem is a one-step recursion, and it is checked as a **one-step conditional
expectation from a fixed iterate**, never along a trajectory: a :class:`FixedIterate`
is a quadratic problem, a noise model and one fixed iterate :math:`x^k`;
:func:`dsgd_one_step_from_fixed_iterate` / :func:`fedavg_one_step_from_fixed_iterate` draw
independent replicas of :math:`x^{k+1}` given that :math:`x^k` (their mean estimates
:math:`\mathbb E[\,\cdot \mid x^k]`), the improvement factor's interval from one stream and
the replicas of the left-hand side from another, and evaluate the theorem's step sizes and
right-hand side (a :class:`~fedtheory.theory.ocs_theorems.DsgdTheorem` or
:class:`~fedtheory.theory.ocs_theorems.FedavgTheorem` of
:mod:`fedtheory.theory.ocs_theorems`) at the least favourable end of that interval.
:func:`one_step_runs` runs a list of scenarios on named streams (the claims' checks,
:mod:`fedtheory.claims.ocs._theorems`, judge them: one-sided test, Bonferroni over
scenarios). :func:`theorem_slack_data` is the data of the figure
``paper_figures/ocs_theorem_slack.py``. The exact instances and the adversarial search are in
:mod:`fedtheory.experiments.ocs_theorem_exact`. Pure computation: nothing here imports the
claim machinery.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fedtheory import stats
from fedtheory.problems import NoiseModel, QuadraticProblem, RelativeNoise
from fedtheory.streams import stream_rng
from fedtheory.theory.ocs_one_step import (
    GammaInterval,
    alpha_terms,
    dsgd_ocs_step,
    fedavg_local_updates,
    fedavg_ocs_step,
    improvement_interval,
)
from fedtheory.theory.ocs_theorems import (
    THEOREM_13,
    THEOREM_13_CORRECTED,
    THEOREM_15,
    THEOREM_17,
    THEOREM_17_CORRECTED,
    THEOREM_18,
    DsgdTheorem,
    FedavgTheorem,
)
from fedtheory.validation import integer_at_least

__all__ = [
    "INCREMENT_TEXT",
    "REPLICAS",
    "FixedIterate",
    "ScenarioRuns",
    "choose_fedavg_steps",
    "dsgd_one_step_from_fixed_iterate",
    "dsgd_strongly_convex_scenarios",
    "fedavg_one_step_from_fixed_iterate",
    "fedavg_strongly_convex_scenarios",
    "nonconvex_scenarios",
    "one_step_runs",
    "theorem_slack_data",
]


@dataclass(frozen=True)
class FixedIterate:
    """A problem, a noise model and one fixed iterate ``x`` (:math:`x^k`): one component of a
    Monte Carlo check of a one-step recursion, evaluated conditionally on :math:`x^k`."""

    name: str
    problem: QuadraticProblem
    noise: NoiseModel
    x: np.ndarray
    m: int
    R: int = 1
    #: multiple of the theorem's largest step (Theorem 15 has no step-size condition)
    eta_scale: float = 1.0

    def describe(self) -> dict[str, Any]:
        p = self.problem
        return {
            "scenario": self.name,
            "n": p.n, "d": p.d, "m": self.m, "R": self.R,
            "hessians": p.hessians, "centers": p.centers, "weights": p.weights,
            "L": p.L, "mu": p.mu, "mu_clients": p.mu_clients, "rho": p.rho,
            "noise": repr(self.noise), "x_k": self.x,
        }


def _chunks(total: int, size: int = 25_000) -> list[int]:
    return [min(size, total - i) for i in range(0, total, size)]


def _direction(problem: QuadraticProblem, dist: float, rng: np.random.Generator) -> np.ndarray:
    v = rng.standard_normal(problem.d)
    return problem.x_star + dist * v / np.linalg.norm(v)


def _gamma_interval(sc: FixedIterate, updates: Callable[[int], np.ndarray], reps: int,
                    level: float) -> GammaInterval:
    r""":math:`\gamma` and its interval from ``reps`` draws of the updates, in chunks
    (``updates(k)`` gives ``k`` replicas of the ``(n, d)`` updates)."""
    p = sc.problem
    A, B = [], []
    for k in _chunks(reps):
        a, b = alpha_terms(updates(k), p.weights, sc.m)
        A.append(a)
        B.append(b)
    return improvement_interval((np.concatenate(A), np.concatenate(B)), p.weights, sc.m, level)


def _dsgd_gamma(sc: FixedIterate, reps: int, rng: np.random.Generator, level: float
                ) -> GammaInterval:
    p = sc.problem
    G = p.client_grads(np.asarray(sc.x, dtype=float))

    def updates(k: int) -> np.ndarray:
        Gk = np.broadcast_to(G, (k, p.n, p.d))
        return Gk + sc.noise.sample(Gk, rng)

    return _gamma_interval(sc, updates, reps, level)


def _fedavg_gamma(sc: FixedIterate, eta_l: float, reps: int, rng: np.random.Generator,
                  level: float) -> GammaInterval:
    return _gamma_interval(
        sc, lambda k: fedavg_local_updates(sc.problem, sc.noise, sc.x, eta_l, sc.R, rng, k),
        reps, level)


def choose_fedavg_steps(
    sc: FixedIterate,
    eta_max: Callable[[float], float],
    eta_g_min: Callable[[float], float],
    reps: int,
    rng_pilot: np.random.Generator,
    rng_gamma: np.random.Generator,
    level: float,
) -> dict[str, Any]:
    r"""Step sizes at the extremes a FedAvg theorem allows, and the interval of :math:`\gamma`.

    :math:`\gamma` depends on the local step :math:`\eta_l = \eta/(R\eta_g)`, which the
    theorem ties to :math:`\gamma` (``eta_max(gamma)``, ``eta_g_min(gamma)``). A pilot
    fixed-point iteration (stream ``rng_pilot``) finds :math:`\eta_l`, shrunk by a margin of
    about the expected width of the final interval; the final interval is estimated at that
    :math:`\eta_l` from ``rng_gamma``. Then :math:`\eta_g` = ``eta_g_min(upper)`` (allowed
    for every :math:`\gamma` in the interval), :math:`\eta = R\eta_l\eta_g`, and ``ok`` says
    whether :math:`\eta \le` ``eta_max(lower)`` (allowed for every :math:`\gamma` too).
    """
    p = sc.problem
    gam = sc.m / p.n
    pilot = max(500, reps // 8)
    gi = None
    for _ in range(3):
        eta_l = eta_max(gam) / (sc.R * eta_g_min(gam))
        gi = _fedavg_gamma(sc, eta_l, pilot, rng_pilot, level)
        gam = gi.gamma
    assert gi is not None
    delta = 1e-9 + 1.5 * (gi.upper - gi.lower) / max(gi.gamma, 1e-300) * np.sqrt(pilot / reps)
    eta_l = eta_max(gam * (1 - delta)) / (sc.R * eta_g_min(min(1.0, gam * (1 + delta))))
    final = _fedavg_gamma(sc, eta_l, reps, rng_gamma, level)
    eta_g = eta_g_min(final.upper)
    eta = sc.R * eta_l * eta_g
    ok = bool(eta <= eta_max(final.lower) * (1 + 1e-12))
    return {"eta_l": eta_l, "eta_g": eta_g, "eta": eta, "gamma": final, "ok": ok}


def _one_step_replicas(sc: FixedIterate, theorem: DsgdTheorem | FedavgTheorem,
                       step: Callable[[int], np.ndarray], reps: int) -> np.ndarray:
    """``reps`` replicas of the quantity ``theorem`` bounds, one step from ``sc.x`` each
    (``step(k)`` gives ``k`` independent replicas of :math:`x^{k+1}`), drawn in chunks."""
    return np.concatenate([theorem.bounds.of_next(sc.problem, step(k)) for k in _chunks(reps)])


def _scenario_row(sc: FixedIterate, theorem: DsgdTheorem | FedavgTheorem, eta: float,
                  gi: GammaInterval, increment: float, **steps: Any) -> dict[str, Any]:
    """The row describing one scenario's run (completed by the check that judges it);
    ``increment`` is the bound's increment (see :class:`DsgdTheorem`), for the ratio."""
    return {"scenario": sc.name, "eta": eta, **steps, "gamma_lower": gi.lower,
            "gamma_upper": gi.upper, "gamma_hat": gi.gamma, "increment": increment,
            "reference": theorem.bounds.reference(sc.problem, sc.x)}


def dsgd_one_step_from_fixed_iterate(
    sc: FixedIterate,
    reps: int,
    rng_gamma: np.random.Generator,
    rng_step: np.random.Generator,
    level: float,
    theorem: DsgdTheorem,
) -> tuple[np.ndarray, float, dict[str, Any]]:
    r"""One DSGD step from the scenario's fixed iterate, against a DSGD ``theorem``.

    The theorem's step (:attr:`~fedtheory.theory.ocs_theorems.DsgdTheorem.eta_max` times
    ``sc.eta_scale``) and right-hand side are taken at the lower limit of :math:`\gamma`.
    Returns the replicas of the left-hand side given :math:`x^k` (their mean estimates the
    one-step conditional expectation), the right-hand side, and a row describing the run.
    """
    gi = _dsgd_gamma(sc, reps, rng_gamma, level)
    p, nz = sc.problem, sc.noise
    eta = sc.eta_scale * theorem.eta_max(p, nz, gi.lower)
    bound = theorem.rhs(p, nz, sc.x, eta, gi.lower)
    inc = theorem.increment(p, nz, sc.x, eta, gi.lower)
    lhs = _one_step_replicas(sc, theorem,
                             lambda k: dsgd_ocs_step(p, nz, sc.x, eta, sc.m, rng_step, k), reps)
    return lhs, bound, _scenario_row(sc, theorem, eta, gi, inc)


def fedavg_one_step_from_fixed_iterate(
    sc: FixedIterate,
    reps: int,
    rng_gamma: np.random.Generator,
    rng_step: np.random.Generator,
    level: float,
    theorem: FedavgTheorem,
    rng_pilot: np.random.Generator | None = None,
) -> tuple[np.ndarray, float, dict[str, Any]]:
    r"""One FedAvg round from the scenario's fixed iterate, against a FedAvg ``theorem``.

    Step sizes from :func:`choose_fedavg_steps` with the theorem's limits (:math:`\eta` scaled
    by ``sc.eta_scale``); otherwise as :func:`dsgd_one_step_from_fixed_iterate`.
    """
    p, nz, R = sc.problem, sc.noise, sc.R

    def eta_max(g: float) -> float:
        return sc.eta_scale * theorem.eta_max(p, nz, g, R)

    def eta_g_min(g: float) -> float:
        return theorem.eta_g_min(p, g)

    pilot = rng_pilot if rng_pilot is not None else np.random.default_rng(
        rng_gamma.integers(2**63))
    steps = choose_fedavg_steps(sc, eta_max, eta_g_min, reps, pilot, rng_gamma, level)
    gi: GammaInterval = steps["gamma"]
    eta = steps["eta"]
    bound = theorem.rhs(p, nz, sc.x, eta, gi.lower, R)
    inc = theorem.increment(p, nz, sc.x, eta, gi.lower, R)
    lhs = _one_step_replicas(
        sc, theorem,
        lambda k: fedavg_ocs_step(p, nz, sc.x, steps["eta_l"], steps["eta_g"], R, sc.m,
                                  rng_step, k), reps)
    return lhs, bound, _scenario_row(sc, theorem, eta, gi, inc, eta_l=steps["eta_l"],
                                     eta_g=steps["eta_g"], steps_ok=steps["ok"])


#: Replicas per scenario of the Monte Carlo checks, per preset.
REPLICAS = {"quick": 20_000, "full": 200_000}

#: How the tightness ratio of a Monte Carlo or exact check is measured.
INCREMENT_TEXT = ("the bound's terms beyond its contraction or descent (eta^2 (beta_1/gamma - "
              "beta_2) in (20), eta^2 beta_1 + eta^3 beta_2 in (27), eta^2 beta^k in (24), "
              "eta rho/8 + eta^2 beta^k in (29))")


def _skew(n: int) -> np.ndarray:
    """One heavy client (weight 0.55), the rest equal: W far above 1/n."""
    return np.r_[0.55, np.full(n - 1, 0.45 / (n - 1))]


def _line(weights: Sequence[float], centers: Sequence[float]) -> QuadraticProblem:
    """:math:`f_i = \\tfrac12 (x - c_i)^2` in one dimension (:math:`L = \\mu = 1`)."""
    return QuadraticProblem(np.ones((len(centers), 1)), np.asarray(centers, float)[:, None],
                            weights=np.asarray(weights, float))


def dsgd_strongly_convex_scenarios(weights: str, rng: np.random.Generator, quick: bool = True
                                   ) -> list[FixedIterate]:
    """Fixed iterates for Theorem 13 with uniform (``"uniform"``) or non-uniform
    (``"weighted"``) weights, drawn from ``rng`` (the full preset's when not ``quick``)."""
    if weights not in ("uniform", "weighted"):
        raise ValueError(f"weights must be 'uniform' or 'weighted', got {weights!r}")
    noisy = RelativeNoise(0.5, 0.5)
    exact = RelativeNoise(0.0, 0.0)
    n, d, m = (10, 5, 3) if quick else (20, 10, 5)
    if weights == "uniform":
        prob = QuadraticProblem.heterogeneous(n, d, 1.0, 0.2, 1.0, rng)
        two = _line([0.5, 0.5], [0.0, 1.0])
        out = [
            FixedIterate("uniform/far", prob, noisy, _direction(prob, 3.0, rng), m),
            FixedIterate("uniform/near", prob, noisy, _direction(prob, 0.1, rng), m),
            FixedIterate("uniform/at-x*-exact-gradients", prob, exact, prob.x_star, m),
            FixedIterate("uniform/n=2-at-x*-tight", two, exact, two.x_star, 1),
        ]
        if not quick:
            dense = QuadraticProblem.heterogeneous(n, d, 1.0, 0.05, 2.0, rng, diagonal=False)
            out += [FixedIterate("uniform/dense-near", dense, RelativeNoise(1.0, 0.2, "sphere"),
                                 _direction(dense, 0.2, rng), m)]
        return out
    prob = QuadraticProblem.heterogeneous(n, d, 1.0, 0.2, 1.0, rng,
                                          weights=rng.dirichlet(np.ones(n)))
    skew = QuadraticProblem.heterogeneous(n, d, 1.0, 0.2, 1.0, rng, weights=_skew(n))
    two = _line([0.75, 0.25], [0.0, 1.0])
    return [
        FixedIterate("weighted/n=2-counterexample", two, exact, np.array([0.5]), 1),
        FixedIterate("weighted/n=2-counterexample-noisy", two, RelativeNoise(0.05, 1e-3),
                     np.array([0.5]), 1),
        FixedIterate("weighted/dirichlet-near", prob, noisy, _direction(prob, 0.1, rng), m),
        FixedIterate("weighted/skew-far", skew, noisy, _direction(skew, 3.0, rng), m),
    ]


def nonconvex_scenarios(rng: np.random.Generator, quick: bool = True, R: int = 1
                        ) -> list[FixedIterate]:
    """Fixed iterates for Theorems 15 (``R = 1``) and 18: identical Hessians (finite rho), PD
    and indefinite, drawn from ``rng``."""
    n, d, m = (10, 5, 3) if quick else (20, 10, 5)
    noisy = RelativeNoise(0.5, 0.5)
    tight = QuadraticProblem(np.ones((6, 2)), rng.standard_normal((6, 2)))  # A_i = L I
    indef = QuadraticProblem.heterogeneous(n, d, 1.0, 0.0, 1.0, rng, identical_hessians=True,
                                           indefinite=True)
    indef_w = QuadraticProblem.heterogeneous(n, d, 1.0, 0.0, 1.0, rng, identical_hessians=True,
                                             indefinite=True, weights=_skew(n))
    pd_w = QuadraticProblem.heterogeneous(n, d, 1.0, 0.2, 1.0, rng, identical_hessians=True,
                                          weights=rng.dirichlet(np.ones(n)))
    out = [
        FixedIterate("uniform/A=LI-at-x*-tight", tight, RelativeNoise(0.5, 0.3), tight.x_star,
                     2, R),
        FixedIterate("uniform/indefinite-near", indef, noisy, _direction(indef, 0.1, rng), m, R),
        FixedIterate("skew/indefinite-far", indef_w, noisy, _direction(indef_w, 3.0, rng), m, R),
        FixedIterate("dirichlet/convex-near", pd_w, noisy, _direction(pd_w, 0.3, rng), m, R),
    ]
    if R == 1:  # Theorem 15 allows any step: also twice the minimiser of its right-hand side
        out.append(FixedIterate("skew/indefinite-far-2eta", indef_w, noisy,
                                _direction(indef_w, 3.0, rng), m, R, eta_scale=2.0))
    if not quick:
        dense = QuadraticProblem.heterogeneous(n, d, 1.0, 0.0, 2.0, rng, identical_hessians=True,
                                               indefinite=True, diagonal=False,
                                               weights=rng.dirichlet(np.ones(n)))
        out.append(FixedIterate("dirichlet/dense-indefinite-near", dense,
                                RelativeNoise(1.0, 0.2, "sphere"), _direction(dense, 0.2, rng),
                                m, R))
    if R == 1:  # exact gradients, full participation (gamma = 1), away from x*: attained
        out.append(FixedIterate("uniform/A=LI-m=n-exact-gradients-far", tight,
                                RelativeNoise(0.0, 0.0), _direction(tight, 3.0, rng), tight.n, R))
    # W/gamma > 1 (the regime where the proof of Theorem 18 needs (38) with care): one heavy
    # client (W = 0.7), equal w_i |grad f_i| at x = 0, m = 1, so gamma is near m/n = 1/4
    skew = _line([0.7, 0.1, 0.1, 0.1], [-1 / 7, 1.0, -1.0, 1.0])
    out.append(FixedIterate("skew/W-over-gamma-2.8", skew, RelativeNoise(0.05, 0.01, "sphere"),
                            np.zeros(1), 1, R))
    return out


def fedavg_strongly_convex_scenarios(rng: np.random.Generator, quick: bool = True
                                     ) -> list[FixedIterate]:
    """Fixed iterates for Theorem 17 (``R = 2, 3``), uniform and non-uniform weights, drawn
    from ``rng``."""
    n, d, m = (10, 5, 3) if quick else (20, 10, 5)
    noisy = RelativeNoise(0.5, 0.5)
    eight = _line(np.full(8, 1 / 8), [1.0, -1.0] * 4)
    prob = QuadraticProblem.heterogeneous(n, d, 1.0, 0.2, 1.0, rng)
    prob_w = QuadraticProblem.heterogeneous(n, d, 1.0, 0.2, 1.0, rng,
                                            weights=rng.dirichlet(np.ones(n)))
    out = [
        FixedIterate("uniform/n=8-m=1-at-x*", eight, RelativeNoise(0.0, 0.0), eight.x_star, 1, 2),
        FixedIterate("uniform/n=8-m=1-at-x*-noisy", eight, RelativeNoise(0.05, 1e-4),
                     eight.x_star, 1, 3),
        FixedIterate("uniform/near", prob, noisy, _direction(prob, 0.1, rng), m, 2),
        FixedIterate("dirichlet/far", prob_w, noisy, _direction(prob_w, 3.0, rng), m, 3),
    ]
    if not quick:
        out.append(FixedIterate("dirichlet/near", prob_w, RelativeNoise(1.0, 0.2, "sphere"),
                                _direction(prob_w, 0.1, rng), m, 2))
    return out


@dataclass(frozen=True)
class ScenarioRuns:
    r"""One step from each scenario's fixed iterate: the replicas of the bounded quantity
    ``samples`` (replicas, scenarios), the theorem's right-hand side ``bounds`` per scenario
    (at the lower limit of its :math:`\gamma` interval, level ``level_gamma`` each) and one
    row per scenario describing the run."""

    samples: np.ndarray
    bounds: np.ndarray
    rows: list[dict[str, Any]]
    level_gamma: float


def one_step_runs(scenarios: Sequence[FixedIterate], theorem: DsgdTheorem | FedavgTheorem,
                  reps: int, streams: Callable[[str], np.random.Generator],
                  alpha: float = stats.DEFAULT_ALPHA) -> ScenarioRuns:
    r"""Run :func:`dsgd_one_step_from_fixed_iterate` (a DSGD ``theorem``) or
    :func:`fedavg_one_step_from_fixed_iterate` (a FedAvg one) on every scenario, with
    ``reps`` replicas each and the streams ``streams(name)`` named ``<scenario>/gamma``,
    ``<scenario>/step`` (and ``<scenario>/pilot`` for FedAvg); the :math:`\gamma` intervals
    share :math:`\alpha/2` over the scenarios (level :math:`\alpha / (2 S)` each).
    """
    if not scenarios:
        raise ValueError("scenarios must not be empty, got none")
    reps = integer_at_least("reps", reps, 2)
    level_gamma = alpha / 2 / len(scenarios)
    cols, bounds, rows = [], [], []
    for sc in scenarios:
        if isinstance(theorem, DsgdTheorem):
            samples, bound, info = dsgd_one_step_from_fixed_iterate(
                sc, reps, streams(sc.name + "/gamma"), streams(sc.name + "/step"),
                level_gamma, theorem)
        else:
            samples, bound, info = fedavg_one_step_from_fixed_iterate(
                sc, reps, streams(sc.name + "/gamma"), streams(sc.name + "/step"),
                level_gamma, theorem, rng_pilot=streams(sc.name + "/pilot"))
        cols.append(samples)
        bounds.append(bound)
        rows.append(info)
    return ScenarioRuns(np.stack(cols, axis=1), np.asarray(bounds), rows, level_gamma)


def _point(lhs: np.ndarray, bound: float, row: dict[str, Any], level: float) -> dict[str, Any]:
    ci = stats.mean_interval(lhs, level, "two")
    ref = row.get("reference", 0.0)
    return {**{k: v for k, v in row.items() if k != "scenario"}, "mean": float(ci.mean),
            "half_width": float(ci.mean - ci.lower), "bound": float(bound),
            "mean_minus_ref": float(ci.mean) - ref, "bound_minus_ref": float(bound) - ref}


def theorem_slack_data(quick: bool = True, seed: int = 0) -> dict[str, Any]:
    r"""Measured left side against each theorem's right side over a sweep.

    * Theorem 13 (and its correction): :math:`x^k = x^\star + t` on the two-client problem
      with weights :math:`(3/4, 1/4)`, exact gradients, :math:`\eta` at its largest value;
    * Theorem 15: the tight scenario (:math:`A_i = LI`, :math:`w = 1/n`, :math:`x^k =
      x^\star`) over :math:`\eta/\eta^\circ`, :math:`\eta^\circ = \gamma/((1+M)L)`;
    * Theorem 17 (and its correction): the counterexample family at :math:`x^\star`
      (:math:`f_i = (x \mp 1)^2/2`, :math:`w = 1/n`, :math:`m = 1`, :math:`R = 2`) over
      :math:`n`;
    * Theorem 18: an indefinite problem near :math:`x^\star` over :math:`\eta/\eta_{\max}`.

    Every point holds the replica mean with the half-width of its interval at the checks'
    level :math:`10^{-6}` (two-sided) and the bound at the lower confidence limit of
    :math:`\gamma`.
    """
    def stream(name: str) -> np.random.Generator:
        return stream_rng(seed, "ocs.theorem_slack", name)

    def size(q: Any, f: Any) -> Any:
        return q if quick else f

    reps = size(4_000, 50_000)
    level = stats.DEFAULT_ALPHA
    out: dict[str, Any] = {"replicas": reps, "level": level, "seed": seed}

    two = _line([0.75, 0.25], [0.0, 1.0])
    exact = RelativeNoise(0.0, 0.0)
    ts = np.linspace(-0.5, 0.75, size(11, 26))
    for theorem in (THEOREM_13, THEOREM_13_CORRECTED):
        pts = []
        for t in ts:
            sc = FixedIterate(f"t={t:.3f}", two, exact, two.x_star + t, 1)
            lhs, b, row = dsgd_one_step_from_fixed_iterate(
                sc, reps, stream(f"{theorem.name}/{t}/g"), stream(f"{theorem.name}/{t}/s"),
                level, theorem)
            pts.append({"t": float(t), **_point(lhs, b, row, level)})
        out[f"thm{theorem.name}"] = pts

    rng = stream("problems")
    tight = QuadraticProblem(np.ones((6, 2)), rng.standard_normal((6, 2)))
    scales = np.linspace(0.25, 3.0, size(8, 23))
    pts = []
    for s in scales:
        sc = FixedIterate("tight", tight, RelativeNoise(0.5, 0.3), tight.x_star, 2, eta_scale=s)
        lhs, b, row = dsgd_one_step_from_fixed_iterate(
            sc, reps, stream(f"15/{s}/g"), stream(f"15/{s}/s"), level, THEOREM_15)
        pts.append({"eta_scale": float(s), **_point(lhs, b, row, level)})
    out["thm15"] = pts

    ns = list(range(2, size(14, 20) + 1, 2))
    for theorem in (THEOREM_17, THEOREM_17_CORRECTED):
        pts = []
        for n in ns:
            prob = _line(np.full(n, 1 / n), [1.0, -1.0] * (n // 2))
            sc = FixedIterate(f"n={n}", prob, exact, prob.x_star, 1, 2)
            key = theorem.name
            lhs, b, row = fedavg_one_step_from_fixed_iterate(
                sc, reps, stream(f"{key}/{n}/g"), stream(f"{key}/{n}/s"), level, theorem,
                rng_pilot=stream(f"{key}/{n}/p"))
            pts.append({"n": n, **_point(lhs, b, row, level)})
        out[f"thm{theorem.name}"] = pts

    indef = QuadraticProblem.heterogeneous(10, 5, 1.0, 0.0, 1.0, rng, identical_hessians=True,
                                           indefinite=True)
    x0 = _direction(indef, 0.5, rng)
    pts = []
    for s in np.linspace(0.1, 1.0, size(6, 19)):
        sc = FixedIterate("indefinite", indef, RelativeNoise(0.5, 0.5), x0, 3, 2, eta_scale=s)
        lhs, b, row = fedavg_one_step_from_fixed_iterate(
            sc, reps, stream(f"18/{s}/g"), stream(f"18/{s}/s"), level, THEOREM_18,
            rng_pilot=stream(f"18/{s}/p"))
        pts.append({"eta_scale": float(s), **_point(lhs, b, row, level)})
    out["thm18"] = pts
    return out

r"""The cached experiment runs of ``fdms.experiment`` (seed 004, Section 6), as its checks,
its figures and ``paper_figures/fdms_experiment.py`` use them.

For each setting (``"clustered"``: 20 clients in 5 clusters of identical data; ``"general"``:
non-iid without clusters) and dropout ratio :math:`\alpha\in\{0.3, 0.5, 0.7\}` (exactly
:math:`\alpha K` random clients drop each round, :class:`DropoutParticipation` ``"max"``) the
methods of the seed run on the same masks and the same noise (common random numbers: replica
:math:`r` of every run draws from the same streams):

- Full (``"full"``), Dropout (``"fedavg"``, eq. 4), Stale (``"mifa"``, last upload),
  FL-FDMS (``"fl_fdms"``) and the friend oracle (``"oracle"``, clustered setting only).

The quick preset uses the quadratic federations of :mod:`fedtheory.problems.clustered` with
Gaussian gradient noise (the mini-batch noise); the full preset the digits federations
(multinomial logistic regression) with the seed's 10+ seeds per point. One extra run per
setting at :math:`\alpha = 0.5` records FL-FDMS's similarity means at the last round (the heat
map) and the similarity computations per round with and without the complexity reduction
(:math:`\Theta_t` of Theorem 2 and :math:`0.5\Theta_t`, with :math:`\beta` the pair rate
of the process and :math:`\delta_f`, :math:`B_{\max}` measured on the problem).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from fedtheory.algorithms import friend_selection as fs
from fedtheory.algorithms.substitution import FLFDMS
from fedtheory.claims.core import Context
from fedtheory.experiments import fdms_constants as fc
from fedtheory.experiments.fedavg_runs import engine_seed
from fedtheory.participation import DropoutParticipation
from fedtheory.problems.clustered import (
    cluster_labels,
    clustered_digits,
    clustered_quadratic,
    general_digits,
    general_quadratic,
)
from fedtheory.problems.noise import GaussianNoise
from fedtheory.simulate import simulate
from fedtheory.tasks import dataset, gather, task

__all__ = ["ALPHAS", "EXPERIMENT_ID", "METHODS", "SETTINGS", "RecordingFDMS",
           "corrected_data", "experiment_data", "pair_rate", "tail_metric"]

EXPERIMENT_ID = "fdms.experiment"
ALPHAS = (0.3, 0.5, 0.7)
SETTINGS = ("clustered", "general")
#: seed name -> registered rule
METHODS = {"Full": "full", "Dropout": "fedavg", "Stale": "mifa", "FL-FDMS": "fl_fdms",
           "Oracle": "oracle"}


class RecordingFDMS(FLFDMS):
    """FL-FDMS that keeps, on the rule object, its last state and the cumulative similarity
    computations after every round (for the heat map and the complexity plot; run with one
    worker so that one chunk holds every replica)."""

    name = "fl_fdms"

    def __init__(self, reduction: dict[str, Any] | None = None) -> None:
        super().__init__(reduction)
        self.history: list[np.ndarray] = []
        self.last_state: dict[str, Any] | None = None

    def finish(self, state: dict[str, Any], acc: dict[str, Any]) -> np.ndarray:
        G = super().finish(state, acc)
        self.history.append(state["computations"].copy())
        self.last_state = state
        return G


def pair_rate(K: int, alpha: float) -> float:
    r""":math:`P(i, j \text{ both active})` under exactly :math:`D = \lfloor\alpha K\rfloor`
    uniform dropouts: :math:`\frac{S(S-1)}{K(K-1)}`, :math:`S = K - D` (the long-run
    :math:`N_t^{ij}/t`)."""
    S = K - DropoutParticipation(K, alpha, "max").max_dropped
    return S * (S - 1) / (K * (K - 1))


@functools.lru_cache(maxsize=4)
def _problem(setting: str, kind: str, seed: int) -> Any:
    if kind == "quadratic":
        if setting == "clustered":
            return clustered_quadratic(20, 5, d=10, sigma_G2=25.0, seed=seed)
        return general_quadratic(20, d=10, sigma_G2=25.0, seed=seed)
    return clustered_digits(20, 5, seed=seed) if setting == "clustered" else \
        general_digits(20, seed=seed)


def _params(ctx: Context) -> dict[str, Any]:
    return {
        "kind": ctx.size(quick="quadratic", full="digits"),
        "rounds": ctx.size(quick=60, full=200),
        "replicas": ctx.size(quick=12, full=12),
        "lr": ctx.size(quick=0.1, full=0.05),
        "local_steps": ctx.size(quick=2, full=5),
        "sigma2": ctx.size(quick=0.25, full=0.5),
        "problem_seed": 0,
        "x0": ctx.size(quick=3.0, full=0.0),
        "constant_samples": ctx.size(quick=100, full=400),
    }


def tail_metric(values: Any, fraction: float = 0.2) -> np.ndarray:
    """Per-replica mean of a metric over the last ``fraction`` of the recorded rounds:
    ``(R, T)`` -> ``(R,)``."""
    vals = np.asarray(values)
    k = max(1, int(round(fraction * vals.shape[1])))
    return vals[:, -k:].mean(axis=1)


def _constants(prob: Any, setting: str, labels: np.ndarray, x0: np.ndarray,
               p: dict[str, Any], seed: int) -> dict[str, Any]:
    r"""Measured constants (:func:`~fedtheory.experiments.fdms_constants.measure_constants`
    at :math:`x_0` and :math:`x^\star`): :math:`\sigma_F^2` is the largest within-cluster
    :math:`\hat\sigma^2_{ij}` (clustered) or the :math:`3/19` quantile of the pairs (general:
    about three friends per client)."""
    pts = np.stack([x0, np.asarray(prob.x_star, dtype=float)])
    c = fc.measure_constants(prob, pts, lr=p["lr"], local_steps=p["local_steps"],
                             noise=GaussianNoise(p["sigma2"]), samples=p["constant_samples"],
                             sigma_F2=0.0, seed=seed)
    n = labels.size
    off = ~np.eye(n, dtype=bool)
    if setting == "clustered":
        sigma_F2 = float(c["sigma2"][(labels[:, None] == labels[None, :]) & off].max())
    else:
        sigma_F2 = float(np.quantile(c["sigma2"][off], 3 / 19))
    F = fc.friend_sets(c["sigma2"], sigma_F2)
    return {**c, "sigma_F2": sigma_F2, "friends": F, **fc.gap_constants(c["mu"], F)}


#: Rough seconds per replica x round x local step of one run (one core), per problem kind:
#: the tasks' cost estimates (scheduling and time left only).
_SECONDS_PER_STEP = {"quadratic": 2e-5, "digits": 5.7e-4}


def _cost(p: dict[str, Any], runs: int = 1) -> float:
    return (runs * p["replicas"] * p["rounds"] * p["local_steps"]
            * _SECONDS_PER_STEP[p["kind"]])


def _method_run(*, setting: str, alpha: float, method: str, p: dict[str, Any],
                eseed: int) -> dict[str, Any]:
    """One method of the experiment at ``(setting, alpha)`` (a task): per-replica traces."""
    prob = _problem(setting, p["kind"], p["problem_seed"])
    extra = {}
    if p["kind"] == "digits":
        extra = {"accuracy": lambda x, prob=prob: np.atleast_1d(prob.accuracy(x))}
    r: Any = METHODS[method]
    if method == "Oracle":
        from fedtheory.algorithms import get_rule
        r = get_rule("oracle", labels=cluster_labels(20, 5))
    # quadratics have x* = 0: start away from it; logistic regression starts at 0
    x0 = np.full(prob.d, p["x0"])
    res = simulate(prob, r, DropoutParticipation(20, alpha, "max"), rounds=p["rounds"],
                   replicas=p["replicas"], lr=p["lr"], local_steps=p["local_steps"],
                   noise=GaussianNoise(p["sigma2"]), x0=x0, seed=eseed, keep_replicas=True,
                   workers=1, extra_metrics=extra)
    return {"f_gap": res.f_gap.replicas, "f_gap_mean": res.f_gap.mean,
            **({"accuracy": res.metric("accuracy").replicas} if extra else {})}


def _heat_run(*, setting: str, p: dict[str, Any], mu_seed: int, heat_seed: int
              ) -> dict[str, Any]:
    """The heat map and complexity runs of ``setting`` at alpha = 0.5 (a task): measured
    constants, Theta_t's parameters, cumulative similarity computations, similarity means."""
    prob = _problem(setting, p["kind"], p["problem_seed"])
    labels = cluster_labels(20, 5)
    x0 = np.full(prob.d, p["x0"])
    alpha = 0.5
    proc = DropoutParticipation(20, alpha, "max")
    consts = _constants(prob, setting, labels, x0, p, mu_seed)
    red = {"horizon": p["rounds"], "max_friends": max(1, consts["B_max"]),
           "beta": pair_rate(20, alpha), "p": 0.1, "delta_f": consts["delta_f"]}
    rules = {"no reduction": RecordingFDMS(),
             "Theta_t": RecordingFDMS(red),
             "0.5 Theta_t": RecordingFDMS({**red, "scale": 0.5})}
    complexity = {}
    for name, rule in rules.items():
        simulate(prob, rule, proc, rounds=p["rounds"], replicas=p["replicas"], lr=p["lr"],
                 local_steps=p["local_steps"], noise=GaussianNoise(p["sigma2"]), x0=x0,
                 seed=heat_seed, workers=1)
        complexity[name] = np.array(rule.history)  # (T, R)
    st = rules["no reduction"].last_state
    heat = fs.mean_similarity({"sum": st["similarity_sum"], "count": st["similarity_count"]})
    return {"constants": consts, "theta": red, "complexity": complexity, "heat": heat}


@dataset(EXPERIMENT_ID)
def experiment_data(ctx: Context) -> dict[str, Any]:
    r"""The runs of ``fdms.experiment`` (cached per ``(preset, seed)``; each method at each
    setting and :math:`\alpha`, and each setting's heat-map runs, a task): ``runs[(setting,
    alpha, method)]`` with per-replica ``f_gap`` traces ``(R, T + 1)`` (and ``accuracy`` in
    the full preset), ``heat[setting]`` (FL-FDMS's similarity means at the last round,
    ``(R, 20, 20)``), ``complexity[(setting, case)]`` (cumulative similarity computations per
    round, ``(T, R)``), ``constants[setting]`` (measured :math:`\sigma^2_{ij}`, :math:`\mu^{k,i}`,
    friend sets, :math:`\delta_{\min}`, :math:`\delta_f`, :math:`B_{\max}`, with standard
    errors), ``theta[setting]`` (the parameters of :math:`\Theta_t`), ``labels`` and
    ``params``."""
    p = _params(ctx)
    keys = [(setting, alpha, method) for setting in SETTINGS for alpha in ALPHAS
            for method in METHODS if method != "Oracle" or setting == "clustered"]
    pieces = [task(f"{setting}-{alpha}-{method}", _method_run, cost=_cost(p), setting=setting,
                   alpha=alpha, method=method, p=p, eseed=engine_seed(ctx, f"{setting}-{alpha}"))
              for setting, alpha, method in keys]
    pieces += [task(f"{setting}-heat", _heat_run, cost=_cost(p, 4), setting=setting, p=p,
                    mu_seed=engine_seed(ctx, f"{setting}-mu"),
                    heat_seed=engine_seed(ctx, f"{setting}-heat")) for setting in SETTINGS]
    results = gather(pieces)
    out: dict[str, Any] = {"params": p, "labels": cluster_labels(20, 5),
                           "runs": dict(zip(keys, results, strict=False)), "heat": {},
                           "complexity": {}, "constants": {}, "theta": {}}
    for setting, heat in zip(SETTINGS, results[len(keys):], strict=True):
        out["constants"][setting] = heat["constants"]
        out["theta"][setting] = heat["theta"]
        out["heat"][setting] = heat["heat"]
        for name, hist in heat["complexity"].items():
            out["complexity"][(setting, name)] = hist
    return out


def _corrected_run(*, alpha: float, method: str, p: dict[str, Any], eseed: int) -> np.ndarray:
    """One method of ``fdms.experiment.corrected`` at ``alpha`` (a task): f_gap traces."""
    prob = _problem("clustered", p["kind"], p["problem_seed"])
    res = simulate(prob, METHODS[method], DropoutParticipation(20, alpha, "max"),
                   rounds=p["rounds"], replicas=p["replicas"], lr=p["lr"],
                   local_steps=p["local_steps"], noise=GaussianNoise(p["sigma2"]),
                   x0=np.full(prob.d, p["x0"]), seed=eseed, keep_replicas=True, workers=1)
    return res.f_gap.replicas


@dataset(EXPERIMENT_ID + ".corrected")
def corrected_data(ctx: Context) -> dict[str, Any]:
    r"""The runs of ``fdms.experiment.corrected``: the clustered quadratic federation of the
    quick preset (both presets), FL-FDMS and Dropout on common random numbers for every
    :math:`\alpha`, more seeds than :func:`experiment_data` (quick 40, full 100), each run a
    task; ``runs[(alpha, method)]`` per-replica ``f_gap`` traces and ``p_a5[alpha]``, the
    exact probability that Assumption 5 holds in a round
    (:func:`~fedtheory.experiments.fdms_constants.assumption5_probability`)."""
    # the quadratic federation in both presets (the statement is about its regime)
    quick = Context(preset="quick", seed=ctx.seed, claim_id=ctx.claim_id)
    p = {**_params(quick), "replicas": ctx.size(quick=40, full=100)}
    keys = [(alpha, method) for alpha in ALPHAS for method in ("Dropout", "FL-FDMS")]
    runs = gather([task(f"{alpha}-{method}", _corrected_run, cost=_cost(p), alpha=alpha,
                        method=method, p=p, eseed=engine_seed(ctx, f"corrected-{alpha}"))
                   for alpha, method in keys])
    return {"params": p, "runs": dict(zip(keys, runs, strict=True)),
            "p_a5": {alpha: fc.assumption5_probability(
                20, 5, DropoutParticipation(20, alpha, "max").max_dropped) for alpha in ALPHAS}}


r"""Engine runs for the lecture's FedAvg claims (seed 003), against the exact moments.

The exact expectations (FedAvg's moments on diagonal quadratics, subset variances, fixed
points) and the scenario builder :func:`make_problem` live in :mod:`fedtheory.theory.fedavg`;
they are re-exported here for callers that know them under this module. This module runs the
engine (:func:`fedtheory.simulate.simulate`) with uniform :math:`m`-of-:math:`n` participation
and keeps what the claims compare with theory: final errors per heterogeneity level
(:func:`floors_vs_heterogeneity`), one-round server updates (:func:`server_update_samples`),
FedAvg against parallel SGD (:func:`local_steps_runs`), exponent fits (:func:`fit_exponent`)
and intervals of Monte Carlo means (:func:`mean_interval`, :func:`consistent`). The claims'
cached runs are in :mod:`fedtheory.experiments.fedavg_runs`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fedtheory.participation import UniformParticipation
from fedtheory.problems import GaussianNoise
from fedtheory.simulate import simulate
from fedtheory.stats import z_quantile
from fedtheory.theory.fedavg import (
    FedAvgMoments,
    _participants,
    enumerate_subset_variance,
    fedavg_and_sgd_final,
    fedavg_final_moments,
    fedavg_fixed_point,
    fedavg_moments,
    local_contraction,
    local_noise_gain,
    local_steps_curves,
    make_problem,
    step_size_for,
    subset_mean_product,
    subset_variance,
    update_moments,
)
from fedtheory.validation import integer_at_least, nonnegative_real

__all__ = [
    "FedAvgMoments",
    "Rows",
    "RunMany",
    "concat_runs",
    "consistent",
    "enumerate_subset_variance",
    "fedavg_and_sgd_final",
    "fedavg_final_moments",
    "fedavg_fixed_point",
    "fedavg_moments",
    "fit_exponent",
    "floors_specs",
    "floors_vs_heterogeneity",
    "local_contraction",
    "local_noise_gain",
    "local_steps_curves",
    "local_steps_runs",
    "local_steps_specs",
    "make_problem",
    "mean_interval",
    "run_all",
    "run_final",
    "server_update_samples",
    "server_update_specs",
    "step_size_for",
    "subset_mean_product",
    "subset_variance",
    "trajectories",
    "update_moments",
]


# ---------------------------------------------------------------------------- engine runs
def _final(res: Any, metric: str) -> np.ndarray:
    """Per-replica value of ``metric`` at the last recorded round."""
    return np.asarray(res.metric(metric).replicas[:, -1], dtype=float)


def _simulate_uniform(problem: Any, rule: str, *, participants: int | None, lr: float,
                      local_steps: int, rounds: int, replicas: int, sigma2: float, seed: int,
                      x0: np.ndarray | None, record_every: int,
                      keep_replicas: bool = False, first_replica: int = 0) -> Any:
    r"""The engine with uniform ``m``-of-``n`` participation (all clients when ``participants``
    is None) and additive Gaussian noise of :math:`\mathbb E\|\xi\|^2 = \sigma^2` (none when
    ``sigma2 == 0``)."""
    m = _participants(participants, problem.n)
    return simulate(problem, rule, UniformParticipation(problem.n, m), rounds=rounds,
                    replicas=replicas, lr=lr, local_steps=local_steps,
                    noise=GaussianNoise(sigma2) if sigma2 > 0 else None, x0=x0, seed=seed,
                    keep_replicas=keep_replicas, record_every=record_every,
                    first_replica=first_replica)


def run_final(
    problem: Any,
    rule: str,
    *,
    participants: int | None = None,
    lr: float,
    local_steps: int,
    rounds: int,
    replicas: int,
    sigma2: float,
    seed: int,
    x0: np.ndarray | None = None,
    metrics: tuple[str, ...] = ("dist2", "grad_norm2"),
    first_replica: int = 0,
) -> dict[str, Any]:
    r"""Run the engine (:func:`fedtheory.simulate.simulate`) and keep the final metrics.

    Participation is uniform :math:`m`-of-:math:`n` (all clients when ``participants`` is
    None); noise is additive Gaussian with :math:`\mathbb E\|\xi\|^2 = \sigma^2` (none when
    ``sigma2 == 0``). The seed fixes every stream per replica, so two runs with the same seed
    and shapes share their participation and noise draws (common random numbers): their
    per-replica difference is a paired sample. ``first_replica`` starts at that replica
    (consecutive ranges, concatenated, have bitwise the iterates of the run over their union:
    a task's share).

    Returns ``{metric: (replicas,) final values}`` plus ``bits`` (final, per replica) and
    ``x`` (final iterates).
    """
    res = _simulate_uniform(problem, rule, participants=participants, lr=lr,
                            local_steps=local_steps, rounds=rounds, replicas=replicas,
                            sigma2=nonnegative_real("sigma2", sigma2), seed=seed, x0=x0,
                            keep_replicas=True, record_every=max(rounds, 1),
                            first_replica=first_replica)
    out: dict[str, Any] = {k: _final(res, k) for k in metrics}
    out["bits"] = _final(res, "bits")
    out["x"] = res.x
    out["seconds"] = res.seconds
    return out


#: Runs :func:`run_final` for each of a list of keyword dicts, results in the same order.
RunMany = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


def run_all(specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """:func:`run_final` for each keyword dict of ``specs``, here, one after the other."""
    return [run_final(**spec) for spec in specs]


def concat_runs(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """One :func:`run_final` result from those of consecutive replica ranges (per-replica
    arrays concatenated, seconds added): the run over their union (the iterates bitwise).

    >>> a = {"dist2": np.array([1.0]), "bits": np.array([3.0]), "x": np.zeros((1, 2)),
    ...      "seconds": 0.5}
    >>> out = concat_runs([a, a])
    >>> out["dist2"].tolist(), out["x"].shape, out["seconds"]
    ([1.0, 1.0], (2, 2), 1.0)
    """
    out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0] if k != "seconds"}
    out["seconds"] = float(sum(p["seconds"] for p in parts))
    return out


def floors_vs_heterogeneity(
    zeta2_levels: tuple[float, ...],
    rules: tuple[str, ...],
    *,
    participants: int | None = None,
    lr: float,
    local_steps: int,
    rounds: int,
    replicas: int,
    sigma2: float,
    seed: int,
    problem_kw: dict[str, Any] | None = None,
    x0: np.ndarray | None = None,
    run_many: RunMany | None = None,
) -> dict[str, Any]:
    r"""Final :math:`\|x_R - x^\star\|^2` of each rule at each heterogeneity level.

    All levels and rules share the seed (paired replicas). For FedAvg the exact expectation
    (:func:`fedavg_moments`) and the noise-free drift :math:`\|\hat x - x^\star\|^2`
    (:func:`fedavg_fixed_point`, full participation) come with it; for every rule a noise-free
    single run gives the deterministic part of the error left after ``rounds`` rounds.

    Returns a dict with ``levels``, ``rules``, ``dist2[rule]`` (shape ``(levels, replicas)``),
    ``exact_fedavg`` (levels,), ``drift2`` (levels,), ``noise_free[rule]`` (levels,) and
    ``seconds``. The noisy runs go through ``run_many`` (:func:`run_all` by default; e.g.
    cut into tasks, :mod:`fedtheory.tasks`).
    """
    problem_kw = dict(problem_kw or {})
    levels = tuple(float(z) for z in zeta2_levels)
    out: dict[str, Any] = {"levels": np.array(levels), "rules": tuple(rules), "dist2": {},
                           "noise_free": {}, "seconds": 0.0}
    probs = [make_problem(z, **problem_kw) for z in levels]
    d = probs[0].d
    x0 = np.zeros(d) if x0 is None else np.asarray(x0, dtype=float)
    common = {"participants": participants, "lr": lr, "local_steps": local_steps,
              "rounds": rounds, "seed": seed, "x0": x0, "metrics": ("dist2",)}
    runs = iter((run_many or run_all)(floors_specs(
        levels, rules, participants=participants, lr=lr, local_steps=local_steps,
        rounds=rounds, replicas=replicas, sigma2=sigma2, seed=seed, problem_kw=problem_kw,
        x0=x0)))
    for rule in rules:
        rows, clean = [], []
        for prob in probs:
            run = next(runs)
            rows.append(run["dist2"])
            out["seconds"] += run["seconds"]
            ref = run_final(prob, rule, replicas=1, sigma2=0.0, **common)
            clean.append(float(ref["dist2"][0]))
        out["dist2"][rule] = np.array(rows)
        out["noise_free"][rule] = np.array(clean)
    out["exact_fedavg"] = np.array([
        fedavg_moments(p, lr=lr, rounds=rounds, local_steps=local_steps,
                       participants=participants, sigma2=sigma2, x0=x0).dist2[-1]
        for p in probs])
    out["drift2"] = np.array([
        float(np.sum((fedavg_fixed_point(p, lr, local_steps) - p.x_star) ** 2)) for p in probs])
    out["zeta2_at_optimum"] = np.array([p.heterogeneity_at_optimum for p in probs])
    return out


def floors_specs(zeta2_levels: tuple[float, ...], rules: tuple[str, ...], *,
                 participants: int | None = None, lr: float, local_steps: int, rounds: int,
                 replicas: int, sigma2: float, seed: int,
                 problem_kw: dict[str, Any] | None = None,
                 x0: np.ndarray | None = None) -> list[dict[str, Any]]:
    """The noisy runs of :func:`floors_vs_heterogeneity` (its arguments), as the keyword dicts
    of :func:`run_final` it hands ``run_many``, rule-major."""
    probs = [make_problem(float(z), **dict(problem_kw or {})) for z in zeta2_levels]
    x0 = np.zeros(probs[0].d) if x0 is None else np.asarray(x0, dtype=float)
    common = {"participants": participants, "lr": lr, "local_steps": local_steps,
              "rounds": rounds, "seed": seed, "x0": x0, "metrics": ("dist2",)}
    return [{"problem": prob, "rule": rule, "replicas": replicas, "sigma2": sigma2, **common}
            for rule in rules for prob in probs]


def server_update_specs(problem: Any, participants: tuple[int, ...], *, lr: float,
                        local_steps: int, sigma2: float, x0: np.ndarray, replicas: int,
                        seed: int) -> list[dict[str, Any]]:
    """The runs of :func:`server_update_samples` (its arguments), as the keyword dicts of
    :func:`run_final` it hands ``run_many``, one per :math:`m`."""
    return [{"problem": problem, "rule": "fedavg", "participants": m, "lr": lr,
             "local_steps": local_steps, "rounds": 1, "replicas": replicas, "sigma2": sigma2,
             "seed": seed, "x0": np.asarray(x0, dtype=float), "metrics": ("dist2",)}
            for m in participants]


def server_update_samples(
    problem: Any,
    participants: tuple[int, ...],
    *,
    lr: float,
    local_steps: int,
    sigma2: float,
    x0: np.ndarray,
    replicas: int,
    seed: int,
    run_many: RunMany | None = None,
) -> dict[str, Any]:
    r"""One engine round from ``x0`` per participation level :math:`m`, against the exact law.

    Returns ``samples`` (shape ``(len(participants), replicas)``) of
    :math:`\|x_1 - \mathbb E x_1\|^2` with the exact mean of :func:`update_moments`, the exact
    ``variance`` and its ``heterogeneity`` and ``noise`` parts per :math:`m`, and the
    leading-order forms ``leading`` :math:`=\frac{\gamma^2K}{m}(\sigma^2 +
    K\zeta^2\frac{n-m}{n-1})` and ``lecture`` :math:`=\frac{\gamma^2K}{m}(\sigma^2 +
    K\zeta^2(1-\frac mn))` with :math:`\zeta^2 = \frac1n\sum_i\|\nabla f_i(x_0) - \nabla
    f(x_0)\|^2`. The runs go through ``run_many`` (:func:`run_all` by default).
    """
    x0 = np.asarray(x0, dtype=float)
    n = problem.n
    zeta2 = float(problem.heterogeneity(x0))
    out: dict[str, Any] = {"participants": np.array(participants), "zeta2": zeta2,
                           "samples": [], "variance": [], "heterogeneity": [], "noise": []}
    runs = (run_many or run_all)(server_update_specs(
        problem, participants, lr=lr, local_steps=local_steps, sigma2=sigma2, x0=x0,
        replicas=replicas, seed=seed))
    for m, run in zip(participants, runs, strict=True):
        mom = update_moments(problem, x0, lr=lr, local_steps=local_steps, participants=m,
                             sigma2=sigma2)
        out["samples"].append(np.sum((run["x"] - mom["mean"]) ** 2, axis=1))
        for key in ("variance", "heterogeneity", "noise"):
            out[key].append(mom[key])
    for key in ("samples", "variance", "heterogeneity", "noise"):
        out[key] = np.array(out[key])
    m_arr = np.array(participants, dtype=float)
    base = lr**2 * local_steps / m_arr
    out["leading"] = base * (sigma2 + local_steps * zeta2 * (n - m_arr) / max(n - 1, 1))
    out["lecture"] = base * (sigma2 + local_steps * zeta2 * (1 - m_arr / n))
    return out


def _per_round_replicas(replicas: int | Sequence[int], grid_size: int) -> tuple[int, ...]:
    """One replica count per :math:`R`: ``replicas`` repeated (an int), or the sequence itself,
    checked to have ``grid_size`` integers >= 2.

    >>> _per_round_replicas(3, 2), _per_round_replicas((20, 3), 2)
    ((3, 3), (20, 3))
    >>> _per_round_replicas((20, 3), 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: replicas must be an int or one integer >= 2 per R ... got (20, 3)
    """
    if isinstance(replicas, (int, np.integer)) and not isinstance(replicas, bool):
        return (int(replicas),) * grid_size
    counts = tuple(replicas) if isinstance(replicas, (Sequence, np.ndarray)) else ()
    if (len(counts) != grid_size
            or any(isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2
                   for n in counts)):
        raise ValueError(f"replicas must be an int or one integer >= 2 per R of rounds_grid "
                         f"({grid_size} of them), got {replicas!r}")
    return tuple(int(n) for n in counts)


def local_steps_specs(problem: Any, rounds_grid: tuple[int, ...], *, local_steps: int,
                      c: float, sigma2: float, replicas: int | Sequence[int], seed: int,
                      x0: np.ndarray) -> list[dict[str, Any]]:
    """The runs of :func:`local_steps_runs` (its arguments), as the keyword dicts of
    :func:`run_final` it hands ``run_many``: per :math:`R`, FedAvg then parallel SGD."""
    K = integer_at_least("local_steps", local_steps)
    counts = _per_round_replicas(replicas, len(rounds_grid))
    methods = ((K, seed), (1, seed + 1))
    return [{"problem": problem, "rule": "fedavg", "lr": step_size_for(K * R, c),
             "local_steps": steps, "rounds": K * R // steps, "replicas": count,
             "sigma2": sigma2, "seed": stream, "x0": x0, "metrics": ("grad_norm2",)}
            for R, count in zip(rounds_grid, counts, strict=True) for steps, stream in methods]


def local_steps_runs(
    problem: Any,
    rounds_grid: tuple[int, ...],
    *,
    local_steps: int,
    c: float,
    sigma2: float,
    replicas: int | Sequence[int],
    seed: int,
    x0: np.ndarray,
    run_many: RunMany | None = None,
) -> dict[str, Any]:
    r"""FedAvg (:math:`K` local steps, :math:`R` rounds) against parallel SGD (:math:`KR` steps,
    one per round), both with :math:`\gamma = c/\sqrt{KR}` and full participation.

    ``replicas`` is one count for every :math:`R` (an int) or one count per :math:`R` of
    ``rounds_grid`` (a sequence of integers >= 2: a run costs :math:`\propto KR` per replica, so
    a grid over decades of :math:`R` can afford more replicas at small :math:`R`). The replicas
    of each run are the engine's first ones for its seed, so a larger count only adds replicas.

    Returns per :math:`R` the per-replica final :math:`\|\nabla f\|^2` of both (``fedavg``,
    ``sgd``): for an int ``replicas`` an array of shape ``(len(grid), replicas)`` (as always),
    for a sequence a list of 1-D arrays, the :math:`j`-th of length ``replicas[j]`` (whether
    the counts differ or not; :func:`fit_exponent`, :func:`mean_interval` and
    :func:`consistent` take both forms). Also their exact expectations (``exact_fedavg``,
    ``exact_sgd``), the bits each sent (``bits_fedavg``, ``bits_sgd``) and the rounds each
    used. The runs go through ``run_many`` (:func:`run_all` by default).
    """
    K = integer_at_least("local_steps", local_steps)
    out: dict[str, Any] = {"rounds": np.array(rounds_grid), "local_steps": K, "c": c,
                           "fedavg": [], "sgd": [], "exact_fedavg": [], "exact_sgd": [],
                           "bits_fedavg": [], "bits_sgd": [], "seconds": 0.0}
    # FedAvg: K steps a round for R rounds; parallel SGD: one step a round for KR rounds
    methods = (("fedavg", K, seed), ("sgd", 1, seed + 1))
    runs = iter((run_many or run_all)(local_steps_specs(
        problem, rounds_grid, local_steps=K, c=c, sigma2=sigma2, replicas=replicas, seed=seed,
        x0=x0)))
    for R in rounds_grid:
        for key, _, _ in methods:
            run = next(runs)
            out[key].append(run["grad_norm2"])
            out[f"bits_{key}"].append(float(run["bits"][0]))
            out["seconds"] += run["seconds"]
        exact = fedavg_and_sgd_final(problem, rounds=R, local_steps=K, c=c, sigma2=sigma2, x0=x0)
        out["exact_fedavg"].append(exact[0])
        out["exact_sgd"].append(exact[1])
    ragged = not isinstance(replicas, (int, np.integer))
    for key in ("fedavg", "sgd", "exact_fedavg", "exact_sgd", "bits_fedavg", "bits_sgd"):
        if not (ragged and key in ("fedavg", "sgd")):
            out[key] = np.array(out[key])
    return out


#: Monte Carlo samples per point: a 2-D array (points, replicas), or one 1-D array per point
#: (ragged: the points' replica counts may differ).
Rows = np.ndarray | Sequence[np.ndarray]


def _as_rows(samples: Rows) -> np.ndarray | list[np.ndarray]:
    """``samples`` as a 2-D float array when all its rows have one length (the form every
    reduction below had before ragged rows), else as a list of 1-D float arrays.

    >>> _as_rows([[1, 2], [3, 4]]).shape
    (2, 2)
    >>> [r.size for r in _as_rows([np.ones(3), np.ones(2)])]
    [3, 2]
    """
    if isinstance(samples, np.ndarray) and samples.dtype != object:
        if samples.ndim == 2:
            return np.asarray(samples, dtype=float)
        rows = list(np.asarray(samples, dtype=float)) if samples.ndim else []
    else:
        rows = [np.asarray(r, dtype=float) for r in samples]
    if not rows or any(r.ndim != 1 for r in rows):
        raise ValueError("samples must have shape (rows, replicas) or be a non-empty sequence "
                         f"of 1-D rows, got row shapes {[np.shape(r) for r in rows]}")
    if len({r.size for r in rows}) == 1:
        return np.stack(rows)
    return rows


def _row_stats(rows: np.ndarray | list[np.ndarray]
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, sample variance (``ddof=1``) and length of each row of :func:`_as_rows`'s
    result: a 2-D array reduced along its rows, ragged rows one by one.

    >>> mean, var, n = _row_stats(_as_rows([np.array([1.0, 3.0]), np.array([2.0, 2.0, 5.0])]))
    >>> mean.tolist(), var.tolist(), n.tolist()
    ([2.0, 3.0], [2.0, 3.0], [2, 3])
    """
    if isinstance(rows, np.ndarray):
        return (rows.mean(axis=1), rows.var(axis=1, ddof=1),
                np.full(rows.shape[0], rows.shape[1]))
    return (np.array([r.mean() for r in rows]), np.array([r.var(ddof=1) for r in rows]),
            np.array([r.size for r in rows]))


def fit_exponent(x: np.ndarray, samples: Rows,
                 values: np.ndarray | None = None) -> tuple[float, float]:
    r"""Slope of :math:`\log\mathbb E[X]` against :math:`\log x`, and its standard error.

    ``samples`` holds one row of independent replicas per point of ``x``, independent across
    rows: a 2-D array ``(len(x), replicas)``, or a sequence of 1-D rows whose lengths
    :math:`N_j` may differ (e.g. more replicas where a replica is cheap). Row :math:`j`'s
    log-mean has variance :math:`s_j^2/(N_j\bar X_j^2)` (delta method); the slope is the
    weighted least squares fit with the inverse variances as weights,

    .. math::

        w_j = \frac{N_j \bar X_j^2}{s_j^2},\qquad
        \hat b = \frac{\sum_j w_j(\log x_j - \bar\ell)\log\bar X_j}
                      {\sum_j w_j(\log x_j - \bar\ell)^2},\qquad
        \operatorname{Var}\hat b = \frac{1}{\sum_j w_j(\log x_j - \bar\ell)^2},

    with :math:`\bar\ell = \sum_j w_j\log x_j / \sum_j w_j`. With ``values`` (e.g. the exact
    expectations) the same weighted fit is applied to :math:`\log` ``values`` instead of the log
    sample means: the slope the estimator targets.

    >>> rng = np.random.default_rng(0)
    >>> x = np.array([10.0, 100.0, 1000.0])
    >>> s = rng.exponential(1.0, (3, 4000)) / np.sqrt(x)[:, None]
    >>> slope, se = fit_exponent(x, s)
    >>> bool(abs(slope + 0.5) < 5 * se), bool(se < 0.02)
    (True, True)

    Ragged rows: 16000 replicas at the first point, 4000 at the others (as 2-D rows of equal
    lengths give the same numbers as the 2-D array):

    >>> rows = [rng.exponential(1.0, n) / np.sqrt(xj) for xj, n in zip(x, (16000, 4000, 4000))]
    >>> slope_r, se_r = fit_exponent(x, rows)
    >>> bool(abs(slope_r + 0.5) < 5 * se_r), bool(se_r < se)
    (True, True)
    >>> fit_exponent(x, list(s)) == (slope, se)
    True
    """
    x = np.asarray(x, dtype=float)
    rows = _as_rows(samples)
    n = [len(r) for r in rows]
    if x.ndim != 1 or len(n) != x.shape[0] or x.shape[0] < 2 or min(n) < 2:
        raise ValueError("samples must have shape (len(x) >= 2, replicas >= 2) or be len(x) "
                         f"rows of >= 2 replicas each; got rows of lengths {n} for x of "
                         f"shape {x.shape}")
    if np.any(x <= 0):
        raise ValueError(f"x must be positive, got {x!r}")
    mean, var, _ = _row_stats(rows)
    if np.any(mean <= 0):
        raise ValueError(f"the sample means must be positive to take logs, got {mean!r}")
    var_log = var / np.array(n) / mean**2
    lx, ly = np.log(x), np.log(mean)
    if np.all(var_log == 0):  # deterministic rows: the ordinary fit is exact
        target = ly if values is None else np.log(np.asarray(values, dtype=float))
        return float(np.polyfit(lx, target, 1)[0]), 0.0
    if np.any(var_log == 0):
        raise ValueError("samples rows must all vary or all be constant, got constant rows "
                         f"{np.flatnonzero(var_log == 0).tolist()} among varying ones")
    w = 1.0 / var_log
    if values is not None:
        v = np.asarray(values, dtype=float)
        if v.shape != x.shape or np.any(v <= 0):
            raise ValueError(f"values must be positive with shape {x.shape}, got {v!r}")
        ly = np.log(v)
    xb = np.sum(w * lx) / np.sum(w)
    sxx = np.sum(w * (lx - xb) ** 2)
    slope = float(np.sum(w * (lx - xb) * ly) / sxx)
    return slope, float(np.sqrt(1.0 / sxx))


def trajectories(
    problem: Any,
    *,
    rule: str = "fedavg",
    participants: int | None = None,
    lr: float,
    local_steps: int,
    rounds: int,
    replicas: int,
    sigma2: float,
    seed: int,
    x0: np.ndarray,
    record_every: int = 1,
) -> dict[str, np.ndarray]:
    """Mean and standard error per recorded round of the engine's metrics (for figures)."""
    res = _simulate_uniform(problem, rule, participants=participants, lr=lr,
                            local_steps=local_steps, rounds=rounds, replicas=replicas,
                            sigma2=sigma2, seed=seed, x0=x0, record_every=record_every)
    return {"rounds": res.rounds, "dist2": res.dist2.mean, "dist2_se": res.dist2.se,
            "grad_norm2": res.grad_norm2.mean, "grad_norm2_se": res.grad_norm2.se,
            "bits": res.bits.mean}


# ---------------------------------------------------------------------------- intervals
def mean_interval(samples: Rows, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Row means of ``samples`` and two-sided half-widths at level alpha (Bonferroni over the
    rows): :math:`z\,s_j/\sqrt{N_j}` for row :math:`j` of :math:`N_j` replicas.

    ``samples`` is a 2-D array (rows, replicas) or a sequence of 1-D rows of any lengths.

    >>> mean, hw = mean_interval([np.array([1.0, 3.0]), np.array([2.0, 2.0, 5.0, 3.0])], 0.05)
    >>> mean.tolist(), bool(hw[1] < hw[0])
    ([2.0, 3.0], True)
    """
    mean, var, n = _row_stats(_as_rows(samples))
    z = z_quantile(alpha, "two", len(n))
    return mean, z * np.sqrt(var) / np.sqrt(n)


def consistent(samples: Rows, theory: np.ndarray, alpha: float) -> bool:
    """Whether every row mean of ``samples`` (2-D, or ragged rows) lies within its
    :func:`mean_interval` half-width (plus a rounding margin) of ``theory``.

    >>> consistent(np.array([[0.9, 1.1, 1.0]]), np.array([1.0]), 1e-6)
    True
    >>> consistent([np.array([0.9, 1.1]), np.array([1.9, 2.1, 2.0])], np.array([1.0, 2.0]), 1e-6)
    True
    """
    mean, hw = mean_interval(samples, alpha)
    return bool(np.all(np.abs(mean - theory) <= hw + 1e-12 + 1e-9 * np.abs(theory)))

r"""The tuning of :data:`fedtheory.experiments.fedau_setup.LEARNING_RATES`: each method's
(local, global) learning rate by a coordinate search on tuning instances of their own seed
stream (:func:`tune_learning_rates`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fedtheory.experiments.fedau_setup import (
    METHODS,
    PATTERNS,
    PRESETS,
    Instance,
    _quarter_decade,
    digits_split,
    objective_minimum,
)
from fedtheory.experiments.fedau_simulation import (
    _eval_rounds,
    _instances,
    _run_seed,
    simulate_pattern,
)

__all__ = ["CODE_GLOBAL", "GLOBAL_GRID", "LOCAL_GRID", "tune_learning_rates"]


#: The tuning grids: powers of 10^(1/4), as the authors' tuned values (0.0562 = 10^-1.25,
#: 1.78 = 10^0.25) are.
LOCAL_GRID = tuple(_quarter_decade(k) for k in range(-6, 2))
GLOBAL_GRID = tuple(_quarter_decade(k) for k in range(0, 8))
#: The global learning rates of the authors' README, where the tuning starts.
CODE_GLOBAL = {"FedAU (K=inf)": 1.0, "FedAU (K=50)": 1.0,
               "average participating": _quarter_decade(1), "average all": 10.0,
               "known statistics": 1.0}


def _tuning_scores(runs: list[tuple[str, float, float]], insts: list[Instance],
                   f_star: np.ndarray, seed: int, pattern: str, T: int, stage: int
                   ) -> np.ndarray:
    """Mean of f - f* over the last tenth of ``T`` rounds and the instances, per run
    (inf when diverged)."""
    evals, start = _eval_rounds(T, max(1, T // 50))
    run_seed = _run_seed(seed, 4, list(PATTERNS).index(pattern), stage)
    run = simulate_pattern(digits_split(seed), insts, pattern, rounds=T, runs=runs,
                           seed=run_seed,
                           evals=evals)
    tail = run["rounds"] > start
    gap = (run["f"][:, :, tail] - f_star[None, :, None]).mean(axis=(1, 2))
    return np.where(np.isfinite(gap), gap, np.inf)


def tune_learning_rates(seed: int = 0, instances: int = 4, rounds: int | None = None,
                        clients: int | None = None, pattern: str = "Bernoulli",
                        methods: Sequence[str] | None = None,
                        local_grid: Sequence[float] = LOCAL_GRID,
                        global_grid: Sequence[float] = GLOBAL_GRID) -> dict[str, Any]:
    r"""Tune each method's (local, global) learning rate, as the authors tuned theirs per
    method (their README's values), on *tuning* instances distinct from the evaluated ones
    (their own seed stream), under ``pattern``, by the smallest mean of :math:`f - f^\star`
    over the last tenth of ``rounds`` (default: the full preset's horizon), averaged over
    the instances (a diverged run scores :math:`\infty`). A coordinate search: first the
    local rate over ``local_grid`` at the authors' global rate (:data:`CODE_GLOBAL`), then
    the global rate over ``global_grid`` at the chosen local one.

    Returns ``{"best": {method: (gamma, eta_g)}, "local_scores": {method: (L,)},
    "global_scores": {method: (G,)}, "local_grid", "global_grid", "config"}``.
    :data:`LEARNING_RATES` holds its result for the defaults (re-derived by a slow test).
    """
    methods = list(METHODS) if methods is None else list(methods)
    T = PRESETS["full"]["rounds"] if rounds is None else int(rounds)
    N = PRESETS["full"]["clients"] if clients is None else int(clients)
    insts = _instances(seed, 0, instances, N, stream=3)
    data = digits_split(seed)
    f_star = np.array([objective_minimum(i, data) for i in insts])
    runs = [(m, g, CODE_GLOBAL[m]) for m in methods for g in local_grid]
    loc = _tuning_scores(runs, insts, f_star, seed, pattern, T, 0).reshape(len(methods), -1)
    gam = {m: float(local_grid[int(np.argmin(loc[j]))]) for j, m in enumerate(methods)}
    runs = [(m, gam[m], h) for m in methods for h in global_grid]
    glo = _tuning_scores(runs, insts, f_star, seed, pattern, T, 1).reshape(len(methods), -1)
    best = {m: (gam[m], float(global_grid[int(np.argmin(glo[j]))]))
            for j, m in enumerate(methods)}
    return {"best": best, "local_scores": {m: loc[j] for j, m in enumerate(methods)},
            "global_scores": {m: glo[j] for j, m in enumerate(methods)},
            "local_grid": list(local_grid), "global_grid": list(global_grid),
            "config": {"seed": seed, "instances": instances, "rounds": T, "clients": N,
                       "pattern": pattern}}

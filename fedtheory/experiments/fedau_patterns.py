r"""The seed's table (seed 001, 'Experiments'), recomputed in the authors' regime on the digits
data set: methods x participation patterns, multinomial logistic regression.

The set-up follows FedAU's public code (``config.py``, ``main.py``, ``util/util.py``;
https://github.com/IBM/fedau) wherever the machine allows; the claim's set-up card
(:data:`fedtheory.claims.fedau.participation_patterns.CLAIM`) lists every deviation.

* **Data.** scikit-learn's digits (8x8, 10 classes; no CIFAR/SVHN offline), a fixed held-out
  test set of one sixth of the samples (CIFAR-10's 10 000 of 60 000), features standardised
  on the training samples, a bias column. :math:`N` clients; the code's label split
  (``partition``): client :math:`n` draws label proportions :math:`D_n\sim\mathrm{Dir}(0.1)`
  over the 10 labels and receives, of each label :math:`i`, the share
  :math:`D_{ni}/\sum_mD_{mi}` of its samples (cut points rounded), so clients hold about
  equally many samples, of few labels.
* **Participation probabilities** (``data_participation_each_node``): one multiplier
  :math:`\mu\sim\mathrm{Dir}(0.1)` over the labels per instance, and
  :math:`p_n = \max\big(0.02,\ 0.1\cdot 10\,\langle\hat D_n, \mu\rangle\big)`, :math:`\hat D_n`
  the client's realised label distribution: mean about 0.1, about half the clients at the
  floor 0.02, a few near 1: participation correlated with the data.
* **Patterns.** Bernoulli; ``markov-0.05`` and ``cyclic-100``
  (:mod:`fedtheory.participation.fedau_sampler`).
* **Training.** :math:`I = 5` local SGD steps per round, each on a mini-batch of
  :math:`\min(16, s_n)` distinct samples (a client with fewer than 16 samples uses all of
  them): the client's samples in a fresh random order every round, read 16 at a time,
  cyclically (:class:`~fedtheory.engine.MiniBatches` with ``wrap=True``; the code's loader
  reads its shuffled samples 16 at a time and reshuffles when fewer than 16 remain), from
  :math:`x_0 = 0`; the server adds
  :math:`\eta_g\cdot` the aggregate of the updates :math:`\Delta_n = y_{n,I} - x_t`:

  - FedAU (:math:`K=\infty` and :math:`K=50`): :math:`\frac1N\sum_{n\in\mathcal A}\omega_t^n
    \Delta_n`, Algorithm 2's weights (:class:`~fedtheory.algorithms.FedAU`; 1 until
    a client's first interval is recorded, as the code's first participation);
  - average participating: :math:`\frac1{|\mathcal A|}\sum_{n\in\mathcal A}\Delta_n`;
  - average all: :math:`\frac1N\sum_{n\in\mathcal A}\Delta_n`;
  - known participation statistics: :math:`\frac1N\sum_{n\in\mathcal A}\Delta_n/p_n`
    (the nominal :math:`p_n`, also under the cyclic pattern, as the code).

  Each method has its own local and global learning rate (:data:`LEARNING_RATES`, tuned as
  :func:`tune_learning_rates` says).
* **Metrics** (the code's ``collect_stat_eval``): training accuracy (pooled training set),
  test accuracy, and the true objective gap :math:`f(x) - f^\star`,
  :math:`f = \frac1N\sum_nF_n + \frac\lambda2\|x\|^2` (:math:`\lambda = 10^{-3}`),
  :math:`f^\star` by L-BFGS; each averaged over the evaluations of the last tenth of the
  rounds (every ``eval_every`` rounds).

Every seed is one *instance*: its own split, multiplier, participation draws and mini-batches
(the code draws them all from the run's seed). Within an instance every method of a pattern
sees the same participation record and the same mini-batches (common random numbers), so the
comparisons are paired over the instances. All methods on a chunk of instances are one call
of the engine (:func:`fedtheory.simulate.simulate`): its replicas are (method, instance)
pairs, each with the instance's problem and process and the method's rule, weights and
learning rates (:class:`~fedtheory.problems.ProblemStack`,
:class:`~fedtheory.participation.ProcessStack`, :class:`~fedtheory.algorithms.RuleStack`),
instance :math:`k` reading replica :math:`k`'s streams of the pattern's seed under every
method (``Run(streams=...)``), which is what shares the draws; a task is one pattern on a
chunk of instances.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fedtheory.experiments.fedau_setup import (
    AUTHORS,
    LAM,
    LEARNING_RATES,
    METHODS,
    PATTERNS,
    PRESETS,
    TEST_FRACTION,
    Instance,
    authors_partition,
    authors_probabilities,
    digits_split,
    instance_problem,
    make_instance,
    make_process,
    method_rule,
    objective_minimum,
)
from fedtheory.experiments.fedau_simulation import (
    _eval_rounds,
    _instances,
    _run_seed,
    _setup,
    simulate_pattern,
)
from fedtheory.experiments.fedau_tuning import (
    CODE_GLOBAL,
    GLOBAL_GRID,
    LOCAL_GRID,
    tune_learning_rates,
)

__all__ = [
    "AUTHORS",
    "CODE_GLOBAL",
    "GLOBAL_GRID",
    "LEARNING_RATES",
    "LOCAL_GRID",
    "METHODS",
    "PATTERNS",
    "PRESETS",
    "Instance",
    "authors_partition",
    "authors_probabilities",
    "digits_split",
    "instance_problem",
    "make_instance",
    "make_process",
    "method_rule",
    "objective_minimum",
    "optimum_run",
    "pattern_run",
    "patterns_calls",
    "patterns_combine",
    "patterns_table",
    "simulate_pattern",
    "tune_learning_rates",
]


def pattern_run(*, preset: str, seed: int, pattern: str, first: int, count: int
                ) -> dict[str, Any]:
    r"""One pattern, every method at its :data:`LEARNING_RATES`, instances
    ``first .. first + count - 1`` (a task): per method and instance the means over the
    evaluations in the last tenth of the rounds of :math:`f`, the training and the test
    accuracy, and the mean curve of :math:`f`."""
    cfg = _setup(preset, seed)
    insts = _instances(seed, first, count, cfg["clients"])
    k = list(PATTERNS).index(pattern)
    run_seed = _run_seed(seed, 2, k)
    evals, start = _eval_rounds(cfg["rounds"], cfg["eval_every"])
    runs = [(m, *LEARNING_RATES[m]) for m in METHODS]
    run = simulate_pattern(digits_split(seed), insts, pattern, rounds=cfg["rounds"], runs=runs,
                           seed=run_seed, first=first, evals=evals)
    tail = run["rounds"] > start
    return {"f": run["f"][:, :, tail].mean(axis=2),
            "train_acc": run["train_acc"][:, :, tail].mean(axis=2),
            "test_acc": run["test_acc"][:, :, tail].mean(axis=2),
            "curve_f": run["f"], "rounds": run["rounds"],
            "participation_rate": run["participation_rate"]}


def optimum_run(*, seed: int, first: int, count: int, clients: int) -> dict[str, np.ndarray]:
    r""":math:`f^\star` and :math:`p` of instances ``first .. first + count - 1`` (a task)."""
    insts = _instances(seed, first, count, clients)
    return {"f_star": np.array([objective_minimum(i, digits_split(seed)) for i in insts]),
            "p": np.stack([i.p for i in insts])}


#: One run of :func:`patterns_table`: ``(name, function, keywords, cost in seconds)``.
Call = tuple[str, Callable[..., Any], dict[str, Any], float]

#: Rough seconds per (instance x round) of one pattern with all methods (one core): the
#: calls' cost estimates (scheduling only).
_SECONDS_PER_UNIT = 2e-3


def patterns_calls(preset: str = "quick", seed: int = 0) -> list[Call]:
    """The runs of :func:`patterns_table`: :func:`optimum_run` per chunk of ``per_task``
    instances, then :func:`pattern_run` per (pattern, chunk), as ``(name, function,
    keywords, cost)``; :func:`patterns_combine` makes the table of their results."""
    cfg = _setup(preset, seed)
    calls: list[Call] = []
    for a, c in _chunks(cfg):
        calls.append((f"optimum-{a}", optimum_run,
                      {"seed": seed, "first": a, "count": c, "clients": cfg["clients"]},
                      0.3 * c))
    for pat in PATTERNS:
        for a, c in _chunks(cfg):
            calls.append((f"{pat}-{a}", pattern_run, {"preset": preset, "seed": seed,
                                                       "pattern": pat, "first": a, "count": c},
                          c * cfg["rounds"] * _SECONDS_PER_UNIT))
    return calls


def _chunks(cfg: dict[str, Any]) -> list[tuple[int, int]]:
    return [(a, min(cfg["per_task"], cfg["instances"] - a))
            for a in range(0, cfg["instances"], cfg["per_task"])]


def patterns_table(preset: str = "quick", seed: int = 0,
                   run_many: Callable[[list[Call]], list[Any]] | None = None
                   ) -> dict[str, Any]:
    r"""Every method under every pattern on the preset's instances: the runs of
    :func:`patterns_calls` (:func:`pattern_run` per (pattern, chunk of ``per_task``
    instances) and :func:`optimum_run` per chunk), combined by :func:`patterns_combine`.
    ``run_many`` maps the ``(name, function, keywords, cost)`` calls to results (default:
    here, one after the other).

    Returns ``{"f_gap" | "train_acc" | "test_acc": {pattern: {method: (S,)}}, "p": (S, N),
    "f_star": (S,), "curves": {pattern: {"rounds": (E,), "f_gap": {method: (E,)}}},
    "participation_rate": {pattern: (S,)}, "config": {...}}``, :math:`f - f^\star` and
    the accuracies per instance as in :func:`pattern_run`.
    """
    calls = patterns_calls(preset, seed)
    res = (run_many or (lambda cs: [fn(**kw) for _, fn, kw, _ in cs]))(calls)
    return patterns_combine(preset, seed, res)


def patterns_combine(preset: str, seed: int, res: list[Any]) -> dict[str, Any]:
    """:func:`patterns_table` from the results of :func:`patterns_calls` (in its order)."""
    cfg = _setup(preset, seed)
    chunks = _chunks(cfg)
    if len(res) != len(chunks) * (1 + len(PATTERNS)):
        raise ValueError(f"res must hold one result per call of patterns_calls "
                         f"({len(chunks) * (1 + len(PATTERNS))}), got {len(res)}")
    opt, runs = res[:len(chunks)], res[len(chunks):]
    f_star = np.concatenate([o["f_star"] for o in opt])
    out: dict[str, Any] = {m: {pat: {} for pat in PATTERNS}
                           for m in ("f_gap", "train_acc", "test_acc")}
    out.update(curves={}, participation_rate={}, f_star=f_star,
               p=np.concatenate([o["p"] for o in opt]))
    for i, pat in enumerate(PATTERNS):
        mine = runs[i * len(chunks):(i + 1) * len(chunks)]
        f = np.concatenate([r["f"] for r in mine], axis=1)  # (M, S)
        for key, val in (("f_gap", f - f_star[None]),
                         ("train_acc", np.concatenate([r["train_acc"] for r in mine], axis=1)),
                         ("test_acc", np.concatenate([r["test_acc"] for r in mine], axis=1))):
            for j, label in enumerate(METHODS):
                out[key][pat][label] = val[j]
        curve = np.concatenate([r["curve_f"] for r in mine], axis=1) - f_star[None, :, None]
        out["curves"][pat] = {"rounds": mine[0]["rounds"],
                              "f_gap": {label: curve[j].mean(axis=0)
                                        for j, label in enumerate(METHODS)}}
        out["participation_rate"][pat] = np.concatenate(
            [r["participation_rate"] for r in mine])
    out["config"] = {**cfg, "seed": seed, "lam": LAM, "test_fraction": TEST_FRACTION,
                     "learning_rates": {k: list(v) for k, v in LEARNING_RATES.items()},
                     **AUTHORS}
    return out

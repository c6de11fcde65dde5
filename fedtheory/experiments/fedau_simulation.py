r"""The runs of :mod:`fedtheory.experiments.fedau_patterns`: several methods under one
participation pattern on several instances in one engine call (:func:`simulate_pattern`), the
metrics of their iterates, and the seeds, instances and evaluated rounds of a stream of runs."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from fedtheory.algorithms import RuleStack
from fedtheory.experiments.fedau_setup import (
    AUTHORS,
    LAM,
    METHODS,
    PATTERNS,
    PRESETS,
    Instance,
    _loss_terms,
    _sample_weights,
    digits_split,
    instance_problem,
    make_instance,
    make_process,
    method_rule,
)
from fedtheory.participation import ProcessStack
from fedtheory.problems.stack import ProblemStack
from fedtheory.simulate import (
    DivergenceWarning,
    Execution,
    LocalWork,
    Metrics,
    MiniBatches,
    RoundRecord,
    Run,
    Server,
    simulate,
)
from fedtheory.validation import nonnegative_integer, positive_integer

__all__ = ["simulate_pattern"]


def _metrics(iterates: np.ndarray, instances: Sequence[Instance],
             data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    r"""The objective :math:`f`, training and test accuracy of iterates ``(M, S, E, d)``
    (instance ``s`` on axis 1), each ``(M, S, E)``, in float64, one matrix product per data
    set; a non-finite :math:`f` is ``inf``."""
    M, S, E, d = iterates.shape
    X, y = data["X"], data["y"]
    C, n_feat = 10, X.shape[1]
    x = iterates.transpose(0, 2, 1, 3)  # (M, E, S, d)
    W = x.reshape(M * E * S, C, n_feat)
    sw = np.stack([_sample_weights(i, y.size) for i in instances])  # (S, n_train)
    with np.errstate(all="ignore"):  # a diverged run is scored, not warned about
        loss, corr = _loss_terms(W, X, y)
        f = (np.einsum("mesj,sj->mes", loss.reshape(M, E, S, -1), sw)
             + LAM / 2 * np.einsum("mesd,mesd->mes", x, x))
        _, tc = _loss_terms(W, data["X_test"], data["y_test"])
    out = {"f": np.where(np.isfinite(f), f, np.inf),
           "train_acc": corr.reshape(M, E, S, -1).mean(axis=3),
           "test_acc": tc.reshape(M, E, S, -1).mean(axis=3)}
    return {k: v.transpose(0, 2, 1) for k, v in out.items()}


def simulate_pattern(data: dict[str, np.ndarray], instances: Sequence[Instance], pattern: str,
                     *, rounds: int, runs: Sequence[tuple[str, float, float]],
                     seed: int, evals: Sequence[int], first: int = 0,
                     local_steps: int = AUTHORS["local_steps"],
                     batch: int = AUTHORS["minibatch"], dtype: Any = np.float32
                     ) -> dict[str, Any]:
    r"""Several runs (``runs``: method label of :data:`METHODS`, local learning rate
    :math:`\gamma`, global learning rate :math:`\eta_g`) under one pattern on the given
    instances, all in one call of :func:`fedtheory.simulate.simulate` whose replica
    :math:`jS + s` is run :math:`j` on instance :math:`s` (a
    :class:`~fedtheory.problems.ProblemStack` of the instances' problems, a
    :class:`~fedtheory.participation.ProcessStack` of their processes, a
    :class:`~fedtheory.algorithms.RuleStack` of the runs' rules, per-replica learning rates):
    ``local_steps`` mini-batch SGD steps from :math:`x_t`, each on
    :math:`\min(B, s_n)` distinct samples (``MiniBatches(batch, wrap=True)``: a fresh
    permutation of the client's samples per round, read cyclically), the server adding
    :math:`\eta_g` times the rule's aggregate of :math:`y_{n,I} - x_t`.

    Instance ``s`` reads replica ``first + s``'s streams of ``seed`` in every run
    (``Run(streams=...)``), so all runs of an instance see the same participation record and
    the same mini-batches (common random numbers), whatever the chunking of the instances.

    Local training and the iterate are in ``dtype`` (float32 by default: about twice as
    fast), the metrics in float64. Returns ``{"rounds": (E,), "f": (M, S, E), "train_acc":
    (M, S, E), "test_acc": (M, S, E), "participation_rate": (S,)}`` at the rounds ``evals``
    (1-based, after that many rounds), ``f`` the objective (not minus :math:`f^\star`); a
    diverged run has ``f = inf``.
    """
    S = len(instances)
    if S < 1:
        raise ValueError("instances must hold at least one instance")
    N = len(instances[0].parts)
    if any(len(i.parts) != N for i in instances):
        raise ValueError("instances must have the same number of clients")
    for name, v in (("rounds", rounds), ("local_steps", local_steps), ("batch", batch)):
        positive_integer(name, v)
    nonnegative_integer("first", first)
    evals = sorted(set(int(e) for e in evals))
    if not evals or evals[0] < 1 or evals[-1] > rounds:
        raise ValueError(f"evals must be rounds in 1..{rounds}, got {evals!r}")
    runs = [(str(m), float(g), float(h)) for m, g, h in runs]
    unknown = sorted({m for m, _, _ in runs} - set(METHODS))
    if unknown or not runs:
        raise ValueError(f"runs must name methods of {list(METHODS)}, got {unknown or runs}")
    if any(not (g > 0 and h > 0 and np.isfinite(g * h)) for _, g, h in runs):
        raise ValueError(f"learning rates must be positive and finite, got {runs!r}")
    if pattern not in PATTERNS:
        raise ValueError(f"pattern must be one of {list(PATTERNS)}, got {pattern!r}")
    M, E = len(runs), len(evals)
    d = 10 * data["X"].shape[1]
    iterates = np.empty((M * S, E, d))  # x_t at the rounds evals, replica j S + s
    joined = np.zeros(S)  # client-rounds per instance (the same record in every run)
    slot = {t: e for e, t in enumerate(evals)}
    # one engine run: replica j S + s is run j on instance s (its problem, process and
    # weights; each run its own rule object and rates); instance s reads the streams of
    # replica first + s in every run: common random numbers
    problems = [instance_problem(inst, data) for inst in instances]
    processes = [make_process(pattern, inst.p) for inst in instances]
    p = np.stack([inst.p for inst in instances])
    rules = [method_rule(method, p) for method, _, _ in runs]

    def keep(rec: RoundRecord) -> None:
        rows = slice(rec.start, rec.start + rec.x.shape[0])
        e = slot.get(rec.t - 1)  # rec.x is x_{t-1}, the iterate after round t - 1
        if e is not None:
            iterates[rows, e] = rec.x
        first_run = min(rec.start + rec.x.shape[0], S) - rec.start  # rows of run 0 here
        if first_run > 0:
            joined[rec.start:rec.start + first_run] += rec.mask[:first_run].sum(axis=1)

    with warnings.catch_warnings():  # a diverging run is scored, not warned about
        warnings.simplefilter("ignore", DivergenceWarning)
        res = simulate(ProblemStack(problems * M),
                       RuleStack([rule for rule in rules for _ in range(S)]),
                       ProcessStack(processes * M),
                       Run(rounds=rounds, replicas=M * S, seed=seed, dtype=dtype,
                           streams=np.tile(int(first) + np.arange(S), M)),
                       LocalWork(lr=np.repeat([g for _, g, _ in runs], S), steps=local_steps,
                                 batches=MiniBatches(batch, wrap=True)),
                       server=Server(global_lr=np.repeat([h for _, _, h in runs], S)),
                       metrics=Metrics(rounds=(rounds,), observe=keep,
                                       skip=("f_gap", "grad_norm2", "dist2")),
                       execution=Execution(workers=1))
    iterates[:, slot[rounds]] = res.x  # the last round has no next one
    out = _metrics(iterates.reshape(M, S, E, d), instances, data)
    return {"rounds": np.array(evals), **out, "participation_rate": joined / (rounds * N)}


def _run_seed(*key: int) -> int:
    """The engine seed of a stream of runs: 63 bits of ``SeedSequence(key)``."""
    return int(np.random.SeedSequence([int(k) for k in key]).generate_state(2, np.uint64)[0]
               >> np.uint64(1))


def _setup(preset: str, seed: int) -> dict[str, Any]:
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {preset!r}")
    nonnegative_integer("seed", seed)
    return PRESETS[preset]


def _instances(seed: int, first: int, count: int, clients: int, stream: int = 1
               ) -> list[Instance]:
    """Instances ``first .. first + count - 1`` of a seed: evaluation (``stream`` 1) or
    tuning (``stream`` 3) instances, each from its own seed sequence (the same whatever the
    chunking)."""
    data = digits_split(seed)
    return [make_instance(data["y"], clients, np.random.SeedSequence([int(seed), stream, k]))
            for k in range(first, first + count)]


def _eval_rounds(rounds: int, eval_every: int) -> tuple[list[int], int]:
    """The rounds evaluated: every ``eval_every`` in the last tenth (the metric's window),
    and about 20 more for the curves; returns them and the window's first round."""
    start = rounds - max(1, rounds // 10)
    tail = list(range(rounds, start, -eval_every))
    curve = list(range(max(1, rounds // 20), rounds + 1, max(1, rounds // 20)))
    return sorted(set(tail) | set(curve)), start

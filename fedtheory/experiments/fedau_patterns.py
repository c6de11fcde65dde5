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

import functools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from fedtheory.algorithms import FedAU, FedAvgAll, FedAvgWeighted, Rule, RuleStack, get_rule
from fedtheory.participation import BernoulliParticipation, ProcessStack
from fedtheory.participation.fedau_sampler import JoinRateMarkov, OffsetCyclic
from fedtheory.problems.datasets import FederatedData, load_dataset
from fedtheory.problems.logistic import LogisticProblem
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

__all__ = [
    "AUTHORS",
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

#: The authors' set-up (their code's defaults and the paper's runs) that this run keeps.
AUTHORS: dict[str, Any] = {
    "data_dirichlet_alpha": 0.1,
    "participation_dirichlet_alpha": 0.1,
    "participation_prob_mean": 0.1,
    "participation_prob_min": 0.02,
    "local_steps": 5,
    "minibatch": 16,
    "K": 50,
    "markov_to_active": 0.05,
    "cycle": 100,
}

#: method label -> (aggregation, parameters).
METHODS: dict[str, tuple[str, dict[str, Any]]] = {
    "FedAU (K=inf)": ("fedau", {"K": math.inf}),
    "FedAU (K=50)": ("fedau", {"K": AUTHORS["K"]}),
    "average participating": ("participating", {}),
    "average all": ("all", {}),
    "known statistics": ("known", {}),
}

#: pattern label -> (process, parameters besides p).
PATTERNS: dict[str, tuple[str, dict[str, Any]]] = {
    "Bernoulli": ("bernoulli", {}),
    "Markovian": ("markov_join", {"to_active": AUTHORS["markov_to_active"]}),
    "cyclic": ("cyclic_offset", {"period": AUTHORS["cycle"]}),
}


def _quarter_decade(k: int) -> float:
    """:math:`10^{k/4}`, the authors' learning-rate grid (0.0562 = 10^-1.25, 1.78 =
    10^0.25)."""
    return float(10 ** (k / 4))


#: Per method (local learning rate gamma, global learning rate eta_g), tuned by
#: :func:`tune_learning_rates` (its defaults: 4 tuning instances, Bernoulli, 1500 rounds;
#: about 130 CPU-s). The authors' README, for their CNNs: FedAU (0.1, 1), average participating
#: (0.0562, 1.78), average all (0.1, 10), known statistics (0.0562, 1).
LEARNING_RATES: dict[str, tuple[float, float]] = {
    "FedAU (K=inf)": (_quarter_decade(-4), 1.0),
    "FedAU (K=50)": (_quarter_decade(-4), _quarter_decade(1)),
    "average participating": (_quarter_decade(-4), _quarter_decade(1)),
    "average all": (_quarter_decade(-3), _quarter_decade(4)),
    "known statistics": (_quarter_decade(-4), 1.0),
}

#: Sizes per preset: instances (paired seeds), rounds, clients, evaluation stride, and the
#: instances per task.
PRESETS: dict[str, dict[str, int]] = {
    "quick": {"instances": 10, "rounds": 400, "clients": 50, "eval_every": 5, "per_task": 10},
    "full": {"instances": 32, "rounds": 1500, "clients": 50, "eval_every": 10, "per_task": 8},
}

#: The regulariser of the logistic loss (f has a unique minimiser f*; the authors' CNNs have
#: none).
LAM = 1e-3
#: Fraction of the digits held out as the test set (CIFAR-10: 10 000 of 60 000).
TEST_FRACTION = 1 / 6


# ------------------------------------------------------------------------------ data
# A pure memo (one process): the value is a function of the arguments only, never of what
# ran before, and is not modified by its readers (issue 18: the one cache keeps the rest).
@functools.lru_cache(maxsize=2)
def digits_split(seed: int = 0) -> dict[str, np.ndarray]:
    """The digits data: a fixed random test set (:data:`TEST_FRACTION`), features standardised
    on the training samples plus a bias column. ``{"X", "y", "X_test", "y_test"}``."""

    X, y = load_dataset("digits")
    gen = np.random.default_rng(np.random.SeedSequence([int(seed), 0xD161]))
    perm = gen.permutation(y.size)
    n_test = int(round(TEST_FRACTION * y.size))
    te, tr = np.sort(perm[:n_test]), np.sort(perm[n_test:])
    mean, std = X[tr].mean(axis=0), X[tr].std(axis=0)
    std = np.where(std > 0, std, 1.0)

    def prep(A: np.ndarray) -> np.ndarray:
        return np.hstack([(A - mean) / std, np.ones((A.shape[0], 1))])

    out = {"X": prep(X[tr]), "y": y[tr], "X_test": prep(X[te]), "y_test": y[te]}
    for a in out.values():
        a.flags.writeable = False
    return out


def authors_partition(labels: np.ndarray, n_clients: int, alpha: float,
                      rng: np.random.Generator) -> tuple[list[np.ndarray], np.ndarray]:
    r"""The authors' label split (``util.partition``): label proportions
    :math:`D_n\sim\mathrm{Dir}(\alpha\mathbf 1_C)` per client; of label :math:`i`'s samples
    (in random order) client :math:`n` gets those between the rounded cut points
    :math:`s_i\sum_{m\le n}D_{mi}/\sum_mD_{mi}`. Returns the clients' index arrays and their
    realised label distributions ``(n, C)``; raises ``ValueError`` when a client gets no
    sample (the code would fail on it too: redraw).

    >>> parts, dist = authors_partition(np.repeat(np.arange(3), 10), 4, 1.0,
    ...                                 np.random.default_rng(0))
    >>> sorted(np.concatenate(parts).tolist()) == list(range(30)), dist.sum(axis=1).tolist()
    (True, [1.0, 1.0, 1.0, 1.0])
    """
    y = np.asarray(labels)
    if not (isinstance(n_clients, (int, np.integer)) and n_clients >= 1):
        raise ValueError(f"n_clients must be a positive integer, got {n_clients!r}")
    if not (np.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be a positive number, got {alpha!r}")
    C = int(y.max()) + 1
    D = rng.dirichlet(np.full(C, float(alpha)), size=n_clients)  # (n, C)
    cum = np.cumsum(D, axis=0) / D.sum(axis=0)
    parts: list[list[np.ndarray]] = [[] for _ in range(n_clients)]
    for i in range(C):
        idx = rng.permutation(np.flatnonzero(y == i))
        ends = np.rint(idx.size * cum[:, i]).astype(int)
        starts = np.concatenate([[0], ends[:-1]])
        for n in range(n_clients):
            parts[n].append(idx[starts[n]:ends[n]])
    out = [np.sort(np.concatenate(p)) for p in parts]
    sizes = np.array([o.size for o in out])
    if sizes.min() < 1:
        raise ValueError(f"a client received no sample (sizes {sizes.tolist()})")
    dist = np.stack([np.bincount(y[o], minlength=C) / o.size for o in out])
    return out, dist


def authors_probabilities(label_dist: np.ndarray, rng: np.random.Generator,
                          alpha: float = AUTHORS["participation_dirichlet_alpha"],
                          mean: float = AUTHORS["participation_prob_mean"],
                          floor: float = AUTHORS["participation_prob_min"]
                          ) -> tuple[np.ndarray, np.ndarray]:
    r"""The code's participation probabilities (``data_participation_each_node``): a label
    multiplier :math:`\mu\sim\mathrm{Dir}(\alpha\mathbf 1_C)` and
    :math:`p_n = \max(\text{floor}, \text{mean}\cdot C\,\langle\hat D_n,\mu\rangle)`
    (capped at 1, which the code's 10-label runs never exceed). Returns ``(p, mu)``.

    >>> p, mu = authors_probabilities(np.eye(3), np.random.default_rng(1))
    >>> bool(np.all(p >= 0.02)), bool(np.isclose(p, np.maximum(0.02, 0.3 * mu)).all())
    (True, True)
    """
    D = np.asarray(label_dist, dtype=float)
    C = D.shape[1]
    mu = rng.dirichlet(np.full(C, float(alpha)))
    p = np.minimum(1.0, np.maximum(float(floor), float(mean) * C * (D @ mu)))
    return p, mu


class Instance(dict):
    """One seed's federation: ``parts`` (client index arrays), ``p``, ``label_dist``,
    ``multiplier``, ``sizes``; a dict with attribute access for the arrays."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def make_instance(y: np.ndarray, n_clients: int, seed_seq: np.random.SeedSequence,
                  max_tries: int = 100) -> Instance:
    """The authors' split and probabilities for one seed (redrawn while a client is empty)."""
    gen = np.random.default_rng(seed_seq)
    for _ in range(max_tries):
        try:
            parts, dist = authors_partition(y, n_clients, AUTHORS["data_dirichlet_alpha"], gen)
        except ValueError:
            continue
        p, mu = authors_probabilities(dist, gen)
        return Instance(parts=parts, p=p, label_dist=dist, multiplier=mu,
                        sizes=np.array([q.size for q in parts]))
    raise ValueError(f"no split with every client non-empty in {max_tries} draws "
                     f"(n_clients={n_clients})")


def make_process(pattern: str, p: np.ndarray) -> Any:
    """The participation process of a pattern label (:data:`PATTERNS`) over clients ``p``."""

    if pattern not in PATTERNS:
        raise ValueError(f"pattern must be one of {list(PATTERNS)}, got {pattern!r}")
    name, kw = PATTERNS[pattern]
    cls = {"bernoulli": BernoulliParticipation, "markov_join": JoinRateMarkov,
           "cyclic_offset": OffsetCyclic}[name]
    return cls(np.asarray(p, dtype=float), **kw)


# ------------------------------------------------------------------------------ model
def _loss_terms(W: np.ndarray, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample multinomial logistic loss and correctness of models ``W (M, C, p)`` on
    ``(X, y)``: ``(M, N)`` each."""
    M, C, p = W.shape
    Z = (X @ W.reshape(M * C, p).T).reshape(X.shape[0], M, C)  # one GEMM
    zmax = Z.max(axis=2, keepdims=True)
    lse = np.log(np.exp(Z - zmax).sum(axis=2)) + zmax[..., 0]
    zy = np.take_along_axis(Z, y[:, None, None], axis=2)[..., 0]
    correct = Z.argmax(axis=2) == y[:, None]
    return (lse - zy).T, correct.T


def _sample_weights(inst: Instance, n_train: int) -> np.ndarray:
    """``(n_train,)``: sample j's weight in f = (1/N) sum_n F_n, i.e. 1/(N s_n(j))."""
    w = np.zeros(n_train)
    N = len(inst.parts)
    for q in inst.parts:
        w[q] = 1.0 / (N * q.size)
    return w


def objective_minimum(inst: Instance, data: dict[str, np.ndarray]) -> float:
    r""":math:`f^\star = \min_x \frac1N\sum_nF_n(x) + \frac\lambda2\|x\|^2` by L-BFGS
    (projected gradient below :math:`10^{-7}`; the gradient norm is checked below
    :math:`10^{-6}`, so by strong convexity the error is below :math:`10^{-12}/(2\lambda)`)."""
    from scipy.optimize import minimize
    from scipy.special import log_softmax, softmax

    X, y = data["X"], data["y"]
    w = _sample_weights(inst, y.size)
    C, p = 10, X.shape[1]
    Y = np.eye(C)[y]

    def fg(v: np.ndarray) -> tuple[float, np.ndarray]:
        V = v.reshape(C, p)
        Z = X @ V.T
        f = float(-(w * (log_softmax(Z, axis=1) * Y).sum(axis=1)).sum()) + LAM / 2 * v @ v
        G = ((softmax(Z, axis=1) - Y) * w[:, None]).T @ X + LAM * V
        return f, G.ravel()

    res = minimize(fg, np.zeros(C * p), jac=True, method="L-BFGS-B",
                   options={"maxiter": 20000, "gtol": 1e-7, "ftol": 0.0})
    g = np.linalg.norm(fg(res.x)[1])
    if not g < 1e-6:
        raise RuntimeError(f"L-BFGS did not reach the optimum of f (gradient norm {g:.3g})")
    return float(res.fun)


# ------------------------------------------------------------------------------ runs
def instance_problem(inst: Instance, data: dict[str, np.ndarray]) -> LogisticProblem:
    r"""The instance as an engine problem: multinomial logistic regression on the clients'
    samples with :math:`f = \frac1N\sum_nF_n + \frac\lambda2\|x\|^2` (uniform weights,
    :data:`LAM`), the test set as its validation set.

    Its optimum is *not* solved (``tol=inf``: ``x_star`` is 0, ``f_star`` is
    :math:`f(0)`; Newton's method costs seconds per instance here): the runs record
    :math:`f` itself and skip the metrics that use :math:`x^\star`, and :math:`f^\star` is
    :func:`objective_minimum`'s."""
    X, y = data["X"], data["y"]
    fd = FederatedData(X_clients=tuple(X[q] for q in inst.parts),
                       y_clients=tuple(y[q] for q in inst.parts),
                       X_val=data["X_test"], y_val=data["y_test"], n_classes=10,
                       name="digits", params={"split": "authors"})
    return LogisticProblem(fd, lam=LAM, weights="uniform", multinomial=True,
                           tol=math.inf)


def method_rule(method: str, p: np.ndarray) -> Rule:
    r"""The engine rule of a method label (:data:`METHODS`) for nominal probabilities ``p``
    (``(N,)``, or ``(S, N)``: one row per instance, replica of the run):
    FedAU (:class:`~fedtheory.algorithms.FedAU`, cutoff :math:`K`), average participating
    (``fedavg``), average all (``fedavg_all``) and known statistics
    (``fedavg_weighted`` with :math:`\omega_n = 1/p_n`, the *nominal* :math:`p_n`, also under
    the cyclic pattern whose stationary probabilities differ, as the authors' code)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}, got {method!r}")
    kind, params = METHODS[method]
    if kind == "fedau":
        return FedAU(K=params["K"])
    if kind == "participating":
        return get_rule("fedavg")
    if kind == "all":
        return FedAvgAll()
    return FedAvgWeighted(omega=1.0 / np.asarray(p, dtype=float))


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
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if isinstance(first, bool) or not isinstance(first, (int, np.integer)) or first < 0:
        raise ValueError(f"first must be a non-negative integer, got {first!r}")
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
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
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

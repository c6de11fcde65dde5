r"""The set-up of :mod:`fedtheory.experiments.fedau_patterns` (the seed's FedAU table): the
authors' constants, the digits data and its split over clients, the participation probabilities
and patterns, each instance's problem and each method's aggregation rule."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from fedtheory.algorithms import FedAU, FedAvgAll, FedAvgWeighted, Rule, get_rule
from fedtheory.participation import BernoulliParticipation
from fedtheory.participation.fedau_sampler import JoinRateMarkov, OffsetCyclic
from fedtheory.problems.datasets import FederatedData, load_dataset
from fedtheory.problems.logistic import LogisticProblem
from fedtheory.validation import positive_integer

__all__ = [
    "AUTHORS",
    "LAM",
    "LEARNING_RATES",
    "METHODS",
    "PATTERNS",
    "PRESETS",
    "TEST_FRACTION",
    "Instance",
    "authors_partition",
    "authors_probabilities",
    "digits_split",
    "instance_problem",
    "make_instance",
    "make_process",
    "method_rule",
    "objective_minimum",
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
    positive_integer("n_clients", n_clients)
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

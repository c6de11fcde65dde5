r"""The two experiments seed 003 (the lecture) shows, run on an offline stand-in.

The lecture shows two tables of other papers, without their set-ups:

* line 153, "Table 2. Ablation results for varying degrees of data heterogeneity" [M. Mendieta
  et al., CVPR 2022]: the accuracy of FedAvg, FedProx and MOON for Dirichlet label splits
  :math:`\alpha \in \{0.1, 0.5, 2.5\}` and a homogeneous split, under "Data heterogeneity
  :math:`\zeta^2` can significantly influences the FedAvg performance" (line 150);
* lines 313-322, "Scaffold: simulation": the rounds SGD, SCAFFOLD and FedAvg (1 and 5 local
  epochs) need at 0 %, 10 % and 100 % data similarity, with their speedups over SGD
  ("less rounds with drift correction" / "no drift correction needed"), the numbers of
  Table 3 of Karimireddy et al. (2020), the lecture's reference [SCAFFOLD].

Here both run on the engine (:func:`fedtheory.simulate.simulate`), on scikit-learn's digits
(:func:`fedtheory.problems.clustered.digits_images`: 1498 training images of 8x8 pixels in
:math:`[-1, 1]` with a bias column, a fixed stratified test set of 299), multinomial logistic
regression (:class:`~fedtheory.problems.LogisticProblem`, ridge :data:`LAM`, from
:math:`x = 0`), 20 clients, local mini-batch SGD in float32 (:class:`~fedtheory.engine.
MiniBatches`), the test accuracy of every round's iterate read by an ``observe`` hook. Every
seed is one instance with its own split (a :class:`~fedtheory.problems.ProblemStack`, replica
:math:`r` on seed :math:`r`'s split); at one setting every method runs on the same splits, the
same participation draws and the same mini-batch orders (one engine seed: common random
numbers), so comparisons are paired over the seeds.

* :func:`ablation_run`: FedAvg at one heterogeneity level (Dirichlet :math:`\alpha` or
  homogeneous), all clients every round (:data:`ABLATION`);
* :func:`table_run`: one method of the SCAFFOLD table at one similarity (:data:`TABLE`:
  20 % of the clients per round, an epoch of 5 local steps on mini-batches of a fifth of a
  client's data, global step 1 and per-method local steps from :data:`TABLE_LR`, tuned by
  :func:`tune_table_lr` on seeds the claim does not evaluate);
* :func:`similarity_split` (the SCAFFOLD paper's "s % similarity": s % of the data dealt
  i.i.d., the rest sorted by label), :func:`heterogeneity_split` (Dirichlet or homogeneous);
* :func:`centralised_accuracy`: the test accuracy of the pooled (centralised) optimum, the
  ceiling every method's accuracy is compared with (headroom).

:func:`ablation_pieces` / :func:`table_pieces` cut the runs into tasks and
:func:`ablation_combine` / :func:`table_combine` join them (the claims' datasets).
"""

from __future__ import annotations

import time
from functools import lru_cache
from typing import Any

import numpy as np

from fedtheory.engine import Execution, LocalWork, Metrics, MiniBatches, RoundRecord, Run
from fedtheory.experiments.fdms_paper import mean_accuracy, rounds_to
from fedtheory.participation import UniformParticipation
from fedtheory.problems.clustered import digits_images
from fedtheory.problems.datasets import FederatedData, dirichlet_label_split
from fedtheory.problems.logistic import LogisticProblem
from fedtheory.problems.stack import ProblemStack
from fedtheory.simulate import simulate

__all__ = ["ABLATION", "ALPHAS", "CLIENTS", "LAM", "METHODS", "SIMILARITIES", "TABLE",
           "TABLE_LR", "ablation_combine", "ablation_pieces", "ablation_run",
           "centralised_accuracy", "heterogeneity_split", "mean_accuracy", "rounds_to",
           "similarity_split", "table_combine", "table_pieces", "table_run", "tune_table_lr"]

#: Clients of both experiments (digits' 1498 training images: about 75 each).
CLIENTS = 20
#: Ridge of the logistic regression (makes the centralised optimum unique).
LAM = 1e-4
#: The ablation's heterogeneity levels (the lecture's Table 2 columns); None: homogeneous.
ALPHAS: tuple[float | None, ...] = (0.1, 0.5, 2.5, None)
#: The SCAFFOLD table's similarities (fraction of the data dealt i.i.d.).
SIMILARITIES = (0.0, 0.1, 1.0)
#: The SCAFFOLD table's rows: (method, rule, local epochs).
METHODS = (("SGD", "fedavg", 1), ("SCAFFOLD", "scaffold", 1), ("SCAFFOLD", "scaffold", 5),
           ("FedAvg", "fedavg", 1), ("FedAvg", "fedavg", 5))

#: The ablation's run: all clients every round, ``steps`` local SGD steps on mini-batches of
#: ``batch`` (cycling through a client's shuffled samples: about 5 epochs of a 75-image
#: client), local step ``lr``, global step 1; test accuracy read at the ``budgets`` (rounds).
ABLATION = {"steps": 25, "batch": 15, "lr": 0.1,
            "rounds": {"quick": 50, "full": 200},
            "budgets": {"quick": (10, 25, 50), "full": (10, 25, 50, 100, 200)},
            "seeds": {"quick": 24, "full": 64}, "per_task": 12}

#: The SCAFFOLD table's run: ``participants`` of the 20 clients per round, an epoch of
#: ``steps_per_epoch`` steps on mini-batches of ``batch`` (a fifth of a 75-image client; the
#: paper's "1 epoch ... corresponds to 5 local steps (0.2 batch size)"), SGD one step per
#: round on a client's whole data (``sgd_batch``: the samples of one epoch in one gradient);
#: rounds to ``target`` test accuracy (and ``target_sensitivity``, reported).
TABLE = {"participants": 4, "steps_per_epoch": 5, "batch": 15, "sgd_batch": 75,
         "target": 0.9, "target_sensitivity": 0.95,
         "rounds": {"quick": 100, "full": 200},
         "seeds": {"quick": 24, "full": 96}, "per_task": 12,
         "tuning": {"grid": (0.1, 0.3, 1.0, 3.0, 10.0), "seeds": 6, "rounds": 200}}

#: Local step per (similarity, method, epochs), the output of ``tune_table_lr("full", (0,))``
#: (grid ``TABLE["tuning"]["grid"]``, the fewest mean rounds to the target on 6 tuning seeds of
#: their own stream, never evaluated, 200 rounds; ties broken by the mean accuracy). The
#: rounds hardly change over a decade of steps around the choice (a flat optimum).
TABLE_LR: dict[tuple[float, str, int], float] = {
    (0.0, "SGD", 1): 10.0, (0.0, "SCAFFOLD", 1): 0.1, (0.0, "SCAFFOLD", 5): 1.0,
    (0.0, "FedAvg", 1): 0.3, (0.0, "FedAvg", 5): 0.3,
    (0.1, "SGD", 1): 1.0, (0.1, "SCAFFOLD", 1): 0.3, (0.1, "SCAFFOLD", 5): 0.3,
    (0.1, "FedAvg", 1): 10.0, (0.1, "FedAvg", 5): 1.0,
    (1.0, "SGD", 1): 1.0, (1.0, "SCAFFOLD", 1): 0.3, (1.0, "SCAFFOLD", 5): 0.3,
    (1.0, "FedAvg", 1): 1.0, (1.0, "FedAvg", 5): 1.0,
}

#: Rough seconds per replica x round (one core): the tasks' cost estimates.
_SECONDS = {"ablation": 2.5e-3, "table": 1e-3}


# ------------------------------------------------------------------ splits and problems
def similarity_split(labels: np.ndarray, n: int, similarity: float,
                     rng: np.random.Generator) -> list[np.ndarray]:
    r"""The SCAFFOLD paper's ":math:`s` % similarity" split: a random :math:`s` of the samples
    dealt i.i.d. (shuffled, cut into ``n`` near-equal parts), the rest sorted by label and cut
    into ``n`` consecutive parts (0 %: every client one or two labels; 100 %: i.i.d.).

    >>> y = np.repeat(np.arange(4), 5)
    >>> [sorted(set(y[p].tolist())) for p in similarity_split(y, 4, 0.0, np.random.default_rng(0))]
    [[0], [1], [2], [3]]
    """
    y = np.asarray(labels)
    if not 0.0 <= float(similarity) <= 1.0:
        raise ValueError(f"similarity must be in [0, 1], got {similarity!r}")
    idx = rng.permutation(y.size)
    k = int(round(float(similarity) * y.size))
    iid, rest = idx[:k], idx[k:]
    rest = rest[np.argsort(y[rest], kind="stable")]
    return [np.concatenate([a, b]) for a, b in zip(np.array_split(iid, n),
                                                    np.array_split(rest, n), strict=True)]


def heterogeneity_split(labels: np.ndarray, n: int, alpha: float | None,
                        rng: np.random.Generator) -> list[np.ndarray]:
    """Dirichlet(``alpha``) label proportions per class over the clients
    (:func:`~fedtheory.problems.datasets.dirichlet_label_split`, every client at least 2
    samples), or, ``alpha=None``, a homogeneous split (shuffled, ``n`` near-equal parts)."""
    y = np.asarray(labels)
    if alpha is None:
        return list(np.array_split(rng.permutation(y.size), n))
    return dirichlet_label_split(y, n, alpha, rng, min_size=2)


def _problem(parts: list[np.ndarray]) -> LogisticProblem:
    """One split's problem (uniform client weights; its optimum not solved: the runs read
    the test accuracy only)."""
    Xtr, ytr, Xte, yte = digits_images()
    fd = FederatedData(tuple(Xtr[p] for p in parts), tuple(ytr[p] for p in parts), Xte, yte,
                       10, "digits")
    return LogisticProblem(fd, lam=LAM, weights="uniform", multinomial=True,
                           tol=float("inf"))


# A pure memo (one process): a function of its argument only.
@lru_cache(maxsize=1)
def centralised_accuracy(lam: float = LAM) -> float:
    """The test accuracy of the centralised model: the optimum (Newton) of the ridge logistic
    regression on all 1498 training images pooled, the ceiling of every run."""
    Xtr, ytr, Xte, yte = digits_images()
    fd = FederatedData((np.asarray(Xtr),), (np.asarray(ytr),), Xte, yte, 10, "digits")
    prob = LogisticProblem(fd, lam=lam, weights="uniform", multinomial=True, tol=1e-8)
    return float(prob.accuracy(prob.x_star))


def _rng(entropy: tuple[int, ...], key: tuple[int, ...]) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(list(entropy),
                                                                      spawn_key=key)))


def _engine_seed(entropy: tuple[int, ...], key: tuple[int, ...]) -> int:
    seq = np.random.SeedSequence(list(entropy), spawn_key=(1_000_000, *key))
    return int(seq.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def _curves(prob: ProblemStack, rule: str, process: Any, run: Run, local: LocalWork
            ) -> np.ndarray:
    """Test accuracy of the iterate every round starts from and of the last, ``(T + 1, R)``."""
    T, R = run.rounds, run.replicas
    acc = np.zeros((T + 1, R))
    first = prob.problems[0]

    def watch(rec: RoundRecord) -> None:
        acc[rec.t - 1, rec.start:rec.start + rec.mask.shape[0]] = first.accuracy(
            np.asarray(rec.x, dtype=float))

    res = simulate(prob, rule, process, run, local,
                   metrics=Metrics(rounds=(T,), skip=("f_gap", "grad_norm2", "dist2"),
                                   observe=watch),
                   execution=Execution(workers=1))
    acc[T] = first.accuracy(np.asarray(res.x, dtype=float))
    return acc


# ------------------------------------------------------------------ the ablation (line 153)
def ablation_run(*, alpha: float | None, preset: str, entropy: tuple[int, ...], first: int,
                 count: int, rounds: int | None = None) -> dict[str, Any]:
    r"""FedAvg at heterogeneity ``alpha`` (None: homogeneous) for seeds ``first .. first +
    count - 1`` (a task): ``acc`` ``(T + 1, count)`` test accuracy per round, ``sizes`` the
    clients' sizes per seed. Seed :math:`r` splits with its own stream (the same at every
    level: ``SeedSequence(entropy, spawn_key=(0, r))``) and is replica :math:`r` of one engine
    seed (the same mini-batch orders at every level). ``rounds`` overrides the preset's."""
    t0 = time.perf_counter()
    T = ABLATION["rounds"][preset] if rounds is None else int(rounds)
    ytr = digits_images()[1]
    parts = [heterogeneity_split(ytr, CLIENTS, alpha, _rng(entropy, (0, first + r)))
             for r in range(count)]
    prob = ProblemStack([_problem(p) for p in parts])
    run = Run(rounds=T, replicas=count, seed=_engine_seed(entropy, (0,)), first_replica=first,
              dtype=np.float32)
    local = LocalWork(lr=ABLATION["lr"], steps=ABLATION["steps"],
                      batches=MiniBatches(ABLATION["batch"], wrap=True))
    acc = _curves(prob, "fedavg", UniformParticipation(CLIENTS, CLIENTS), run, local)
    return {"acc": acc, "sizes": [[len(c) for c in p] for p in parts],
            "seconds": time.perf_counter() - t0}


def _label(alpha: float | None) -> str:
    return "homog" if alpha is None else f"alpha={alpha:g}"


def ablation_pieces(preset: str, entropy: tuple[int, ...]
                    ) -> list[tuple[str, Any, dict[str, Any], float]]:
    """The ablation's runs as pieces ``(name, function, keywords, cost)``:
    :func:`ablation_run` per (level, chunk of seeds)."""
    S, per = ABLATION["seeds"][preset], ABLATION["per_task"]
    T = ABLATION["rounds"][preset]
    return [(f"{_label(a)}-{lo}", ablation_run,
             {"alpha": a, "preset": preset, "entropy": entropy, "first": lo,
              "count": min(per, S - lo)}, min(per, S - lo) * T * _SECONDS["ablation"])
            for a in ALPHAS for lo in range(0, S, per)]


def ablation_combine(preset: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    """The ablation's data from :func:`ablation_pieces`' results (in its order):
    ``acc[label]`` ``(T + 1, S)`` per level ("alpha=0.1", ..., "homog"), ``budgets``,
    ``ceiling`` (:func:`centralised_accuracy`), ``params``."""
    per_level = len(results) // len(ALPHAS)
    if per_level * len(ALPHAS) != len(results) or per_level == 0:
        raise ValueError(f"results must hold the same number of pieces per level, got "
                         f"{len(results)} for {len(ALPHAS)} levels")
    acc = {_label(a): np.concatenate([r["acc"] for r in
                                      results[j * per_level:(j + 1) * per_level]], axis=1)
           for j, a in enumerate(ALPHAS)}
    sizes = {_label(a): [s for r in results[j * per_level:(j + 1) * per_level]
                         for s in r["sizes"]] for j, a in enumerate(ALPHAS)}
    return {"acc": acc, "sizes": sizes, "budgets": ABLATION["budgets"][preset],
            "ceiling": centralised_accuracy(), "levels": [_label(a) for a in ALPHAS],
            "params": {**{k: v for k, v in ABLATION.items() if k not in ("rounds", "budgets",
                                                                         "seeds")},
                       "rounds": ABLATION["rounds"][preset],
                       "seeds": ABLATION["seeds"][preset], "clients": CLIENTS, "lam": LAM},
            "seconds": float(sum(r["seconds"] for r in results))}


# ------------------------------------------------------------------ the SCAFFOLD table
def _table_local(method: str, epochs: int, lr: Any) -> LocalWork:
    if method == "SGD":
        return LocalWork(lr=lr, steps=1, batches=MiniBatches(TABLE["sgd_batch"]))
    return LocalWork(lr=lr, steps=TABLE["steps_per_epoch"] * epochs,
                     batches=MiniBatches(TABLE["batch"], wrap=True))


def table_run(*, similarity: float, preset: str, entropy: tuple[int, ...], first: int,
              count: int, rounds: int | None = None, lrs: tuple[float, ...] | None = None,
              stream: int = 0) -> dict[str, Any]:
    r"""Every method of the SCAFFOLD table (:data:`METHODS`) at ``similarity`` for seeds
    ``first .. first + count - 1`` (a task): ``acc[(method, epochs)]`` ``(T + 1, count)``.
    Seed :math:`r` splits with ``SeedSequence(entropy, spawn_key=(1 + stream, r))``; every
    method runs on the same splits, participation draws (4 of 20 uniformly) and mini-batch
    orders (one engine seed per similarity). The local steps are :data:`TABLE_LR`'s; with
    ``lrs`` every seed runs at every step of ``lrs`` instead (replica ``r * len(lrs) + j`` at
    ``lrs[j]``: :func:`tune_table_lr`). ``stream`` 0 is the evaluated seeds, 1 the tuning
    seeds."""
    t0 = time.perf_counter()
    T = TABLE["rounds"][preset] if rounds is None else int(rounds)
    ytr = digits_images()[1]
    parts = [similarity_split(ytr, CLIENTS, similarity, _rng(entropy, (1 + stream, first + r)))
             for r in range(count)]
    problems = [_problem(p) for p in parts]
    reps = 1 if lrs is None else len(lrs)
    prob = ProblemStack([q for q in problems for _ in range(reps)])
    run = Run(rounds=T, replicas=count * reps,
              seed=_engine_seed(entropy, (1 + stream, SIMILARITIES.index(similarity))),
              first_replica=first * reps, dtype=np.float32)
    process = UniformParticipation(CLIENTS, TABLE["participants"])
    acc = {}
    for method, rule, epochs in METHODS:
        lr = (TABLE_LR[(similarity, method, epochs)] if lrs is None
              else np.tile(np.asarray(lrs, dtype=float), count))
        acc[(method, epochs)] = _curves(prob, rule, process, run,
                                        _table_local(method, epochs, lr))
    return {"acc": acc, "seconds": time.perf_counter() - t0}


def tune_table_lr(preset: str = "full", entropy: tuple[int, ...] = (0,)
                  ) -> dict[tuple[float, str, int], float]:
    """The local step of every (similarity, method, epochs) of the table: on
    ``TABLE["tuning"]["seeds"]`` seeds of the tuning stream (never evaluated), the step of
    ``TABLE["tuning"]["grid"]`` with the fewest mean rounds to ``TABLE["target"]`` (ties: the
    highest mean accuracy over the rounds). How :data:`TABLE_LR` was made."""
    tun = TABLE["tuning"]
    grid = tuple(tun["grid"])
    out = {}
    for s in SIMILARITIES:
        res = table_run(similarity=s, preset=preset, entropy=entropy, first=0,
                        count=tun["seeds"], rounds=tun["rounds"], lrs=grid, stream=1)
        for method, _, epochs in METHODS:
            a = res["acc"][(method, epochs)]
            r = rounds_to(a, TABLE["target"]).reshape(tun["seeds"], len(grid)).mean(axis=0)
            m = mean_accuracy(a).reshape(tun["seeds"], len(grid)).mean(axis=0)
            best = min(range(len(grid)), key=lambda j: (r[j], -m[j]))
            out[(s, method, epochs)] = float(grid[best])
    return out


def table_pieces(preset: str, entropy: tuple[int, ...]
                 ) -> list[tuple[str, Any, dict[str, Any], float]]:
    """The table's runs as pieces ``(name, function, keywords, cost)``: :func:`table_run` per
    (similarity, chunk of seeds)."""
    S, per = TABLE["seeds"][preset], TABLE["per_task"]
    T = TABLE["rounds"][preset]
    return [(f"s{int(100 * s)}-{lo}", table_run,
             {"similarity": s, "preset": preset, "entropy": entropy, "first": lo,
              "count": min(per, S - lo)},
             min(per, S - lo) * T * len(METHODS) * _SECONDS["table"])
            for s in SIMILARITIES for lo in range(0, S, per)]


def table_combine(preset: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    """The table's data from :func:`table_pieces`' results (in its order): per similarity
    ``acc[s][(method, epochs)]`` ``(T + 1, S)``, ``rounds[s][(method, epochs)]`` to the
    target and ``rounds_sensitivity`` to the sensitivity target (``T + 1``: not reached),
    ``auc`` (mean accuracy over the rounds), ``ceiling``, ``params``."""
    per = len(results) // len(SIMILARITIES)
    if per * len(SIMILARITIES) != len(results) or per == 0:
        raise ValueError(f"results must hold the same number of pieces per similarity, got "
                         f"{len(results)} for {len(SIMILARITIES)} similarities")
    acc: dict[float, dict[tuple[str, int], np.ndarray]] = {}
    for j, s in enumerate(SIMILARITIES):
        chunk = results[j * per:(j + 1) * per]
        acc[s] = {k: np.concatenate([r["acc"][k] for r in chunk], axis=1)
                  for k in chunk[0]["acc"]}
    return {"acc": acc,
            "rounds": {s: {k: rounds_to(a, TABLE["target"]) for k, a in v.items()}
                       for s, v in acc.items()},
            "rounds_sensitivity": {s: {k: rounds_to(a, TABLE["target_sensitivity"])
                                       for k, a in v.items()} for s, v in acc.items()},
            "auc": {s: {k: mean_accuracy(a) for k, a in v.items()} for s, v in acc.items()},
            "ceiling": centralised_accuracy(),
            "params": {"rounds": TABLE["rounds"][preset], "seeds": TABLE["seeds"][preset],
                       "clients": CLIENTS, "lam": LAM, "lr": dict(TABLE_LR),
                       **{k: v for k, v in TABLE.items() if k not in ("rounds", "seeds")}},
            "seconds": float(sum(r["seconds"] for r in results))}

r"""Seed 004's Section 6 as the paper (and its public code) ran it, on an offline stand-in.

What the authors' code does (``Code/FL_FDMS``, ``FL_Stale``, ``FL_Dropout``, ``FL_Full`` of
github.com/ystex/Federated-Learning-with-Friend-Discovery-and-Model-Substitution-), and what
this module does instead where the machine cannot:

- data: CIFAR-10 / MNIST, 20 clients; clustered: 5 groups of 4 clients, each group 2 classes,
  each client 500 samples of each (``cifar_extr_noniid``); general: 3 label-sorted shards per
  client (``mnist_extr_noniid_freedom``); 80 % of a client's list used for training; the test
  set for the test accuracy. *Here*: scikit-learn's digits (no download), prepared the same
  way and split by the same rules (:func:`fedtheory.problems.clustered.digits_images`,
  :func:`~fedtheory.problems.clustered.authors_clustered_split`,
  :func:`~fedtheory.problems.clustered.authors_shard_split`), a fresh split per seed (the code
  seeds numpy before splitting), a fixed stratified test set of 299 images.
- model: a CNN trained with NLL loss. *Here*: multinomial logistic regression (softmax of
  :math:`Wx`, :math:`W \in \mathbb R^{10\times65}`, from :math:`W = 0`), the same loss; a CNN
  does not fit the time budget in numpy. The problem is convex: every method that converges
  reaches the same optimum.
- local training: 5 epochs of SGD, batch 200, lr 0.1, no momentum, no weight decay
  (``options.py``, ``update.py``). *Here* the same; the stand-in's clients hold 33--60
  training samples, so a batch of 200 is the whole local set: 5 full-batch steps per round.
- rounds: 500, the first with every client active; then ``randNums`` dropout
  (:class:`~fedtheory.participation.grouped_dropout.GroupedDropout`: :math:`S = 20 -
  \lfloor 20\alpha\rfloor` active, at least one per group of 4). *Here* the same process,
  the rounds per preset (:func:`params`).
- methods (one global model each; every method sees the same masks, splits and data: common
  random numbers, so comparisons are paired over the seeds):

  * Full: all 20 clients every round, the average of their local models;
  * Dropout: the average of the active clients' local models (``FL_Dropout``);
  * Stale: the average of the active clients' new local models and the dropped clients'
    **last uploaded local models** (``FL_Stale/pl_per.py`` ``PL_Update``: model
    substitution, the code's and so the figures'); "Stale (updates)": the paper's text's
    "last uploaded local model updates" (update substitution, MIFA's memory: the model moves
    by the average of the last updates), a labelled variant;
  * FL-FDMS (:class:`~fedtheory.algorithms.substitution.FLFDMS`): cosine scores of the
    updates (eq. 14), running means (eq. 15, initialised by the full first round), a dropped
    client takes the update of the active client with the largest mean score;
  * FL-FDMS with complexity reduction (clustered, :math:`\alpha = 0.5`, Fig. 5): pruning with
    Theorem 2's :math:`\Theta_t`, with :math:`0.5\Theta_t` (the paper's Case 2), and with the
    code's threshold (``comr.py``: :math:`0.5\sqrt{(2\ln(2m^2Tf_{\max}) - 2\ln\delta)/
    (2\beta t)} + 0.01`, :math:`m = 20`, :math:`f_{\max} = 3`, :math:`\beta = 0.5`,
    :math:`\delta = 0.01`);
  * sensitivity (clustered, :math:`\alpha = 0.7`, outside the verdict): Dropout and FL-FDMS
    under the toolkit's earlier dropout, :math:`\lfloor\alpha K\rfloor` clients uniformly at
    random (Assumption 5 fails in 80 % of the rounds).

How it runs: on the engine, with no round loop of its own. Every method is one
:func:`~fedtheory.simulate.simulate` call whose replicas are the seeds of a task, each on its
own split: a :class:`~fedtheory.problems.ProblemStack` of one
:class:`~fedtheory.problems.softmax.SoftmaxRegression` per seed, 5 full-batch local steps of
lr 0.1 in float32, test accuracy of every round's iterate read by an ``observe`` hook; Full and
Dropout are ``"fedavg"`` (Full under a process that keeps everyone), Stale is
:class:`~fedtheory.algorithms.substitution.ModelSubstitution`, Stale (updates) ``"mifa"``,
FL-FDMS :class:`~fedtheory.algorithms.substitution.FLFDMS` (its friends, similarity means and
computations read by the same hook). The methods of one process share its engine seed,
so replica :math:`r` sees the same masks under every method (common random numbers);
``tests/test_fdms_paper_engine.py`` holds the runs to hand-written reference rounds.

:func:`run_seeds` runs one setting for a range of seeds (a piece, :func:`paper_pieces`); joined by
:func:`paper_combine` they are the
claim's dataset (every setting, every seed, chunked into tasks); :func:`final_accuracy`,
:func:`mean_accuracy` and :func:`rounds_to` are the metrics.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.algorithms.substitution import FLFDMS, ModelSubstitution
from fedtheory.engine import Execution, LocalWork, Metrics, RoundRecord, Run
from fedtheory.participation.dropout import DropoutParticipation
from fedtheory.participation.grouped_dropout import GroupedDropout
from fedtheory.problems.clustered import (
    authors_clustered_split,
    authors_shard_split,
    digits_images,
)
from fedtheory.problems.softmax import SoftmaxRegression
from fedtheory.problems.stack import ProblemStack
from fedtheory.simulate import simulate

__all__ = ["ALPHAS", "CLAIM_ID", "CR_RUNS", "GROUP", "K", "METHODS", "SENSITIVITY", "SETTINGS",
           "cr_reductions", "final_accuracy", "mean_accuracy", "pair_probability", "paper_combine",
           "paper_pieces",
           "params", "rounds_to", "run_seeds"]

CLAIM_ID = "fdms.experiment"
SETTINGS = ("clustered", "general")
ALPHAS = (0.3, 0.5, 0.7)
#: The methods run at every dropout ratio (Full runs once per setting).
METHODS = ("Dropout", "Stale", "Stale (updates)", "FL-FDMS")
#: The complexity-reduction runs (clustered, alpha = 0.5).
CR_RUNS = ("Theta_t", "0.5 Theta_t", "code threshold")
#: The sensitivity run's name and methods (clustered, uniform dropout of floor(0.7 K)).
SENSITIVITY = "uniform 0.7"
SENSITIVITY_METHODS = ("Dropout", "FL-FDMS")
K, GROUP, CLASSES = 20, 4, 10
#: Seeds per task.
_PER_TASK = 4
#: Rough seconds per seed x round (one core), per setting: the tasks' cost estimates.
_SECONDS_PER_SEED_ROUND = {"clustered": 0.03, "general": 0.022}


def params(preset: str) -> dict[str, Any]:
    """The run's sizes and hyper-parameters per preset (the code's where it has them)."""
    if preset not in ("quick", "full"):
        raise ValueError(f"preset must be 'quick' or 'full', got {preset!r}")
    quick = preset == "quick"
    return {"rounds": 100 if quick else 250, "seeds": 12 if quick else 16, "lr": 0.1,
            "epochs": 5, "batch": 200, "train_fraction": 0.8, "test_fraction": 1 / 6,
            # complexity reduction: Theorem 2's p and delta_f as the code sets them
            "p": 0.01, "delta_f": 0.01, "f_max": 3, "code_beta": 0.5}


def pair_probability(alpha: float) -> Fraction:
    r"""The smallest probability that two clients are both active in a round of
    :class:`GroupedDropout` (``(20, alpha)``), exactly: the long-run :math:`N^{i,j}_t/t`, the
    :math:`\beta` of Assumption 6 this process meets on average (rounds after the first).

    Same group: :math:`\mathbb E[c(c-1)]/(g(g-1))`; different groups:
    :math:`\mathbb E[c_1c_2]/g^2`, over the uniform tuple law.

    >>> str(pair_probability(0.5))
    '379/1616'
    """
    proc = GroupedDropout(K, alpha)
    tup = proc.tuples()
    g = proc.group_size
    n = len(tup)
    same = Fraction(int(np.sum(tup[:, 0] * (tup[:, 0] - 1))), n * g * (g - 1))
    other = Fraction(int(np.sum(tup[:, 0] * tup[:, 1])), n * g * g)
    return min(same, other)


def cr_reductions(T: int, p: dict[str, Any]) -> dict[str, dict[str, Any]]:
    r"""The ``reduction`` arguments of :class:`FLFDMS` for the runs of :data:`CR_RUNS`:
    Theorem 2's :math:`\Theta_t` (:math:`K = 20`, horizon :math:`T`, :math:`B_{\max} = 3`,
    :math:`\beta` = :func:`pair_probability` at 0.5, :math:`p = \delta_f = 0.01` as the
    code), :math:`0.5\Theta_t`, and the code's
    :math:`0.5\sqrt{(2\ln(2m^2Tf) - 2\ln\delta)/(2\beta t)} + 0.01` with :math:`\beta = 0.5`,
    written as :math:`s(\sqrt{\cdot/(\beta t)} + \delta_f')`, :math:`s = 1/(2\sqrt2)`,
    :math:`\delta_f' = 0.01/s`."""
    beta = float(pair_probability(0.5))
    base = {"horizon": int(T), "max_friends": p["f_max"], "beta": beta, "p": p["p"],
            "delta_f": p["delta_f"]}
    s = 1 / (2 * math.sqrt(2))
    return {"Theta_t": base, "0.5 Theta_t": {**base, "scale": 0.5},
            "code threshold": {**base, "beta": p["code_beta"], "delta_f": p["delta_f"] / s,
                               "scale": s}}


# ------------------------------------------------------------------ metrics


def final_accuracy(acc: np.ndarray, fraction: float = 0.1) -> np.ndarray:
    """Per seed, the mean test accuracy over the last ``fraction`` of the rounds:
    ``(T + 1, R)`` (round 0 first) -> ``(R,)``.

    >>> final_accuracy(np.array([[0.1], [0.5], [0.7], [0.9]]), 0.5).tolist()
    [0.8]
    """
    a = np.asarray(acc, dtype=float)
    k = max(1, int(round(fraction * (a.shape[0] - 1))))
    return a[-k:].mean(axis=0)


def mean_accuracy(acc: np.ndarray) -> np.ndarray:
    r"""Per seed, the mean test accuracy over rounds :math:`1..T` (the normalised area under
    the test-accuracy curve: higher when a method gets to high accuracy sooner):
    ``(T + 1, R)`` -> ``(R,)``.

    >>> mean_accuracy(np.array([[0.1], [0.5], [0.7], [0.9]])).round(6).tolist()
    [0.7]
    """
    return np.asarray(acc, dtype=float)[1:].mean(axis=0)


def rounds_to(acc: np.ndarray, target: Any) -> np.ndarray:
    """Per seed, the first round whose test accuracy reaches ``target`` (scalar or ``(R,)``);
    ``T + 1`` when never: ``(T + 1, R)`` -> ``(R,)`` int.

    >>> rounds_to(np.array([[0.1, 0.1], [0.5, 0.8], [0.9, 0.95]]), 0.8).tolist()
    [2, 1]
    """
    a = np.asarray(acc, dtype=float)
    hit = a >= np.asarray(target, dtype=float)
    return np.where(hit.any(axis=0), np.argmax(hit, axis=0), a.shape[0])


# ------------------------------------------------------------------ the runs


def _streams(entropy: tuple[int, ...], setting: str, r: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(list(entropy), spawn_key=(SETTINGS.index(setting), r))


def _split(setting: str, ytr: np.ndarray, rng: np.random.Generator, frac: float
           ) -> list[np.ndarray]:
    if setting == "clustered":
        return authors_clustered_split(ytr, rng, K, GROUP, 2, frac)
    return authors_shard_split(ytr, rng, K, 100, 3, frac)


def _engine_seed(entropy: tuple[int, ...], setting: str, stream: int) -> int:
    """The engine's ``Run.seed`` of a stream (one per setting and stream, the same for all
    seeds: replica ``r`` of the run draws from ``SeedSequence(seed, spawn_key=(r, 0))``)."""
    seq = np.random.SeedSequence(list(entropy),
                                 spawn_key=(SETTINGS.index(setting), 1_000_000 + stream))
    return int(seq.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))


def _methods(setting: str, T: int, p: dict[str, Any]
             ) -> list[tuple[str, Any, tuple[tuple[str, Any], ...]]]:
    """The streams of a setting: ``(name, process, ((method, rule), ...))``; every method of
    a stream runs on the stream's masks (the same process and seed: common random numbers).
    Full is FedAvg under a process that keeps every client."""
    out: list[tuple[str, Any, tuple[tuple[str, Any], ...]]] = [
        ("Full", DropoutParticipation(K, 0.0), (("Full", "fedavg"),))]
    for a in ALPHAS:
        rules: list[tuple[str, Any]] = [
            ("Dropout", "fedavg"), ("Stale", ModelSubstitution(p["lr"])),
            ("Stale (updates)", "mifa"), ("FL-FDMS", FLFDMS())]
        if setting == "clustered" and a == 0.5:
            rules += [(n, FLFDMS(red)) for n, red in cr_reductions(T, p).items()]
        out.append((f"alpha={a}", GroupedDropout(K, a), tuple(rules)))
    if setting == "clustered":
        out.append((SENSITIVITY, DropoutParticipation(K, 0.7, "max", full_first=True),
                    (("Dropout", "fedavg"), ("FL-FDMS", FLFDMS()))))
    return out


class _Watch:
    """The ``observe`` hook of a run: per replica, the test accuracy of the iterate each round
    starts from; for FL-FDMS (``fdms``) also the substitutions and those by a same-group
    client, the cumulative similarity computations per round and the similarity means after
    the last round."""

    def __init__(self, rounds: int, replicas: int, same_group: np.ndarray,
                 accuracy: Any, fdms: bool) -> None:
        self.rounds, self.same, self.accuracy, self.fdms = rounds, same_group, accuracy, fdms
        self.acc = np.zeros((rounds + 1, replicas))
        self.hits, self.subs = np.zeros(replicas), np.zeros(replicas)
        self.computations = np.zeros((rounds, replicas))
        self.heat = np.full((replicas, K, K), np.nan)

    def __call__(self, rec: RoundRecord) -> None:
        rows = slice(rec.start, rec.start + rec.mask.shape[0])
        self.acc[rec.t - 1, rows] = self.accuracy(rec.x)
        if not self.fdms:
            return
        st, mask = rec.rule_state, rec.mask
        src = st["friends"]
        dropped = ~mask & (src >= 0)
        ok = self.same[np.arange(K)[None, :], np.maximum(src, 0)]
        self.hits[rows] += (dropped & ok).sum(axis=1)
        self.subs[rows] += dropped.sum(axis=1)
        self.computations[rec.t - 1, rows] = st["computations"]
        if rec.t == self.rounds:
            cnt = st["similarity_count"]
            np.divide(st["similarity_sum"], cnt, out=self.heat[rows], where=cnt > 0)


def run_seeds(*, setting: str, preset: str, entropy: tuple[int, ...], first: int,
              count: int, rounds: int | None = None) -> dict[str, Any]:
    """One setting for seeds ``first .. first + count - 1`` (a task): every method's test
    accuracy per round, FL-FDMS's similarity means at the last round (alpha = 0.5), the
    similarity computations of the complexity-reduction runs, FL-FDMS's share of
    substitutions by a same-group client, per seed.

    Seed ``r`` draws its split from ``SeedSequence(entropy, spawn_key=(setting, r))`` and is
    replica ``r`` of the engine (its masks from the stream's seed, :func:`_engine_seed`, and
    its replica index): the same whatever the chunking. Every method is one
    :func:`~fedtheory.simulate.simulate` call over the seeds, on a
    :class:`~fedtheory.problems.ProblemStack` of one
    :class:`~fedtheory.problems.softmax.SoftmaxRegression` per seed's split (replica ``r`` on
    its own), 5 full-batch local steps of lr 0.1, float32; the methods of a
    stream share its process and seed, so they see the same masks (common random numbers).
    ``rounds`` overrides the preset's (tests)."""
    if setting not in SETTINGS:
        raise ValueError(f"setting must be one of {SETTINGS}, got {setting!r}")
    t0 = time.perf_counter()
    p = params(preset)
    T = p["rounds"] if rounds is None else int(rounds)
    R, lr, E = int(count), p["lr"], p["epochs"]
    Xtr, ytr, Xte, yte = digits_images(p["test_fraction"])
    Xte32 = Xte.astype(np.float32)
    parts = [_split(setting, ytr, np.random.Generator(np.random.PCG64(
        _streams(entropy, setting, first + r).spawn(1)[0])), p["train_fraction"])
        for r in range(R)]
    smax = max(len(c) for ps in parts for c in ps)
    if smax > p["batch"]:
        raise ValueError(f"a client holds {smax} > batch {p['batch']} training samples: the "
                         "full-batch local step assumes one batch per epoch")
    # replica r trains on seed r's split: its own problem
    prob = ProblemStack([SoftmaxRegression([Xtr[c] for c in ps], [ytr[c] for c in ps], CLASSES)
                         for ps in parts])
    labels = np.repeat(np.arange(K // GROUP), GROUP)
    same_group = labels[:, None] == labels[None, :]

    def accuracy(x: np.ndarray) -> np.ndarray:
        return prob.problems[0].accuracy(x, Xte32, yte)

    streams = _methods(setting, T, p)
    acc: dict[tuple[str, str], np.ndarray] = {}
    friend_rate: dict[str, np.ndarray] = {}
    computations: dict[str, np.ndarray] = {}
    heat = np.full((R, K, K), np.nan)
    for j, (name, proc, rules) in enumerate(streams):
        run = Run(rounds=T, replicas=R, seed=_engine_seed(entropy, setting, j),
                  first_replica=first, dtype=np.float32)
        for m, rule in rules:
            fdms = isinstance(rule, FLFDMS)
            watch = _Watch(T, R, same_group, accuracy, fdms)
            res = simulate(prob, rule, proc, run, LocalWork(lr=lr, steps=E),
                           metrics=Metrics(rounds=(T,), skip=("f_gap", "grad_norm2", "dist2"),
                                           observe=watch),
                           execution=Execution(workers=1))
            watch.acc[T] = accuracy(res.x)
            acc[(name, m)] = watch.acc
            if not fdms:
                continue
            if m == "FL-FDMS":
                friend_rate[name] = watch.hits / np.maximum(watch.subs, 1)
            if name == "alpha=0.5":
                computations[m] = watch.computations
                if m == "FL-FDMS":
                    heat = watch.heat
    return {"acc": acc, "heat": heat, "friend_rate": friend_rate,
            "computations": computations, "seconds": time.perf_counter() - t0,
            "sizes": [[len(c) for c in ps] for ps in parts]}


def _combine(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """The chunks of one setting, concatenated along the seeds."""
    first = chunks[0]
    return {
        "acc": {k: np.concatenate([c["acc"][k] for c in chunks], axis=1) for k in first["acc"]},
        "heat": np.concatenate([c["heat"] for c in chunks], axis=0),
        "friend_rate": {k: np.concatenate([c["friend_rate"][k] for c in chunks])
                        for k in first["friend_rate"]},
        "computations": {k: np.concatenate([c["computations"][k] for c in chunks], axis=1)
                         for k in first["computations"]},
        "seconds": float(sum(c["seconds"] for c in chunks)),
        "sizes": [s for c in chunks for s in c["sizes"]],
    }


def _chunks(seeds: int, per: int) -> list[tuple[int, int]]:
    """``(first, count)`` of nearly equal consecutive ranges of at most ``per`` seeds."""
    k = -(-seeds // per)
    sizes = [seeds // k + (1 if j < seeds % k else 0) for j in range(k)]
    return list(zip([sum(sizes[:j]) for j in range(k)], sizes, strict=True))


def paper_pieces(preset: str, entropy: tuple[int, ...]
                 ) -> list[tuple[str, Any, dict[str, Any], float]]:
    """Every setting's runs for the preset's seeds as pieces ``(name, function, keywords,
    cost)``: :func:`run_seeds` on chunks of :data:`_PER_TASK` seeds, their streams from
    ``entropy``; :func:`paper_combine` joins their results."""
    p = params(preset)
    return [(f"{setting}-{a}", run_seeds,
             {"setting": setting, "preset": preset, "entropy": entropy, "first": a, "count": b},
             b * p["rounds"] * _SECONDS_PER_SEED_ROUND[setting])
            for setting in SETTINGS for a, b in _chunks(p["seeds"], _PER_TASK)]


def paper_combine(preset: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    """The data from the results of :func:`paper_pieces` (in its order): ``data[setting]``
    with ``acc[(stream, method)]`` ``(T + 1, R)``, ``heat`` ``(R, 20, 20)``,
    ``friend_rate[stream]`` ``(R,)``, ``computations[run]`` ``(T, R)`` (clustered),
    ``seconds``; and ``params``."""
    p = params(preset)
    n = len(_chunks(p["seeds"], _PER_TASK))
    if len(results) != n * len(SETTINGS):
        raise ValueError(f"results must hold one result per piece ({n * len(SETTINGS)}), "
                         f"got {len(results)}")
    out: dict[str, Any] = {"params": p}
    for j, setting in enumerate(SETTINGS):
        out[setting] = _combine(results[j * n:(j + 1) * n])
    return out

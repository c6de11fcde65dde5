r"""The :math:`m = O(\sqrt n)` sweep of seed 002's Section 5.4 and the runs of
``ocs.experiment`` (its full / uniform / OCS / AOCS comparison and the sweep) cut into pieces
(the claim's datasets, which run them as tasks: :mod:`fedtheory.claims.ocs._data`), on the
FedAvg driver of :mod:`fedtheory.experiments.ocs_fedavg`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedtheory import stats
from fedtheory.experiments.ocs_fedavg import (
    PRESETS,
    SCHEMES,
    SETUP,
    FedAvgRun,
    digits_problem,
    run_fedavg,
    scheme_lrs,
)

__all__ = ["SqrtNSweep", "experiment_chunk", "experiment_combine", "experiment_pieces",
           "sqrt_n_budget", "sqrt_n_sweep", "sweep_combine", "sweep_pieces", "sweep_point"]


@dataclass
class SqrtNSweep:
    r"""OCS(m) against full participation for several numbers of clients :math:`n`.

    Attributes
    ----------
    ns:
        The numbers of clients.
    grids:
        Per :math:`n`, the budgets :math:`m < n` tried: the preset's grid plus the seed's
        budget :math:`\lceil c\sqrt n\rceil` (:meth:`seed_budget`).
    acc_gap:
        Per :math:`n`, ``(len(grid), R)``: validation accuracy of full minus OCS(m), each
        averaged over the last ``tail`` fraction of rounds, per replica (paired).
    upper, lower:
        Per :math:`n`, the one-sided upper and lower :math:`1 - \alpha` Student-:math:`t`
        confidence limits of the mean ``acc_gap``
        (:func:`fedtheory.claimkit.checks.compare_paired`, "not worse", margin ``epsilon``).
    m_star:
        Per :math:`n`, the smallest :math:`m` in the grid with ``upper < epsilon``
        ("OCS(m) matches full participation": non-inferior within ``epsilon``), or ``None``.
    detectable:
        Per :math:`n`, the smallest true gap each comparison detects at power 0.8
        (:func:`fedtheory.stats.detectable_effect`).
    epsilon, alpha:
        The matching tolerance (accuracy points) and the false-alarm level of each
        comparison (:attr:`tests` of them: the sweep's level is ``tests * alpha``).
    sizes:
        Per :math:`n`, the client sizes.
    """

    ns: tuple[int, ...]
    grids: dict[int, tuple[int, ...]]
    acc_gap: dict[int, np.ndarray]
    upper: dict[int, np.ndarray]
    lower: dict[int, np.ndarray]
    m_star: dict[int, int | None]
    epsilon: float
    alpha: float
    sizes: dict[int, list[int]]
    config: dict[str, Any] = field(default_factory=dict)
    detectable: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def tests(self) -> int:
        """How many paired comparisons the sweep made (one per :math:`n` and grid :math:`m`)."""
        return int(sum(len(self.grids[n]) for n in self.ns))

    def seed_budget(self, n: int) -> int:
        r""":math:`\lceil c \sqrt n \rceil` with the seed's constant :math:`c = 6/\sqrt{32}`
        (m = 6 for n = 32 and m = 12 for n = 128 matched full participation there)."""
        return _seed_budget(n)

    def decide(self, m_at_32: float = 6.0) -> dict[str, Any]:
        r"""Judge ":math:`m = \lceil c\sqrt n\rceil` suffices" for
        :math:`c = m_{32}/\sqrt{32}` on this sweep.

        Per :math:`n`, the budget :math:`b = \min(\lceil c\sqrt n\rceil, n - 1)`
        (:func:`sqrt_n_budget`): it *fails* at :math:`n` when OCS with the smallest grid budget
        :math:`m' \ge b` is worse than full by more than :math:`\varepsilon` (lower limit above
        it; more clients never hurt, so OCS(:math:`b`) fails too); else it *holds* when
        :math:`m^\star(n) \le b` (OCS matches full with at most :math:`b` clients); otherwise
        it is undecided at :math:`n`. Returns ``rows`` (per :math:`n`), ``failed`` and ``undecided``
        (lists of :math:`n`), ``m32_data`` (the smallest :math:`m_{32}` this sweep supports,
        :math:`\max_n m^\star(n)\sqrt{32/n}`, None if some :math:`m^\star` is missing) and
        ``m32_refutable`` (the largest :math:`m_{32}` this sweep could refute,
        :math:`\max_n m_{\rm fail}(n)\sqrt{32/n}` with :math:`m_{\rm fail}(n)` the largest
        grid :math:`m` whose lower limit exceeds :math:`\varepsilon`; 0 if none).
        """
        rows, failed, undecided = [], [], []
        for n in self.ns:
            b = sqrt_n_budget(n, m_at_32)
            grid = self.grids[n]
            above = [j for j, m in enumerate(grid) if m >= b]
            j = above[0] if above else None
            ms = self.m_star[n]
            row = {"n": n, "budget": b, "m_star": ms, "tested_m": None if j is None else grid[j],
                   "upper_at_budget": None if j is None else float(self.upper[n][j]),
                   "lower_at_budget": None if j is None else float(self.lower[n][j])}
            rows.append(row)
            if j is not None and self.lower[n][j] > self.epsilon:
                row["status"] = "fails"
                failed.append(n)
            elif ms is not None and ms <= b:
                row["status"] = "holds"
            else:
                row["status"] = "undecided"
                undecided.append(n)
        m_fail = {n: max([m for m, lo in zip(self.grids[n], self.lower[n], strict=True)
                          if lo > self.epsilon], default=0) for n in self.ns}
        found = [self.m_star[n] for n in self.ns]
        m32_data = (None if any(x is None for x in found) else
                    max(float(x * np.sqrt(32 / n)) for x, n in zip(found, self.ns, strict=True)))
        return {"m_at_32": float(m_at_32), "rows": rows, "failed": failed,
                "undecided": undecided, "m32_data": m32_data,
                "m32_refutable": max(float(m_fail[n] * np.sqrt(32 / n)) for n in self.ns),
                "m_fail": m_fail}


def sqrt_n_budget(n: int, m_at_32: float) -> int:
    r""":math:`\min(\lceil c\sqrt n\rceil, n - 1)` with :math:`c = m_{32}/\sqrt{32}` (the
    seed's :math:`m_{32} = 6`).

    >>> [sqrt_n_budget(n, 6) for n in (8, 16, 32, 64, 128)]
    [3, 5, 6, 9, 12]
    >>> [sqrt_n_budget(n, 4.2) for n in (8, 16, 32, 64, 128)]
    [3, 3, 5, 6, 9]
    """
    return min(int(np.ceil(float(m_at_32) * np.sqrt(n / 32) - 1e-9)), n - 1)


def _seed_budget(n: int) -> int:
    return int(np.ceil(SETUP["sweep_m_seed_constant"] * np.sqrt(n) - 1e-9))


def _sweep_grid(n: int, preset: str) -> tuple[int, ...]:
    r"""The budgets tried at ``n``: the preset's grid up to the seed's budget
    :math:`b = \min(\lceil c\sqrt n\rceil, n - 1)`, and :math:`b` (a budget above :math:`b`
    cannot change the verdict: if no :math:`m \le b` matches full participation, the seed's
    constant is not confirmed at :math:`n` whatever larger budgets do)."""
    b = min(_seed_budget(n), n - 1)
    return tuple(sorted({m for m in PRESETS[preset]["sweep_grid"] if m <= b} | {b}))


def sweep_point(n: int, *, preset: str, seed: int, replicas: int,
                rng: np.random.Generator | np.random.SeedSequence | int | None
                ) -> dict[str, Any]:
    r"""One :math:`n` of the :math:`m = O(\sqrt n)` sweep on ``replicas`` replicas: full
    participation and OCS(m) for every ``m`` of the grid (:func:`_sweep_grid`) on common random
    numbers. Returns the ``grid``, per scheme (full first) and replica the validation
    accuracy averaged over the last ``match_tail`` of rounds (``acc``; only those rounds are
    measured), and the client ``sizes``."""
    cfg = PRESETS[preset]
    prob = digits_problem(n, seed=seed, unbalanced=False)
    grid = _sweep_grid(n, preset)
    K = cfg["sweep_rounds"]
    tail = max(1, int(round(SETUP["match_tail"] * K)))
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    run = run_fedavg(prob, m=(n, *grid), schemes=("full",) + ("ocs",) * len(grid),
                     rounds=K, replicas=replicas,
                     local_lr=(SETUP["sweep_local_lr"]["full"],
                               *(SETUP["sweep_local_lr"]["ocs"],) * len(grid)),
                     global_lr=SETUP["global_lr"], batch_size=SETUP["batch_size"],
                     rng=gen, dtype=SETUP["dtype"], measure_from=K - tail + 1)
    return {"grid": grid, "acc": run.accuracy[..., -tail:].mean(axis=-1),
            "sizes": prob.sizes.tolist(), "tail": tail}


def _sweep(points: dict[int, dict[str, Any]], preset: str, seed: int, alpha: float,
           replicas: int) -> SqrtNSweep:
    """The sweep judged from its points (``n -> sweep_point``, all replicas): per :math:`n`
    and grid :math:`m`, OCS(m) against full participation by a paired non-inferiority
    :math:`t`-test (:func:`fedtheory.stats.paired_t_test`: the lower limit of the gain above
    ``-match_epsilon``, as ``claims.checks.compare_paired``'s "not worse"; level ``alpha``
    each)."""
    eps = SETUP["match_epsilon"]
    grids, acc_gap, upper, lower, m_star, sizes, mde = {}, {}, {}, {}, {}, {}, {}
    for n, pt in points.items():
        grid, acc = pt["grid"], pt["acc"]
        acc_gap[n] = acc[0][None, :] - acc[1:]
        tests = [stats.paired_t_test(acc[1 + j], acc[0], alpha=alpha,
                                     what=f"acc OCS({m}) - acc full, n = {n}")
                 for j, m in enumerate(grid)]
        # the gap full - OCS is minus the gain: its limits are the gain's, negated
        upper[n] = np.array([-t.lower for t in tests])
        lower[n] = np.array([-t.upper for t in tests])
        mde[n] = np.array([t.detectable_effect for t in tests])
        # non-inferiority (claims.checks.compare_paired's "not worse"): lower limit > -eps
        ok = [m for m, t in zip(grid, tests, strict=True) if t.lower > -eps]
        m_star[n] = ok[0] if ok else None
        grids[n] = grid
        sizes[n] = pt["sizes"]
    tail = next(iter(points.values()))["tail"]
    return SqrtNSweep(ns=tuple(points), grids=grids, acc_gap=acc_gap, upper=upper,
                      lower=lower, m_star=m_star, epsilon=eps, alpha=alpha, sizes=sizes,
                      config={"preset": preset, "seed": seed,
                              "rounds": PRESETS[preset]["sweep_rounds"], "replicas": replicas,
                              "tail": tail}, detectable=mde)


def sqrt_n_sweep(preset: str = "quick", seed: int = 0, alpha: float = 1e-6,
                 rng: np.random.Generator | int | None = None) -> SqrtNSweep:
    r"""For each :math:`n`, the smallest :math:`m` for which OCS(m) matches full participation.

    The federation is a Dirichlet(:math:`\alpha = 0.5`) label split of ``load_digits`` into
    exactly :math:`n` clients (naturally unbalanced, without the removal step, as the seed's
    Shakespeare runs that motivated the conjecture). For each :math:`n`, full participation and
    OCS(m) for every :math:`m` of the grid below :math:`n` run on common random numbers
    (:func:`sweep_point`; here one generator for all, :math:`n` after :math:`n`).
    "OCS(m) matches full" means: the one-sided upper :math:`1-\alpha` Student-:math:`t` limit
    of :math:`\mathbb E[\mathrm{acc}_{\rm full} - \mathrm{acc}_{\rm OCS(m)}]` (validation
    accuracy averaged over the last 20% of rounds) is below :math:`\varepsilon = 0.01` (one
    accuracy point): a paired non-inferiority test, so a match is a positive finding with
    false-alarm level :math:`\alpha`.
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {tuple(PRESETS)}, got {preset!r}")
    cfg = PRESETS[preset]
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(
        seed if rng is None else rng)
    points = {n: sweep_point(n, preset=preset, seed=seed, replicas=cfg["sweep_replicas"],
                             rng=gen) for n in cfg["sweep_ns"]}
    return _sweep(points, preset, seed, alpha, cfg["sweep_replicas"])


# ------------------------------------------------------------------ the claim's runs in pieces
#: Rough seconds per scheme x replica x round of :func:`run_fedavg` on digits (one core), for
#: cutting the runs into pieces of about :data:`TASK_SECONDS` (a fixed function of the
#: preset's sizes: never of the executor).
_SECONDS_PER_SCHEME_ROUND = 1e-3
TASK_SECONDS = 8.0

#: One piece of a run: ``(name, function, keywords, cost in seconds)``.
Piece = tuple[str, Callable[..., Any], dict[str, Any], float]


def _chunks(schemes: int, rounds: int, replicas: int) -> list[tuple[int, int]]:
    """``(first, count)`` replica ranges of about :data:`TASK_SECONDS` each."""
    per = max(1, int(TASK_SECONDS / (schemes * rounds * _SECONDS_PER_SCHEME_ROUND)))
    k = -(-replicas // per)
    sizes = [replicas // k + (1 if j < replicas % k else 0) for j in range(k)]
    return list(zip([sum(sizes[:j]) for j in range(k)], sizes, strict=True))


def experiment_chunk(*, preset: str, seed: int, replicas: int,
                     rng: np.random.SeedSequence) -> FedAvgRun:
    """:func:`ocs_vs_uniform` on ``replicas`` replicas with the generator of ``rng``."""
    cfg = {**PRESETS[preset], "replicas": replicas}
    prob = digits_problem(SETUP["n_clients"], seed=seed)
    return run_fedavg(prob, m=SETUP["m"], rounds=cfg["rounds"], replicas=replicas,
                      local_lr=scheme_lrs(SCHEMES), global_lr=SETUP["global_lr"],
                      batch_size=SETUP["batch_size"], j_max=SETUP["j_max"],
                      rng=np.random.default_rng(rng), dtype=SETUP["dtype"])


def experiment_pieces(preset: str, seed: int, stream: np.random.SeedSequence) -> list[Piece]:
    """The full / uniform / OCS / AOCS comparison of ``ocs.experiment`` in replica ranges of
    about :data:`TASK_SECONDS` (:func:`experiment_chunk`), each with a generator spawned from
    ``stream``; :func:`experiment_combine` joins their results."""
    cfg = PRESETS[preset]
    chunks = _chunks(len(SCHEMES), cfg["rounds"], cfg["replicas"])
    seeds = stream.spawn(len(chunks))
    return [(f"r{first}", experiment_chunk,
             {"preset": preset, "seed": seed, "replicas": count, "rng": ss},
             count * len(SCHEMES) * cfg["rounds"] * _SECONDS_PER_SCHEME_ROUND)
            for (first, count), ss in zip(chunks, seeds, strict=True)]


def experiment_combine(preset: str, seed: int, runs: list[FedAvgRun]) -> FedAvgRun:
    """The comparison from the results of :func:`experiment_pieces` (in its order)."""
    run = FedAvgRun.concat(runs)
    prob = digits_problem(SETUP["n_clients"], seed=seed)
    run.config.update({"preset": preset, "seed": seed, "sizes": prob.sizes.tolist()})
    return run


def sweep_pieces(preset: str, seed: int,
                 stream: Callable[[int], np.random.SeedSequence]) -> list[list[Piece]]:
    r"""The :math:`m = O(\sqrt n)` sweep of ``ocs.experiment``: per :math:`n`, replica ranges
    of about :data:`TASK_SECONDS` (:func:`sweep_point`), each with a generator spawned from
    ``stream(n)``; :func:`sweep_combine` judges their results."""
    cfg = PRESETS[preset]
    K, R = cfg["sweep_rounds"], cfg["sweep_replicas"]
    groups = []
    for n in cfg["sweep_ns"]:
        S = 1 + len(_sweep_grid(n, preset))
        chunks = _chunks(S, K, R)
        seeds = stream(n).spawn(len(chunks))
        groups.append([(f"n{n}-r{first}", sweep_point,
                        {"n": n, "preset": preset, "seed": seed, "replicas": count, "rng": ss},
                        count * S * K * _SECONDS_PER_SCHEME_ROUND)
                       for (first, count), ss in zip(chunks, seeds, strict=True)])
    return groups


def sweep_combine(preset: str, seed: int, groups: list[list[dict[str, Any]]]) -> SqrtNSweep:
    """The sweep from the results of :func:`sweep_pieces` (grouped by :math:`n`), judged at
    :data:`fedtheory.stats.DEFAULT_ALPHA`."""
    cfg = PRESETS[preset]
    points = {n: {**parts[0], "acc": np.concatenate([p["acc"] for p in parts], axis=1)}
              for n, parts in zip(cfg["sweep_ns"], groups, strict=True)}
    return _sweep(points, preset, seed, stats.DEFAULT_ALPHA, cfg["sweep_replicas"])

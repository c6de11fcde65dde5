"""Tasks (fedtheory.tasks): a claim's Monte Carlo work cut into pieces that give, combined, the
same numbers whoever computes them; planning lists the pieces without running them (an explicit
plan, no exception), and the results reach the claim in its run's cache."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from fedtheory import runner, tasks
from fedtheory.cache import PROCESS_CACHE, Cache
from fedtheory.claimkit.core import Claim, ClaimKind, Context, Evidence
from fedtheory.claims import get_claim
from fedtheory.executors import SerialExecutor
from fedtheory.experiments import fedavg_experiments as fx
from fedtheory.experiments import fedavg_runs
from fedtheory.experiments import ocs_fedavg as ox
from fedtheory.runner import Job, plan, run_jobs, run_task
from fedtheory.simulate import simulate
from fedtheory.tasks import Plan, dataset, plan_claim, replica_chunks, run_tasks, task

CALLS: list[int] = []


def _draw(*, seed: np.random.SeedSequence, size: int) -> np.ndarray:
    CALLS.append(size)
    return np.random.default_rng(seed).random(size)


@dataset("test.tasks")
def _demo(ctx):
    seeds = ctx.seed_sequence("draws").spawn(3)
    return Plan([task(f"c{j}", _draw, cost=2.0 + j, seed=s, size=4)
                 for j, s in enumerate(seeds)], np.concatenate)


@dataset("test.shared")
def _shared(ctx):
    seeds = ctx.seed_sequence("draws").spawn(2)
    return Plan([task(f"c{j}", _draw, cost=1.0, seed=s, size=2)
                 for j, s in enumerate(seeds)], np.concatenate)


@dataset("test.shared.other")
def _own(ctx):
    return Plan([task("c", _draw, seed=ctx.seed_sequence("own"), size=3)], lambda r: r[0])


@dataset("test.broken")
def _broken(ctx):
    raise RuntimeError("cannot plan")


def _claim(cid: str, datasets: tuple) -> Claim:
    """A claim whose one check reads ``datasets`` (concatenated)."""
    claim = Claim(id=cid, family="test", seed_ref="-", title=cid, statement="-",
                  kind=ClaimKind.IDENTITY, datasets=datasets)
    claim.check("monte_carlo", "data")(lambda ctx: Evidence(
        True, np.concatenate([np.atleast_1d(d(ctx)) for d in datasets]).tolist(), None))
    return claim


@pytest.mark.parametrize(("replicas", "per"), [(1, 1), (10, 4), (10, 10), (7, 100), (1000, 7)])
def test_replica_chunks_cover_the_replicas_in_order(replicas, per):
    chunks = replica_chunks(replicas, per)
    assert [f for f, _ in chunks] == list(np.cumsum([0] + [c for _, c in chunks])[:-1])
    assert sum(c for _, c in chunks) == replicas
    assert max(c for _, c in chunks) <= per
    assert max(c for _, c in chunks) - min(c for _, c in chunks) <= 1
    assert len(chunks) == -(-replicas // per)
    # the experiments' own cuts (pure compute: no import of fedtheory.tasks) are the same
    assert fedavg_runs._ranges(replicas, per) == chunks


def test_bad_input():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="replicas must be an integer >= 1"):
            replica_chunks(bad, 2)
        with pytest.raises(ValueError, match="per_task must be an integer >= 1"):
            replica_chunks(2, bad)
    for bad in ("", "a/b"):
        with pytest.raises(ValueError, match="name must be a non-empty string without '/'"):
            task(bad, abs)
    with pytest.raises(ValueError, match="cost must be >= 0"):
        task("x", abs, cost=float("nan"))
    with pytest.raises(ValueError, match="task names must be unique within a dataset"):
        Plan([task("x", abs), task("x", abs)], list)
    with pytest.raises(ValueError, match="tasks must be Task objects"):
        Plan([abs], list)
    with pytest.raises(ValueError, match="combine must be callable"):
        Plan([], None)
    with pytest.raises(ValueError, match="claim_id must be a non-empty string"):
        dataset("")
    with pytest.raises(ValueError, match="must return a Plan"):
        dataset("x.y")(lambda ctx: [1, 2]).plan("quick", 0)
    with pytest.raises(ValueError, match="seed must be None with a context"):
        _demo(Context(seed=1), 2)
    with pytest.raises(ValueError, match="results must be a mapping"):
        Cache([1, 2])
    with pytest.raises(ValueError, match="cache must be a fedtheory.cache.Cache"):
        Context(cache={})
    with pytest.raises(ValueError, match="datasets must be Dataset objects"):
        plan_claim(_claim("test.bad", ()).__class__(
            id="test.bad", family="test", seed_ref="-", title="-", statement="-",
            kind=ClaimKind.IDENTITY, datasets=(abs,)), "quick", 0)
    with pytest.raises(ValueError, match="task_seconds must be > 0"):
        fedavg_runs.replica_pieces([], task_seconds=0.0)


def test_degenerate_plans():
    """A plan with no tasks combines nothing; a claim with no datasets plans nothing."""
    empty = dataset("test.empty")(lambda ctx: Plan([], lambda r: len(r)))
    assert empty.plan("quick", 0).tasks == () and empty.compute("quick", 0) == 0
    assert Plan.grouped([], lambda r: r).combine([]) == []
    assert plan_claim(_claim("test.none", ()), "quick", 0).tasks == ()
    assert run_tasks([]) == []


def test_planning_lists_the_tasks_without_running_them():
    CALLS.clear()
    planned = _demo.plan("quick", 3).tasks
    assert CALLS == []
    assert [t.key for t in planned] == [f"test.tasks/demo/quick/3/c{j}" for j in range(3)]
    assert [t.cost for t in planned] == [2.0, 3.0, 4.0]


def test_handed_in_results_are_used_and_give_the_computed_data():
    planned = _demo.plan("quick", 0).tasks
    results = {t.key: t.run() for t in planned}
    CALLS.clear()
    assert np.array_equal(_demo.compute("quick", 0, results), _demo.compute("quick", 0))
    assert CALLS == [4, 4, 4]  # only the second build computed its tasks
    # in a check: the context's cache holds the results the run handed in
    CALLS.clear()
    cache = Cache(results)
    ctx = Context(preset="quick", seed=0, claim_id="test.any", cache=cache)
    assert np.array_equal(_demo(ctx), _demo.compute("quick", 0))
    assert CALLS == [4, 4, 4]  # (the reference above), none for the cached build
    assert _demo.key("quick", 0) in cache and _demo(ctx) is _demo(ctx)
    # a handed-in value is really what the build combines
    fake = {planned[0].key: np.full(4, -1.0)}
    assert np.all(_demo.compute("quick", 0, fake)[:4] == -1.0)
    assert _demo.key("quick", 0) not in Cache()  # nothing shared between caches


def test_a_task_that_raises_is_reported_not_fatal():
    done = run_task(task("boom", _draw, seed=None, size=-1))
    assert done.result is None and "ValueError" in done.error and done.seconds >= 0
    ok = run_task(_demo.plan("quick", 0).tasks[0])
    assert ok.error is None and ok.result.shape == (4,)


def test_claims_plan_their_tasks_with_unique_keys():
    """Keys unique within a claim's plan; a key in several plans (a dataset the claims share,
    keyed under its owner) is one and the same task."""
    seen: dict[str, tasks.Task] = {}
    for cid in ("fedavg.local_steps", "fedavg.heterogeneity", "fedavg.partial_participation",
                "ocs.experiment", "fdms.complexity_reduction",
                "fdms.complexity_reduction.corrected"):
        claim = get_claim(cid)
        planned = plan_claim(claim, "full", 0).tasks
        keys = [t.key for t in planned]
        assert len(planned) > 1 and len(set(keys)) == len(keys)
        owners = {ds.owner for ds in claim.datasets}
        assert all(k.split("/")[0] in owners and "/full/0/" in k for k in keys)
        assert all(t.cost > 0 for t in planned)
        for t in planned:
            if t.key in seen:
                assert t == seen[t.key]
            seen.setdefault(t.key, t)
    # the corrected fdms claim shares the parent's simulations, not its negative-gap run
    parent = {t.key for t in plan(Job("fdms.complexity_reduction", "full", 0)).tasks}
    corrected = {t.key for t in plan(Job("fdms.complexity_reduction.corrected", "full",
                                         0)).tasks}
    assert corrected < parent
    assert {k.split("/")[1] for k in corrected} == {"elimination_runs", "complexity_data"}
    assert plan(Job("is.unbiased", "full", 0)).tasks == ()


def test_a_planning_error_is_the_claims_error(monkeypatch):
    """A claim whose dataset cannot be planned ends as error (check 'plan', the reason), not as
    a run without its tasks; the other claims of the run keep their verdicts."""
    claims = {"test.broken": _claim("test.broken", (_broken,)),
              "test.tasks": _claim("test.tasks", (_demo,))}
    monkeypatch.setattr(runner, "get_claim", claims.__getitem__)
    CALLS.clear()
    out = run_jobs([Job(cid, "quick", 0) for cid in claims], executor=SerialExecutor())
    assert out[0].verdict.value == "error" and out[0].checks[0].name == "plan"
    assert "RuntimeError: cannot plan" in out[0].checks[0].error
    assert out[1].verdict.value == "confirmed" and CALLS == [4, 4, 4]
    with pytest.raises(RuntimeError, match="cannot plan"):
        plan(Job("test.broken", "quick", 0))


def test_claims_sharing_a_dataset_plan_the_same_tasks():
    keys = [[t.key for t in plan_claim(claim, "quick", 1).tasks]
            for claim in (_claim("test.shared", (_shared,)),
                          _claim("test.shared.other", (_shared, _own)))]
    shared = [f"test.shared/shared/quick/1/c{j}" for j in range(2)]
    assert keys == [shared, [*shared, "test.shared.other/own/quick/1/c"]]


def test_a_shared_task_runs_once_for_every_claim_that_plans_it(monkeypatch):
    """Two claims whose checks read a shared dataset: one run of each shared task, both
    claims given its result (nothing recomputed), the same numbers as computed alone."""
    claims = {"test.shared": _claim("test.shared", (_shared,)),
              "test.shared.other": _claim("test.shared.other", (_shared, _own))}
    monkeypatch.setattr(runner, "get_claim", claims.__getitem__)
    expected = _shared.compute("quick", 2).tolist()
    CALLS.clear()
    out = run_jobs([Job(cid, "quick", 2) for cid in claims], executor=SerialExecutor())
    # each task once: the shared two (size 2) and the other claim's own (size 3)
    assert sorted(CALLS) == [2, 2, 3]
    assert out[0].checks[0].measured == expected
    assert out[1].checks[0].measured[:4] == expected
    assert _shared.key("quick", 2) not in PROCESS_CACHE  # the run's caches were its own


def test_a_claims_checks_read_only_the_datasets_it_declares():
    """Every dataset a tasked claim's checks build is one it declares (so a run plans and
    hands in all of its tasks)."""
    claim = get_claim("fedavg.partial_participation")
    cache = Cache()
    claim.verify(preset="quick", seed=0, cache=cache)
    built = {k[1:3] for k in cache.keys() if k[0] == "dataset"}
    assert built == {(d.owner, d.name) for d in claim.datasets}


def _imported(module: str) -> list[str]:
    """The fedtheory.runner / tasks / claims modules a fresh interpreter has after importing
    ``module``."""
    code = (f"import json, sys, {module}; print(json.dumps(sorted(m for m in sys.modules if "
            "m.startswith(('fedtheory.runner', 'fedtheory.tasks', 'fedtheory.claims')))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def test_executors_and_experiments_import_no_runner_claims_or_tasks():
    """No import circle runner <-> executors (executors know nothing of claims); the
    experiments of the tasked claims are pure compute (no claims, no tasks)."""
    assert _imported("fedtheory.executors") == []
    for name in ("fedavg_runs", "fdms_paper", "fedau_patterns", "fedau_runs"):
        assert _imported(f"fedtheory.experiments.{name}") == [], name
    # ocs_runs reaches fedtheory.claimkit.core only through fedtheory.stats (the stats <->
    # claims.core circle of issue 18, another helper's): never runner or tasks
    assert not [m for m in _imported("fedtheory.experiments.ocs_runs")
                if not m.startswith("fedtheory.claims")]


def test_first_replica_ranges_are_bitwise_the_whole_run():
    prob = fx.make_problem(1.0, n=6, d=4, mu=0.2, L=1.0, problem_seed=0)
    from fedtheory.participation import UniformParticipation
    from fedtheory.problems import GaussianNoise

    kw = {"rounds": 7, "lr": 0.1, "local_steps": 2, "noise": GaussianNoise(0.5), "seed": 3,
          "keep_replicas": True}
    whole = simulate(prob, "fedavg", UniformParticipation(6, 2), replicas=9, **kw)
    parts = [simulate(prob, "fedavg", UniformParticipation(6, 2), replicas=c,
                      first_replica=f, **kw) for f, c in replica_chunks(9, 4)]
    assert np.array_equal(whole.x, np.concatenate([p.x for p in parts]))
    # metrics: the same iterates, reduced over other numbers of rows (last bits may differ)
    cut = np.concatenate([p.dist2.replicas for p in parts])
    # a sum of d = 4 non-negative terms is within d eps of the exact one in any order
    assert np.allclose(whole.dist2.replicas, cut, rtol=2 * 4 * np.finfo(float).eps, atol=0)
    with pytest.raises(ValueError, match="first_replica"):
        simulate(prob, "fedavg", UniformParticipation(6, 2), replicas=2, first_replica=-1,
                 **kw)


def test_runs_cut_into_tasks_are_bitwise_the_uncut_runs():
    prob = fx.make_problem(1.0, n=6, d=4, mu=0.2, L=1.0, problem_seed=0)
    specs = [{"problem": prob, "rule": rule, "participants": 3, "lr": 0.1, "local_steps": 2,
              "rounds": 20, "replicas": 50, "sigma2": 0.5, "seed": 5, "x0": None}
             for rule in ("fedavg", "scaffold")]
    cut = fedavg_runs.run_in_pieces(specs, task_seconds=1e-5)  # many small pieces
    assert max(len(p) for p in fedavg_runs.replica_pieces(specs, task_seconds=1e-5)) > 1
    for a, b in zip(cut, fx.run_all(specs), strict=True):
        for key in ("bits", "x"):
            assert np.array_equal(a[key], b[key])
        for key in ("dist2", "grad_norm2"):  # sums of d = 4 squares of the same iterates
            assert np.allclose(a[key], b[key], rtol=2 * 4 * np.finfo(float).eps, atol=0)


def test_ocs_runs_concatenate_along_replicas():
    prob = ox.digits_problem(8, seed=0, unbalanced=False)
    kw = {"m": 2, "rounds": 2, "local_lr": 1.0, "local_steps": 1}
    a = ox.run_fedavg(prob, replicas=2, rng=0, **kw)
    b = ox.run_fedavg(prob, replicas=3, rng=1, **kw)
    both = ox.FedAvgRun.concat([a, b])
    assert both.loss.shape == (4, 5, 3) and both.aocs_iterations.shape == (5, 2)
    assert np.array_equal(both.loss[:, 2:], b.loss) and both.config["replicas"] == 5


def test_new_parameters_reject_bad_values():
    from fedtheory.simulate import max_threads

    for bad in (0, -1, 1.5):
        with pytest.raises(ValueError, match="n must be"):
            with max_threads(bad):
                pass
    prob = ox.digits_problem(8, seed=0, unbalanced=False)
    for bad in (-1, 3, 1.0):
        with pytest.raises(ValueError, match="measure_from must be an integer in"):
            ox.run_fedavg(prob, m=2, rounds=2, replicas=1, local_lr=1.0, measure_from=bad)
    run = ox.run_fedavg(prob, m=2, rounds=2, replicas=1, local_lr=1.0, local_steps=1,
                        measure_from=2)  # only the last round measured
    assert np.isnan(run.loss[..., :2]).all() and np.isfinite(run.loss[..., 2]).all()

"""Tasks (fedtheory.tasks): a claim's Monte Carlo work cut into pieces that give, combined, the
same numbers whoever computes them; planning lists the pieces without running them."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory import runner, tasks
from fedtheory.claims.core import Claim, ClaimKind, Evidence
from fedtheory.executors import SerialExecutor
from fedtheory.experiments import fedavg_experiments as fx
from fedtheory.experiments import fedavg_runs
from fedtheory.experiments import ocs_fedavg as ox
from fedtheory.runner import Job, plan, run_jobs, run_task
from fedtheory.simulate import simulate
from fedtheory.tasks import claim_tasks, dataset, gather, provided, replica_chunks, task

CALLS: list[int] = []


def _draw(*, seed: np.random.SeedSequence, size: int) -> np.ndarray:
    CALLS.append(size)
    return np.random.default_rng(seed).random(size)


@dataset("test.tasks")
def _demo(ctx):
    seeds = ctx.seed_sequence("draws").spawn(3)
    return np.concatenate(gather([task(f"c{j}", _draw, cost=2.0 + j, seed=s, size=4)
                                  for j, s in enumerate(seeds)]))


@dataset("test.shared", "test.shared.other")
def _shared(ctx):
    seeds = ctx.seed_sequence("draws").spawn(2)
    return np.concatenate(gather([task(f"c{j}", _draw, cost=1.0, seed=s, size=2)
                                  for j, s in enumerate(seeds)]))


@dataset("test.shared.other")
def _own(ctx):
    return gather([task("c", _draw, seed=ctx.seed_sequence("own"), size=3)])[0]


@pytest.mark.parametrize(("replicas", "per"), [(1, 1), (10, 4), (10, 10), (7, 100), (1000, 7)])
def test_replica_chunks_cover_the_replicas_in_order(replicas, per):
    chunks = replica_chunks(replicas, per)
    assert [f for f, _ in chunks] == list(np.cumsum([0] + [c for _, c in chunks])[:-1])
    assert sum(c for _, c in chunks) == replicas
    assert max(c for _, c in chunks) <= per
    assert max(c for _, c in chunks) - min(c for _, c in chunks) <= 1
    assert len(chunks) == -(-replicas // per)


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
        gather([task("x", abs), task("x", abs)])
    with pytest.raises(ValueError, match="claim_id must be a non-empty string"):
        dataset("")
    with pytest.raises(ValueError, match="claim_id must be a non-empty string"):
        dataset("x.y", "")


def test_planning_lists_the_tasks_without_running_them():
    CALLS.clear()
    planned = _demo.tasks("quick", 3)
    assert CALLS == []
    assert [t.key for t in planned] == [f"test.tasks/demo/quick/3/c{j}" for j in range(3)]
    assert [t.cost for t in planned] == [2.0, 3.0, 4.0]


def test_provided_results_are_used_and_give_the_computed_data():
    planned = _demo.tasks("quick", 0)
    results = {t.key: t.run() for t in planned}
    CALLS.clear()
    with provided(results):
        assert np.array_equal(_demo.build_fresh("quick", 0), _demo("quick", 0))
    assert CALLS == []  # nothing recomputed
    assert tasks._PROVIDED == {}  # and nothing left behind
    # a provided value is really what gather returns
    fake = {planned[0].key: np.full(4, -1.0)}
    with provided(fake):
        assert np.all(_demo.build_fresh("quick", 0)[:4] == -1.0)


def test_a_task_that_raises_is_reported_not_fatal():
    done = run_task(task("boom", _draw, seed=None, size=-1))
    assert done.result is None and "ValueError" in done.error and done.seconds >= 0
    ok = run_task(_demo.tasks("quick", 0)[0])
    assert ok.error is None and ok.result.shape == (4,)


def test_claims_plan_their_tasks_with_unique_keys():
    """Keys unique within a claim's plan; a key in several plans (a dataset the claims share,
    keyed under its owner) is one and the same task."""
    seen: dict[str, tasks.Task] = {}
    for cid in ("fedavg.local_steps", "fedavg.heterogeneity", "fedavg.partial_participation",
                "ocs.experiment", "fdms.complexity_reduction",
                "fdms.complexity_reduction.corrected"):
        planned = claim_tasks(cid, "full", 0)
        keys = [t.key for t in planned]
        assert len(planned) > 1 and len(set(keys)) == len(keys)
        owners = {ds.claim_id for ds in tasks._DATASETS[cid]}
        assert all(k.split("/")[0] in owners and "/full/0/" in k for k in keys)
        assert all(t.cost > 0 for t in planned)
        for t in planned:
            if t.key in seen:
                assert t == seen[t.key]
            seen.setdefault(t.key, t)
    # the corrected fdms claim shares the parent's simulations, not its negative-gap run
    parent = {t.key for t in claim_tasks("fdms.complexity_reduction", "full", 0)}
    corrected = {t.key for t in claim_tasks("fdms.complexity_reduction.corrected", "full", 0)}
    assert corrected < parent
    assert {k.split("/")[1] for k in corrected} == {"elimination_runs", "complexity_data"}
    assert claim_tasks("is.unbiased", "full", 0) == []
    assert plan(Job("no.such", "quick", 0)) == []  # planning failures: the claim reports them


def test_claims_sharing_a_dataset_plan_the_same_tasks(monkeypatch):
    from fedtheory.claims import registry

    monkeypatch.setattr(registry, "get_claim", lambda cid: None)
    keys = [[t.key for t in claim_tasks(cid, "quick", 1)]
            for cid in ("test.shared", "test.shared.other")]
    shared = [f"test.shared/shared/quick/1/c{j}" for j in range(2)]
    assert keys == [shared, [*shared, "test.shared.other/own/quick/1/c"]]
    assert _shared.claim_ids == ("test.shared", "test.shared.other")


def test_a_shared_task_runs_once_for_every_claim_that_plans_it(monkeypatch):
    """Two claims whose checks build a shared dataset afresh: one run of each shared task,
    both claims given its result (nothing recomputed), the same numbers as computed alone."""
    from fedtheory.claims import registry

    def make(cid):
        claim = Claim(id=cid, family="test", seed_ref="-", title=cid, statement="-",
                      kind=ClaimKind.IDENTITY)
        claim.check("monte_carlo", "data")(lambda ctx: Evidence(
            True, _shared.build_fresh(ctx.preset, ctx.seed).tolist(), None))
        return claim

    claims = {cid: make(cid) for cid in ("test.shared", "test.shared.other")}
    monkeypatch.setattr(registry, "get_claim", claims.__getitem__)
    monkeypatch.setattr(runner, "get_claim", claims.__getitem__)
    expected = _shared.build_fresh("quick", 2).tolist()
    CALLS.clear()
    out = run_jobs([Job(cid, "quick", 2) for cid in claims], executor=SerialExecutor())
    # each task once: the shared two (size 2) and the other claim's own (size 3)
    assert sorted(CALLS) == [2, 2, 3]
    assert [r.checks[0].measured for r in out] == [expected, expected]
    assert tasks._PROVIDED == {}


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


def test_runs_cut_into_tasks_are_bitwise_the_uncut_runs(monkeypatch):
    prob = fx.make_problem(1.0, n=6, d=4, mu=0.2, L=1.0, problem_seed=0)
    specs = [{"problem": prob, "rule": rule, "participants": 3, "lr": 0.1, "local_steps": 2,
              "rounds": 20, "replicas": 50, "sigma2": 0.5, "seed": 5, "x0": None}
             for rule in ("fedavg", "scaffold")]
    monkeypatch.setattr(fedavg_runs, "TASK_SECONDS", 1e-5)  # many small tasks
    cut = fedavg_runs.run_in_tasks(specs)
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

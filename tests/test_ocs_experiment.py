"""FedAvg with full / uniform / OCS / AOCS participation (seed 002, Section 5) and its claim."""

import numpy as np
import pytest

from fedtheory.claims import checks
from fedtheory.experiments import ocs_fedavg as ox
from fedtheory.experiments import ocs_runs
from fedtheory.problems.logistic import make_logistic_problem

from ._tolerance import assert_close_normwise


@pytest.fixture(scope="module")
def small():
    """Binary logistic regression on breast cancer, 6 unequal clients (fast)."""
    return make_logistic_problem("breast_cancer", n_clients=6, alpha=0.5, seed=3, lam=1e-2)


def _gd(prob, x, lr, rounds):
    for _ in range(rounds):
        x = x - lr * prob.grad(x)
    return x


def test_full_batch_single_step_is_gradient_descent(small):
    # one local full-batch step, full participation: x+ = x - eta_g eta_l sum_i w_i grad f_i(x)
    run = ox.run_fedavg(small, m=small.n, rounds=4, replicas=2, local_lr=0.3, global_lr=0.5,
                        batch_size=None, local_steps=1, schemes=("full",), rng=0)
    x = _gd(small, np.zeros(small.d), 0.15, 4)
    assert_close_normwise(run.loss[0, :, -1], small.loss(x), 1e-12)
    # one epoch with a batch as large as every client: the same single step
    run2 = ox.run_fedavg(small, m=small.n, rounds=4, replicas=2, local_lr=0.3, global_lr=0.5,
                         batch_size=10_000, schemes=("full",), rng=1)
    assert_close_normwise(run2.loss, run.loss, 1e-12)


def test_local_steps_match_a_manual_loop(small):
    # two local full-batch GD steps per client, then the weighted average (eta_g = 1)
    run = ox.run_fedavg(small, m=small.n, rounds=2, replicas=1, local_lr=0.2,
                        batch_size=None, local_steps=2, schemes=("full",), rng=0)
    x = np.zeros(small.d)
    for _ in range(2):
        y = np.repeat(x[None], small.n, axis=0)
        for _ in range(2):
            y = y - 0.2 * small.client_grads_at(y)
        x = x - small.weights @ (x[None] - y)
    assert_close_normwise(run.loss[0, 0, -1], small.loss(x), 1e-12)


def test_m_equal_n_reduces_to_full_participation(small):
    run = ox.run_fedavg(small, m=small.n, rounds=5, replicas=3, local_lr=0.5, rng=4,
                        schemes=("full", "uniform", "ocs"))
    for s in ("uniform", "ocs"):
        assert_close_normwise(run.loss[run.index(s)], run.loss[0], 1e-12)
    assert np.all(run.senders == small.n)


def test_common_random_numbers_make_schemes_paired(small):
    run = ox.run_fedavg(small, m=(small.n, 2, 2), schemes=("full", "ocs", "ocs"), rounds=6,
                        replicas=4, local_lr=0.5, rng=7)
    # bit-identical: both schemes are the same per-scheme computations (batched matrix
    # products of the same shapes) on the same numbers; and a rerun repeats every call
    np.testing.assert_array_equal(run.loss[1], run.loss[2])
    again = ox.run_fedavg(small, m=(small.n, 2, 2), schemes=("full", "ocs", "ocs"), rounds=6,
                          replicas=4, local_lr=0.5, rng=7)
    np.testing.assert_array_equal(again.loss, run.loss)
    f32 = ox.run_fedavg(small, m=(small.n, 2, 2), schemes=("full", "ocs", "ocs"), rounds=6,
                        replicas=4, local_lr=0.5, rng=7, dtype=np.float32)
    np.testing.assert_allclose(f32.loss[0], run.loss[0], rtol=1e-4)


def _local_models(prob, lr, steps):
    """Every client's model after ``steps`` full-batch GD steps from x = 0, shape (n, d)."""
    y = np.zeros((prob.n, prob.d))
    for _ in range(steps):
        y = y - lr * prob.client_grads_at(y)
    return y


@pytest.mark.parametrize("scheme", ["uniform", "ocs", "aocs"])
def test_aggregate_is_unbiased(small, scheme):
    """One round from x^0 = 0 with deterministic local updates (full-batch GD): the partial
    schemes' x^1 = sum_{i in S} (w_i / p_i) y_i has mean x^1_full = sum_i w_i y_i
    (two-sided, alpha = 1e-6, Bonferroni over the d coordinates)."""
    y = _local_models(small, 0.5, 3)
    x_full = small.weights @ y
    run_full = ox.run_fedavg(small, m=small.n, rounds=1, replicas=1, local_lr=0.5,
                             batch_size=None, local_steps=3, schemes=("full",), rng=0)
    assert_close_normwise(run_full.loss[0, 0, -1], small.loss(x_full), 1e-12)
    u = small.weights * np.linalg.norm(y, axis=1)
    p = {"uniform": np.full(small.n, 2.0 / small.n),
         "ocs": ox.optimal_probabilities(u, 2.0),
         "aocs": ox.aocs_probabilities(u, 2.0, 4).p}[scheme]
    send = np.random.default_rng(11).random((4000, small.n)) < p
    xs = np.where(send, small.weights / p, 0.0) @ y
    ev = checks.check_identity(xs, x_full, alpha=1e-6, what=f"E[x^1_{scheme}]")
    assert ev.passed, ev.detail


def test_driver_round_matches_the_hand_written_round(small):
    """The driver's OCS round equals the hand-written one on the same uniforms (replica r's
    from the engine's participation stream, SeedSequence(seed, spawn_key=(r, 0)))."""
    run = ox.run_fedavg(small, m=2, rounds=1, replicas=50, local_lr=0.5, batch_size=None,
                        local_steps=3, schemes=("ocs",), rng=np.random.default_rng(5))
    seed = ox.engine_seed(np.random.default_rng(5))
    assert run.config["seed"] == seed
    v = np.stack([np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(r, 0)))
                  .random(small.n) for r in range(50)])
    y = _local_models(small, 0.5, 3)
    p = ox.optimal_probabilities(small.weights * np.linalg.norm(y, axis=1), 2)
    x1 = np.where(v < p, small.weights / p, 0.0) @ y
    np.testing.assert_allclose(run.loss[0, :, -1], small.loss(x1), rtol=1e-10)
    np.testing.assert_array_equal(run.senders[0, :, 0], (v < p).sum(axis=1))


def test_bit_accounting(small):
    run = ox.run_fedavg(small, m=2, rounds=5, replicas=3, local_lr=0.5, rng=2, float_bits=32)
    d, n = small.d, small.n
    per_round = np.diff(run.bits, axis=-1)
    f, u, o, a = (run.index(s) for s in ("full", "uniform", "ocs", "aocs"))
    np.testing.assert_array_equal(per_round[f], 32 * n * d)
    np.testing.assert_array_equal(per_round[u], 32 * d * run.senders[u])
    np.testing.assert_array_equal(per_round[o], 32 * (n + d * run.senders[o]))
    np.testing.assert_array_equal(per_round[a], 32 * (n + 2 * n * run.aocs_iterations
                                                      + d * run.senders[a]))
    assert np.all((run.aocs_iterations >= 1) & (run.aocs_iterations <= 4))
    np.testing.assert_allclose(run.expected_senders[u], 2.0)
    assert np.all(run.expected_senders[o] <= 2.0 + 1e-12)
    assert run.aocs_equals_ocs.dtype == bool


def test_budget_lookup_and_areas():
    bits = np.array([[[0.0, 10.0, 20.0, 30.0]], [[0.0, 5.0, 50.0, 55.0]]])
    vals = np.array([[[4.0, 3.0, 2.0, 1.0]], [[4.0, 2.0, 1.0, 0.5]]])
    run = ox.FedAvgRun(schemes=("uniform", "ocs"), loss=vals, accuracy=vals, bits=bits,
                       senders=np.zeros((2, 1, 3)), expected_senders=np.zeros((2, 1, 3)),
                       f_star=0.0)
    np.testing.assert_array_equal(run.at_budget(vals, np.array([20.0])), [[2.0], [2.0]])
    np.testing.assert_array_equal(run.at_budget(vals, np.array([4.0])), [[4.0], [4.0]])
    np.testing.assert_array_equal(ox.common_budget(run), [30.0])
    np.testing.assert_allclose(ox.area_per_round(run, vals), [[2.0], [7 / 6]])
    # budgets 15 and 30 with two points: uniform (3 + 1) / 2, ocs (2 + 2) / 2
    np.testing.assert_allclose(ox.area_per_bit(run, vals, points=2), [[2.0], [2.0]])
    assert ox.curves_per_bit(run, vals, [0.0, 55.0]).shape == (2, 1, 2)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"m": 0}, "m must satisfy"),
        ({"m": 100}, "m must satisfy"),
        ({"m": (1, 2)}, "m must be a number or one number per scheme"),
        ({"rounds": 0}, "rounds must be a positive integer"),
        ({"replicas": 1.5}, "replicas must be a positive integer"),
        ({"local_lr": -1.0}, "local_lr must be"),
        ({"local_lr": (1.0, np.nan, 1.0, 1.0)}, "local_lr must be"),
        ({"local_lr": (1.0, 0.5)}, "local_lr must be"),
        ({"global_lr": np.inf}, "global_lr must be"),
        ({"batch_size": 0}, "batch_size must be"),
        ({"local_steps": 0}, "local_steps must be"),
        ({"j_max": 0}, "j_max must be"),
        ({"schemes": ("full", "random")}, "schemes must be names"),
        ({"schemes": ("aocs", "aocs")}, "at most one 'aocs'"),
        ({"dtype": np.float16}, "dtype must be"),
    ],
)
def test_validation(small, kwargs, match):
    args = {"m": 2, "rounds": 1, "replicas": 1, "local_lr": 0.1} | kwargs
    with pytest.raises(ValueError, match=match):
        ox.run_fedavg(small, **args)


def test_unbalanced_digits_federation():
    prob = ox.digits_problem(32, seed=0)
    # Section 5.2: every kept client is small (<= a) or large (>= b); medium ones are gone
    mean = round(1797 * 0.8) / 32
    a, b = ox.SETUP["unbalance_a"], int(np.ceil(1.5 * mean))
    assert prob.n < 32
    assert np.all((prob.sizes <= a) | (prob.sizes >= b)), prob.sizes
    # the concentration of the authors' FEMNIST Dataset 2: ~20% of clients hold ~90% of data
    for seed in range(3):
        sizes = np.sort(ox.digits_problem(32, seed=seed).sizes)[::-1]
        top = sizes[:int(np.ceil(0.2 * sizes.size))].sum() / sizes.sum()
        assert 0.85 <= top <= 0.95, (seed, top)
    assert prob.multinomial and prob.d == 650
    natural = ox.digits_problem(16, seed=0, unbalanced=False)
    assert natural.n == 16 and natural.sizes.sum() == round(1797 * 0.8)
    with pytest.raises(ValueError, match="preset must be one of"):
        ox.ocs_vs_uniform("medium")
    with pytest.raises(ValueError, match="preset must be one of"):
        ocs_runs.sqrt_n_sweep("medium")


def test_sqrt_n_sweep_bookkeeping(monkeypatch):
    tiny = {"rounds": 2, "replicas": 3, "sweep_ns": (4, 8), "sweep_rounds": 3,
            "sweep_replicas": 5, "sweep_grid": (1, 2)}
    monkeypatch.setitem(ox.PRESETS, "quick", tiny)
    sw = ocs_runs.sqrt_n_sweep("quick", seed=0, alpha=0.05, rng=0)
    assert sw.ns == (4, 8)
    assert sw.grids[4] == (1, 2, 3) and sw.grids[8] == (1, 2, 3)  # + ceil(c sqrt n) = 3
    for n in sw.ns:
        assert sw.acc_gap[n].shape == (3, 5)
        assert np.all(sw.lower[n] <= sw.upper[n])
        ok = [m for m, up in zip(sw.grids[n], sw.upper[n], strict=True) if up < sw.epsilon]
        assert sw.m_star[n] == (ok[0] if ok else None)
        # the limits are Student-t ones (compare_paired), with the detectable effect
        for j in range(len(sw.grids[n])):
            ev = checks.compare_paired(-sw.acc_gap[n][j], np.zeros(5), "not worse", sw.epsilon,
                                      alpha=0.05)
            # bit-identical: the same compare_paired on the same numbers (negation is exact)
            np.testing.assert_allclose([sw.lower[n][j], sw.upper[n][j]],
                                       [-ev.data["upper"], -ev.data["lower"]], rtol=1e-12)
            assert sw.detectable[n][j] == pytest.approx(ev.data["detectable_effect"])
    assert sw.tests == 6
    assert [sw.seed_budget(n) for n in (8, 16, 32, 64, 128)] == [3, 5, 6, 9, 12]


def test_claim_is_registered_with_its_checks():
    from fedtheory.claims.ocs.experiment import CLAIM as EXPERIMENT

    kinds = {c.name: c.kind for c in EXPERIMENT.checks}
    assert kinds == {"between_per_round": "monte_carlo", "best_per_bit": "monte_carlo",
                     "aocs_matches_ocs": "monte_carlo", "sqrt_n_conjecture": "monte_carlo",
                     "ocs_vs_uniform_figure": "figure", "sqrt_n_figure": "figure"}


def test_one_step_per_scheme_is_the_separate_runs(small):
    """Steps per scheme: each scheme's run is the one it has alone with its step (the random
    numbers do not depend on the schemes: paired), e.g. the tuned steps of the claim."""
    both = ox.run_fedavg(small, m=2, schemes=("ocs", "uniform"), local_lr=(0.5, 0.25),
                         rounds=3, replicas=4, rng=3)
    for i, (scheme, lr) in enumerate((("ocs", 0.5), ("uniform", 0.25))):
        alone = ox.run_fedavg(small, m=2, schemes=(scheme,), local_lr=lr, rounds=3, replicas=4,
                              rng=3)
        assert_close_normwise(both.loss[i], alone.loss[0], 1e-12)
    np.testing.assert_array_equal(both.config["local_lr"], [0.5, 0.25])
    assert ox.scheme_lrs(("full", "uniform", "ocs", "aocs")) == tuple(
        ox.SETUP["local_lr"][s] for s in ("full", "uniform", "ocs", "aocs"))


def test_tuning_extends_the_grid_until_the_best_is_interior(small):
    res = ox.tune_local_lr(small, ("full", "uniform"), m=2, rounds=3, replicas=2,
                           start=(2.0**-4, 2.0**-5), rng=1)
    for scheme, scores in res["scores"].items():
        tried = sorted(scores)
        assert {2.0**-4, 2.0**-5} <= set(tried)
        best = res["best"][scheme]
        assert scores[best] == max(scores.values())
        assert tried[0] < best < tried[-1], (scheme, scores)
    assert res["extensions"] >= 1
    with pytest.raises(ValueError, match="start must be positive"):
        ox.tune_local_lr(small, m=2, rounds=1, replicas=1, start=(0.0,))
    with pytest.raises(ValueError, match="rounds must be"):
        ox.tune_local_lr(small, m=2, rounds=0, replicas=1)


@pytest.mark.slow
@pytest.mark.parametrize("which", ["main", "sweep"])
def test_tuned_steps_are_reproduced(which):
    """The steps of ox.SETUP are what the seed's tuning procedure gives (ox.TUNING)."""
    t = ox.TUNING[which]
    prob = ox.digits_problem(t["n_clients"], seed=t["seed"], unbalanced=t["unbalanced"])
    res = ox.tune_local_lr(prob, t["schemes"], m=t["m"], rounds=t["rounds"],
                           replicas=t["replicas"], rng=t["rng"])
    assert res["best"] == t["best"]
    if which == "main":
        assert all(ox.SETUP["local_lr"][s] == v for s, v in t["best"].items())
        assert ox.SETUP["local_lr"]["aocs"] == t["best"]["ocs"]
    else:
        assert ox.SETUP["sweep_local_lr"] == t["best"]


def test_the_card_states_the_tuned_steps():
    from fedtheory.claims.ocs.experiment import CLAIM as EXPERIMENT

    card = {r.aspect: r for r in EXPERIMENT.setup.rows}
    text = card["hyper-parameters"].run
    assert "full 2^2, uniform 2^0, OCS and AOCS 2^1" in text
    assert ox.SETUP["local_lr"] == {"full": 4.0, "uniform": 1.0, "ocs": 2.0, "aocs": 2.0}
    sweep = {r.aspect: r for r in EXPERIMENT.setup.rows if isinstance(r.run, dict)}
    assert any("η_l = 2^0 for full, 2^-1 for OCS" in r.run["quick"] for r in sweep.values())
    assert ox.SETUP["sweep_local_lr"] == {"full": 1.0, "ocs": 0.5}
    assert "a = 2" in card["data"].run and ox.SETUP["unbalance_a"] == 2

"""The authors' regime of ``fedau.participation_patterns`` (seed 001, FedAU's public code):
participation patterns and weights against plain transcriptions of the code's logic, the
instance generator, the exact long-run weightings, and the simulator's invariants."""

import math
from fractions import Fraction

import numpy as np
import pytest

from fedtheory.algorithms.fedau import fedau_state
from fedtheory.experiments import fedau_patterns as fp
from fedtheory.participation.fedau_sampler import JoinRateMarkov, OffsetCyclic
from fedtheory.theory.fedau import (
    cyclic_offset_participating_weight,
    implicit_weight,
    join_rate_chain,
    method_weighting,
    offset_cycle,
    participating_weight,
)

from ._tolerance import assert_close_normwise


# ------------------------------------------------------------------ the code's logic, by hand
def code_markov(p, q, first, uniforms):
    """The code's ``markov-q`` sampler (util.WorkerSampler) for one client: initial state
    from the uniform ``first``, then one transition per round before it is read."""
    leave = q * (1 / p - 1)
    join = q
    if leave > 1:
        join /= leave
        leave = 1
    on = first < p
    out = []
    for u in uniforms:
        if on:
            if u < leave:
                on = False
        elif u < join:
            on = True
        out.append(on)
    return out


def code_cyclic(p, cycle, offset, rounds):
    """The code's ``cyclic-P`` sampler for one client, started with ``rounds_to_switch`` =
    ``offset``."""
    active = max(1, int(np.round(cycle * p)))
    inactive = max(1, cycle - active)
    on, left, out = False, offset, []
    for _ in range(rounds):
        if left == 0:
            on = not on
            left = active if on else inactive
        left -= 1
        out.append(on)
    return out


def code_weights(mask, K):
    """main.py's adaptive weight of one client at each of its participations: the mean of
    the intervals recorded so far (1 before the first), an interval recorded at each
    participation (non-participations since the last one, plus one) or when K
    non-participations accumulate."""
    intervals, missed, out = [], 0, []
    for on in mask:
        if on:
            out.append(float(np.mean(intervals)) if intervals else 1.0)
            intervals.append(missed + 1)
            missed = 0
        else:
            missed += 1
            if missed >= K:
                intervals.append(missed)
                missed = 0
    return out


@pytest.mark.parametrize("p", [0.02, 0.04, 0.1, 0.5, 0.9])
def test_join_rate_markov_is_the_code_sampler(p):
    """One client, one replica: the process draws one uniform for the initial state and one
    per round, so the same uniforms fed to the code's logic give the same record."""
    got = JoinRateMarkov([p], to_active=0.05).sample(np.random.default_rng(7), 1, 60)
    u = np.random.default_rng(7).random(61)
    assert got[:, 0, 0].tolist() == code_markov(p, 0.05, u[0], u[1:])


def test_join_rate_markov_stationary_and_correlation():
    p = np.array([0.02, 0.04, 0.1, 0.5, 0.9])
    proc = JoinRateMarkov(p, to_active=0.05)
    # relative: two or three divisions and subtractions, each within one ulp
    np.testing.assert_allclose(proc.p_on / (proc.p_on + proc.p_off), p, rtol=1e-12)
    # relative: as above (the correlations are at least 0.02 in size)
    np.testing.assert_allclose(proc.correlation[2:], 1 - 0.05 / p[2:], rtol=1e-12)
    # relative: as above
    np.testing.assert_allclose(proc.correlation[:2], -p[:2] / (1 - p[:2]), rtol=1e-12)
    masks = proc.sample(np.random.default_rng(0), 4000, 50).astype(float)  # (T, R, n)
    se = np.sqrt(p * (1 - p) / 4000)
    assert np.all(np.abs(masks[0].mean(axis=0) - p) < 6 * se)  # stationary from round 0
    for x, (join, leave) in zip(p, (join_rate_chain(Fraction(str(x)), Fraction(1, 20))
                                    for x in p), strict=True):
        assert float(join / (join + leave)) == pytest.approx(x, rel=1e-12)
    with pytest.raises(ValueError, match="p must be below 1"):
        JoinRateMarkov([1.0])
    with pytest.raises(ValueError, match="to_active must be"):
        JoinRateMarkov([0.5], to_active=0.0)


@pytest.mark.parametrize("p", [0.02, 0.025, 0.035, 0.3, 0.9])
def test_offset_cyclic_is_the_code_sampler(p):
    proc = OffsetCyclic([p], period=100)
    m, off = offset_cycle(Fraction(str(p)), 100)
    assert (int(proc.on_rounds[0]), int(proc.off_rounds[0])) == (m, off)
    for offset in sorted({0, 1, off // 2, off - 1}):
        state = {"replicas": 1, "t": 0, "offset": np.array([[offset]])}
        got = []
        for _ in range(350):
            got.append(bool(proc._step(state, None)[0, 0]))
            state["t"] += 1
        assert got == code_cyclic(p, 100, offset, 350), offset
    # the offsets are uniform on {0, ..., off - 1}
    st = proc.init(np.random.default_rng(1), 20000)
    counts = np.bincount(st["offset"][:, 0], minlength=off)
    assert counts.size == off and counts.min() > 0
    assert proc.stationary[0] == pytest.approx(m / (m + off))


@pytest.mark.parametrize("K", [3, 50, math.inf])
def test_algorithm2_weights_are_the_code_weights(K):
    """The weight the code gives a participating client equals Algorithm 2's omega_t at
    that round (fedau_state), for the authors' patterns."""
    rng = np.random.default_rng(3)
    p = np.array([0.02, 0.05, 0.3, 0.8])
    for proc in (JoinRateMarkov(p), OffsetCyclic(p, period=100)):
        masks = proc.sample(rng, 2, 700)  # (T, R, n)
        omega = fedau_state(np.moveaxis(masks, 0, 1), K)["omega"]  # (R, T, n)
        for r in range(2):
            for n in range(p.size):
                on = masks[:, r, n]
                # relative: a running mean against np.mean of at most 700 integers
                np.testing.assert_allclose(omega[r, on, n], code_weights(on, K), rtol=1e-12)


# ------------------------------------------------------------------ exact weightings
def test_exact_implicit_weights_match_long_simulations():
    """lim E[1_t omega_t]: exact (implicit_weight) against Algorithm 2 on long records."""
    p = np.array([0.02, 0.025, 0.1, 0.6])
    T, burn = 8000, 2000
    for proc, name, kw in ((JoinRateMarkov(p), "markov_join", {"to_active": Fraction(1, 20)}),
                           (OffsetCyclic(p, period=100), "cyclic_offset", {"period": 100})):
        masks = proc.sample(np.random.default_rng(5), 40, T)
        for K in (50, math.inf):
            om = fedau_state(np.moveaxis(masks, 0, 1), K)["omega"]  # (R, T, n)
            got = (np.moveaxis(masks, 0, 1) * om)[:, burn:].mean(axis=(0, 1))
            want = [float(implicit_weight(name, Fraction(str(x)), K, **kw)) for x in p]
            np.testing.assert_allclose(got, want, rtol=0.06, err_msg=f"{name}, K={K}")
    assert implicit_weight("cyclic_offset", Fraction(1, 40), math.inf, period=100) == 1
    assert method_weighting("known", "cyclic_offset", [Fraction(1, 40)], period=100) == [
        Fraction(4, 5)]


def test_participating_weight_integer_form_and_cyclic_time_average():
    p = [Fraction(k, 1000) for k in (20, 20, 137, 500, 901)]
    # exact form against the plain O(N^3) construction
    brute = []
    for n, pn in enumerate(p):
        law = [Fraction(1)]
        for m, pm in enumerate(p):
            if m != n:
                law = [(law[k] if k < len(law) else 0) * (1 - pm)
                       + (law[k - 1] * pm if k else 0) for k in range(len(law) + 1)]
        brute.append(pn * sum(w / (k + 1) for k, w in enumerate(law)))
    assert participating_weight(p) == brute
    # cyclic: the time-averaged form against the records of OffsetCyclic
    pf = np.array([0.02, 0.05, 0.3, 0.6])
    exact = cyclic_offset_participating_weight(pf, 100)
    masks = OffsetCyclic(pf, period=100).sample(np.random.default_rng(2), 3000, 200)[100:]
    emp = len(pf) * (masks / np.maximum(masks.sum(axis=2, keepdims=True), 1)).mean(axis=(0, 1))
    np.testing.assert_allclose(emp, exact, rtol=0.05)
    with pytest.raises(ValueError, match="cycle must have length"):
        cyclic_offset_participating_weight([0.999], 100)


# ------------------------------------------------------------------ instances and runs
def test_authors_partition_and_probabilities():
    data = fp.digits_split(0)
    inst = fp.make_instance(data["y"], 50, np.random.SeedSequence([0, 1, 0]))
    idx = np.concatenate(inst.parts)
    assert np.array_equal(np.sort(idx), np.arange(data["y"].size))  # a partition
    assert inst.sizes.min() >= 1 and inst.sizes.max() < 4 * inst.sizes.mean()
    assert np.all(inst.p >= 0.02) and np.all(inst.p <= 1)
    np.testing.assert_allclose(inst.label_dist.sum(axis=1), 1.0)
    np.testing.assert_allclose(inst.p, np.maximum(0.02, inst.label_dist @ inst.multiplier))
    # the same seed, the same instance; the test set is held out
    again = fp.make_instance(data["y"], 50, np.random.SeedSequence([0, 1, 0]))
    assert all(np.array_equal(a, b) for a, b in zip(inst.parts, again.parts, strict=True))
    assert data["X"].shape[0] + data["X_test"].shape[0] == 1797
    with pytest.raises(ValueError, match="pattern must be one of"):
        fp.make_process("periodic", inst.p)


def test_simulator_invariants():
    data = fp.digits_split(0)
    insts = fp._instances(0, 0, 3, 12)
    runs = [(m, 0.05, 1.0) for m in fp.METHODS] + [("average all", 0.05, 1.0)]
    out = fp.simulate_pattern(data, insts, "cyclic", rounds=40, runs=runs,
                              seed=0, evals=[20, 40])
    assert out["f"].shape == (6, 3, 2) and np.all(np.isfinite(out["f"]))
    # K = 50 and K = inf coincide before any interval reaches 50 rounds (shared draws);
    # the same run twice gives the same numbers
    np.testing.assert_array_equal(out["f"][0], out["f"][1])
    np.testing.assert_array_equal(out["f"][3], out["f"][5])
    # every instance improves on x = 0 (f(0) = log 10)
    assert np.all(out["f"][:, :, -1] < math.log(10))
    assert np.all((out["test_acc"] >= 0) & (out["test_acc"] <= 1))
    with pytest.raises(ValueError, match="runs must name methods"):
        fp.simulate_pattern(data, insts, "cyclic", rounds=5, runs=[("fedavg", 0.1, 1.0)],
                            seed=0, evals=[5])
    with pytest.raises(ValueError, match="evals must be rounds"):
        fp.simulate_pattern(data, insts, "cyclic", rounds=5, runs=runs,
                            seed=0, evals=[6])


def _reference_round(data, inst, pattern, method, gam, glr, seed, replica, steps, batch):
    """One round of the authors' training written out by hand (no engine, no LogisticProblem):
    the engine's participation and sample-order streams of ``replica``, ``steps`` mini-batch
    SGD steps on min(batch, s_n) distinct samples, the method's aggregation; returns x_1."""
    X, y, N = data["X"], data["y"], len(inst.parts)
    C, nf = 10, X.shape[1]

    def gen(which):
        return np.random.Generator(np.random.PCG64(
            np.random.SeedSequence(seed, spawn_key=(replica, which))))

    proc = fp.make_process(pattern, inst.p)
    g0 = [gen(0)]
    mask = proc.step(proc.init(g0, 1), g0)[0][0]
    s_max = int(inst.sizes.max())
    keys = gen(3).random((N, s_max))
    keys[np.arange(s_max)[None, :] >= inst.sizes[:, None]] = 2.0
    order = np.argsort(keys, axis=1)
    B = min(batch, s_max)
    x0 = np.zeros((C, nf))
    total = np.zeros_like(x0)
    active = np.flatnonzero(mask)
    for n in active:
        q, s = inst.parts[n], inst.sizes[n]
        v = x0.copy()
        for k in range(steps):
            rows = q[order[n, [(k * B + j) % s for j in range(min(B, s))]]]
            Z = X[rows] @ v.T
            P = np.exp(Z - Z.max(axis=1, keepdims=True))
            P /= P.sum(axis=1, keepdims=True)
            P[np.arange(rows.size), y[rows]] -= 1.0
            v = v - gam * (P.T @ X[rows] / rows.size + fp.LAM * v)
        coef = {"FedAU (K=inf)": 1 / N, "average participating": 1 / active.size,
                "average all": 1 / N, "known statistics": 1 / (N * inst.p[n])}[method]
        total += coef * (v - x0)
    return x0 + glr * total, mask


def test_engine_port_matches_a_hand_written_round():
    """simulate_pattern (the engine) takes the same first round as the hand-written one, for
    every aggregation, and every method sees the same participation record."""
    data = fp.digits_split(0)
    insts = fp._instances(0, 1, 1, 8)  # instance 1: two clients take part in round 1
    methods = ["FedAU (K=inf)", "average participating", "average all", "known statistics"]
    runs = [(m, 0.1, 1.5) for m in methods]
    out = fp.simulate_pattern(data, insts, "Bernoulli", rounds=1, runs=runs, seed=0,
                              first=4, evals=[1], local_steps=3, batch=16,
                              dtype=np.float64)
    X, y = data["X"], data["y"]
    for s, inst in enumerate(insts):
        N = len(inst.parts)
        for j, m in enumerate(methods):
            x1, mask = _reference_round(data, inst, "Bernoulli", m, 0.1, 1.5, 0, 4 + s, 3, 16)
            x1 = x1.ravel()
            Z = x1.reshape(10, -1) @ X.T  # (C, samples): f = (1/N) sum_n F_n + lam/2 |x|^2
            ell = np.log(np.exp(Z).sum(axis=0)) - Z[y, np.arange(y.size)]
            f = np.mean([ell[q].mean() for q in inst.parts]) + fp.LAM / 2 * np.sum(x1 ** 2)
            # three float64 SGD steps (products over 65 features and 16 samples), then f:
            # the two roundings of the trajectory agree to a few hundred eps of f
            assert_close_normwise(out["f"][j, s, 0], f, rtol=1e-11)
            for key, A, labels in (("train_acc", X, y),
                                   ("test_acc", data["X_test"], data["y_test"])):
                L = x1.reshape(10, -1) @ A.T
                top2 = np.sort(L, axis=0)[-2:]
                ties = np.mean(top2[1] - top2[0] < 1e-9)  # rounding may break ties apart
                acc = np.mean(L.argmax(axis=0) == labels)
                assert abs(out[key][j, s, 0] - acc) <= ties
        assert out["participation_rate"][s] == mask.sum() / N
        assert mask.sum() == 2  # average participating differs from average all
    with pytest.raises(ValueError, match="method must be one of"):
        fp.method_rule("fedavg", insts[0].p)
    with pytest.raises(ValueError, match="first must be a non-negative integer"):
        fp.simulate_pattern(data, insts, "Bernoulli", rounds=1, runs=runs, seed=0, first=-1,
                            evals=[1])


def test_patterns_table_is_wired(monkeypatch):
    monkeypatch.setitem(fp.PRESETS, "tiny", {"instances": 3, "rounds": 20, "clients": 12,
                                             "eval_every": 2, "per_task": 2})
    tab = fp.patterns_table("tiny", 0)
    assert set(tab["f_gap"]) == set(fp.PATTERNS)
    for key in ("f_gap", "train_acc", "test_acc"):
        for pat in fp.PATTERNS:
            assert set(tab[key][pat]) == set(fp.METHODS)
            assert all(v.shape == (3,) and np.all(np.isfinite(v))
                       for v in tab[key][pat].values())
    assert np.all(tab["f_gap"]["Bernoulli"]["known statistics"] > -1e-9)  # f* is the minimum
    assert tab["p"].shape == (3, 12) and tab["f_star"].shape == (3,)
    with pytest.raises(ValueError, match="preset must be"):
        fp.patterns_table("huge")


@pytest.mark.slow
def test_learning_rates_are_the_tuned_ones():
    """fedau_patterns.LEARNING_RATES is what tune_learning_rates gives (minutes)."""
    res = fp.tune_learning_rates()
    assert res["best"] == {m: tuple(v) for m, v in fp.LEARNING_RATES.items()}

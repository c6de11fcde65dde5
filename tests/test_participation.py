"""The same battery of checks for every participation process (frequencies against the
stationary probabilities, shapes, determinism by seed and across chunking of replicas,
validation), then each process's own properties."""

import inspect

import numpy as np
import pytest

from fedtheory import participation
from fedtheory.claims import checks
from fedtheory.participation import (
    PROCESSES,
    BernoulliParticipation,
    ClusterDropout,
    CorrelatedDropout,
    CyclicParticipation,
    DropoutParticipation,
    GroupedDropout,
    MarkovParticipation,
    ParticipationProcess,
    ReplayParticipation,
    UniformParticipation,
    get_process,
    uniforms,
)

P = np.array([0.05, 0.3, 0.5, 0.9, 1.0])

CASES = {
    "bernoulli": lambda: BernoulliParticipation(P),
    "uniform": lambda: UniformParticipation(5, 2),
    "markov": lambda: MarkovParticipation(P, correlation=0.6),
    "markov_negative": lambda: MarkovParticipation([0.4, 0.5, 0.6], correlation=-0.5),
    "cyclic": lambda: CyclicParticipation(P, period=7),
    "dropout": lambda: DropoutParticipation(6, 0.5),
    "dropout_max": lambda: DropoutParticipation(6, 0.5, distribution="max"),
    "cluster_dropout": lambda: ClusterDropout([0, 0, 1, 1, 2, 2], 0.4, schedule="random"),
    "correlated_dropout": lambda: CorrelatedDropout(6, 0.5, stay=0.8),
    # the battery expects a stationary first round: without the authors' full first round
    "grouped_dropout": lambda: GroupedDropout(8, 0.5, full_first=False),
}
#: The instances the schemes declare for this battery (``ParticipationProcess.examples``).
CASES |= {f"{cls.name}_example_{k}": (lambda e=e: e) for cls in PROCESSES.values()
          for k, e in enumerate(cls.examples())}

#: Processes without randomness (outside the random battery above; own tests below).
DETERMINISTIC = {
    "replay": lambda: ReplayParticipation(np.random.default_rng(0).random((9, 5)) < P),
}


#: Processes that see the round (stepped by the engine with a RoundView, not by step()):
#: their own battery is tests/test_round_aware.py.
ROUND_AWARE = {participation.OCSParticipation, participation.AOCSParticipation,
               participation.PowerOfChoice, participation.CustomParticipation,
               participation.FDMSFriendChoice}


def gens(seed, replicas, start=0):
    return [np.random.default_rng([seed, r]) for r in range(start, start + replicas)]


def test_every_process_is_registered_and_covered():
    exported = {
        obj for _, obj in inspect.getmembers(participation, inspect.isclass)
        if issubclass(obj, ParticipationProcess) and obj.name
        and obj is not participation.ProcessStack  # one registered process per replica
    }
    classes = set(PROCESSES.values())  # the exported ones and the schemes found in their file
    assert exported <= classes, exported - classes
    assert {type(make()) for make in (CASES | DETERMINISTIC).values()} | ROUND_AWARE == classes
    assert all(cls.sees_round for cls in ROUND_AWARE)


@pytest.mark.parametrize("case", sorted(CASES | DETERMINISTIC))
def test_shapes_and_stationary(case):
    proc = (CASES | DETERMINISTIC)[case]()
    st = proc.init(np.random.default_rng(0), 3)
    mask, st = proc.step(st, np.random.default_rng(1))
    assert mask.shape == (3, proc.n) and mask.dtype == bool
    pi = proc.stationary
    assert pi.shape == (proc.n,) and ((pi > 0) & (pi <= 1)).all()
    assert proc.expected_participants == pytest.approx(pi.sum())
    assert proc.sample(np.random.default_rng(0), 2, 4).shape == (4, 2, proc.n)
    assert repr(proc).startswith(type(proc).__name__)


@pytest.mark.parametrize("case", sorted(CASES))
def test_empirical_frequencies_match_stationary(case):
    """Per-replica frequencies over T rounds (independent across replicas) have mean p_i, at
    every round and on average; alpha = 1e-6 per check, Bonferroni over clients."""
    proc = CASES[case]()
    R, T = 400, 60
    masks = proc.sample(gens(7, R), R, T).astype(float)  # (T, R, n)
    ev = checks.check_identity(masks.mean(axis=0), proc.stationary)
    assert ev.passed, ev.detail
    # the first round is already stationary (chains and cycles start in their stationary law)
    ev0 = checks.check_identity(masks[0], proc.stationary)
    assert ev0.passed, ev0.detail


@pytest.mark.parametrize("case", sorted(CASES))
def test_determinism_and_chunking(case):
    proc = CASES[case]()
    whole = proc.sample(gens(3, 6), 6, 9)
    again = proc.sample(gens(3, 6), 6, 9)
    np.testing.assert_array_equal(whole, again)
    parts = [proc.sample(gens(3, k, start=s), k, 9) for s, k in ((0, 1), (1, 3), (4, 2))]
    np.testing.assert_array_equal(whole, np.concatenate(parts, axis=1))
    one = proc.sample(np.random.default_rng(5), 6, 9)
    np.testing.assert_array_equal(one, proc.sample(np.random.default_rng(5), 6, 9))
    assert not np.array_equal(whole, proc.sample(gens(4, 6), 6, 9)) or proc.stationary.min() == 1


def test_uniform_is_b_of_n_with_pair_probabilities():
    proc = UniformParticipation(6, 3)
    m = proc.sample(np.random.default_rng(0), 2000, 3).reshape(-1, 6)
    assert (m.sum(axis=1) == 3).all()
    pair = (m[:, :, None] & m[:, None, :]).astype(float)[:, 0, 1:]
    ev = checks.check_identity(pair, np.full(5, 3 * 2 / (6 * 5)))
    assert ev.passed, ev.detail
    assert UniformParticipation(4, 4).sample(np.random.default_rng(0), 3, 2).all()


def test_markov_correlation_and_transitions():
    proc = MarkovParticipation([0.2, 0.7], correlation=0.8)
    m = proc.sample(gens(1, 300), 300, 40).astype(float)
    prev, nxt = m[:-1], m[1:]
    p = proc.stationary
    # E[1^t 1^{t+1}] = p^2 + lambda p (1 - p), per replica averaged over time
    joint = (prev * nxt).mean(axis=0)
    ev = checks.check_identity(joint, p**2 + 0.8 * p * (1 - p))
    assert ev.passed, ev.detail
    np.testing.assert_allclose(proc.p_on / (proc.p_on + proc.p_off), p)
    assert MarkovParticipation(1.0, n=3).sample(np.random.default_rng(0), 2, 5).all()


def test_cyclic_runs():
    proc = CyclicParticipation([0.25, 0.5, 1.0], period=4)
    m = proc.sample(np.random.default_rng(0), 5, 12)
    # integer p * period: exactly that many rounds on per cycle, in one run
    np.testing.assert_array_equal(m[:4].sum(axis=0), np.tile([1, 2, 4], (5, 1)))
    np.testing.assert_array_equal(m[:4], m[4:8])
    aligned = CyclicParticipation(0.5, period=4, n=2, phase="aligned")
    a = aligned.sample(np.random.default_rng(0), 1, 8)[:, 0, 0]
    assert a.tolist() == [True, True, False, False] * 2


@pytest.mark.parametrize("dist", ["uniform", "max"])
@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.5, 0.7])
def test_dropout_ratio_bound(dist, alpha):
    proc = DropoutParticipation(10, alpha, distribution=dist)
    m = proc.sample(np.random.default_rng(1), 50, 20)
    ratio = 1 - m.sum(axis=-1) / 10
    assert (ratio <= alpha + 1e-12).all() and (m.sum(axis=-1) >= 1).all()
    if dist == "max":
        assert (10 - m.sum(axis=-1) == proc.max_dropped).all()
    else:
        assert set(np.unique(np.round(ratio * 10)).astype(int)) == set(range(proc.max_dropped + 1))
    assert DropoutParticipation(10, 0.3).max_dropped == 3
    assert DropoutParticipation(10, 0.7).max_dropped == 7


def test_uniforms_per_replica_generators():
    g = gens(0, 3)
    u = uniforms(g, 3, 2, 2)
    assert u.shape == (3, 2, 2)
    np.testing.assert_array_equal(u[2], gens(0, 1, start=2)[0].random((2, 2)))
    with pytest.raises(ValueError, match="one generator per replica"):
        uniforms(gens(0, 2), 3, 4)


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: BernoulliParticipation(0.0, n=3), r"p must be in \(0, 1\], got 0.0"),
        (lambda: BernoulliParticipation([0.5, 1.5]), r"p must be in \(0, 1\], got 1.5"),
        (lambda: BernoulliParticipation([0.5, np.nan]), r"p must be in \(0, 1\], got nan"),
        (lambda: BernoulliParticipation(-0.1, n=2), r"p must be in \(0, 1\], got -0.1"),
        (lambda: BernoulliParticipation(0.5), "n must be given"),
        (lambda: BernoulliParticipation([0.5, 0.5], n=3), "n=3 entries"),
        (lambda: UniformParticipation(5, 0), r"b must be an integer in \[1, n=5\], got 0"),
        (lambda: UniformParticipation(5, 6), "got 6"),
        (lambda: UniformParticipation(5, 2.5), "got 2.5"),
        (lambda: UniformParticipation(0, 1), "n must be a positive integer, got 0"),
        (lambda: MarkovParticipation(0.5, correlation=1.0, n=2), r"correlation must be in"),
        (lambda: MarkovParticipation([0.9], correlation=-0.5), "transition probabilities"),
        (lambda: MarkovParticipation(0.0, n=2), r"p must be in \(0, 1\]"),
        (lambda: CyclicParticipation(0.5, period=0, n=2), "period must be a positive integer"),
        (lambda: CyclicParticipation(0.5, n=2, phase="late"), "phase must be"),
        (lambda: CyclicParticipation(1.2, n=2), r"p must be in \(0, 1\], got 1.2"),
        (lambda: DropoutParticipation(5, 1.0), r"alpha must be in \[0, 1\), got 1.0"),
        (lambda: DropoutParticipation(5, -0.1), r"alpha must be in \[0, 1\)"),
        (lambda: DropoutParticipation(5, 0.2, distribution="x"), "distribution must be"),
        (lambda: get_process("poisson"), "must be one of .*'poisson'"),
        (lambda: get_process("uniform", n=3), "bad parameters"),
        (lambda: BernoulliParticipation(0.5, n=2).init(None, 0), "replicas must be"),
    ],
)
def test_validation(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_get_process_builds_each():
    assert isinstance(get_process("bernoulli", p=0.1, n=10), BernoulliParticipation)
    assert isinstance(get_process("uniform", n=10, b=2), UniformParticipation)
    assert isinstance(get_process("markov", p=0.1, n=10), MarkovParticipation)
    assert isinstance(get_process("cyclic", p=0.1, n=10), CyclicParticipation)
    assert isinstance(get_process("dropout", n=10, alpha=0.3), DropoutParticipation)
    assert isinstance(get_process("replay", masks=np.ones((2, 10), bool)), ReplayParticipation)


def test_replay_returns_the_given_masks_whatever_the_generators():
    rng = np.random.default_rng(3)
    masks = rng.random((6, 4, 5)) < 0.5
    proc = ReplayParticipation(masks, p=0.5)
    np.testing.assert_array_equal(proc.sample(gens(0, 4), 4, 6), masks)
    np.testing.assert_array_equal(proc.sample(np.random.default_rng(9), 4, 6), masks)
    np.testing.assert_array_equal(proc.stationary, np.full(5, 0.5))
    # (T, n): one mask per round, shared by every replica and any number of replicas
    shared = ReplayParticipation(masks[:, 0])
    np.testing.assert_array_equal(shared.sample(gens(1, 3), 3, 6),
                                  np.repeat(masks[:, :1], 3, axis=1))
    # bit-identical: counts of 0/1 are exact, then one division by T
    np.testing.assert_array_equal(shared.stationary, masks[:, 0].mean(axis=0))
    got = proc.sample(None, 4, 6)  # returned masks are copies: the replay cannot be changed
    got[:] = False
    np.testing.assert_array_equal(proc.sample(None, 4, 6), masks)
    assert not proc.masks.flags.writeable


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: ReplayParticipation(np.ones((2, 3))), "boolean array"),
        (lambda: ReplayParticipation(np.ones(3, bool)), r"shape \(T, R, n\) or \(T, n\)"),
        (lambda: ReplayParticipation(np.ones((0, 3), bool)), "non-empty"),
        (lambda: ReplayParticipation(np.ones((2, 3), bool), p=0.0), r"p must be in \(0, 1\]"),
        (lambda: ReplayParticipation(np.ones((2, 3), bool), p=[0.5, 0.5]), "n=3 entries"),
        (lambda: ReplayParticipation(np.ones((2, 4, 3), bool)).init(None, 2),
         "replicas must be 4"),
        (lambda: ReplayParticipation(np.ones((2, 3), bool)).sample(None, 1, 3),
         "masks hold 2 rounds, round 2 was asked for"),
    ],
)
def test_replay_validation(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_the_two_on_off_chains_are_one_implementation():
    """MarkovParticipation and FedAU's JoinRateMarkov run the one two-state chain
    (markov.OnOffChain), each with its draw convention: an active client stays when u < 1 -
    p_off (Markov), or leaves when u < p_off (the FedAU code's draw)."""
    from fedtheory.participation import MarkovParticipation
    from fedtheory.participation.fedau_sampler import JoinRateMarkov
    from fedtheory.participation.markov import OnOffChain

    for cls in (MarkovParticipation, JoinRateMarkov):
        assert issubclass(cls, OnOffChain)
        assert not {"_init", "_step", "stationary"} & set(cls.__dict__), cls
    p = np.array([0.2, 0.5, 0.9])
    for proc in (MarkovParticipation(p, correlation=0.6), JoinRateMarkov(p, to_active=0.3)):
        got = proc.sample(np.random.default_rng(3), 5, 40)  # (T, R, n)
        u = np.random.default_rng(3).random((41, 5, 3))  # the start, then one per round
        on = u[0] < p
        for t in range(40):
            stays = (u[t + 1] >= proc.p_off) if proc.leave_below else (u[t + 1] < 1 - proc.p_off)
            on = np.where(on, stays, u[t + 1] < proc.p_on)
            np.testing.assert_array_equal(got[t], on)

"""A diverging simulation: one clear DivergenceWarning, no raw numpy RuntimeWarnings, and the
round of divergence of each replica in the result; and a clear error for a non-finite x0."""

import re
import warnings

import numpy as np
import pytest

from fedtheory.participation import BernoulliParticipation
from fedtheory.problems import QuadraticProblem
from fedtheory.simulate import DivergenceWarning, SimulationResult, simulate
from fedtheory.validation import finite_array

N, D = 10, 5


@pytest.fixture(scope="module")
def problem():
    return QuadraticProblem.heterogeneous(N, D, L=1.0, mu=0.1, sigma_G2=1.0,
                                          rng=np.random.default_rng(0))


def _run(problem, **kw):
    """simulate(...) and every warning it issued (none filtered out)."""
    args = dict(rounds=400, replicas=4, lr=50.0, x0=np.ones(D), keep_replicas=True,
                extra_metrics={"finite": lambda x: np.isfinite(x).all(axis=1).astype(float)})
    args.update(kw)
    participation = args.pop("participation", BernoulliParticipation(0.5, n=N))
    rule = args.pop("rule", "fedavg")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = simulate(problem, rule, participation, **args)
    return res, caught


def _first_nonfinite_round(res: SimulationResult) -> np.ndarray:
    """Per replica, the first recorded round whose iterate had a non-finite entry (-1: none)."""
    finite = res.extra["finite"].replicas  # (R, rounds recorded), 1.0 while x_t is finite
    out = np.full(finite.shape[0], -1)
    for r in range(finite.shape[0]):
        bad = np.flatnonzero(finite[r] == 0.0)
        if bad.size:
            out[r] = res.rounds[bad[0]]
    return out


def test_divergence_is_reported_once_and_nothing_else(problem):
    res, caught = _run(problem)
    # exactly one warning, a DivergenceWarning: no raw RuntimeWarning (overflow, invalid value)
    assert [w.category for w in caught] == [DivergenceWarning], [str(w.message) for w in caught]
    assert issubclass(DivergenceWarning, RuntimeWarning)
    msg = str(caught[0].message)
    # the record: every replica's first non-finite round, equal to what the iterates show
    assert res.diverged.shape == (4,) and res.diverged.dtype.kind == "i"
    np.testing.assert_array_equal(res.diverged, _first_nonfinite_round(res))
    assert np.all(res.diverged >= 1)
    first = int(res.diverged.min())
    assert f"first at round {first} of 400" in msg
    assert "4 of 4 replicas" in msg and "(replicas 0, 1, 2, 3)" in msg
    assert "smaller learning rate" in msg and "lr=50" in msg
    assert caught[0].filename == __file__  # points at the caller of simulate
    # the traces carry the divergence (NaN/inf), the warning only reports it
    assert not np.isfinite(res.f_gap.mean[-1])


def test_only_the_diverging_replicas_are_named(problem):
    # full participation and exact gradients: a replica started at x* stays there (up to
    # rounding, amplified by |1 - lr L| = 4 per round: still finite after 100 rounds); one
    # started at 1e300 overflows within a few rounds
    x0 = np.tile(problem.x_star, (5, 1))
    x0[[1, 3]] = 1e300
    res, caught = _run(problem, x0=x0, replicas=5, rounds=100, lr=5.0,
                       participation=BernoulliParticipation(1.0, n=N))
    assert [w.category for w in caught] == [DivergenceWarning]
    assert res.diverged[[0, 2, 4]].tolist() == [-1, -1, -1]
    assert np.all(res.diverged[[1, 3]] >= 1)
    np.testing.assert_array_equal(res.diverged, _first_nonfinite_round(res))
    msg = str(caught[0].message)
    assert "2 of 5 replicas" in msg and "(replicas 1, 3)" in msg
    assert f"first at round {int(res.diverged[[1, 3]].min())} of 100" in msg


def test_many_replicas_are_listed_shortened(problem):
    res, caught = _run(problem, replicas=25)
    assert [w.category for w in caught] == [DivergenceWarning]
    msg = str(caught[0].message)
    assert "25 of 25 replicas" in msg
    assert "(replicas 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... and 15 more)" in msg
    np.testing.assert_array_equal(res.diverged, _first_nonfinite_round(res))


@pytest.mark.parametrize(
    "kw",
    [
        dict(workers=2, chunk=2, replicas=6),  # chunks in threads: still one warning
        dict(dtype=np.float32),
        dict(local_steps=3),  # fused closed-form local steps
        dict(local_steps=3, fuse_local_steps=False, rule="scaffold"),
        dict(rule="mifa"),
        dict(momentum=0.5, record_every=7),
        dict(lr=25.0, global_lr=2.0),
    ],
)
def test_divergence_in_every_engine_path(problem, kw):
    res, caught = _run(problem, **kw)
    assert [w.category for w in caught] == [DivergenceWarning], [str(w.message) for w in caught]
    assert np.all(res.diverged >= 1)
    first = int(res.diverged.min())
    assert re.search(rf"first at round {first} of \d+", str(caught[0].message))
    if "global_lr" in kw:
        assert "lr=25 with global_lr=2" in str(caught[0].message)
    if kw.get("record_every", 1) == 1:
        np.testing.assert_array_equal(res.diverged, _first_nonfinite_round(res))


def test_a_converging_run_warns_nothing(problem):
    res, caught = _run(problem, lr=0.1, rounds=200)
    assert caught == []
    np.testing.assert_array_equal(res.diverged, [-1, -1, -1, -1])
    assert np.all(np.isfinite(res.f_gap.mean))
    # also the default (unrecorded replicas, two workers)
    res, caught = _run(problem, lr=0.1, rounds=50, replicas=8, workers=2, keep_replicas=False,
                       extra_metrics=None)
    assert caught == [] and res.diverged.tolist() == [-1] * 8


def test_divergence_warning_can_be_silenced_or_raised(problem):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DivergenceWarning)
        with pytest.raises(DivergenceWarning, match="the run diverged"):
            simulate(problem, "fedavg", BernoulliParticipation(0.5, n=N), rounds=400,
                     replicas=2, lr=50.0, x0=np.ones(D))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", DivergenceWarning)
        res = simulate(problem, "fedavg", BernoulliParticipation(0.5, n=N), rounds=400,
                       replicas=2, lr=50.0, x0=np.ones(D))
    assert np.all(res.diverged >= 1)


# -------------------------------------------------------------------------------------------
# x0 with NaN or inf
# -------------------------------------------------------------------------------------------

def _simulate_from(problem, x0, replicas=2):
    return simulate(problem, "fedavg", BernoulliParticipation(0.5, n=N), rounds=2,
                    replicas=replicas, lr=0.1, x0=x0)


def test_x0_with_nan_names_x0_and_the_entries(problem):
    x0 = np.ones(D)
    x0[2] = np.nan
    with pytest.raises(ValueError, match=r"^x0 must be finite, but it has 1 NaN entry "
                                         r"\(at index 2\)$"):
        _simulate_from(problem, x0)
    x0[4] = -np.inf
    with pytest.raises(ValueError, match=r"^x0 must be finite, but it has 1 NaN entry \(at "
                                         r"index 2\) and 1 infinite entry \(at index 4\)$"):
        _simulate_from(problem, x0)


def test_x0_per_replica_with_nan_gives_replica_and_coordinate(problem):
    x0 = np.zeros((3, D))
    x0[1, 0] = np.inf
    x0[2, 3] = np.nan
    with pytest.raises(ValueError, match=r"1 NaN entry \(at index \(2, 3\)\) and 1 infinite "
                                         r"entry \(at index \(1, 0\)\)"):
        _simulate_from(problem, x0, replicas=3)
    with pytest.raises(ValueError, match=r"x0 must be finite, but it has 15 NaN entries \(at "
                                         r"indices \(0, 0\), \(0, 1\), \(0, 2\), \(0, 3\), "
                                         r"\(0, 4\), \.\.\. \(15 in all\)\)"):
        _simulate_from(problem, np.full((3, D), np.nan), replicas=3)


def test_x0_shape_and_type_errors_stay_clear(problem):
    with pytest.raises(ValueError, match=r"x0 must be finite with shape \(5,\) or \(2, 5\), "
                                         r"got shape \(6,\)"):
        _simulate_from(problem, np.zeros(D + 1))
    with pytest.raises(ValueError, match=r"x0 must be an array of real numbers"):
        _simulate_from(problem, ["a"] * D)
    # a valid x0 is taken as given (a list is fine)
    assert _simulate_from(problem, [1.0] * D).x.shape == (2, D)


def test_finite_array_helper():
    np.testing.assert_array_equal(finite_array("v", [1, 2], [(2,), (3, 2)]), [1.0, 2.0])
    with pytest.raises(ValueError, match=r"^v must be finite with shape \(2,\) or \(3, 2\), "
                                         r"got shape \(1,\)$"):
        finite_array("v", [1.0], [(2,), (3, 2)])
    with pytest.raises(ValueError, match=r"^v must be finite, but it has 2 infinite entries "
                                         r"\(at indices 0, 1\)$"):
        finite_array("v", [np.inf, -np.inf], [(2,)])

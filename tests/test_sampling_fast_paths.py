"""The fast paths of the samplers (benchmarks/bench_ocs.py, bench_estimators.py) against plain
references: the threshold of eq. (7) by selection against the sort, and the vectorised partial
Fisher--Yates shuffle (with its kept table) against a loop over rows."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from fedtheory.sampling import designs, ocs_solver, shuffle
from fedtheory.sampling.designs import UniformWithoutReplacement, _partial_shuffle
from fedtheory.sampling.moments import sample_estimator
from fedtheory.sampling.ocs import ocs_threshold, optimal_probabilities, optimal_variance

from ._tolerance import assert_close_sum

EPS = float(np.finfo(float).eps)

# ------------------------------------------------------------------ OCS: selection vs sort


def _by_sort(u, m, monkeypatch):
    """The same call with the selection path switched off (the sort path of every n)."""
    with monkeypatch.context() as mp:
        mp.setattr(ocs_solver, "_SELECT_MIN_N", 1 << 62)
        return optimal_probabilities(u, m), ocs_threshold(u, m), optimal_variance(u, m)


def _instances():
    rng = np.random.default_rng(7)
    n = ocs_solver._SELECT_MIN_N + 17
    lognormal = rng.lognormal(0.0, 2.0, n)
    zeros = np.where(rng.random(n) < 0.7, 0.0, rng.exponential(1.0, n))
    ties = np.repeat(rng.lognormal(0.0, 1.0, 40), -(-n // 40))[:n]
    rng.shuffle(ties)
    two = np.where(rng.random(n) < 0.5, 1.0, 3.0)
    yield "lognormal", lognormal
    yield "mostly zeros", zeros
    yield "blocks of ties", ties
    yield "two values", two
    yield "all equal", np.full(n, 0.25)
    yield "all zero but one", np.eye(1, n, n // 2)[0]
    yield "huge", lognormal * 1e300 / lognormal.max()
    yield "subnormal", np.ldexp(np.floor(lognormal / lognormal.max() * 2**20), -1074)
    yield "negative zeros", np.where(rng.random(n) < 0.5, -0.0, lognormal)


@pytest.mark.parametrize("name, u", list(_instances()), ids=[name for name, _ in _instances()])
def test_selection_path_agrees_with_the_sort(name, u, monkeypatch):
    n = u.size
    assert n >= ocs_solver._SELECT_MIN_N
    for m in (n / 8 + 0.5, n / 8 + 1, n / 3 + 0.25, n / 2, 0.9 * n, n - 1.5, n - 1, float(n)):
        p, ell, v = optimal_probabilities(u, m), ocs_threshold(u, m), optimal_variance(u, m)
        p_sort, ell_sort, v_sort = _by_sort(u, m, monkeypatch)
        # the same threshold, and S_l summed in another order: |dS_l| <= 2 n eps S_l (both
        # sums, Higham's worst case), so each p_i = c u_i / S_l moves by at most that, relatively
        assert ell == ell_sort, (name, m)
        tol = 2 * n * EPS
        np.testing.assert_allclose(p, p_sort, rtol=tol, atol=0)  # relative: p = c u / S_l
        np.testing.assert_array_equal(p == 1.0, p_sort == 1.0)
        np.testing.assert_array_equal(p == 0.0, p_sort == 0.0)
        assert not np.signbit(p).any()  # a zero norm, even -0.0, gets +0
        np.testing.assert_allclose(v, v_sort, rtol=4 * tol, atol=0)  # relative: V* = t W
        nonzero = int(np.count_nonzero(u))
        assert abs(p.sum() - min(m, nonzero)) <= tol * n


def test_selection_path_rows_are_the_single_rows_bit_for_bit():
    rng = np.random.default_rng(3)
    n = ocs_solver._SELECT_MIN_N
    rows = rng.lognormal(0.0, 2.0, (3, n))
    rows[1, : n // 2] = 0.0
    rows[2] *= 1e307 / rows[2].max()  # scaled down for its sums
    for m in (n / 2, n - 0.5):
        p = optimal_probabilities(rows, m)
        ell = ocs_threshold(rows, m)
        for r in range(3):
            # bit-identical: each row goes through the same per-row selection, alone or not
            np.testing.assert_array_equal(p[r], optimal_probabilities(rows[r], m))
            assert ell[r] == ocs_threshold(rows[r], m)


def test_selection_path_is_scale_invariant_bit_for_bit():
    u = np.random.default_rng(4).lognormal(0.0, 3.0, ocs_solver._SELECT_MIN_N + 1)
    p = optimal_probabilities(u, u.size / 2)
    for k in (-900, -40, 40, 900):
        # bit-identical: a power of two commutes with partition, sums and quotients
        np.testing.assert_array_equal(optimal_probabilities(np.ldexp(u, k), u.size / 2), p)


# ------------------------------------------------------------------ uniform b-of-n shuffle


def _fisher_yates_loop(u: np.ndarray, n: int) -> np.ndarray:
    """Reference: the documented partial shuffle, row by row in Python."""
    rows, k = u.shape
    out = np.empty((k, rows), dtype=np.intp)
    for r in range(rows):
        perm = list(range(n))
        for j in range(k):
            o = j + min(int(u[r, j] * (n - j)), n - 1 - j)
            perm[j], perm[o] = perm[o], perm[j]
        out[:, r] = [r * n + v for v in perm[:k]]
    return out


@pytest.mark.parametrize("n, k, rows", [(1, 1, 3), (2, 1, 5), (7, 3, 40), (50, 10, 655),
                                        (60, 30, 17), (300, 150, 9), (5, 5, 4)])
def test_partial_shuffle_is_the_loop_and_restores_its_table(n, k, rows):
    rng = np.random.default_rng(n * 1000 + k)
    for _ in range(3):  # the kept table is reused: every call starts from the identity
        u = rng.random((rows, k))
        u[0, :] = 1.0 - EPS / 2  # the largest uniform: floor(u (n - j)) must be clipped
        np.testing.assert_array_equal(_partial_shuffle(u, n), _fisher_yates_loop(u, n))
        work = designs._shuffle_work(n, k, rows)
        assert work.keep
        np.testing.assert_array_equal(work.table, np.arange(rows * n).reshape(rows, n))


def test_partial_shuffle_of_a_large_block_is_the_loop(monkeypatch):
    """Blocks above the kept size get fresh work arrays (and wider integers)."""
    monkeypatch.setattr(shuffle, "_SHUFFLE_KEEP", 100)
    u = np.random.default_rng(2).random((40, 7))
    assert not designs._shuffle_work(30, 7, 40).keep
    np.testing.assert_array_equal(_partial_shuffle(u, 30), _fisher_yates_loop(u, 30))
    big = np.random.default_rng(3).random((1200, 3))  # 1200 * 40 entries: 32-bit table
    assert designs._shuffle_work(40, 3, 1200).table.dtype == np.int32
    np.testing.assert_array_equal(_partial_shuffle(big, 40), _fisher_yates_loop(big, 40))


def test_partial_shuffle_in_threads_equals_serial():
    u = np.random.default_rng(0).random((8, 200, 12))
    serial = [_partial_shuffle(x, 40) for x in u]
    results: dict[int, list[np.ndarray]] = {}

    def work(t: int) -> None:
        results[t] = [_partial_shuffle(x, 40) for x in u for _ in range(20)][::20]

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for t in range(4):
        for a, b in zip(results[t], serial, strict=True):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("n, b", [(1, 1), (4, 4), (9, 2), (9, 7), (50, 10), (50, 40)])
def test_uniform_masks_are_the_reference_subsets(n, b):
    design = UniformWithoutReplacement(n, b)
    k = min(b, n - b)
    masks = design.sample(np.random.default_rng(11), 300)
    assert (masks.sum(axis=1) == b).all()
    u = np.random.default_rng(11).random((300, k))
    ref = np.zeros((300, n), dtype=bool) if b <= n - b else np.ones((300, n), dtype=bool)
    if k:
        ref.reshape(-1)[_fisher_yates_loop(u, n).reshape(-1)] = b <= n - b
    np.testing.assert_array_equal(masks, ref)
    # the Monte Carlo sampler draws the same subsets, chunk by chunk, whatever the chunk size
    w, zeta = np.full(n, 1.0 / n), np.arange(2.0 * n).reshape(n, 2)
    a = sample_estimator(design, w, zeta, np.random.default_rng(11), 300)
    c = sample_estimator(design, w, zeta, np.random.default_rng(11), 300, chunk_rows=7)
    A = (w / design.p)[:, None] * zeta
    terms = masks.astype(float) @ np.abs(A)  # sum of |terms| of each entry
    assert_close_sum(a, masks.astype(float) @ A, terms)
    assert_close_sum(c, a, terms)

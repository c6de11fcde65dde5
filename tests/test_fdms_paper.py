"""Seed 004's experiment as the authors' code ran it (fedtheory.experiments.fdms_paper): the
splits, the runs' common random numbers and chunking, the methods' definitions."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.experiments import fdms_paper as fp
from fedtheory.problems.clustered import (
    authors_clustered_split,
    authors_shard_split,
    digits_images,
)


def test_digits_images_prepared_like_the_code():
    Xtr, ytr, Xte, yte = digits_images()
    assert Xtr.shape[1] == Xte.shape[1] == 65 and (Xtr[:, -1] == 1).all()
    assert -1.0 <= Xtr[:, :-1].min() and Xtr[:, :-1].max() <= 1.0
    assert ytr.size + yte.size == 1797 and np.bincount(yte).min() >= 29  # stratified
    with pytest.raises(ValueError, match="test_fraction"):
        digits_images(1.5)


def test_clustered_split_is_the_codes():
    """5 groups of 4 consecutive clients, 2 classes per group (disjoint pairs), disjoint
    samples, equal shares, listed class by class, the first 80 % kept."""
    ytr = digits_images()[1]
    parts = authors_clustered_split(ytr, np.random.default_rng(3), train_fraction=1.0)
    classes = [frozenset(ytr[p].tolist()) for p in parts]
    for g in range(5):
        assert len(set(classes[4 * g:4 * g + 4])) == 1 and len(classes[4 * g]) == 2
    assert len(set(classes)) == 5 and len(frozenset().union(*classes)) == 10
    flat = np.concatenate(parts)
    assert np.unique(flat).size == flat.size  # disjoint
    for p in parts:  # class by class, a quarter of each class's samples
        lab = ytr[p]
        assert np.count_nonzero(np.diff(lab)) == 1
        for c in set(lab.tolist()):
            assert np.sum(lab == c) == np.sum(ytr == c) // 4
    train = authors_clustered_split(ytr, np.random.default_rng(3))
    assert [t.size for t in train] == [int(0.8 * p.size) for p in parts]
    assert all(np.array_equal(t, p[: t.size]) for t, p in zip(train, parts, strict=True))
    with pytest.raises(ValueError, match="needs 12 classes"):
        authors_clustered_split(ytr, np.random.default_rng(0), n=24, group_size=4)
    with pytest.raises(ValueError, match="group_size must divide"):
        authors_clustered_split(ytr, np.random.default_rng(0), n=20, group_size=3)


def test_shard_split_is_the_codes():
    ytr = digits_images()[1]
    parts = authors_shard_split(ytr, np.random.default_rng(5), train_fraction=1.0)
    flat = np.concatenate(parts)
    assert np.unique(flat).size == flat.size == 20 * 3 * (ytr.size // 100)
    order = np.argsort(ytr, kind="stable")
    for p in parts:  # three label-sorted shards of 14
        for s in p.reshape(3, -1):
            pos = np.flatnonzero(np.isin(order, s))
            assert pos.size == 14 and pos.max() - pos.min() == 13 and pos.min() % 14 == 0
    with pytest.raises(ValueError, match="shards >= n"):
        authors_shard_split(ytr, np.random.default_rng(0), shards=50)


def test_runs_are_paired_and_chunk_free():
    """Seeds cut into chunks give the same numbers; every method starts from the same full
    first round (round 1 identical); Stale (updates) and FL-FDMS differ from Dropout."""
    kw = {"setting": "clustered", "preset": "quick", "entropy": (7, 1), "rounds": 6}
    whole = fp.run_seeds(first=0, count=2, **kw)
    parts = [fp.run_seeds(first=a, count=1, **kw) for a in (0, 1)]
    for key, acc in whole["acc"].items():
        np.testing.assert_array_equal(acc, np.concatenate([p["acc"][key] for p in parts], 1))
    first = {k: v[1] for k, v in whole["acc"].items()}
    ref = first[("Full", "Full")]
    assert all(np.array_equal(v, ref) for v in first.values())
    later = whole["acc"]
    assert not np.array_equal(later[("alpha=0.5", "Dropout")], later[("alpha=0.5", "FL-FDMS")])
    assert set(whole["computations"]) == {"FL-FDMS", *fp.CR_RUNS}
    assert whole["heat"].shape == (2, 20, 20)
    assert (whole["friend_rate"]["alpha=0.5"] == 1.0).all()  # a friend is always active
    with pytest.raises(ValueError, match="setting must be"):
        fp.run_seeds(setting="iid", preset="quick", entropy=(1,), first=0, count=1)


def test_cr_thresholds_are_the_codes():
    """The code's comr.py threshold, 0.5 sqrt((2 ln(2 m^2 T f) - 2 ln delta)/(2 beta t)) +
    0.01, equals the reduction written as scale (root + delta_f')."""
    from fedtheory.sampling.friend_selection import complexity_threshold

    T = 500
    red = fp.cr_reductions(T, fp.params("full"))
    t = np.arange(1, T + 1, dtype=float)
    code = 0.5 * np.sqrt((2 * np.log(2 * 20 * 20 * T * 3) - 2 * np.log(0.01)) / (2 * 0.5 * t))
    # relative: the same formula rearranged, a few roundings of log, sqrt and the scale
    np.testing.assert_allclose(complexity_threshold(t, n_clients=20, **red["code threshold"]),
                               code + 0.01, rtol=1e-13)
    th = complexity_threshold(t, n_clients=20, **red["Theta_t"])
    half = complexity_threshold(t, n_clients=20, **red["0.5 Theta_t"])
    np.testing.assert_array_equal(half, 0.5 * th)  # bit-identical: scale * (root + delta_f)
    assert red["Theta_t"]["beta"] == pytest.approx(float(fp.pair_probability(0.5)))

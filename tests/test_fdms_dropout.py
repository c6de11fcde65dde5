"""The friend-preserving dropout of seed 004's code (fedtheory.participation.grouped_dropout):
its exact law against samples, the authors' rejection sampler, the participation battery
(shapes, frequencies, determinism and chunking), validation."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from fedtheory.claims import checks
from fedtheory.experiments.fdms_constants import assumption5_holds
from fedtheory.participation.grouped_dropout import GroupedDropout


def gens(seed, replicas, start=0):
    return [np.random.default_rng([seed, r]) for r in range(start, start + replicas)]


def _authors_tuple_law(n_groups: int, g: int, S: int) -> dict[tuple[int, ...], Fraction]:
    """The exact law of ``randNums(n_groups, 1, g, S)`` (bpc_cifar10_main.py): draw uniform
    integers in 1..g while total < S and count < n; accept iff total == S and count == n.
    Enumerated over every sequence of draws; the law of an accepted tuple given acceptance."""
    accepted: dict[tuple[int, ...], Fraction] = {}
    total_p = Fraction(0)

    def walk(prefix: tuple[int, ...], p: Fraction) -> None:
        nonlocal total_p
        total, count = sum(prefix), len(prefix)
        if not (total < S and count < n_groups):  # the loop stops
            if total == S and count == n_groups:
                accepted[prefix] = accepted.get(prefix, Fraction(0)) + p
                total_p += p
            return
        for r in range(1, g + 1):
            walk(prefix + (r,), p / g)

    walk((), Fraction(1))
    return {k: v / total_p for k, v in accepted.items()}


@pytest.mark.parametrize("alpha", [0.3, 0.5, 0.7])
def test_active_count_and_tuples_are_the_authors(alpha):
    proc = GroupedDropout(20, alpha)
    assert proc.active == int((1 - alpha) * 20)  # the code's num_non_dropout
    law = _authors_tuple_law(5, 4, proc.active)
    tuples = [tuple(int(x) for x in row) for row in proc.tuples()]
    assert sorted(law) == sorted(tuples)
    assert set(law.values()) == {Fraction(1, len(tuples))}  # uniform over the tuples


@pytest.mark.parametrize("alpha", [0.3, 0.5, 0.7])
def test_group_counts_have_the_exact_law(alpha):
    """Each group's count c_j: frequencies over 20000 replicas against the exact P(c_j = c),
    every group and count at once (two-sided, Bonferroni, alpha = 1e-6); sums and bounds
    exactly; the first round full; Assumption 5 with the groups as friends in every round."""
    proc = GroupedDropout(20, alpha)
    R = 20_000
    masks = proc.sample(np.random.default_rng(11), R, 3)
    assert masks[0].all()
    counts = masks[1:].reshape(2, R, 5, 4).sum(axis=3)  # (rounds, R, groups)
    assert (counts >= 1).all() and (counts.sum(axis=2) == proc.active).all()
    law = proc.count_law()
    assert sum(law.values()) == 1
    cs = sorted(law)
    onehot = (counts[..., None] == np.array(cs)).reshape(2 * R, 5 * len(cs)).astype(float)
    theory = np.tile([float(law[c]) for c in cs], 5)
    ev = checks.check_identity(onehot, theory, rtol=0.0, what="P(c_j = c)")
    assert ev.passed, ev.detail
    labels = np.repeat(np.arange(5), 4)
    friends = (labels[:, None] == labels[None, :]) & ~np.eye(20, dtype=bool)
    assert assumption5_holds(masks, friends).all()


def test_mask_law_exact_on_a_small_federation():
    """n = 8 in two groups of 4, S = 3: every one of the 2^8 masks has its exact probability
    (they sum to 1) and the sampled frequencies match all of them (alpha = 1e-6)."""
    proc = GroupedDropout(8, 0.625)
    assert proc.active == 3 and proc.groups == 2
    masks = [np.array(b, dtype=bool) for b in itertools.product([False, True], repeat=8)]
    probs = [proc.mask_probability(m) for m in masks]
    assert sum(probs) == 1
    # admissible: counts (1, 2) or (2, 1), each tuple 1/2, then 1/(C(4,1) C(4,2)) = 1/24
    assert sorted(set(probs)) == [Fraction(0), Fraction(1, 48)]
    R = 60_000
    drawn = proc.sample(gens(3, R), R, 2)[1]
    codes = drawn.astype(np.int64) @ (1 << np.arange(7, -1, -1))
    support = [i for i, p in enumerate(probs) if p]
    onehot = (codes[:, None] == np.array(support)).astype(float)
    ev = checks.check_identity(onehot, [float(probs[i]) for i in support], rtol=0.0,
                              what="P(mask)")
    assert ev.passed, ev.detail
    assert onehot.sum(axis=1).min() == 1  # never an inadmissible mask


def test_frequencies_determinism_and_chunking():
    """The participation battery: per-client frequency S/K after the first round; the same
    seeds give the same masks whatever the chunking of replicas; one generator or one per
    replica."""
    proc = GroupedDropout(20, 0.5, full_first=False)
    R, T = 400, 30
    masks = proc.sample(gens(7, R), R, T).astype(float)
    ev = checks.check_identity(masks.mean(axis=0), proc.stationary)
    assert ev.passed, ev.detail
    assert proc.expected_participants == pytest.approx(10.0)
    whole = GroupedDropout(20, 0.5).sample(gens(3, 6), 6, 9)
    parts = [GroupedDropout(20, 0.5).sample(gens(3, k, start=s), k, 9)
             for s, k in ((0, 1), (1, 3), (4, 2))]
    np.testing.assert_array_equal(whole, np.concatenate(parts, axis=1))
    one = proc.sample(np.random.default_rng(5), 6, 9)
    np.testing.assert_array_equal(one, proc.sample(np.random.default_rng(5), 6, 9))
    assert repr(proc).startswith("GroupedDropout(")


@pytest.mark.parametrize("make, match", [
    (lambda: GroupedDropout(20, 1.0), "alpha must be in"),
    (lambda: GroupedDropout(20, "x"), "alpha must be in"),
    (lambda: GroupedDropout(20, 0.5, group_size=3), "group_size must divide"),
    (lambda: GroupedDropout(0, 0.5), "n must be a positive integer"),
    (lambda: GroupedDropout(20, 0.9), "fewer than the 5 groups"),
    (lambda: GroupedDropout(20, 0.5, full_first=1), "full_first must be a bool"),
])
def test_validation(make, match):
    with pytest.raises(ValueError, match=match):
        make()
    with pytest.raises(ValueError, match="mask must have shape"):
        GroupedDropout(20, 0.5).mask_probability(np.ones(3, dtype=bool))
    assert math.isclose(float(GroupedDropout(20, 0.0).mask_probability(np.ones(20, bool))), 1.0)

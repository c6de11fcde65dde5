"""One battery of checks applied to every sampling design (scikit-learn's common-checks style).

Every design in ``DESIGNS`` is checked for: shapes and dtypes, determinism by seed, exactness
of ``enumerate()`` against ``p`` and ``P`` (floating point and rational), the structure of
``P`` (symmetric, diagonal ``p``, Fréchet bounds, ``P - pp^T`` PSD), and the statistics of
``sample()``: empirical marginals, pair frequencies and subset frequencies against ``p``,
``P`` and the enumerated probabilities (two-sided, alpha = 1e-6 per check, Bonferroni over
components). Validation and degenerate inputs are tested per class below.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedtheory import participation  # noqa: F401  (every scheme registers its design)
from fedtheory.claims import checks
from fedtheory.participation import base as process_base
from fedtheory.sampling import base as sampling_base
from fedtheory.sampling.designs import (
    DESIGN_CLASSES,
    ExplicitSampling,
    IndependentSampling,
    SamplingDesign,
    UniformWithoutReplacement,
)

from ._tolerance import assert_close_sum

ALPHA = 1e-6
REPLICAS = 100_000

DESIGNS: list[SamplingDesign] = [
    IndependentSampling([0.1, 0.5, 0.9, 1.0, 0.3]),
    IndependentSampling([Fraction(1, 3), Fraction(2, 3), Fraction(1, 7)]),
    IndependentSampling([1.0, 1.0]),
    UniformWithoutReplacement(5, 2),
    UniformWithoutReplacement(6, 1),
    UniformWithoutReplacement(4, 4),
    UniformWithoutReplacement(1, 1),
    ExplicitSampling([(0, 1), (2,), (0, 2, 3), (1, 3)], [0.1, 0.2, 0.3, 0.4]),
    ExplicitSampling(
        np.array([[1, 0, 1], [0, 1, 1], [0, 0, 0]], dtype=bool),
        [Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)],
    ),
    # client 3 never participates (p_3 = 0): allowed, not proper
    ExplicitSampling([(0, 1), (2,), (1, 2)], [0.25, 0.25, 0.5], n=4),
]


def _package_designs() -> list[type[SamplingDesign]]:
    """Every design class of the package (at any depth below SamplingDesign)."""
    out, todo = [], list(SamplingDesign.__subclasses__())
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("fedtheory."):
            out.append(cls)
    return sorted(set(out), key=lambda c: (c.__module__, c.__qualname__))


#: The designs the schemes declare for this battery (``SamplingDesign.examples``).
DESIGNS += [d for cls in _package_designs() for d in cls.examples()]
IDS = [repr(d) for d in DESIGNS]


def test_every_design_class_is_registered_and_exercised():
    """A design is one of the sampling package's (DESIGN_CLASSES) or the round's design of a
    registered process (its ``design_class``), and the battery exercises it."""
    registered = set(DESIGN_CLASSES) | set(process_base._BY_DESIGN)
    subclasses = {c for c in _package_designs() if SamplingDesign in c.__bases__}
    assert subclasses <= registered, subclasses - registered
    assert registered <= {type(d) for d in DESIGNS}


@pytest.mark.parametrize("design", DESIGNS, ids=IDS)
def test_shapes_and_dtypes(design):
    n = design.n
    assert isinstance(n, int) and n >= 1
    assert design.p.shape == (n,) and design.p.dtype == float
    assert design.P.shape == (n, n) and design.P.dtype == float
    masks = design.sample(np.random.default_rng(1), 7)
    assert masks.shape == (7, n) and masks.dtype == bool
    assert design.sample(np.random.default_rng(1), 0).shape == (0, n)
    m, q = design.enumerate()
    assert m.dtype == bool and m.ndim == 2 and m.shape[1] == n and q.shape == (m.shape[0],)
    assert design.p_exact.shape == (n,) and design.P_exact.shape == (n, n)
    assert repr(design).startswith(type(design).__name__)


@pytest.mark.parametrize("design", DESIGNS, ids=IDS)
def test_determinism_by_seed(design):
    a = design.sample(np.random.default_rng(123), 500)
    b = design.sample(np.random.default_rng(123), 500)
    np.testing.assert_array_equal(a, b)
    # drawing in two calls continues the same stream
    rng = np.random.default_rng(123)
    c = np.concatenate([design.sample(rng, 200), design.sample(rng, 300)])
    np.testing.assert_array_equal(a, c)


@pytest.mark.parametrize("design", DESIGNS, ids=IDS)
def test_pair_matrix_structure(design):
    p, P = design.p, design.P
    # symmetric to rounding: an explicit design's P_ij and P_ji are BLAS sums of the same
    # non-negative probabilities, in an order that may depend on the entry's position
    assert_close_sum(P, P.T, P, factor=len(design.enumerate()[1]) + 1)
    np.testing.assert_allclose(np.diag(P), p, rtol=0, atol=1e-15)
    assert np.all((p >= 0) & (p <= 1))
    # Fréchet bounds: max(0, p_i + p_j - 1) <= P_ij <= min(p_i, p_j)
    assert np.all(P <= np.minimum.outer(p, p) + 1e-15)
    assert np.all(P >= np.maximum(0.0, np.add.outer(p, p) - 1) - 1e-15)
    # P - pp^T is the covariance matrix of the indicator vector: PSD
    assert np.linalg.eigvalsh(P - np.outer(p, p))[0] >= -1e-12
    assert design.proper == bool(np.all(p > 0))
    assert design.expected_size == pytest.approx(np.trace(P))


@pytest.mark.parametrize("design", DESIGNS, ids=IDS)
def test_enumerate_consistent_with_p_and_P(design):
    masks, probs = design.enumerate()
    assert len({row.tobytes() for row in masks}) == len(masks), "subsets repeat"
    assert np.all(probs > 0)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    M = masks.astype(float)
    np.testing.assert_allclose(probs @ M, design.p, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose((M * probs[:, None]).T @ M, design.P, rtol=1e-12, atol=1e-15)
    # exact: rationals sum to exactly 1 and reproduce p_exact and P_exact exactly
    masks_e, probs_e = design.enumerate(exact=True)
    np.testing.assert_array_equal(masks_e, masks)
    assert all(isinstance(q, Fraction) for q in probs_e)
    assert sum(probs_e) == 1
    Mi = masks_e.astype(int).astype(object)
    assert list(probs_e @ Mi) == list(design.p_exact)
    assert ((Mi * probs_e[:, None]).T @ Mi).tolist() == design.P_exact.tolist()
    # P_ij sums at most len(probs) non-negative rounded probabilities (in any order: BLAS for
    # explicit designs), each term and the sum rounded once: within len(probs) + 1 eps of
    # the correctly rounded exact value, relative to itself (no cancellation)
    exact = design.P_exact.astype(float)
    assert_close_sum(design.P, exact, exact, factor=len(probs) + 1)


@pytest.mark.parametrize("design", DESIGNS, ids=IDS)
def test_empirical_marginals_and_pairs(design):
    masks = design.sample(np.random.default_rng(2024), REPLICAS).astype(float)
    ev = checks.check_identity(masks, design.p, alpha=ALPHA, what="marginals")
    assert ev.passed, ev.detail
    iu = np.triu_indices(design.n, 1)
    if iu[0].size:
        pairs = masks[:, iu[0]] * masks[:, iu[1]]
        ev = checks.check_identity(pairs, design.P[iu], alpha=ALPHA, what="pairs")
        assert ev.passed, ev.detail


@pytest.mark.parametrize("design", DESIGNS, ids=IDS)
def test_empirical_subset_frequencies(design):
    support, probs = design.enumerate()
    masks = design.sample(np.random.default_rng(77), REPLICAS)
    keys = {row.tobytes(): k for k, row in enumerate(support)}
    idx = np.array([keys.get(row.tobytes(), -1) for row in masks])
    assert np.all(idx >= 0), "a sampled subset has probability 0"
    onehot = np.zeros((REPLICAS, len(probs)))
    onehot[np.arange(REPLICAS), idx] = 1.0
    ev = checks.check_identity(onehot, probs, alpha=ALPHA, what="subset frequencies")
    assert ev.passed, ev.detail


# -- validation --------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: IndependentSampling([0.5, 0.0]), r"p must be in \(0, 1\], got 0.0"),
        (lambda: IndependentSampling([1.5]), r"p must be in \(0, 1\], got 1.5"),
        (lambda: IndependentSampling([-0.1, 0.2]), r"p must be in \(0, 1\]"),
        (lambda: IndependentSampling([np.nan]), r"p must be in \(0, 1\], got nan"),
        (lambda: IndependentSampling([[0.5]]), r"p must be a non-empty 1-D array"),
        (lambda: IndependentSampling([]), r"p must be a non-empty 1-D array"),
        (lambda: UniformWithoutReplacement(5, 0), r"b must be an integer in \[1, n\] = \[1, 5\]"),
        (lambda: UniformWithoutReplacement(5, 6), r"b must be an integer in \[1, n\].*got 6"),
        (lambda: UniformWithoutReplacement(5, 2.0), r"b must be an integer"),
        (lambda: UniformWithoutReplacement(0, 1), r"n must be a positive integer, got 0"),
        (lambda: UniformWithoutReplacement(True, 1), r"n must be a positive integer"),
        (lambda: ExplicitSampling([(0,), (1,)], [0.5, 0.6]), r"probs must sum to 1, got sum 1.1"),
        (lambda: ExplicitSampling([(0,), (1,)], [1.5, -0.5]), r"probs must be non-negative"),
        (lambda: ExplicitSampling([(0,), (1,)], [1.0]), r"probs must have shape \(2,\)"),
        (lambda: ExplicitSampling([(0,), (1,)], [[0.5, 0.5]]), r"probs must have shape"),
        (lambda: ExplicitSampling([(0,), (1,)], [np.inf, 0]), r"probs must be finite"),
        (lambda: ExplicitSampling([(0, 5)], [1.0], n=3), r"index outside \[0, n\) = \[0, 3\)"),
        (lambda: ExplicitSampling([(0, 0)], [1.0]), r"repeats an index"),
        (lambda: ExplicitSampling([], []), r"subsets must not be empty"),
        (lambda: ExplicitSampling([()], [1.0]), r"n must be a positive integer, got 0"),
        (lambda: ExplicitSampling(np.zeros((2, 0), bool), [0.5, 0.5]), r"shape \(k, n\)"),
        (lambda: ExplicitSampling(np.ones((1, 2), bool), [1.0], n=3), r"differs from"),
        (lambda: ExplicitSampling("abc", [1.0]), r"subsets must be a list of index tuples"),
        (lambda: ExplicitSampling(np.eye(2), [0.5, 0.5]), r"must be boolean.*got dtype float64"),
    ],
)
def test_constructor_validation(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("design", DESIGNS[:1] + DESIGNS[3:4] + DESIGNS[7:8], ids=str)
def test_sample_validation(design):
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator"):
        design.sample(np.random.RandomState(0), 3)
    with pytest.raises(ValueError, match="rng must be a numpy.random.Generator"):
        design.sample(0, 3)
    with pytest.raises(ValueError, match="replicas must be a non-negative integer, got -1"):
        design.sample(np.random.default_rng(0), -1)
    with pytest.raises(ValueError, match="replicas must be a non-negative integer, got 2.5"):
        design.sample(np.random.default_rng(0), 2.5)


def test_enumerate_refuses_large_designs(monkeypatch):
    with pytest.raises(ValueError, match="more than enumerate\\(\\) allows"):
        IndependentSampling(np.full(25, 0.5)).enumerate()
    monkeypatch.setattr(sampling_base, "MAX_ENUMERATE", 5)
    with pytest.raises(ValueError, match="UniformWithoutReplacement has 10 subsets"):
        UniformWithoutReplacement(5, 2).enumerate()


# -- degenerate but valid input ----------------------------------------------------------------

def test_degenerate_designs():
    rng = np.random.default_rng(0)
    assert UniformWithoutReplacement(4, 4).sample(rng, 10).all()
    np.testing.assert_array_equal(UniformWithoutReplacement(4, 4).P, np.ones((4, 4)))
    assert IndependentSampling([1.0, 1.0]).sample(rng, 10).all()
    masks, probs = IndependentSampling([1.0, 0.5]).enumerate()
    assert masks.tolist() == [[True, False], [True, True]] and probs.tolist() == [0.5, 0.5]
    d = ExplicitSampling([(0, 1), (2,), (1, 2)], [0.25, 0.25, 0.5], n=4)
    assert not d.proper and d.p[3] == 0 and not d.sample(rng, 1000)[:, 3].any()
    # b = 1: pairs never co-occur
    np.testing.assert_array_equal(UniformWithoutReplacement(3, 1).P, np.eye(3) / 3)
    # duplicates are merged, zero-probability subsets dropped
    e = ExplicitSampling([(0,), (0,), (1,)], [0.25, 0.25, 0.5], n=3)
    m, q = e.enumerate()
    assert len(m) == 2 and sorted(q.tolist()) == [0.5, 0.5]
    e0 = ExplicitSampling([(0,), (1,)], [1.0, 0.0])
    assert len(e0.subsets) == 1 and e0.p.tolist() == [1.0, 0.0]
    # the empty set as a subset
    assert ExplicitSampling([(), (0,)], [0.5, 0.5]).p.tolist() == [0.5]


def test_uniform_without_replacement_rows_have_exactly_b():
    masks = UniformWithoutReplacement(9, 4).sample(np.random.default_rng(5), 1000)
    assert np.all(masks.sum(axis=1) == 4)


def test_exact_probabilities_normalised():
    # 0.1 + 0.2 + 0.7 is not exactly 1 in binary floating point; the exact view sums to 1
    d = ExplicitSampling([(0,), (1,), (0, 1)], [0.1, 0.2, 0.7])
    assert sum(d.enumerate(exact=True)[1]) == 1
    assert IndependentSampling([Fraction(1, 3)]).p_exact[0] == Fraction(1, 3)
    assert UniformWithoutReplacement(5, 2).P_exact[0, 1] == Fraction(1, 10)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 5),
    data=st.data(),
)
def test_explicit_designs_property(n, data):
    k = data.draw(st.integers(1, 6))
    rows = data.draw(st.lists(st.lists(st.booleans(), min_size=n, max_size=n),
                              min_size=k, max_size=k))
    weights = data.draw(st.lists(st.integers(0, 9), min_size=k, max_size=k).filter(any))
    probs = [Fraction(w, sum(weights)) for w in weights]
    d = ExplicitSampling(np.array(rows, dtype=bool).reshape(k, n), probs)
    p, P = d.p, d.P
    assert np.linalg.eigvalsh(P - np.outer(p, p))[0] >= -1e-12
    masks, q = d.enumerate(exact=True)
    Mi = masks.astype(int).astype(object)
    assert list(q @ Mi) == list(d.p_exact)
    np.testing.assert_allclose(d.P_exact.astype(float), P, atol=1e-15)


@pytest.mark.parametrize(("n", "b"), [(1, 1), (5, 1), (5, 2), (5, 3), (5, 5), (6, 3)])
def test_without_replacement_subsets_are_exactly_b_and_uniform(n, b):
    """Every row has b clients; every b-subset is equally likely (a chi-square test at
    false-alarm level 1e-6 over all C(n, b) subsets); chunking the rows changes nothing."""
    from math import comb

    from scipy import stats as sst

    d = UniformWithoutReplacement(n, b)
    masks = d.sample(np.random.default_rng(3), 60_000)
    assert masks.dtype == bool and (masks.sum(axis=1) == b).all()
    codes = masks.astype(np.int64) @ (1 << np.arange(n))
    counts = np.bincount(codes, minlength=1 << n)
    counts = counts[counts > 0]
    assert counts.size == comb(n, b)
    if counts.size > 1:
        assert sst.chisquare(counts).pvalue > 1e-6
    whole = np.empty((7, n))
    d._sample_into(np.random.default_rng(5), whole)
    rng = np.random.default_rng(5)
    parts = [np.empty((3, n)), np.empty((4, n))]
    for part in parts:
        d._sample_into(rng, part)
    np.testing.assert_array_equal(whole, np.vstack(parts))  # bit-identical: same draws

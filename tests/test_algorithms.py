"""A common battery of checks applied to every registered aggregation rule, plus the
rule-specific identities (unbiasedness by exact enumeration of participation patterns)."""

import inspect
import itertools

import numpy as np
import pytest

from fedtheory import algorithms
from fedtheory.algorithms import RULES, Participants, Rule, get_rule, segment_sum

from ._tolerance import assert_close_sum

N, D, R = 4, 3, 5
P = np.array([0.3, 0.5, 0.8, 1.0])
UNBIASED = {"fedavg_is", "umifa", "saga", "fedpgd_uniform"}


def make(name, **kw):
    rule = get_rule(name, **kw)
    if "memory_init" in inspect.signature(type(rule).__init__).parameters and not kw:
        rule = get_rule(name, memory_init="zeros", **kw)
    return rule


def init(rule, replicas=R, n=N, d=D, initial=None, **kw):
    return rule.init(replicas, n, d, p=P if n == N else 0.5, initial=initial, **kw)


def random_round(rng, replicas=R, n=N, d=D, p=P):
    mask = rng.random((replicas, n)) < p
    updates = rng.normal(size=(replicas, n, d))
    return mask, updates


def variance_reduced_terms(table, upd, mask, p):
    r"""A bound on :math:`\sum|\text{terms}|` of a SAGA / U-MIFA type direction
    :math:`\frac1n\sum_i T_i + \frac1n\sum_{i \in S} (\Delta_i - T_i)/p_i`, ``(R, d)``
    (see ``tests/_tolerance.py``): two rules that compute it in different orders agree to
    a small multiple of eps times this."""
    active = np.where(mask[..., None], (np.abs(upd) + np.abs(table)) / p[:, None], 0.0)
    return (np.abs(table) + active).mean(axis=1)


ALL = sorted(RULES)


def test_every_rule_class_is_registered():
    classes = {
        obj for _, obj in inspect.getmembers(algorithms, inspect.isclass)
        if issubclass(obj, Rule) and obj.name
        and obj is not algorithms.RuleStack  # one registered rule per replica
    }
    assert classes == set(RULES.values())
    assert set(ALL) >= {"fedavg", "fedavg_is", "fedpgd", "mifa", "umifa", "mifam", "umifam",
                        "saga", "scaffold", "fedvarp"}


@pytest.mark.parametrize("name", ALL)
def test_shapes_and_memory(name):
    rng = np.random.default_rng(0)
    rule = make(name)
    st = init(rule)
    mask, upd = random_round(rng)
    if rule.needs_all:
        mask[:] = True
    G, st = rule.step(st, mask, upd)
    assert G.shape == (R, D) and G.dtype == np.float64 and np.isfinite(G).all()
    # arrays owning O(R n d) memory (views do not count; FL-FDMS's (R, n, n) similarity
    # tables are O(R n^2), not per-coordinate memory)
    big = [k for k, v in st.items()
           if isinstance(v, np.ndarray) and v.size >= R * N * D and v.base is None
           and v.shape != (R, N, N)]
    if rule.table:
        assert st["table"].shape == (R, N, D)
        assert big == ["table"]
    else:
        assert big == [], f"{name} keeps O(R n d) memory: {big}"
    # single replica, dense form: the replica axis is dropped
    st1 = init(rule, replicas=1)
    g1, _ = rule.step(st1, mask[0], upd[0])
    assert g1.shape == (D,)


@pytest.mark.parametrize("name", ALL)
def test_compressed_equals_dense(name):
    rng = np.random.default_rng(1)
    rule = make(name)
    s1, s2 = init(rule), init(rule)
    for _ in range(3):
        mask, upd = random_round(rng)
        if rule.needs_all:
            mask[:] = True
        g1, s1 = rule.step(s1, mask, upd)
        part = Participants.from_mask(mask)
        g2, s2 = rule.step(s2, part, upd[part.rows, part.cols])
        np.testing.assert_array_equal(g1, g2)


@pytest.mark.parametrize("name", ALL)
def test_no_nan_without_participants(name):
    rule = make(name)
    if rule.needs_all:
        pytest.skip("rule 'full' ignores the mask by design")
    st = init(rule)
    G, st = rule.step(st, np.zeros((R, N), bool), np.zeros((R, N, D)))
    assert np.isfinite(G).all()
    if not rule.table:
        assert (G == 0).all()


@pytest.mark.parametrize("name", ALL)
def test_full_participation_is_gradient_descent(name):
    """All clients active (p = 1): every rule's direction is sum_i w_i Delta_i."""
    rng = np.random.default_rng(2)
    rule = make(name)
    w = rng.random(N)
    w /= w.sum()
    st = rule.init(R, N, D, p=1.0, weights=w)
    for _ in range(2 if not rule.own_momentum else 1):
        upd = rng.normal(size=(R, N, D))
        G, st = rule.step(st, np.ones((R, N), bool), upd)
        # SCAFFOLD's own table does not enter G; MIFA-type tables are overwritten
        np.testing.assert_allclose(G, np.einsum("rnd,n->rd", upd, w), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("name", [n for n in ALL if RULES[n].table])
@pytest.mark.parametrize("memory_init", ["zeros", "full"])
def test_memory_initialisation(name, memory_init):
    rng = np.random.default_rng(3)
    rule = get_rule(name, memory_init=memory_init)
    initial = rng.normal(size=(R, N, D))
    if memory_init == "full":
        st = init(rule, initial=initial, local_steps=2)
        want = initial / 2 if name == "scaffold" else initial
        np.testing.assert_array_equal(st["table"], want)
        assert_close_sum(st["total"], want.mean(axis=1), np.abs(want).mean(axis=1))
        with pytest.raises(ValueError, match="initial"):
            init(rule)
    else:
        st = init(rule)
        assert (st["table"] == 0).all() and (st["total"] == 0).all()


def test_table_running_total_stays_exact():
    """The incremental table sum matches the table over many rounds (refreshed every n)."""
    rng = np.random.default_rng(4)
    for name in ("mifa", "umifa", "saga", "fedvarp", "scaffold"):
        rule = make(name)
        st = init(rule)
        for _ in range(11):
            mask, upd = random_round(rng)
            _, st = rule.step(st, mask, upd)
            np.testing.assert_allclose(st["total"], st["table"].mean(axis=1), atol=1e-12)


def _exact_expectation(rule, table, upd, p):
    """E[G] over all 2^n Bernoulli(p) patterns, each pattern one replica."""
    masks = np.array(list(itertools.product([False, True], repeat=len(p))))
    prob = np.prod(np.where(masks, p, 1 - p), axis=1)
    K = len(masks)
    kw = {}
    if rule.table:
        kw["initial"] = np.broadcast_to(table, (K, *table.shape)).copy()
    st = rule.init(K, len(p), table.shape[1], p=p, **kw)
    G, _ = rule.step(st, masks, np.broadcast_to(upd, (K, *upd.shape)))
    return prob @ G


@pytest.mark.parametrize("name", ["fedavg_is", "umifa", "saga", "mifa", "fedavg", "fedvarp"])
def test_unbiasedness_by_enumeration(name):
    rng = np.random.default_rng(5)
    table = rng.normal(size=(N, D))
    upd = rng.normal(size=(N, D))
    kw = {"memory_init": "full"} if RULES[name].table else {}
    EG = _exact_expectation(get_rule(name, **kw), table, upd, P)
    target = upd.mean(axis=0)
    if name in UNBIASED:
        np.testing.assert_allclose(EG, target, rtol=1e-12, atol=1e-13)
    else:
        assert not np.allclose(EG, target, atol=1e-3)
    if name == "mifa":  # E[G_t^i | past] = p_i Delta_i + (1 - p_i) G_{t-1}^i
        want = (P[:, None] * upd + (1 - P[:, None]) * table).mean(axis=0)
        terms = (P[:, None] * np.abs(upd) + (1 - P[:, None]) * np.abs(table)).mean(axis=0)
        assert_close_sum(EG, want, terms)


def test_saga_and_umifa_share_the_direction_not_the_table():
    rng = np.random.default_rng(6)
    initial = rng.normal(size=(R, N, D))
    s, u = get_rule("saga"), get_rule("umifa", memory_init="full")
    ss, su = init(s, initial=initial), init(u, initial=initial)
    mask, upd = random_round(rng)
    mask[:, 0] = True
    gs, ss = s.step(ss, mask, upd)
    gu, su = u.step(su, mask, upd)
    assert_close_sum(gs, gu, variance_reduced_terms(initial, upd, mask, P))
    assert not np.allclose(ss["table"][:, 0], su["table"][:, 0])


def test_fedvarp_equals_saga_under_b_of_n():
    rng = np.random.default_rng(7)
    b = 2
    initial = rng.normal(size=(R, N, D))
    u = rng.random((R, N))
    mask = u <= np.sort(u, axis=1)[:, [b - 1]]
    upd = rng.normal(size=(R, N, D))
    fv, sg = get_rule("fedvarp", memory_init="full"), get_rule("saga")
    g1, _ = fv.step(fv.init(R, N, D, initial=initial), mask, upd)
    g2, _ = sg.step(sg.init(R, N, D, p=b / N, initial=initial), mask, upd)
    assert_close_sum(g1, g2, variance_reduced_terms(initial, upd, mask, np.full(N, b / N)))


def test_fedpgd_is_fedavg_under_b_of_n_and_uses_b():
    rng = np.random.default_rng(8)
    mask = np.zeros((R, N), bool)
    mask[:, :2] = True
    upd = rng.normal(size=(R, N, D))
    fp = get_rule("fedpgd")
    g_pgd, _ = fp.step(fp.init(R, N, D, p=0.5), mask, upd)
    fa = get_rule("fedavg")
    g_avg, _ = fa.step(fa.init(R, N, D), mask, upd)
    terms = np.abs(upd[:, :2]).sum(axis=1)
    assert_close_sum(g_pgd, g_avg, terms / 2)
    fb = get_rule("fedpgd", b=4)
    g4, _ = fb.step(fb.init(R, N, D), mask, upd)
    assert_close_sum(g4, upd[:, :2].sum(axis=1) / 4, terms / 4)


def test_momentum_rules_are_heavy_ball_on_the_base_rule():
    rng = np.random.default_rng(9)
    for base, mom in (("mifa", "mifam"), ("umifa", "umifam")):
        rb, rm = get_rule(base), get_rule(mom, beta=0.7)
        sb, sm = init(rb), init(rm)
        v = np.zeros((R, D))
        v_terms = np.zeros((R, D))  # sum of |terms| of v = sum_k 0.7^(t-k) g_k
        for _ in range(4):
            mask, upd = random_round(rng)
            g, sb = rb.step(sb, mask, upd)
            vm, sm = rm.step(sm, mask, upd)
            v = 0.7 * v + g
            v_terms = 0.7 * v_terms + np.abs(g)
            assert_close_sum(vm, v, v_terms)


def test_scaffold_controls():
    rng = np.random.default_rng(10)
    rule = get_rule("scaffold")
    st = init(rule, local_steps=3)
    mask, upd = random_round(rng)
    part = Participants.from_mask(mask)
    assert (rule.correction(st, part) == 0).all()
    _, st = rule.step(st, mask, upd)
    u = np.where(mask[..., None], upd / 3, 0.0)
    assert_close_sum(st["table"], u, np.abs(u))  # one rounding per entry
    assert_close_sum(st["total"], u.mean(axis=1), np.abs(u).mean(axis=1))
    corr = rule.correction(st, part)
    np.testing.assert_allclose(corr, st["total"][part.rows] - u[part.rows, part.cols])
    assert rule.floats_per_update == 2


def test_segment_sum_matches_add_at():
    rng = np.random.default_rng(11)
    mask = rng.random((7, 5)) < 0.3
    mask[2] = False
    part = Participants.from_mask(mask)
    vals = rng.normal(size=(part.size, 4))
    ref = np.zeros((7, 4))
    np.add.at(ref, part.rows, vals)
    ref_terms = np.zeros((7, 4))
    np.add.at(ref_terms, part.rows, np.abs(vals))
    assert_close_sum(segment_sum(vals, part), ref, ref_terms)
    np.testing.assert_array_equal(part.mask, mask)
    full = Participants.full(3, 4)
    np.testing.assert_array_equal(full.mask, np.ones((3, 4), bool))
    empty = Participants.from_mask(np.zeros((2, 3), bool))
    assert segment_sum(np.zeros((0, 2)), empty).shape == (2, 2)


@pytest.mark.parametrize("name", ALL)
def test_float32_state(name):
    rule = make(name)
    st = rule.init(R, N, D, p=P, dtype=np.float32)
    rng = np.random.default_rng(12)
    mask, upd = random_round(rng)
    if rule.needs_all:
        mask[:] = True
    G, _ = rule.step(st, mask, upd.astype(np.float32))
    assert G.dtype == np.float32


@pytest.mark.parametrize("name", sorted(n for n in ALL if RULES[n].importance_weighted))
@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, np.nan])
def test_importance_weighted_rules_reject_bad_p(name, bad):
    rule = make(name)
    p = P.copy()
    p[1] = bad
    with pytest.raises(ValueError, match=r"p must be in \(0, 1\]"):
        rule.init(R, N, D, p=p)
    with pytest.raises(ValueError, match="p must be given"):
        rule.init(R, N, D)


def test_validation():
    with pytest.raises(ValueError, match="rule must be one of .*'nope'"):
        get_rule("nope")
    with pytest.raises(ValueError, match=r"beta must be in \[0, 1\), got 1.0"):
        get_rule("mifam", beta=1.0)
    with pytest.raises(ValueError, match="memory_init must be"):
        get_rule("mifa", memory_init="ones")
    with pytest.raises(ValueError, match="bad parameters"):
        get_rule("fedavg", beta=0.5)
    with pytest.raises(ValueError, match="b must be positive"):
        get_rule("fedpgd", b=0)
    rule = get_rule("fedavg")
    st = rule.init(R, N, D)
    with pytest.raises(ValueError, match="updates must have shape"):
        rule.step(st, np.ones((R, N), bool), np.zeros((R, N)))
    with pytest.raises(ValueError, match="active must have shape"):
        rule.step(st, np.ones((R, N + 1), bool), np.zeros((R, N + 1, D)))
    with pytest.raises(ValueError, match="replicas"):
        rule.step(st, np.ones((R + 1, N), bool), np.zeros((R + 1, N, D)))
    with pytest.raises(ValueError, match=r"p must have n=4 entries, got 2"):
        get_rule("umifa").init(R, N, D, p=[0.5, 0.5])
    with pytest.raises(ValueError, match="n must be a positive integer, got 0"):
        rule.init(R, 0, D)
    with pytest.raises(ValueError, match="weights must"):
        rule.init(R, N, D, weights=-np.ones(N))
    with pytest.raises(ValueError, match="needs every client"):
        full = get_rule("full")
        full.step(full.init(R, N, D), np.zeros((R, N), bool), np.zeros((R, N, D)))


@pytest.mark.parametrize("name", ALL)
def test_blockwise_step_equals_one_step(name):
    """begin / accumulate over blocks / finish = step (the engine's cache-sized blocks)."""
    rng = np.random.default_rng(13)
    rule = make(name)
    s1, s2 = init(rule, local_steps=2), init(rule, local_steps=2)
    for _ in range(3):
        mask, upd = random_round(rng)
        if rule.needs_all:
            mask[:] = True
        part = Participants.from_mask(mask)
        flat = upd[part.rows, part.cols]
        g1, s1 = rule.step(s1, part, flat)
        acc = rule.begin(s2, part)
        seen = 0
        for block in part.blocks(1):
            assert block.replicas == R and (np.diff(block.rows) >= 0).all()
            local = np.flatnonzero(part.mask.ravel())
            pick = np.searchsorted(local, block.rows * N + block.cols)
            rule.accumulate(s2, acc, block, flat[pick])
            seen += block.size
        g2 = rule.finish(s2, acc)
        assert seen == part.size
        np.testing.assert_allclose(g2, g1, rtol=1e-12, atol=1e-14)
        if rule.table:
            np.testing.assert_allclose(s2["table"], s1["table"], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_segment_sum_paths_agree_bitwise(dtype):
    """The loop used for few replicas and the sparse product give identical bits, so the
    choice (which depends on the chunk) never changes a trajectory."""
    from fedtheory.algorithms import base

    rng = np.random.default_rng(14)
    mask = rng.random((9, 40)) < 0.6
    part = Participants.from_mask(mask)
    vals = (rng.normal(size=(part.size, 7)) * np.exp(3 * rng.normal(size=(part.size, 1))))
    vals = vals.astype(dtype)
    coef = rng.random(part.size)
    sparse = base.segment_sum(vals, part, coef)
    for r in range(9):
        one = Participants.from_mask(np.where(np.arange(9)[:, None] == r, mask, False))
        sel = slice(part.starts[r], part.starts[r + 1])
        loop = base.segment_sum(vals[sel], one, coef[sel])
        np.testing.assert_array_equal(loop[r], sparse[r])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_segment_sum_padded_path_is_the_sparse_product_bitwise(dtype):
    """The zero-padded dense sum (many replicas with similar counts) gives the sparse
    product's bits, signed zeros, infinities and one column included."""
    from scipy import sparse

    from fedtheory.algorithms import base

    rng = np.random.default_rng(17)
    for cols in (1, 3):
        mask = rng.random((30, 12)) < 0.7
        mask[4] = False
        part = Participants.from_mask(mask)
        vals = (rng.normal(size=(part.size, cols))
                * np.exp(3 * rng.normal(size=(part.size, 1)))).astype(dtype)
        vals[rng.random(vals.shape) < 0.2] = -0.0
        vals[0, 0] = np.inf
        for coef in (None, rng.random(part.size)):
            data = np.ones(part.size, dtype) if coef is None else coef.astype(dtype)
            sel = sparse.csr_array((data, np.arange(part.size), part.starts),
                                   shape=(30, part.size))
            want = np.asarray(sel @ vals)
            got = base.segment_sum(vals, part, coef)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def test_participants_mask_is_a_fresh_copy():
    mask = np.array([[True, False], [False, True]])
    part = Participants.from_mask(mask)
    mask[0, 0] = False  # the caller's array may change afterwards
    got = part.mask
    assert got.tolist() == [[True, False], [False, True]]
    got[1, 1] = False
    assert part.mask.tolist() == [[True, False], [False, True]]
    assert Participants.full(1, 2).mask.tolist() == [[True, True]]


def _pieces(part, size):
    """Each replica's pieces (as (client tuple) per block) when the pairs stream in blocks."""
    out = {}
    for block in part.blocks(size):
        for r in block.present.tolist():
            s, e = block.starts[r], block.starts[r + 1]
            out.setdefault(r, []).append(tuple(block.cols[s:e].tolist()))
    return out


@pytest.mark.parametrize("size", [1, 2, 3, 7, 50])
def test_blocks_are_contiguous_and_cut_each_replica_the_same_way(size):
    rng = np.random.default_rng(15)
    mask = rng.random((9, 23)) < 0.6
    mask[3] = False
    mask[4] = True
    part = Participants.from_mask(mask)
    blocks = list(part.blocks(size))
    # contiguous ranges of the pairs, in order, each at most 2 size - 1 pairs
    np.testing.assert_array_equal(np.concatenate([b.rows for b in blocks]), part.rows)
    np.testing.assert_array_equal(np.concatenate([b.cols for b in blocks]), part.cols)
    assert all(b.size <= max(2 * size - 1, 1) for b in blocks)
    # a replica's pieces: its pairs cut at local multiples of size, whatever else is present
    pieces = _pieces(part, size)
    for r in range(9):
        own = list(map(tuple, np.flatnonzero(mask[r]).reshape(-1, 1).tolist()))
        cols = [c[0] for c in own]
        want = [tuple(cols[j:j + size]) for j in range(0, len(cols), size)]
        assert pieces.get(r, []) == want
        alone = Participants.from_mask(np.where(np.arange(9)[:, None] == r, mask, False))
        assert _pieces(alone, size).get(r, []) == want
    with pytest.raises(ValueError, match="size must be a positive integer, got 0"):
        next(part.blocks(0))


def test_participants_derived_fields():
    part = Participants.from_mask(np.array([[False, True, True], [False, False, False]]))
    assert part.only == 0 and part.present.tolist() == [0]
    assert part.flat_index.tolist() == [1, 2] and part.counts.tolist() == [2, 0]
    full = Participants.full(2, 3)
    assert full.only is None and full.flat_index.tolist() == list(range(6))
    empty = Participants.from_mask(np.zeros((2, 3), bool))
    assert empty.only is None and empty.present.size == 0


def test_one_column_sums_do_not_depend_on_the_other_replicas():
    """d = 1: numpy sums a contiguous column pairwise, so every path must use the sequential
    sparse product (it used to differ between few and many replicas)."""
    from fedtheory.algorithms import base

    rng = np.random.default_rng(16)
    mask = np.ones((6, 40), bool)
    part = Participants.from_mask(mask)
    vals = rng.normal(size=(part.size, 1)) * np.exp(3 * rng.normal(size=(part.size, 1)))
    many = base.segment_sum(vals, part)
    one = Participants.from_mask(np.where(np.arange(6)[:, None] == 0, mask, False))
    np.testing.assert_array_equal(base.segment_sum(vals[:40], one)[0], many[0])
    np.testing.assert_array_equal(base.segment_sum(vals[:40, 0], one)[0], many[0, 0])


@pytest.mark.parametrize("uniform", [True, False])
def test_add_scaled_sums_equals_scaled_sum(uniform):
    from fedtheory.algorithms import base

    rng = np.random.default_rng(17)
    values = rng.random(5) if not uniform else np.full(5, 0.2)
    coef = base.client_coef(values, np.float64)
    assert (np.ndim(coef) == 0) == uniform
    one_replica = np.zeros((4, 5), bool)
    one_replica[2, [0, 3, 4]] = True
    for mask in (rng.random((4, 5)) < 0.7, one_replica):
        part = Participants.from_mask(mask)
        upd = rng.normal(size=(part.size, 3))
        target = rng.normal(size=(4, 3))
        want = target + base.scaled_sum(upd, part, base.pair_coef(values, part, np.float64))
        base.add_scaled_sums(target, upd, part, base.rows_coef(coef, part))
        np.testing.assert_array_equal(target, want)


@pytest.mark.parametrize("name", ALL)
def test_consumed_updates_give_the_same_step(name):
    """consume=True lets a rule overwrite the engine's update buffer: same results."""
    rng = np.random.default_rng(18)
    rule = make(name)
    s1, s2 = init(rule, local_steps=2), init(rule, local_steps=2)
    for _ in range(3):
        mask, upd = random_round(rng)
        if rule.needs_all:
            mask[:] = True
        part = Participants.from_mask(mask)
        flat = upd[part.rows, part.cols]
        a1, a2 = rule.begin(s1, part), rule.begin(s2, part)
        for rl in (rule.correction(s1, part), rule.correction(s2, part)):
            assert rl is None or rl.shape == flat.shape
        rule.accumulate(s1, a1, part, flat.copy())
        rule.accumulate(s2, a2, part, flat.copy(), consume=True)
        np.testing.assert_array_equal(rule.finish(s1, a1), rule.finish(s2, a2))
        if rule.table:
            np.testing.assert_array_equal(s1["table"], s2["table"])

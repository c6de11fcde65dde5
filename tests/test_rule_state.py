"""Common checks of every registered rule's state (like optax's / scikit-learn's common
checks): the model state is apart from ``state["scratch"]``, which may be cleared between any
two calls without changing a result, and the blockwise round (``run_round``) is the step."""

import inspect

import numpy as np
import pytest

from fedtheory.algorithms import RULES, Participants, get_rule

N, D, R, ROUNDS = 4, 3, 5, 9  # ROUNDS > N: the table rules' exact refresh of the total runs
P = np.array([0.3, 0.5, 0.8, 1.0])
WEIGHTS = {"uniform": None, "weighted": np.array([0.1, 0.2, 0.3, 0.4])}


def configs():
    """Every registered rule with its default parameters, and both memory initialisations
    for the rules that take one."""
    for name in sorted(RULES):
        yield pytest.param(name, {}, id=name)
        if "memory_init" in inspect.signature(RULES[name].__init__).parameters:
            default = inspect.signature(RULES[name].__init__).parameters["memory_init"].default
            other = "zeros" if default == "full" else "full"
            yield pytest.param(name, {"memory_init": other}, id=f"{name}-{other}")


def rounds(rule, seed=0):
    """ROUNDS random rounds: (participants, (K, d) updates) each; every pair when the rule
    needs all updates."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(ROUNDS):
        mask = rng.random((R, N)) < P
        mask[0] = False  # a replica without participants
        if rule.needs_all:
            mask[:] = True
        part = Participants.from_mask(mask)
        out.append((part, rng.normal(size=(part.size, D))))
    return out


def new_state(rule, weights):
    initial = np.random.default_rng(1).normal(size=(R, N, D))
    return rule.init(R, N, D, p=P, weights=weights, initial=initial, local_steps=2)


def blockwise_round(rule, state, part, upd, clear):
    """The engine's round by hand (blocks of 2 pairs, corrections, consumed updates); with
    ``clear`` the scratch is emptied (or removed) before every call."""
    calls = [0]

    def drop():
        if clear:
            if calls[0] % 2:
                state.pop("scratch", None)
            else:
                state.setdefault("scratch", {}).clear()
            calls[0] += 1

    drop()
    acc = rule.begin(state, part)
    index = {(r, c): k for k, (r, c) in enumerate(zip(part.rows, part.cols, strict=True))}
    for block in part.blocks(2):
        drop()
        corr = rule.correction(state, block) if block.size else None
        mine = upd[[index[rc] for rc in zip(block.rows, block.cols, strict=True)]]
        if corr is not None:
            mine += corr
        drop()
        rule.accumulate(state, acc, block, mine, consume=True)
    drop()
    return rule.finish(state, acc)


def model(state):
    return {k: v for k, v in state.items() if k != "scratch"}


def assert_same_model(a, b):
    ma, mb = model(a), model(b)
    assert ma.keys() == mb.keys()
    for k in ma:
        if isinstance(ma[k], np.ndarray):
            np.testing.assert_array_equal(ma[k], mb[k], err_msg=k)
        else:
            assert ma[k] == mb[k], k


@pytest.mark.parametrize("weights", sorted(WEIGHTS))
@pytest.mark.parametrize("name, params", list(configs()))
def test_scratch_can_be_cleared_between_any_two_calls(name, params, weights):
    rule = get_rule(name, **params)
    kept, cleared = new_state(rule, WEIGHTS[weights]), new_state(rule, WEIGHTS[weights])
    assert cleared["scratch"] == {}
    for part, upd in rounds(rule):
        g_kept = blockwise_round(rule, kept, part, upd.copy(), clear=False)
        g_cleared = blockwise_round(rule, cleared, part, upd.copy(), clear=True)
        # bit-identical: the scratch only holds caches recomputed by the same expressions
        # and buffers written before they are read
        np.testing.assert_array_equal(g_cleared, g_kept)
        assert_same_model(cleared, kept)
    if rule.table:  # the kept state did use its scratch (the table's row view at least)
        assert "rows_view" in kept["scratch"]


@pytest.mark.parametrize("name, params", list(configs()))
def test_dense_steps_with_cleared_scratch(name, params):
    """The public step, the scratch emptied before each call: the same directions."""
    rule = get_rule(name, **params)
    kept, cleared = new_state(rule, None), new_state(rule, None)
    for part, upd in rounds(rule, seed=2):
        cleared["scratch"].clear()
        g_cleared, cleared = rule.step(cleared, part, upd)
        g_kept, kept = rule.step(kept, part, upd)
        np.testing.assert_array_equal(g_cleared, g_kept)  # bit-identical: as above
        assert_same_model(cleared, kept)


@pytest.mark.parametrize("name, params", list(configs()))
def test_model_state_has_no_private_keys(name, params):
    rule = get_rule(name, **params)
    state = new_state(rule, WEIGHTS["weighted"])
    for part, upd in rounds(rule, seed=3):
        for key in state:
            assert not key.startswith("_"), f"rule {name!r} keeps {key!r} in its model state"
        assert isinstance(state["scratch"], dict)
        rule.step(state, part, upd)
    assert {"replicas", "n", "d", "dtype", "weights", "p", "local_steps"} <= model(state).keys()
    if rule.table:
        assert {"table", "total", "since_refresh"} <= model(state).keys()


@pytest.mark.parametrize("name, params", list(configs()))
def test_run_round_is_the_blockwise_round(name, params):
    """Rule.run_round (the round the simulators share) = begin / correction / accumulate /
    finish called by hand."""
    rule = get_rule(name, **params)
    by_hand, shared = new_state(rule, None), new_state(rule, None)
    for part, upd in rounds(rule, seed=4):
        index = {(r, c): k for k, (r, c) in enumerate(zip(part.rows, part.cols, strict=True))}

        def local(block, corr, upd=upd, index=index):
            mine = upd[[index[rc] for rc in zip(block.rows, block.cols, strict=True)]]
            if corr is not None:
                mine += corr
            return mine

        g_shared = rule.run_round(shared, part, local, block_rows=2)
        g_hand = blockwise_round(rule, by_hand, part, upd.copy(), clear=False)
        np.testing.assert_array_equal(g_shared, g_hand)  # bit-identical: the same calls
        assert_same_model(shared, by_hand)

r"""The two trajectory simulators agree: :func:`pathwise_run` (the ``mifa`` claims' loop) and
:func:`fedtheory.simulate.simulate` (the engine), fed the same participation masks
(:class:`ReplayParticipation`), with exact gradients and one local step, produce the same
iterates for every registered rule.

Tolerance (derived). Let :math:`N_t` be the largest difference between the two runs, over
the iterate :math:`x_t` and the rule's memory divided by :math:`L` (table rows, momentum
:math:`v/c`). With exact quadratic gradients (:math:`|\partial_j f_i| \le L|x - c_i|_j`) a round
maps :math:`N \mapsto \text{amp}\, N + \delta`:

- a memory row changes by at most :math:`r = 2/p_{\min} - 1` times :math:`N` (U-MIFA's
  :math:`(1 - 1/p)T_i + g_i/p`; the other rows are overwritten by gradients: 1);
- the direction by at most :math:`c_G L N`, :math:`c_G = 3/p_{\min}` (SAGA's
  :math:`1 + 2/p`; FedAvg-IS, FedPGD :math:`1/p`; FedVARP, SCAFFOLD 3; U-MIFA :math:`r`);
- heavy ball :math:`v = \beta v + G` in the norm :math:`|v|/(L c_G/(1-\beta))` keeps gain 1,
  so :math:`x - \eta v` has gain :math:`1 + \eta L c_G/(1-\beta)`;

hence :math:`\text{amp} = \max(r, 1 + \eta L c_G/(1-\beta))`. Each round's arithmetic (two
roundings per gradient entry, sums of at most :math:`n` terms, the step) differs by at most
:math:`\delta = (n + 6)\,\epsilon\,\text{mag}` with :math:`\text{mag}` bounding every quantity
of a round in units of :math:`x` (largest :math:`|x_t|` plus
:math:`c_G r/(1-\beta)` times the largest gradient entry over :math:`L`, both measured), so
after :math:`T` rounds :math:`N_T \le \delta\sum_{t<T}\text{amp}^t`.
"""

import numpy as np
import pytest

import fedtheory.experiments.mifa_experiments as mx
from fedtheory.algorithms import RULES, get_rule
from fedtheory.participation import ReplayParticipation
from fedtheory.simulate import simulate

N, D, R, T = 5, 3, 6, 12
P, ETA, BETA = 0.8, 0.1, 0.5
EPS = np.finfo(np.float64).eps


def setting(seed=0):
    prob = mx.quadratic_problem(seed=seed, n=N, d=D)
    masks = np.random.default_rng(seed + 1).random((T, R, N)) < P
    x0 = prob.x_star + np.linspace(-2.0, 3.0, D)
    return prob, masks, x0


def rule_params(name):
    params = {"memory_init": "full"} if RULES[name].table else {}
    if RULES[name].own_momentum:
        params["beta"] = BETA
    return params


def pathwise(prob, name, masks, x0):
    beta = BETA if RULES[name].own_momentum else None
    return mx.pathwise_run(prob, name, p=P, rounds=T, replicas=R, eta=ETA,
                           rng=np.random.default_rng(99), x0=x0,
                           participation=ReplayParticipation(masks, p=P), beta=beta)


def engine(prob, name, masks, x0):
    metrics = {
        "x_max": lambda x: np.abs(x).max(axis=1),
        "g_max": lambda x: np.abs(prob.client_grads(x)).max(axis=(1, 2)),
    }
    return simulate(prob, get_rule(name, **rule_params(name)), ReplayParticipation(masks, p=P),
                    rounds=T, replicas=R, lr=ETA, x0=x0, chunk=R, workers=1,
                    keep_replicas=True, extra_metrics=metrics)


def tolerance(name, res, L):
    beta = BETA if RULES[name].own_momentum else 0.0
    r, c_G = 2.0 / P - 1.0, 3.0 / P
    amp = max(r, 1.0 + ETA * L * c_G / (1.0 - beta))
    mag = (res.extra["x_max"].replicas.max()
           + c_G * r / (1.0 - beta) * res.extra["g_max"].replicas.max() / L)
    delta = (N + 6) * EPS * mag
    return delta * sum(amp**t for t in range(T))


@pytest.mark.parametrize("name", sorted(RULES))
def test_pathwise_run_and_simulate_give_the_same_iterates(name):
    prob, masks, x0 = setting()
    pw = pathwise(prob, name, masks, x0)
    res = engine(prob, name, masks, x0)
    tol = tolerance(name, res, prob.L)
    assert tol < 1e-6  # a meaningful bound: the runs move x by about 1e-1 per round
    np.testing.assert_allclose(pw["x"], res.x, rtol=0, atol=tol)
    # every round's gradient norm: |a^2 - b^2| <= (|a| + |b|) |a - b|, |a - b| <= L sqrt(d) tol
    gn_pw, gn_sim = pw["grad_norm2"].T, res.grad_norm2.replicas  # (R, T + 1)
    err = prob.L * np.sqrt(D) * tol  # bound on the gradients' difference (2-norm)
    bound = (np.sqrt(gn_pw) + np.sqrt(gn_sim)) * err + err**2 + 4 * D * EPS * gn_pw
    assert np.all(np.abs(gn_pw - gn_sim) <= bound)


@pytest.mark.parametrize("name", ["fedavg_is", "mifa", "umifa"])
def test_the_comparison_sees_other_masks(name):
    """The agreement is not vacuous: flipping one client's participation in one round moves
    the iterates by far more than the tolerance."""
    prob, masks, x0 = setting()
    res = engine(prob, name, masks, x0)
    other = masks.copy()
    other[T // 2, :, 0] = ~other[T // 2, :, 0]
    pw = pathwise(prob, name, other, x0)
    gap = np.abs(pw["x"] - res.x).max(axis=1)
    assert np.all(gap > 1e3 * tolerance(name, res, prob.L))


def test_pathwise_run_memory_init_follows_the_rule_class():
    """Rules given by name get a full memory exactly when their class keeps a table: MIFA's
    first round is then a full gradient step whatever the mask (here: nobody active)."""
    prob, _, x0 = setting()
    none = np.zeros((1, R, N), dtype=bool)
    for name in ("mifa", "umifa", "mifam", "saga", "fedvarp"):
        assert RULES[name].table
        out = mx.pathwise_run(prob, name, p=P, rounds=1, replicas=R, eta=ETA,
                              rng=np.random.default_rng(0), x0=x0,
                              participation=ReplayParticipation(none, p=P))
        want = x0 - ETA * prob.grad(x0)
        scale = ETA * np.abs(prob.client_grads(x0)).max() + np.abs(x0).max()
        np.testing.assert_allclose(out["x"], np.broadcast_to(want, (R, D)), rtol=0,
                                   atol=(N + 4) * EPS * scale, err_msg=name)


def test_pathwise_run_rejects_a_process_over_other_clients():
    prob, masks, x0 = setting()
    with pytest.raises(ValueError, match=r"participation must be a process over problem.n=5"):
        mx.pathwise_run(prob, "mifa", p=P, rounds=T, replicas=R, eta=ETA,
                        rng=np.random.default_rng(0), x0=x0,
                        participation=ReplayParticipation(masks[..., :4], p=P))

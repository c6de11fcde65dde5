"""The loops kept outside the engine agree with it: each is an enumeration or a reference, and
the engine run it stands for gives the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.algorithms import MIFA
from fedtheory.experiments.mifa_floor_search import mifa_paths_1d
from fedtheory.participation import ReplayParticipation
from fedtheory.problems import QuadraticProblem
from fedtheory.simulate import simulate
from fedtheory.symbolic.enumeration import all_masks


@pytest.mark.parametrize("T", [1, 2, 4])
def test_mifa_paths_1d_is_the_engine_on_every_path(T: int) -> None:
    a, c, w0, eta = np.array([1.0, 0.7]), np.array([0.3, -1.2]), 1.5, 0.4
    ref = mifa_paths_1d(a, c, w0, eta, T)
    masks = all_masks(2)
    P = masks.shape[0] ** (T - 1)
    seq = (np.array(np.unravel_index(np.arange(P), [masks.shape[0]] * (T - 1))).T if T > 1
           else np.zeros((1, 0), dtype=int))
    replay = np.ones((max(T - 1, 1), P, 2), dtype=bool)  # round 1: the memory's full round
    replay[1:] = np.moveaxis(masks[seq[:, : T - 2]], 1, 0) if T > 2 else replay[1:]
    res = simulate(QuadraticProblem(a[:, None], c[:, None]), MIFA(memory_init="full"),
                   ReplayParticipation(replay, p=1.0), rounds=T - 1, replicas=P, lr=eta,
                   x0=np.array([w0]), keep_replicas=True, chunk=P, workers=1)
    np.testing.assert_allclose(res.grad_norm2.replicas, ref["grad_norm2"], rtol=1e-13,
                               atol=1e-15)
    np.testing.assert_allclose(res.f_gap.replicas[:, 0], ref["gap0"], rtol=1e-13, atol=1e-15)
    if T > 1:
        np.testing.assert_allclose(res.f_gap.replicas[:, 1], ref["gap1"], rtol=1e-13,
                                   atol=1e-15)

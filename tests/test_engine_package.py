"""The engine as a package: one room per job (each module under 600 lines), the run's one
compatibility check in ``EngineConfig``, the per-replica streams named, the local work a
strategy chosen once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import fedtheory
from fedtheory.algorithms import get_rule
from fedtheory.engine import Engine, EngineConfig, LocalWork, Run, Stream
from fedtheory.participation import BernoulliParticipation
from fedtheory.problems import QuadraticProblem

ENGINE = Path(fedtheory.__file__).parent / "engine"


@pytest.fixture(scope="module")
def prob() -> QuadraticProblem:
    return QuadraticProblem.heterogeneous(5, 3, L=1.0, mu=0.1, sigma_G2=1.0,
                                          rng=np.random.default_rng(0))


def test_every_engine_module_is_under_600_lines():
    modules = sorted(ENGINE.rglob("*.py"))
    assert len(modules) >= 8, modules
    long = {str(p.relative_to(ENGINE)): n for p in modules
            if (n := len(p.read_text().splitlines())) >= 600}
    assert not long, long


def test_the_streams_are_named():
    assert [(s.name, int(s)) for s in Stream] == [
        ("PARTICIPATION", 0), ("NOISE", 1), ("LOCAL_STEPS", 2), ("SAMPLE_ORDERS", 3)]


def test_the_configuration_checks_the_parts_against_each_other(prob):
    """Building an EngineConfig is the run's one compatibility check, whoever builds it."""
    with pytest.raises(ValueError, match="participation must be a process over problem.n=5"):
        EngineConfig(problem=prob, rule=get_rule("fedavg"),
                     participation=BernoulliParticipation(0.5, n=4),
                     run=Run(rounds=2, replicas=2), local=LocalWork(lr=0.1))
    with pytest.raises(ValueError, match="lr must be one rate or one per replica"):
        EngineConfig(problem=prob, rule=get_rule("fedavg"),
                     participation=BernoulliParticipation(0.5, n=5),
                     run=Run(rounds=2, replicas=2), local=LocalWork(lr=[0.1, 0.2, 0.3]))


def test_local_steps_are_resolved_once_by_the_configuration(prob):
    cfg = EngineConfig(problem=prob, rule=get_rule("fedavg"),
                       participation=BernoulliParticipation(0.5, n=5),
                       run=Run(rounds=2, replicas=2), local=LocalWork(lr=0.1, steps=[3] * 5))
    assert cfg.local.steps == 3 and isinstance(cfg.local.steps, int)  # a constant array
    assert cfg.server.x0.shape == (3,) and cfg.p.shape == (5,)


@pytest.mark.parametrize("steps, fuse, strategy", [
    (1, None, "PlainSteps"),
    (4, None, "FusedSteps"),  # a diagonal quadratic's closed form, exact without noise
    (4, False, "ProblemSteps"),  # its own local_steps
])
def test_the_local_work_strategy_is_chosen_once(prob, steps, fuse, strategy):
    eng = Engine(EngineConfig(problem=prob, rule=get_rule("fedavg"),
                              participation=BernoulliParticipation(0.5, n=5),
                              run=Run(rounds=2, replicas=2),
                              local=LocalWork(lr=0.1, steps=steps, fuse=fuse)))
    assert type(eng.work).__name__ == strategy
    assert eng.fused is (strategy == "FusedSteps")


def test_simulate_is_a_thin_front_door():
    """simulate() builds the typed configuration and hands it to the engine: under 100 lines."""
    import inspect

    from fedtheory.simulate import simulate

    assert len(inspect.getsource(simulate).splitlines()) < 100

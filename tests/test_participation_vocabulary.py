"""One way to say who takes part (issue 18): processes, resolved in one place
(participation.process_name), are what theory.fedau's formulas and the sampling designs speak."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from fedtheory import participation as pp
from fedtheory.participation.fedau_sampler import JoinRateMarkov, OffsetCyclic
from fedtheory.sampling import ExplicitSampling, IndependentSampling, UniformWithoutReplacement
from fedtheory.theory import fedau


def test_names_are_resolved_in_one_place() -> None:
    assert pp.process_name(pp.MarkovParticipation(0.3, 0.2, n=2)) == "markov"
    assert pp.process_name(OffsetCyclic) == "cyclic_offset"
    assert pp.process_name("cyclic") == "cyclic"
    assert set(pp.PROCESSES) < set(pp.KNOWN_PROCESSES)
    assert pp.KNOWN_PROCESSES["markov_join"] is JoinRateMarkov
    with pytest.raises(ValueError, match=r"pattern must be one of \[.*'bernoulli'.*\], got "
                                         r"'weekly'"):
        pp.process_name("weekly", "pattern")
    with pytest.raises(ValueError, match="participation process must be one of"):
        pp.process_name(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs the parameter 'period'"):
        fedau.implicit_weight("cyclic", Fraction(1, 4), 3)
    with pytest.raises(ValueError, match=r"pattern must be one of \['bernoulli', 'markov', "
                                         r"'cyclic'\].*got 'uniform'"):
        fedau.long_run_weight(pp.UniformParticipation(4, 2), 0.5, 3)


@pytest.mark.parametrize("proc, name, params", [
    (pp.BernoulliParticipation(0.25, n=3), "bernoulli", {}),
    (pp.MarkovParticipation(0.25, 0.5, n=3), "markov", {"correlation": 0.5}),
    (pp.CyclicParticipation(0.25, 12, n=3), "cyclic", {"period": 12}),
    (JoinRateMarkov(0.25, 0.05, n=3), "markov_join", {"to_active": 0.05}),
    (OffsetCyclic(0.25, 12, n=3), "cyclic_offset", {"period": 12}),
])
def test_a_process_object_gives_the_numbers_of_its_name(proc, name, params) -> None:
    p = Fraction(1, 4)
    for K in (3, math.inf):
        assert fedau.implicit_weight(proc, p, K) == fedau.implicit_weight(name, p, K, **params)
        assert (fedau.method_weighting("fedau", proc, [p], K)
                == fedau.method_weighting("fedau", name, [p], K, **params))
    if name in ("bernoulli", "markov", "cyclic"):
        assert fedau.chain_long_run_weight(proc, p, 3) == fedau.chain_long_run_weight(
            name, p, 3, **params)
        assert np.array_equal(fedau.expected_intervals(proc, 0.25, 3, 20),
                              fedau.expected_intervals(name, 0.25, 3, 20, **params))


def test_memoryless_processes_and_their_designs() -> None:
    b = pp.BernoulliParticipation([0.5, 0.25])
    d = b.design()
    assert isinstance(d, IndependentSampling) and np.array_equal(d.p, b.stationary)
    back = pp.process_of_design(d)
    assert isinstance(back, pp.BernoulliParticipation) and np.array_equal(back.p, b.p)
    u = pp.UniformParticipation(5, 2)
    du = u.design()
    assert isinstance(du, UniformWithoutReplacement) and np.allclose(du.p, u.stationary)
    assert pp.process_of_design(du).b == 2
    with pytest.raises(ValueError, match=r"design must be the design of a memoryless process "
                       r"\(IndependentSampling, .*UniformWithoutReplacement.*\)"):
        pp.process_of_design(ExplicitSampling([(0,), (0, 1)], [0.5, 0.5]))


def test_a_scheme_registers_itself_and_its_design(monkeypatch) -> None:
    """A scheme is one class: ``register=True`` puts it in the registry behind PROCESSES, its
    ``design_class`` in the lookup of process_of_design (no list to edit, no isinstance
    chain); a second class cannot take a name or a design already taken."""
    from fedtheory.participation import base

    monkeypatch.setattr(base, "_REGISTERED", dict(base._REGISTERED))
    monkeypatch.setattr(base, "_BY_DESIGN", dict(base._BY_DESIGN))

    class HalfDesign(ExplicitSampling):
        def __init__(self) -> None:
            super().__init__([(0,), (1,)], [0.5, 0.5])

    class OneOfTwo(pp.ParticipationProcess, register=True):
        name = "one_of_two_test"
        design_class = HalfDesign
        n = 2

        def design(self) -> HalfDesign:
            return HalfDesign()

        @classmethod
        def from_design(cls, design: HalfDesign) -> OneOfTwo:
            return cls()

    assert base.registered_processes()["one_of_two_test"] is OneOfTwo
    assert isinstance(pp.process_of_design(HalfDesign()), OneOfTwo)
    assert isinstance(pp.process_of_design(pp.BernoulliParticipation(0.5, n=2).design()),
                      pp.BernoulliParticipation)
    with pytest.raises(ValueError, match="'bernoulli' is already registered"):
        class Again(pp.ParticipationProcess, register=True):
            name = "bernoulli"
    with pytest.raises(ValueError, match="design class .*IndependentSampling.* is already"):
        class Twice(pp.ParticipationProcess):
            design_class = IndependentSampling

            def design(self) -> IndependentSampling:
                return IndependentSampling([0.5])

            @classmethod
            def from_design(cls, design: IndependentSampling) -> Twice:
                return cls()
    with pytest.raises(TypeError, match="implements design\\(\\) and from_design\\(\\)"):
        class Half(pp.ParticipationProcess):
            design_class = HalfDesign


def test_designs_describe_themselves() -> None:
    """The description of a design for a counterexample is the design's own (no isinstance
    chain in theory.importance_sampling)."""
    from fedtheory.theory.importance_sampling import design_desc

    assert IndependentSampling([0.5, 0.25]).describe() == {"design": "independent",
                                                           "p": ["1/2", "1/4"]}
    assert design_desc(UniformWithoutReplacement(4, 2)) == {
        "design": "uniform without replacement", "n": 4, "b": 2}
    assert ExplicitSampling([(0,), (0, 1)], [0.25, 0.75]).describe() == {
        "design": "explicit", "subsets": [(0,), (0, 1)], "probs": ["1/4", "3/4"], "n": 2}

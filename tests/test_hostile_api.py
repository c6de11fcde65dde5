"""The library's public API under hostile input (issue 28, "The library's API").

A table-driven fuzz of the functions documented in docs/lemmas.md and docs/architecture.md
(sampling and OCS, participation processes, rules through ``algorithms.get_rule``, problems,
``simulate``, ``claims.checks`` and ``Context.check_mean``, ``stats``) with non-finite,
negative, complex, wrongly shaped and huge inputs. Every call either raises a clear
``ValueError`` / ``TypeError`` whose message names the bad argument, or returns the right
answer: never a bare error from deep inside numpy (``MemoryError``, a broadcast error), never a
silent wrong answer (a NaN bound read as a refutation, an imaginary part dropped), never a run
without end (``simulate(replicas=10**12)`` is refused with its estimate before it allocates).

``CASES`` is the table: ``(id, call, expected)`` with ``expected`` the argument name the
error must carry, or ``OK(check)`` for a call that must return and pass ``check``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from fedtheory import stats
from fedtheory.algorithms import get_rule
from fedtheory.claimkit.core import Context
from fedtheory.claims import Claim, ClaimKind, checks
from fedtheory.convex.eso import eso_gap_matrix, eso_min_eigenvalue
from fedtheory.convex.ocs import dual_function, kkt_certificate
from fedtheory.participation import (
    BernoulliParticipation,
    MarkovParticipation,
    UniformParticipation,
)
from fedtheory.participation.aocs import AOCSParticipation
from fedtheory.participation.ocs import OCSParticipation
from fedtheory.problems import QuadraticProblem
from fedtheory.problems.datasets import FederatedData
from fedtheory.problems.logistic import LogisticProblem
from fedtheory.problems.softmax import SoftmaxRegression
from fedtheory.sampling import (
    IndependentSampling,
    alpha_upper_bound,
    aocs_probabilities,
    estimator_variance,
    gamma_from_alpha,
    improvement_factor,
    independent_sampling_variance,
    ocs_threshold,
    optimal_probabilities,
    optimal_variance,
    uniform_variance,
)
from fedtheory.sampling.friend_selection import (
    complexity_threshold,
    prune_candidates,
    similarity_matrix,
)
from fedtheory.simulate import simulate
from fedtheory.theory.ocs_exact import ocs_probabilities

NAN, INF = math.nan, math.inf
RNG = np.random.default_rng(0)
X40 = RNG.normal(size=40)  # enough replicas for a Monte Carlo check
CX = np.array([1.0, 2.0 + 1.0j])  # a complex array: a cast to float drops 1j silently


@dataclass(frozen=True)
class OK:
    """The call must return, and ``check(result)`` must hold (the right answer)."""

    check: Callable[[Any], bool]


def _quad(n: int = 3, d: int = 2) -> QuadraticProblem:
    return QuadraticProblem(np.ones((n, d)), np.arange(n * d, dtype=float).reshape(n, d))


def _data(X: Any = None, y: Any = None) -> FederatedData:
    base = np.random.default_rng(1).normal(size=(6, 3))
    Xc = base if X is None else X
    yc = np.array([0, 1, 0, 1, 0, 1]) if y is None else y
    return FederatedData((Xc[:3], Xc[3:]), (yc[:3], yc[3:]), base, np.array([0, 1] * 3), 2)


def _sim(**kw: Any) -> Any:
    args: dict[str, Any] = {"rounds": 3, "replicas": 2, "lr": 0.1}
    args.update(kw)
    problem = args.pop("problem", _quad())
    process = args.pop("process", BernoulliParticipation(0.5, n=problem.n))
    rule = args.pop("rule", "fedavg")
    return simulate(problem, rule, process, **args)


def _ctx(kind: ClaimKind) -> Context:
    return Context(claim_id="hostile.demo", preset="quick", seed=0, kind=kind)


def _passed(value: Any) -> Callable[[Any], bool]:
    return lambda ev: ev.passed is value


CASES: list[tuple[str, Callable[[], Any], str | OK]] = [
    # ---------------------------------------------------------------- OCS (theory, exact)
    ("ocs_probabilities nan last", lambda: ocs_probabilities([1.0, NAN], 1), "norms"),
    ("ocs_probabilities nan first", lambda: ocs_probabilities([NAN, 1.0], 1), "norms"),
    ("ocs_probabilities negative", lambda: ocs_probabilities([1, -2], 1), "norms"),
    ("ocs_probabilities inf", lambda: ocs_probabilities([1.0, INF], 1), "norms"),
    ("ocs_probabilities complex", lambda: ocs_probabilities([1.0, 2j], 1), "norms"),
    ("ocs_probabilities empty", lambda: ocs_probabilities([], 1), "norms"),
    ("ocs_probabilities string", lambda: ocs_probabilities(["a", "b"], 1), "norms"),
    ("ocs_probabilities m float", lambda: ocs_probabilities([1.0, 2.0], 1.5), "m"),
    ("ocs_probabilities m zero", lambda: ocs_probabilities([1.0, 2.0], 0), "m"),
    ("ocs_probabilities zeros", lambda: ocs_probabilities([0.0, 0.0], 1),
     OK(lambda p: p == [0.0, 0.0])),
    ("ocs_probabilities fractions", lambda: ocs_probabilities([Fraction(1), Fraction(3)], 1),
     OK(lambda p: p == [Fraction(1, 4), Fraction(3, 4)])),
    # ---------------------------------------------------------------- OCS / AOCS (sampling)
    ("optimal_probabilities nan", lambda: optimal_probabilities([1.0, NAN], 1), "norms"),
    ("optimal_probabilities inf", lambda: optimal_probabilities([1.0, INF], 1), "norms"),
    ("optimal_probabilities negative", lambda: optimal_probabilities([1.0, -2.0], 1),
     "norms"),
    ("optimal_probabilities complex list", lambda: optimal_probabilities([1.0, 2j], 1),
     "norms"),
    ("optimal_probabilities complex array", lambda: optimal_probabilities(CX, 1), "norms"),
    ("optimal_probabilities 3-D", lambda: optimal_probabilities(np.ones((2, 2, 2)), 1),
     "norms"),
    ("optimal_probabilities m nan", lambda: optimal_probabilities([1.0, 2.0], NAN), "m"),
    ("optimal_probabilities m complex", lambda: optimal_probabilities([1.0, 2.0], 1 + 1j),
     "m"),
    ("optimal_probabilities m numpy complex",
     lambda: optimal_probabilities([1.0, 2.0], np.complex128(1 + 1j)), "m"),
    ("optimal_probabilities m > n", lambda: optimal_probabilities([1.0, 2.0], 3), "m"),
    ("ocs_threshold complex", lambda: ocs_threshold(CX, 1), "norms"),
    ("optimal_variance complex", lambda: optimal_variance(CX, 1), "norms"),
    ("optimal_variance nan", lambda: optimal_variance([NAN, 1.0], 1), "norms"),
    ("uniform_variance complex", lambda: uniform_variance(CX, 1), "norms"),
    ("improvement_factor complex", lambda: improvement_factor(CX, 1), "norms"),
    ("alpha_upper_bound complex", lambda: alpha_upper_bound(CX), "norms"),
    ("alpha_upper_bound inf", lambda: alpha_upper_bound([1.0, INF]), "norms"),
    ("gamma_from_alpha complex", lambda: gamma_from_alpha(np.array([0.5 + 0.5j]), 4, 2),
     "alpha"),
    ("gamma_from_alpha nan", lambda: gamma_from_alpha(NAN, 4, 2), "alpha"),
    ("independent_sampling_variance p complex",
     lambda: independent_sampling_variance([1.0, 2.0], np.array([0.5, 0.5 + 0.1j])), "p"),
    ("independent_sampling_variance p nan",
     lambda: independent_sampling_variance([1.0, 2.0], [0.5, NAN]), "p"),
    ("independent_sampling_variance norms complex",
     lambda: independent_sampling_variance(CX, [0.5, 0.5]), "norms"),
    ("aocs_probabilities nan", lambda: aocs_probabilities([1.0, NAN], 1), "norms"),
    ("aocs_probabilities negative", lambda: aocs_probabilities([1.0, -1.0], 1), "norms"),
    ("aocs_probabilities complex", lambda: aocs_probabilities(CX, 1), "norms"),
    ("aocs_probabilities inf", lambda: aocs_probabilities([1.0, INF], 1), "norms"),
    ("aocs_probabilities rtol nan", lambda: aocs_probabilities([1.0, 2.0], 1, rtol=NAN),
     "rtol"),
    ("aocs_probabilities j_max negative",
     lambda: aocs_probabilities([1.0, 2.0], 1, j_max=-1), "j_max"),
    # ---------------------------------------------------------------- designs and moments
    ("IndependentSampling nan", lambda: IndependentSampling([0.5, NAN]), "p"),
    ("IndependentSampling complex", lambda: IndependentSampling(np.array([0.5, 0.5j])), "p"),
    ("IndependentSampling above 1", lambda: IndependentSampling([0.5, 1.5]), "p"),
    ("IndependentSampling negative", lambda: IndependentSampling([0.5, -0.5]), "p"),
    ("estimator_variance w complex",
     lambda: estimator_variance(IndependentSampling([0.5, 0.5]), np.array([0.5, 0.5j]),
                                [[1.0], [1.0]]), "w"),
    ("estimator_variance zeta complex",
     lambda: estimator_variance(IndependentSampling([0.5, 0.5]), [0.5, 0.5],
                                np.array([[1.0], [1j]])), "zeta"),
    ("estimator_variance zeta nan",
     lambda: estimator_variance(IndependentSampling([0.5, 0.5]), [0.5, 0.5],
                                [[1.0], [NAN]]), "zeta"),
    ("estimator_variance P complex",
     lambda: estimator_variance(np.array([[0.5, 0.25], [0.25, 0.5j]]), [0.5, 0.5],
                                [[1.0], [1.0]]), "P"),
    ("estimator_variance P nan",
     lambda: estimator_variance(np.array([[0.5, NAN], [NAN, 0.5]]), [0.5, 0.5],
                                [[1.0], [1.0]]), "P"),
    ("similarity_matrix complex", lambda: similarity_matrix(
        np.ones((1, 2, 2)) + 1j, np.ones((1, 2), dtype=bool)), "updates"),
    ("similarity_matrix nan", lambda: similarity_matrix(
        np.full((1, 2, 2), NAN), np.ones((1, 2), dtype=bool)), "updates"),
    ("complexity_threshold beta complex", lambda: complexity_threshold(
        [1], n_clients=2, horizon=2, max_friends=1, beta=0.5j, p=0.5, delta_f=0.1), "beta"),
    ("complexity_threshold p nan", lambda: complexity_threshold(
        [1], n_clients=2, horizon=2, max_friends=1, beta=0.5, p=NAN, delta_f=0.1), "p"),
    ("complexity_threshold t complex", lambda: complexity_threshold(
        np.array([1j]), n_clients=2, horizon=2, max_friends=1, beta=0.5, p=0.5, delta_f=0.1),
     "t"),
    ("prune_candidates theta complex", lambda: prune_candidates(
        np.full((1, 2, 2), 0.5), np.ones((1, 2, 2), dtype=bool), np.array([0.5j])), "theta"),
    ("eso_gap_matrix P complex", lambda: eso_gap_matrix(
        np.array([[0.5, 0.25], [0.25, 0.5 + 0.1j]]), [1.0, 1.0]), "P"),
    ("eso_min_eigenvalue v complex", lambda: eso_min_eigenvalue(
        IndependentSampling([0.5, 0.5]), np.array([1.0, 1j])), "v"),
    ("dual_function lam nan", lambda: dual_function([1.0, 2.0], 1, 1.0, [NAN, 0.0],
                                                    [0.0, 0.0]), "lam"),
    ("dual_function mu complex", lambda: dual_function([1.0, 2.0], 1, 1.0, [0.0, 0.0],
                                                       np.array([0.0, 1j])), "mu"),
    ("kkt_certificate p nan", lambda: kkt_certificate([1.0, 2.0], 1, p=[0.5, NAN]), "p"),
    ("kkt_certificate p complex", lambda: kkt_certificate([1.0, 2.0], 1,
                                                          p=np.array([0.5, 0.5j])), "p"),
    # ---------------------------------------------------------------- claims.checks
    ("check_upper_bound nan bound", lambda: checks.check_upper_bound(X40, NAN), "bound"),
    ("check_upper_bound -inf bound", lambda: checks.check_upper_bound(X40, -INF), "bound"),
    ("check_upper_bound +inf bound holds", lambda: checks.check_upper_bound(X40, INF),
     OK(_passed(True))),
    ("check_upper_bound complex bound", lambda: checks.check_upper_bound(X40, 1 + 1j),
     "bound"),
    ("check_upper_bound nan in vector bound",
     lambda: checks.check_upper_bound(np.ones((40, 2)), [1.0, NAN]), "bound"),
    ("check_upper_bound nan atol", lambda: checks.check_upper_bound(X40, 1.0, atol=NAN),
     "atol"),
    ("check_upper_bound nan samples", lambda: checks.check_upper_bound(
        np.append(X40, NAN), 1.0), "samples"),
    ("check_upper_bound complex samples", lambda: checks.check_upper_bound(
        X40 + 1j, 1.0), "samples"),
    ("check_lower_bound nan bound", lambda: checks.check_lower_bound(X40, NAN), "bound"),
    ("check_lower_bound +inf bound", lambda: checks.check_lower_bound(X40, INF), "bound"),
    ("check_lower_bound -inf bound holds", lambda: checks.check_lower_bound(X40, -INF),
     OK(_passed(True))),
    ("check_lower_bound nan atol", lambda: checks.check_lower_bound(X40, -1.0, atol=NAN),
     "atol"),
    ("check_identity nan theory", lambda: checks.check_identity(X40, NAN), "theory"),
    ("check_identity inf theory", lambda: checks.check_identity(X40, INF), "theory"),
    ("check_identity complex theory", lambda: checks.check_identity(X40, 1j), "theory"),
    ("check_identity nan rtol", lambda: checks.check_identity(X40, 0.0, rtol=NAN), "rtol"),
    ("check_identity negative atol", lambda: checks.check_identity(X40, 0.0, atol=-1.0),
     "atol"),
    ("check_less nan a", lambda: checks.check_less(np.append(X40, NAN), np.append(X40, 0)),
     "a"),
    ("check_less inf b", lambda: checks.check_less(X40, np.append(X40[1:], INF)), "b"),
    ("check_less complex a", lambda: checks.check_less(X40 + 1j, X40), "a"),
    ("check_less shapes", lambda: checks.check_less(X40, X40[:10]), "b"),
    ("check_close nan measured", lambda: checks.check_close(NAN, 1.0), "measured"),
    ("check_close nan theory", lambda: checks.check_close(1.0, NAN), "theory"),
    ("check_close inf measured", lambda: checks.check_close([1.0, INF], [1.0, 2.0]),
     "measured"),
    ("check_close complex theory", lambda: checks.check_close(1.0, 1 + 1e-3j), "theory"),
    ("check_close nan atol", lambda: checks.check_close(1.0, 1.0, atol=NAN), "atol"),
    ("check_close equal", lambda: checks.check_close([1.0, 2.0], [1.0, 2.0]),
     OK(_passed(True))),
    ("compare_paired nan a", lambda: checks.compare_paired(np.append(X40[:9], NAN),
                                                           X40[:10], "better", 0.1), "a"),
    ("compare_paired complex b", lambda: checks.compare_paired(X40[:10], X40[:10] + 1j,
                                                               "better", 0.1), "b"),
    ("compare_paired nan margin", lambda: checks.compare_paired(X40[:10], X40[:10],
                                                                "better", NAN), "margin"),
    ("compare_paired bad hypothesis", lambda: checks.compare_paired(X40[:10], X40[:10],
                                                                    "worse", 0.1),
     "hypothesis"),
    ("compare_paired nan alpha", lambda: checks.compare_paired(X40[:10], X40[:10],
                                                               "better", 0.1, alpha=NAN),
     "alpha"),
    ("check_proportion_upper_bound nan bound",
     lambda: checks.check_proportion_upper_bound([5], [100], [NAN]), "bound"),
    ("check_proportion_upper_bound nan hits",
     lambda: checks.check_proportion_upper_bound([NAN], [100], [0.1]), "hits"),
    ("check_proportion_upper_bound hits > n",
     lambda: checks.check_proportion_upper_bound([101], [100], [0.1]), "n"),
    ("check_proportion_upper_bound fractional n",
     lambda: checks.check_proportion_upper_bound([1], [10.5], [0.1]), "n"),
    ("check_proportion_upper_bound complex bound",
     lambda: checks.check_proportion_upper_bound([1], [10], [0.1j]), "bound"),
    ("check_proportion_upper_bound inf bound holds",
     lambda: checks.check_proportion_upper_bound([100], [100], [INF]), OK(_passed(True))),
    ("check_mean upper nan", lambda: _ctx(ClaimKind.UPPER_BOUND).check_mean(X40, NAN),
     "bound"),
    ("check_mean lower nan", lambda: _ctx(ClaimKind.LOWER_BOUND).check_mean(X40, NAN),
     "bound"),
    ("check_mean identity inf", lambda: _ctx(ClaimKind.IDENTITY).check_mean(X40, INF),
     "theory"),
    # ---------------------------------------------------------------- stats
    ("mean_interval complex", lambda: stats.mean_interval(X40 + 1j), "samples"),
    ("mean_interval nan", lambda: stats.mean_interval(np.append(X40, NAN)), "samples"),
    ("mean_interval alpha nan", lambda: stats.mean_interval(X40, alpha=NAN), "alpha"),
    ("mean_interval sided", lambda: stats.mean_interval(X40, sided="both"), "sided"),
    ("paired_t_test complex", lambda: stats.paired_t_test(X40 + 1j, X40), "a"),
    ("paired_t_test nan", lambda: stats.paired_t_test(X40, np.append(X40[1:], NAN)), "b"),
    ("clopper_pearson nan k", lambda: stats.clopper_pearson(NAN, 10, 0.05, "lower"), "k"),
    ("clopper_pearson complex n", lambda: stats.clopper_pearson(1, 10j, 0.05, "lower"), "n"),
    ("clopper_pearson alpha nan", lambda: stats.clopper_pearson(1, 10, NAN, "lower"),
     "alpha"),
    ("proportion_limits nan bound", lambda: stats.proportion_limits([1], [10], [NAN]),
     "bound"),
    ("proportion_limits nan hits", lambda: stats.proportion_limits([NAN], [10], [0.1]),
     "hits"),
    ("z_quantile alpha nan", lambda: stats.z_quantile(NAN), "alpha"),
    ("detectable_effect alpha 2", lambda: stats.detectable_effect(1.0, 10, 2.0), "alpha"),
    # ---------------------------------------------------------------- problems
    ("QuadraticProblem complex hessians",
     lambda: QuadraticProblem(np.ones((2, 2)) + 1j, np.zeros((2, 2))), "hessians"),
    ("QuadraticProblem complex centers",
     lambda: QuadraticProblem(np.ones((2, 2)), np.zeros((2, 2)) + 1j), "centers"),
    ("QuadraticProblem complex offsets",
     lambda: QuadraticProblem(np.ones((2, 2)), np.zeros((2, 2)), offsets=np.array([0, 1j])),
     "offsets"),
    ("QuadraticProblem complex weights",
     lambda: QuadraticProblem(np.ones((2, 2)), np.zeros((2, 2)),
                              weights=np.array([0.5, 0.5 + 0.1j])), "weights"),
    ("QuadraticProblem nan hessians",
     lambda: QuadraticProblem(np.array([[1.0, NAN], [1.0, 1.0]]), np.zeros((2, 2))),
     "hessians"),
    ("QuadraticProblem nan dense hessians",
     lambda: QuadraticProblem(np.full((2, 2, 2), NAN), np.zeros((2, 2))), "hessians"),
    ("QuadraticProblem inf centers",
     lambda: QuadraticProblem(np.ones((2, 2)), np.array([[0.0, INF], [0.0, 0.0]])),
     "centers"),
    ("QuadraticProblem nan offsets",
     lambda: QuadraticProblem(np.ones((2, 2)), np.zeros((2, 2)), offsets=[0.0, NAN]),
     "offsets"),
    ("QuadraticProblem nan weights",
     lambda: QuadraticProblem(np.ones((2, 2)), np.zeros((2, 2)), weights=[0.5, NAN]),
     "weights"),
    ("QuadraticProblem negative weights",
     lambda: QuadraticProblem(np.ones((2, 2)), np.zeros((2, 2)), weights=[1.5, -0.5]),
     "weights"),
    ("QuadraticProblem shapes", lambda: QuadraticProblem(np.ones((3, 2)), np.zeros((2, 2))),
     "hessians"),
    ("QuadraticProblem centers 1-D", lambda: QuadraticProblem(np.ones(2), np.zeros(2)),
     "centers"),
    ("QuadraticProblem string hessians",
     lambda: QuadraticProblem([["a", "b"], ["c", "d"]], np.zeros((2, 2))), "hessians"),
    ("QuadraticProblem.heterogeneous L nan",
     lambda: QuadraticProblem.heterogeneous(4, 2, L=NAN, mu=0.1, sigma_G2=1.0, rng=RNG), "L"),
    ("QuadraticProblem.heterogeneous mu complex",
     lambda: QuadraticProblem.heterogeneous(4, 2, L=1.0, mu=0.1j, sigma_G2=1.0, rng=RNG),
     "mu"),
    ("QuadraticProblem.heterogeneous L numpy complex",
     lambda: QuadraticProblem.heterogeneous(4, 2, L=np.complex128(1 + 1j), mu=0.1,
                                            sigma_G2=1.0, rng=RNG), "L"),
    ("FederatedData nan features", lambda: _data(X=np.full((6, 3), NAN)), "X_clients[0]"),
    ("FederatedData complex features",
     lambda: _data(X=np.random.default_rng(1).normal(size=(6, 3)) + 1j), "X_clients[0]"),
    ("FederatedData labels out of range", lambda: _data(y=np.array([0, 1, 2, 1, 0, 1])),
     "y_clients[0]"),
    ("FederatedData float labels", lambda: _data(y=np.array([0, 1, 0, 1, 0, 0.5])),
     "y_clients[0]"),
    ("LogisticProblem lam nan", lambda: LogisticProblem(_data(), lam=NAN), "lam"),
    ("LogisticProblem weights complex",
     lambda: LogisticProblem(_data(), weights=np.array([0.5, 0.5 + 0.1j])), "weights"),
    ("SoftmaxRegression complex features",
     lambda: SoftmaxRegression([np.ones((2, 3)) + 1j], [np.array([0, 1])], 2),
     "X_clients[0]"),
    ("SoftmaxRegression nan features",
     lambda: SoftmaxRegression([np.full((2, 3), NAN)], [np.array([0, 1])], 2),
     "X_clients[0]"),
    ("SoftmaxRegression n_classes", lambda: SoftmaxRegression([np.ones((2, 3))],
                                                              [np.array([0, 1])], 1),
     "n_classes"),
    # ---------------------------------------------------------------- participation
    ("Bernoulli nan", lambda: BernoulliParticipation([0.5, NAN]), "p"),
    ("Bernoulli complex", lambda: BernoulliParticipation(np.array([0.5, 0.5j])), "p"),
    ("Bernoulli complex scalar", lambda: BernoulliParticipation(0.5j, n=2), "p"),
    ("Bernoulli above 1", lambda: BernoulliParticipation(1.5, n=2), "p"),
    ("Bernoulli n zero", lambda: BernoulliParticipation(0.5, n=0), "n"),
    ("Bernoulli n huge", lambda: BernoulliParticipation(0.5, n=10**12), "n=1000000000000"),
    ("Bernoulli init replicas huge",
     lambda: BernoulliParticipation(0.5, n=4).init(RNG, 10**12), "replicas=1000000000000"),
    ("Bernoulli sample rounds huge",
     lambda: BernoulliParticipation(0.5, n=4).sample(RNG, 2, 10**12), "rounds=1000000000000"),
    ("Markov nan", lambda: MarkovParticipation([0.5, NAN], 0.5), "p"),
    ("Markov correlation nan", lambda: MarkovParticipation([0.5, 0.5], NAN), "correlation"),
    ("Markov n huge", lambda: MarkovParticipation(0.5, 0.5, n=10**12), "n=1000000000000"),
    ("Uniform n huge", lambda: UniformParticipation(10**12, 2), "n=1000000000000"),
    ("Uniform b > n", lambda: UniformParticipation(3, 5), "b"),
    ("OCS m nan", lambda: OCSParticipation(4, NAN), "m"),
    ("OCS n huge", lambda: OCSParticipation(10**12, 2), "n=1000000000000"),
    ("AOCS m complex", lambda: AOCSParticipation(4, 1j), "m"),
    # ---------------------------------------------------------------- rules
    ("get_rule unknown", lambda: get_rule("fedavgg"), "rule"),
    ("get_rule fedavg_weighted complex", lambda: get_rule("fedavg_weighted",
                                                          omega=np.array([0.5, 0.5j])),
     "omega"),
    ("get_rule fedavg_weighted nan", lambda: get_rule("fedavg_weighted", omega=[0.5, NAN]),
     "omega"),
    ("get_rule mifam beta nan", lambda: get_rule("mifam", beta=NAN), "beta"),
    ("get_rule mifam beta complex", lambda: get_rule("mifam", beta=0.5j), "beta"),
    ("get_rule fedau K nan", lambda: get_rule("fedau", K=NAN), "K"),
    # ---------------------------------------------------------------- simulate
    ("simulate replicas huge", lambda: _sim(replicas=10**12), "replicas=1000000000000"),
    ("simulate rounds huge", lambda: _sim(rounds=10**15), "rounds=1000000000000000"),
    ("simulate rounds huge, two recorded",
     lambda: _sim(rounds=10**14, record_rounds=[0, 10**14]), "rounds=100000000000000"),
    ("simulate keep_replicas huge",
     lambda: _sim(rounds=10**6, replicas=10**5, keep_replicas=True), "keep_replicas"),
    ("simulate max_work", lambda: _sim(rounds=100, max_work=10.0), "max_work"),
    ("simulate max_work nan", lambda: _sim(max_work=NAN), "max_work"),
    ("simulate lr nan", lambda: _sim(lr=NAN), "lr"),
    ("simulate lr complex", lambda: _sim(lr=0.1j), "lr"),
    ("simulate lr per replica complex", lambda: _sim(lr=np.array([0.1, 0.1j])), "lr"),
    ("simulate global_lr inf", lambda: _sim(global_lr=INF), "global_lr"),
    ("simulate x0 complex", lambda: _sim(x0=np.array([0.0, 1j])), "x0"),
    ("simulate x0 nan", lambda: _sim(x0=[0.0, NAN]), "x0"),
    ("simulate x0 shape", lambda: _sim(x0=np.zeros(3)), "x0"),
    ("simulate rounds negative", lambda: _sim(rounds=-1), "rounds"),
    ("simulate replicas zero", lambda: _sim(replicas=0), "replicas"),
    ("simulate local_steps zero", lambda: _sim(local_steps=0), "local_steps"),
    ("simulate momentum 1", lambda: _sim(momentum=1.0), "momentum"),
    ("simulate participation n", lambda: _sim(process=BernoulliParticipation(0.5, n=5)),
     "participation"),
    ("simulate unknown keyword", lambda: _sim(replica=3), "replica"),
    ("simulate small run", lambda: _sim(), OK(lambda r: r.x.shape == (2, 2))),
]

IDS = [case[0] for case in CASES]


def outcome(call: Callable[[], Any], expected: str | OK) -> str:
    """``"clear"`` when the call behaved as the table says (a ``ValueError`` / ``TypeError``
    naming the argument, or the right answer), else a short description of what it did."""
    try:
        result = call()
    except (ValueError, TypeError) as exc:
        if isinstance(expected, OK):
            return f"raised {type(exc).__name__}: {exc}"
        if expected not in str(exc):
            return f"{type(exc).__name__} not naming {expected!r}: {exc}"
        return "clear"
    except Exception as exc:  # noqa: BLE001 - what the fuzz looks for
        return f"bare {type(exc).__name__}: {exc}"
    if isinstance(expected, OK):
        return "clear" if expected.check(result) else f"wrong answer {result!r}"
    return f"no error, returned {result!r}"[:300]


@pytest.mark.parametrize("name, call, expected", CASES, ids=IDS)
def test_hostile_call_is_a_clear_error_or_the_right_answer(name, call, expected):
    assert outcome(call, expected) == "clear"


def test_the_table_is_the_size_the_issue_asks_for():
    assert len(CASES) >= 150
    assert len(set(IDS)) == len(IDS)


def test_a_nan_bound_is_an_error_of_the_claim_never_a_refutation():
    """A check that meets a NaN bound raises; the claim's verdict is ``error``."""
    claim = Claim(id="hostile.nan_bound", family="hostile", seed_ref="-", title="NaN bound",
                  kind=ClaimKind.UPPER_BOUND, statement="E[X] <= B")

    @claim.check("monte_carlo")
    def nan_bound(ctx):
        return ctx.check_mean(np.ones(40), float("nan"))

    assert claim.verify(preset="quick", seed=0).verdict.value == "error"


def test_budget_message_states_the_estimate_and_the_override(monkeypatch):
    from fedtheory import budget  # here: the table above also runs against older trees

    with pytest.raises(budget.BudgetError, match=r"GiB of memory \(rounds=3, replicas=10"):
        _sim(replicas=10**12)
    with pytest.raises(budget.BudgetError, match=budget.WORK_ENV):
        _sim(rounds=10**14, record_rounds=[0, 10**14])
    monkeypatch.setenv(budget.WORK_ENV, "10")
    with pytest.raises(budget.BudgetError, match=f"{budget.WORK_ENV}=10"):
        _sim()
    monkeypatch.setenv(budget.WORK_ENV, "inf")
    assert _sim().x.shape == (2, 2)
    monkeypatch.setenv(budget.MEMORY_ENV, "1e-9")
    with pytest.raises(budget.BudgetError, match=budget.MEMORY_ENV):
        _sim()
    monkeypatch.setenv(budget.MEMORY_ENV, "lots")
    with pytest.raises(ValueError, match=budget.MEMORY_ENV):
        _sim()


def test_the_budget_check_never_changes_a_run():
    """The estimate runs before anything is allocated and leaves the numbers alone: a run
    with the work ceiling lifted is bit for bit the default run."""
    a, b = _sim(rounds=20, replicas=8, seed=3), _sim(rounds=20, replicas=8, seed=3,
                                                     max_work=math.inf)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.f_gap.mean, b.f_gap.mean)

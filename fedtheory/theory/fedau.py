r"""Closed forms and exact computations for FedAU (seed 001).

Long-run weights (renewal argument). Algorithm 2's intervals partition the rounds: every
round adds one to the counter of exactly one interval, and an interval ends when the client
took part in the round before, or when the counter reaches :math:`K`. So after :math:`t`
rounds the recorded intervals sum to :math:`t` minus the open counter, and the weight, their
running mean, tends to

.. math:: \omega_\infty = \frac{1}{\text{rate of interval ends}}
    = \frac{1}{p\,\big(1 + \mathbb E^0\lfloor (G-1)/K\rfloor\big)},

:math:`G` the gap from a participation to the next one (Palm law: seen from a typical
participation) and :math:`\lfloor(G-1)/K\rfloor` the cutoffs inside that gap. Hence

* Bernoulli(:math:`p`), :math:`G\sim\mathrm{Geom}(p)`:
  :math:`\omega_\infty = (1-(1-p)^K)/p = \mathbb E\min(G, K)`;
* Markov on/off chain (join :math:`b = p(1-\lambda)`, leave :math:`a = (1-p)(1-\lambda)`):
  :math:`P(G-1\ge j) = a(1-b)^{j-1}` for :math:`j\ge1`, so
  :math:`\omega_\infty = 1/\big(p(1 + a(1-b)^{K-1}/(1-(1-b)^K))\big)`;
* cyclic (period :math:`P`, on for :math:`m` consecutive rounds per cycle,
  :math:`m\in\{\lfloor pP\rfloor, \lceil pP\rceil\}` by the random phase):
  :math:`\omega_\infty = P/(m + \lfloor (P-m)/K\rfloor)`.

With :math:`K=\infty` there are no cutoffs and :math:`\omega_\infty = 1/p` for every
stationary ergodic pattern (cyclic: when :math:`pP` is an integer).

Exact cross-checks: :func:`chain_long_run_weight` computes the same limit as the stationary
rate of interval ends of the finite Markov chain (counter, participation state) in exact
rationals, with no renewal argument. :func:`bernoulli_weight_error` computes Theorem 3's
weight error :math:`\mathbb E[(p\omega_t-1)^2]` exactly (up to floating point) for Bernoulli
participation from the law of the recorded intervals.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.participation import ParticipationProcess, process_name, process_parameters

__all__ = [
    "argmin_h",
    "bernoulli_weight_error",
    "chain_long_run_weight",
    "corollary4_K",
    "cyclic_long_run_weight",
    "cyclic_offset_participating_weight",
    "implicit_weight",
    "join_rate_chain",
    "method_weighting",
    "offset_cycle",
    "participating_weight",
    "expected_fixed_point",
    "expected_intervals",
    "long_run_weight",
    "markov_long_run_weight",
    "renewal_weight",
]


#: A participation pattern: a process of :mod:`fedtheory.participation` or its name.
Pattern = str | ParticipationProcess

#: The processes with closed forms here (by their names, :func:`~fedtheory.participation.
#: process_name`) and the parameters each needs (given, or read from the process object).
_PATTERN_PARAMS: dict[str, tuple[str, ...]] = {
    "bernoulli": (), "markov": ("correlation",), "cyclic": ("period",),
    "markov_join": ("to_active",), "cyclic_offset": ("period",)}

#: The patterns of the renewal formulas and of the exact chain.
_CHAINS = ("bernoulli", "markov", "cyclic")


def _pattern(pattern: Pattern, params: dict[str, Any],
             supported: Sequence[str] = tuple(_PATTERN_PARAMS)) -> tuple[str, dict[str, Any]]:
    """The name of ``pattern`` (a process or a name, resolved in one place:
    :func:`~fedtheory.participation.process_name`) and its parameters, or a ``ValueError``
    naming what this formula supports."""
    name = process_name(pattern, "pattern")
    if name not in supported:
        raise ValueError(f"pattern must be one of {list(supported)} (the participation "
                         f"processes with a closed form here), got {name!r}")
    return name, process_parameters(pattern, _PATTERN_PARAMS[name], params)


def _one(x: Any) -> Any:
    return x**0 if not isinstance(x, float) else 1.0


def renewal_weight(p: Any, K: Any) -> Any:
    r"""Bernoulli long-run weight :math:`\mathbb E\min(G,K) = (1-(1-p)^K)/p`
    (:math:`1/p` for ``K = inf``); exact for Fraction / sympy ``p``, vectorised for arrays."""
    if isinstance(K, float) and math.isinf(K):
        return _one(p) / p
    return (_one(p) - (_one(p) - p) ** K) / p


def markov_long_run_weight(p: Any, correlation: Any, K: Any) -> Any:
    r"""Long-run weight under the on/off Markov chain with stationary :math:`p` and lag-one
    correlation :math:`\lambda` (:class:`~fedtheory.participation.MarkovParticipation`):
    :math:`1/\big(p(1 + a(1-b)^{K-1}/(1-(1-b)^K))\big)`, :math:`b = p(1-\lambda)`,
    :math:`a = (1-p)(1-\lambda)`; :math:`1/p` for ``K = inf``."""
    one = _one(p)
    if isinstance(K, float) and math.isinf(K):
        return one / p
    b = p * (one - correlation)
    a = (one - p) * (one - correlation)
    return one / (p * (one + a * (one - b) ** (K - 1) / (one - (one - b) ** K)))


def cyclic_long_run_weight(p: Any, period: int, K: Any) -> Fraction:
    r"""Long-run weight of :class:`~fedtheory.participation.CyclicParticipation` (random
    phase), averaged over the phase: :math:`m = \lceil pP\rceil` with probability
    :math:`\{pP\}`, else :math:`\lfloor pP\rfloor`, and :math:`\omega_\infty(m) =
    P/(m + \lfloor(P-m)/K\rfloor)` (a client that is never on keeps :math:`\omega = K`, or 1
    without cutoff). Exact for rational ``p``."""
    pf = Fraction(p) if not isinstance(p, float) else Fraction(p).limit_denominator(10**9)
    x = pf * period
    lo = math.floor(x)
    frac = x - lo
    out = Fraction(0)
    for m, prob in ((lo, 1 - frac), (lo + 1, frac)):
        if prob == 0:
            continue
        if m == 0:
            w = Fraction(1) if math.isinf(K) else Fraction(int(K))
        else:
            cuts = 0 if math.isinf(K) else (period - m) // int(K)
            w = Fraction(period, m + cuts)
        out += prob * w
    return out


def long_run_weight(pattern: Pattern, p: Any, K: Any, **params: Any) -> Any:
    """The long-run weight of ``pattern`` (a process or its name: ``"bernoulli"``,
    ``"markov"`` with ``correlation``, ``"cyclic"`` with ``period``; a process object
    supplies the parameters not given).

    >>> from fedtheory.participation import MarkovParticipation
    >>> long_run_weight(MarkovParticipation(0.5, 0.0, n=1), 0.5, 2)  # its correlation 0.0
    1.5
    >>> long_run_weight("markov", Fraction(1, 2), 2, correlation=Fraction(0))
    Fraction(3, 2)
    """
    pattern, params = _pattern(pattern, params, _CHAINS)
    if pattern == "bernoulli":
        return renewal_weight(p, K)
    if pattern == "markov":
        return markov_long_run_weight(p, params["correlation"], K)
    return cyclic_long_run_weight(p, params["period"], K)


def implicit_weight(pattern: Pattern, p: Any, K: Any, **params: Any) -> Fraction:
    r"""The long-run weight FedAU gives client :math:`n` in the objective it optimises,
    :math:`\lim_t \mathbb E[1_t^n\,\omega_t^n]` (Theorem 1's :math:`\omega_np_n`), exact.

    Bernoulli and Markov: the weight settles to the deterministic :math:`\omega_\infty`, so
    this is :math:`p\,\omega_\infty`. Cyclic: a client's on-run length :math:`m` is fixed
    by its phase (:math:`\lceil pP\rceil` with probability :math:`\{pP\}`, else
    :math:`\lfloor pP\rfloor`), its frequency is :math:`m/P` and its weight
    :math:`P/(m + \lfloor (P-m)/K\rfloor)`, so this is
    :math:`\mathbb E_m[m/(m + \lfloor (P-m)/K\rfloor)]`: exactly 1 without cutoff, although
    :math:`p\,\mathbb E[\omega_\infty] \ne 1` when :math:`pP` is not an integer.

    The authors' patterns (:mod:`fedtheory.participation.fedau_sampler`): ``"markov_join"``
    (``to_active``) is the Markov chain with its own correlation
    :math:`\lambda = 1 - \text{join} - \text{leave}` (:func:`join_rate_chain`);
    ``"cyclic_offset"`` (``period``) has the fixed on-run :math:`m` and off-run
    :math:`\text{off}` of :func:`offset_cycle`, so its frequency is
    :math:`m/(m+\text{off})`, its weight :math:`(m+\text{off})/(m+\lfloor
    \text{off}/K\rfloor)` and this is :math:`m/(m+\lfloor\text{off}/K\rfloor)`: exactly 1
    without cutoff, whatever the rounding of :math:`Pp`.

    >>> implicit_weight("cyclic", Fraction(1, 4), math.inf, period=10)
    Fraction(1, 1)
    >>> implicit_weight("bernoulli", Fraction(1, 2), 2)
    Fraction(3, 4)
    >>> implicit_weight("cyclic_offset", Fraction(1, 50), 50, period=100)
    Fraction(2, 3)
    >>> implicit_weight("markov_join", Fraction(1, 50), math.inf, to_active=Fraction(1, 20))
    Fraction(1, 1)
    """
    pattern, params = _pattern(pattern, params)
    if pattern == "markov_join":
        join, leave = join_rate_chain(p, params["to_active"])
        pf = Fraction(p)
        return pf * markov_long_run_weight(pf, 1 - join - leave, K)
    if pattern == "cyclic_offset":
        m, off = offset_cycle(p, params["period"])
        cuts = 0 if math.isinf(K) else off // int(K)
        return Fraction(m, m + cuts)
    if pattern != "cyclic":
        return Fraction(p) * long_run_weight(pattern, p, K, **params)
    period = params["period"]
    pf = Fraction(p) if not isinstance(p, float) else Fraction(p).limit_denominator(10**9)
    lo = math.floor(pf * period)
    frac = pf * period - lo
    out = Fraction(0)
    for m, prob in ((lo, 1 - frac), (lo + 1, frac)):
        if prob and m:
            cuts = 0 if math.isinf(K) else (period - m) // int(K)
            out += prob * Fraction(m, m + cuts)
    return out


def _fraction(x: Any) -> Fraction:
    return Fraction(x) if not isinstance(x, float) else Fraction(x).limit_denominator(10**9)


def join_rate_chain(p: Any, to_active: Any) -> tuple[Fraction, Fraction]:
    r"""The authors' ``markov-q`` chain (:class:`~fedtheory.participation.fedau_sampler.
    JoinRateMarkov`), exactly: join :math:`q`, leave :math:`q(1/p-1)`, both divided by the
    leave probability when it exceeds 1. Returns ``(join, leave)``.

    >>> join_rate_chain(Fraction(1, 50), Fraction(1, 20))
    (Fraction(1, 49), Fraction(1, 1))
    """
    pf, q = _fraction(p), _fraction(to_active)
    if not 0 < pf < 1 or not 0 < q <= 1:
        raise ValueError(f"need 0 < p < 1 and 0 < to_active <= 1, got p={p!r}, "
                         f"to_active={to_active!r}")
    leave = q * (1 / pf - 1)
    if leave > 1:
        return q / leave, Fraction(1)
    return q, leave


def offset_cycle(p: Any, period: int) -> tuple[int, int]:
    r"""The authors' ``cyclic-P`` runs (:class:`~fedtheory.participation.fedau_sampler.
    OffsetCyclic`): on :math:`m = \max(1, \mathrm{round}(Pp))` rounds (half to even, as
    numpy's round) and off :math:`\max(1, P - m)`.

    >>> offset_cycle(Fraction(1, 40), 100), offset_cycle(0.9, 100)
    ((2, 98), (90, 10))
    """
    x = _fraction(p) * int(period)
    m = max(1, round(x))  # Fraction.__round__ rounds half to even
    return m, max(1, int(period) - m)


def method_weighting(method: str, pattern: Pattern, p: Sequence[Any], K: Any = math.inf,
                     **params: Any) -> list[Fraction] | None:
    r"""The long-run client weighting :math:`\lim_t\mathbb E[1_t^n\,\omega_t^n]` (Theorem
    1's :math:`\omega_np_n`, up to a common factor) that a method of the seed's table
    targets under a pattern, exactly: ``"fedau"`` (cutoff ``K``,
    :func:`implicit_weight`), ``"known"`` (:math:`\omega = 1/p_n`: the frequency over
    :math:`p_n`), ``"all"`` (:math:`\omega = 1`: the frequency), ``"participating"``
    (:func:`participating_weight` for Bernoulli and Markov patterns, whose clients are
    independent with marginals :math:`p_n` in each round; None for cyclic ones, whose
    rounds couple the clients through time: see
    :func:`cyclic_offset_participating_weight`).

    >>> method_weighting("known", "cyclic_offset", [Fraction(1, 40)], period=100)
    [Fraction(4, 5)]
    """
    pattern, params = _pattern(pattern, params)
    q = [_fraction(x) for x in p]

    def freq(x: Fraction) -> Fraction:
        if pattern == "cyclic_offset":
            m, off = offset_cycle(x, params["period"])
            return Fraction(m, m + off)
        if pattern == "cyclic":
            return x  # random phase: the stationary probability
        return x

    if method == "fedau":
        return [implicit_weight(pattern, x, K, **params) for x in q]
    if method == "known":
        return [freq(x) / x for x in q]
    if method == "all":
        return [freq(x) for x in q]
    if method == "participating":
        if pattern in ("bernoulli", "markov", "markov_join"):
            return participating_weight(q)
        return None
    raise ValueError(f"method must be 'fedau', 'known', 'all' or 'participating', got "
                     f"{method!r}")


def cyclic_offset_participating_weight(p: Sequence[float], period: int) -> np.ndarray:
    r""""Average participating"'s long-run weighting :math:`N\,\mathbb E[1_n/|\mathcal A|]`
    under the authors' cyclic pattern (float64): with every cycle of length :math:`P`, at a
    round :math:`\tau` of the cycle the clients are independent, on with probability
    :math:`q_n(\tau) = \#\{r < \text{off}_n : (\tau - r) \bmod P < m_n\}/\text{off}_n`
    (the random offset), and the long run averages the Poisson-binomial expectation over
    :math:`\tau`. Raises ``ValueError`` when some :math:`m_n = P` (cycles of two lengths)."""
    P = int(period)
    runs = [offset_cycle(float(x), P) for x in p]
    if any(m + off != P for m, off in runs):
        raise ValueError(f"every client's cycle must have length period={P}")
    N = len(runs)
    tau = np.arange(P)
    q = np.empty((P, N))
    for n, (m, off) in enumerate(runs):
        r = np.arange(off)
        q[:, n] = (((tau[:, None] - r[None, :]) % P) < m).mean(axis=1)
    # law[t, n, k] = P(k of the clients other than n are on at cycle round t)
    law = np.zeros((P, N, N))
    law[:, :, 0] = 1.0
    for k in range(N):
        qk = q[:, k][:, None, None]
        new = law * (1 - qk)
        new[:, :, 1:] += law[:, :, :-1] * qk
        new[:, k] = law[:, k]  # client k is not among the others of itself
        law = new
    e = q * np.einsum("tnk,k->tn", law, 1.0 / np.arange(1, N + 1))
    return N * e.mean(axis=0)


def participating_weight(p: Sequence[Any]) -> list[Fraction]:
    r"""The client weighting of "average participating" (the mean over the round's
    participants), :math:`N\,\mathbb E[1_n/|\mathcal A|]` up to the factor :math:`N`, exact,
    for independent participation with marginals :math:`p_n` (rounds without participants
    add nothing):

    .. math:: \mathbb E\Big[\frac{1_n}{|\mathcal A|}\Big]
        = p_n\sum_{k\ge0}\frac{P(S_{-n} = k)}{k+1},

    :math:`S_{-n}` the number of the other clients taking part (Poisson-binomial law: the
    generating polynomial of all clients, :math:`\prod_m(1-p_m+p_mz)`, divided exactly by
    client :math:`n`'s factor; :math:`O(N^2)` in all instead of the :math:`2^N` patterns).

    >>> participating_weight([Fraction(1, 2), Fraction(1, 2)])
    [Fraction(3, 8), Fraction(3, 8)]
    """
    q = [_fraction(x) for x in p]
    if not q or any(not 0 <= x <= 1 for x in q):
        raise ValueError(f"p must be a non-empty sequence of probabilities in [0, 1], got {p!r}")
    # integers throughout: p_m = u_m / den with a common denominator
    den = math.lcm(*(x.denominator for x in q))
    u = [int(x * den) for x in q]
    full = [1]  # den^N prod_m (1 - p_m + p_m z), integer coefficients
    for um in u:
        full = [(full[k] if k < len(full) else 0) * (den - um)
                + (full[k - 1] * um if k else 0) for k in range(len(full) + 1)]
    D = len(q)
    harmonic = math.lcm(*range(1, D + 1))  # sum_k law_k / (k + 1) over one denominator
    out = []
    for un in u:
        if un == 0:
            out.append(Fraction(0))
            continue
        a, b = den - un, un
        law = [0] * D  # full / (a + b z): exact integer division, from the top down
        law[D - 1] = full[D] // b
        for k in range(D - 1, 0, -1):
            law[k - 1] = (full[k] - a * law[k]) // b
        num = sum(w * (harmonic // (k + 1)) for k, w in enumerate(law))
        out.append(Fraction(un * num, den ** D * harmonic))
    return out


# --------------------------------------------------------------------------- exact chain
def _stationary(P: list[list[Fraction]]) -> list[Fraction]:
    """Stationary law of an irreducible chain with rational transition matrix (Gauss)."""
    n = len(P)
    # (P^T - I) pi = 0 with sum(pi) = 1: replace the last equation by the normalisation
    A = [[P[j][i] - (1 if i == j else 0) for j in range(n)] for i in range(n)]
    A[-1] = [Fraction(1)] * n
    b = [Fraction(0)] * (n - 1) + [Fraction(1)]
    for col in range(n):
        piv = next(r for r in range(col, n) if A[r][col] != 0)
        A[col], A[piv] = A[piv], A[col]
        b[col], b[piv] = b[piv], b[col]
        inv = 1 / A[col][col]
        for r in range(n):
            if r != col and A[r][col] != 0:
                f = A[r][col] * inv
                A[r] = [x - f * y for x, y in zip(A[r], A[col], strict=True)]
                b[r] -= f * b[col]
    return [b[i] / A[i][i] for i in range(n)]


def _on_off(pattern: str, p: Any, num: Callable[[Any], Any], **params: Any) -> tuple[Any, Any]:
    r"""The one-step law of :math:`1_t` given :math:`1_{t-1}` of ``pattern``: ``(stay_on,
    join)`` = :math:`(P(1_t = 1 \mid 1_{t-1} = 1), P(1_t = 1 \mid 1_{t-1} = 0))`;
    Bernoulli: :math:`(p, p)`; Markov with lag-one correlation :math:`\lambda`:
    :math:`(1 - (1-p)(1-\lambda), p(1-\lambda))`. ``num`` converts :math:`\lambda`
    (Fraction or float). ``pattern``: a name resolved by :func:`_pattern`."""
    if pattern == "bernoulli":
        return p, p
    lam = num(params["correlation"])  # "markov"
    return 1 - (1 - p) * (1 - lam), p * (1 - lam)


def chain_long_run_weight(pattern: Pattern, p: Fraction, K: int, **params: Any) -> Fraction:
    r"""The long-run weight as 1 / (stationary rate of interval ends) of the finite chain
    (counter :math:`S^\diamond`, participation state), in exact rationals.

    Bernoulli and Markov: the state before a round is (counter :math:`c\in\{0..K-1\}`,
    :math:`1_{t-1}`); the round ends an interval iff :math:`1_{t-1} = 1` or :math:`c+1 = K`.
    Cyclic: the pair (counter, position in the cycle) moves deterministically; the rate is
    counted over its eventual cycle and averaged over the two possible on-run lengths.
    ``K`` must be a finite positive integer. ``pattern``: a process or its name.
    """
    pattern, params = _pattern(pattern, params, _CHAINS)
    p = Fraction(p)
    if pattern == "cyclic":
        period = int(params["period"])
        x = p * period
        lo = math.floor(x)
        out = Fraction(0)
        for m, prob in ((lo, 1 - (x - lo)), (lo + 1, x - lo)):
            if prob == 0:
                continue
            on = [j < m for j in range(period)]
            seen: dict[tuple[int, int], int] = {}
            ends: list[int] = []
            c, pos, step = 0, 0, 0
            while (c, pos) not in seen:
                seen[(c, pos)] = step
                prev = on[(pos - 1) % period]  # the round before this one
                c += 1
                end = prev or c >= K
                ends.append(int(end))
                if end:
                    c = 0
                pos = (pos + 1) % period
                step += 1
            start = seen[(c, pos)]
            rate = Fraction(sum(ends[start:]), step - start)
            out += prob * (1 / rate if rate else Fraction(K))
        return out
    stay_on, join = _on_off(pattern, p, Fraction, **params)
    states = [(c, i) for c in range(K) for i in (0, 1)]
    index = {s: k for k, s in enumerate(states)}
    P = [[Fraction(0)] * len(states) for _ in states]
    for (c, i), k in index.items():
        nxt = 0 if (i == 1 or c + 1 >= K) else c + 1
        on = stay_on if i == 1 else join
        P[k][index[(nxt, 1)]] += on
        P[k][index[(nxt, 0)]] += 1 - on
    pi = _stationary(P)
    rate = sum(pi[index[(c, i)]] for (c, i) in states if i == 1 or c + 1 >= K)
    return 1 / rate


def expected_intervals(pattern: Pattern, p: float, K: float, T: int,
                       **params: Any) -> np.ndarray:
    r""":math:`\mathbb E[M_t]`, the expected number of intervals Algorithm 2 has recorded when
    :math:`\omega_t` is used, :math:`t = 0..T-1`, under the processes of
    :mod:`fedtheory.participation` started as they start (chains in their stationary law,
    cycles at a uniform phase).

    Bernoulli and Markov: the law of (counter, :math:`1_{t-1}`) propagated forward (float64).
    Cyclic: the mask sequence is a step function of the phase :math:`\varphi`, constant
    between the breakpoints :math:`\{j/P\}` and :math:`\{(p - j/P) \bmod 1\}`; each piece is
    run once and weighted by its length. ``pattern``: a process or its name.
    """
    pattern, params = _pattern(pattern, params, _CHAINS)
    T = int(T)
    if pattern == "cyclic":
        period = int(params["period"])
        pts = sorted({Fraction(j, period) for j in range(period)}
                     | {(Fraction(p).limit_denominator(10**9) - Fraction(j, period)) % 1
                        for j in range(period)} | {Fraction(1)})
        out = np.zeros(T)
        t = np.arange(T)
        for lo, hi in zip(pts[:-1], pts[1:], strict=True):
            phi = float((lo + hi) / 2)
            pos = phi + (t % period) / period
            mask = (pos - np.floor(pos)) < p
            M = np.zeros(T)
            c = m = 0
            for k in range(1, T):
                c += 1
                if mask[k - 1] or c >= K:
                    m += 1
                    c = 0
                M[k] = m
            out += float(hi - lo) * M
        return out
    stay_on, join = _on_off(pattern, p, float, **params)
    C = T + 1 if math.isinf(K) else int(K)  # counter values 0..C-1
    dist = np.zeros((C, 2))  # law of (counter, 1_{t-1}) before iteration t
    dist[0, 1], dist[0, 0] = p, 1 - p  # 1_0 in its stationary law
    out = np.zeros(T)
    for t in range(1, T):
        end = dist[:, 1].sum() + dist[C - 1, 0]  # previous round on, or the counter hits K
        out[t] = out[t - 1] + end
        new = np.zeros_like(dist)
        # the counter after iteration t: 0 if the interval ended, else c + 1
        ended = np.zeros(2)
        ended += dist[:, 1].sum() * np.array([1 - stay_on, stay_on])
        ended += dist[C - 1, 0] * np.array([1 - join, join])
        new[0] = ended
        new[1:, 0] = dist[:-1, 0] * (1 - join)
        new[1:, 1] = dist[:-1, 0] * join
        dist = new
    return out


# --------------------------------------------------------------------- Theorem 3, exact
def bernoulli_weight_error(p: float, K: float, T: int) -> np.ndarray:
    r""":math:`e_t = \mathbb E[(p\,\omega_t - 1)^2]` for :math:`t = 0..T-1` under
    Bernoulli(:math:`p`) participation, from the law of the recorded intervals.

    The intervals are i.i.d. :math:`X = \min(G, K)`, :math:`G\sim\mathrm{Geom}(p)` (the first
    one too: memorylessness). At round :math:`t` the weight is :math:`s/m` when :math:`m`
    intervals summing to :math:`s\le t` are complete and the next one is longer than
    :math:`t-s`, and 1 while none is complete:

    .. math:: e_t = \sum_{s\le t} h(s)\,P(X > t-s) + P(X > t)(p-1)^2,\qquad
        h(s) = \sum_{m\ge1} P(X_1+\dots+X_m = s)\,(p s/m - 1)^2,

    the :math:`m`-fold convolutions computed one FFT at a time (float64, truncated to
    :math:`s < T`; probabilities below :math:`10^{-18}` are dropped and the sum stops once
    :math:`P(X_1+\dots+X_m < T) < 10^{-16}`: absolute error about :math:`10^{-12}`).
    """
    if not 0 < p <= 1:
        raise ValueError(f"p must be in (0, 1], got {p!r}")
    T = int(T)
    if T < 1:
        raise ValueError(f"T must be a positive integer, got {T!r}")
    kmax = T if math.isinf(K) else min(int(K), T)
    q = 1.0 - p
    j = np.arange(1, kmax + 1)
    pmf = np.zeros(2 * T)
    pmf[1:kmax + 1] = p * q ** (j - 1)
    if not math.isinf(K) and int(K) <= T:
        pmf[kmax] = q ** (kmax - 1)  # P(G >= K): the cut interval
    surv = 1.0 - np.cumsum(pmf[:T])  # P(X > j), j = 0..T-1
    surv = np.clip(surv, 0.0, 1.0)
    phi = np.fft.rfft(pmf)
    s = np.arange(T, dtype=float)
    h = np.zeros(T)
    f = pmf[:T].copy()  # law of X_1 + ... + X_m on 0..T-1, m = 1, 2, ...
    for m in range(1, T + 1):
        h += f * (p * s / m - 1.0) ** 2
        if m == T:
            break
        # linear convolution truncated to 0..T-1 (both factors live on 0..T-1: no wrap)
        f = np.fft.irfft(np.fft.rfft(f, n=2 * T) * phi, n=2 * T)[:T]
        f[: m + 1] = 0.0  # m + 1 intervals are at least m + 1 rounds long
        f[f < 1e-18] = 0.0  # FFT round-off (and negative noise) below any probability used
        if f.sum() < 1e-16:  # P(X_1 + ... + X_m < T) negligible: later m add nothing
            break
    e = np.convolve(h, surv)[:T] + surv * (p - 1.0) ** 2
    return e


# ------------------------------------------------------------------------- Corollary 4
def corollary4_K(T: int, p_min: Any) -> int:
    r"""Corollary 4's cutoff :math:`K = \lceil\log_c T\rceil`, :math:`c = 1/(1-p_{\min})^2`,
    computed exactly as the least integer with :math:`c^K \ge T` (``p_min`` rational or
    float; :math:`p_{\min} = 1` gives :math:`K = 1`)."""
    T = int(T)
    if T < 2:
        raise ValueError(f"T must be an integer >= 2, got {T!r}")
    pm = Fraction(p_min) if not isinstance(p_min, float) else Fraction(p_min)
    if not 0 < pm <= 1:
        raise ValueError(f"p_min must be in (0, 1], got {p_min!r}")
    if pm == 1:
        return 1
    q2 = (1 - pm) ** 2
    K = max(1, int(math.floor(math.log(T) / -math.log(float(q2)))) - 1)
    while q2**K * T > 1:  # exact: c^K >= T  <=>  q^(2K) T <= 1
        K += 1
    while K > 1 and q2 ** (K - 1) * T <= 1:
        K -= 1
    return K


# ---------------------------------------------------------------------------- Theorem 1
def argmin_h(A: np.ndarray, c: np.ndarray, p: np.ndarray, omega: np.ndarray) -> np.ndarray:
    r"""Minimiser of :math:`h = \frac1P\sum_n\omega_np_nF_n` for diagonal quadratics
    :math:`F_n = \frac12\sum_k a_{nk}(x_k - c_{nk})^2`:
    :math:`x_k = \sum_n\omega_np_na_{nk}c_{nk}/\sum_n\omega_np_na_{nk}`."""
    w = (np.asarray(omega, float) * np.asarray(p, float))[:, None] * np.asarray(A, float)
    return np.sum(w * c, axis=0) / np.sum(w, axis=0)


def expected_fixed_point(A: np.ndarray, c: np.ndarray, p: np.ndarray, omega: np.ndarray,
                         gamma: float, local_steps: int = 1) -> np.ndarray:
    r"""Fixed point of the expected update of Algorithm 1 with time-constant weights,
    Bernoulli participation and :math:`I` exact local steps of size :math:`\gamma` on
    diagonal quadratics. A client's update is
    :math:`\Delta_n = -B_n(x - c_n)`, :math:`B_n = 1-(1-\gamma a_n)^I`, so
    :math:`\mathbb E[x_{t+1}\mid x_t] = x_t - \frac{\eta}{N}\sum_n\omega_np_nB_n(x_t-c_n)` and

    .. math:: x^\dagger_k = \frac{\sum_n\omega_np_nB_{nk}c_{nk}}{\sum_n\omega_np_nB_{nk}},

    which is :func:`argmin_h` for :math:`I = 1` and tends to it as :math:`\gamma\to0`
    (:math:`B_n = I\gamma a_n + O(\gamma^2)`)."""
    A = np.asarray(A, float)
    B = 1.0 - (1.0 - gamma * A) ** int(local_steps)
    w = (np.asarray(omega, float) * np.asarray(p, float))[:, None] * B
    return np.sum(w * c, axis=0) / np.sum(w, axis=0)

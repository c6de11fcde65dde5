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

__all__ = [
    "argmin_h",
    "bernoulli_weight_error",
    "chain_long_run_weight",
    "corollary4_K",
    "cyclic_long_run_weight",
    "implicit_weight",
    "participating_weight",
    "expected_fixed_point",
    "expected_intervals",
    "long_run_weight",
    "markov_long_run_weight",
    "renewal_weight",
]


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


def long_run_weight(pattern: str, p: Any, K: Any, **params: Any) -> Any:
    """The long-run weight of ``pattern`` (``"bernoulli"``, ``"markov"`` with
    ``correlation``, ``"cyclic"`` with ``period``)."""
    if pattern == "bernoulli":
        return renewal_weight(p, K)
    if pattern == "markov":
        return markov_long_run_weight(p, params["correlation"], K)
    if pattern == "cyclic":
        return cyclic_long_run_weight(p, params["period"], K)
    raise ValueError(f"pattern must be 'bernoulli', 'markov' or 'cyclic', got {pattern!r}")


def implicit_weight(pattern: str, p: Any, K: Any, **params: Any) -> Fraction:
    r"""The long-run weight FedAU gives client :math:`n` in the objective it optimises,
    :math:`\lim_t \mathbb E[1_t^n\,\omega_t^n]` (Theorem 1's :math:`\omega_np_n`), exact.

    Bernoulli and Markov: the weight settles to the deterministic :math:`\omega_\infty`, so
    this is :math:`p\,\omega_\infty`. Cyclic: a client's on-run length :math:`m` is fixed
    by its phase (:math:`\lceil pP\rceil` with probability :math:`\{pP\}`, else
    :math:`\lfloor pP\rfloor`), its frequency is :math:`m/P` and its weight
    :math:`P/(m + \lfloor (P-m)/K\rfloor)`, so this is
    :math:`\mathbb E_m[m/(m + \lfloor (P-m)/K\rfloor)]`: exactly 1 without cutoff, although
    :math:`p\,\mathbb E[\omega_\infty] \ne 1` when :math:`pP` is not an integer.

    >>> implicit_weight("cyclic", Fraction(1, 4), math.inf, period=10)
    Fraction(1, 1)
    >>> implicit_weight("bernoulli", Fraction(1, 2), 2)
    Fraction(3, 4)
    """
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


def participating_weight(p: Sequence[Any]) -> list[Fraction]:
    r"""The client weighting of "average participating" (the mean over the round's
    participants), :math:`N\,\mathbb E[1_n/|\mathcal A|]` up to the factor :math:`N`, exact,
    for independent participation with marginals :math:`p_n` (rounds without participants
    add nothing):

    .. math:: \mathbb E\Big[\frac{1_n}{|\mathcal A|}\Big]
        = p_n\sum_{k\ge0}\frac{P(S_{-n} = k)}{k+1},

    :math:`S_{-n}` the number of the other clients taking part (Poisson-binomial law, built
    client by client: :math:`O(N^2)` per client instead of the :math:`2^N` patterns).

    >>> participating_weight([Fraction(1, 2), Fraction(1, 2)])
    [Fraction(3, 8), Fraction(3, 8)]
    """
    q = [Fraction(x) if not isinstance(x, float) else Fraction(x).limit_denominator(10**9)
         for x in p]
    if not q or any(not 0 <= x <= 1 for x in q):
        raise ValueError(f"p must be a non-empty sequence of probabilities in [0, 1], got {p!r}")
    out = []
    for n, pn in enumerate(q):
        law = [Fraction(1)]  # P(S = k) over the clients added so far
        for m, pm in enumerate(q):
            if m != n:
                law = [(law[k] if k < len(law) else 0) * (1 - pm)
                       + (law[k - 1] * pm if k else 0) for k in range(len(law) + 1)]
        out.append(pn * sum(w / (k + 1) for k, w in enumerate(law)))
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
    (Fraction or float)."""
    if pattern == "bernoulli":
        return p, p
    if pattern == "markov":
        lam = num(params["correlation"])
        return 1 - (1 - p) * (1 - lam), p * (1 - lam)
    raise ValueError(f"pattern must be 'bernoulli', 'markov' or 'cyclic', got {pattern!r}")


def chain_long_run_weight(pattern: str, p: Fraction, K: int, **params: Any) -> Fraction:
    r"""The long-run weight as 1 / (stationary rate of interval ends) of the finite chain
    (counter :math:`S^\diamond`, participation state), in exact rationals.

    Bernoulli and Markov: the state before a round is (counter :math:`c\in\{0..K-1\}`,
    :math:`1_{t-1}`); the round ends an interval iff :math:`1_{t-1} = 1` or :math:`c+1 = K`.
    Cyclic: the pair (counter, position in the cycle) moves deterministically; the rate is
    counted over its eventual cycle and averaged over the two possible on-run lengths.
    ``K`` must be a finite positive integer.
    """
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


def expected_intervals(pattern: str, p: float, K: float, T: int, **params: Any) -> np.ndarray:
    r""":math:`\mathbb E[M_t]`, the expected number of intervals Algorithm 2 has recorded when
    :math:`\omega_t` is used, :math:`t = 0..T-1`, under the processes of
    :mod:`fedtheory.participation` started as they start (chains in their stationary law,
    cycles at a uniform phase).

    Bernoulli and Markov: the law of (counter, :math:`1_{t-1}`) propagated forward (float64).
    Cyclic: the mask sequence is a step function of the phase :math:`\varphi`, constant
    between the breakpoints :math:`\{j/P\}` and :math:`\{(p - j/P) \bmod 1\}`; each piece is
    run once and weighted by its length.
    """
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

r"""Approximate Optimal Client Sampling, AOCS (seed 002, Algorithm 2).

The protocol, for one round with norms :math:`u_i = w_i\|\mathbf U_i\|`:

1. the master aggregates :math:`u = \sum_i u_i` and broadcasts it;
2. each client sets :math:`p_i = \min\{m u_i / u, 1\}`;
3. for :math:`j = 1, \dots, j_{\max}`: each client with :math:`p_i < 1` sends
   :math:`t_i = (1, p_i)` (else :math:`(0, 0)`); the master aggregates
   :math:`(I, P) = \sum_i t_i`, broadcasts :math:`C = (m - n + I)/P`; each client with
   :math:`p_i < 1` sets :math:`p_i = \min\{C p_i, 1\}`; stop when :math:`C \le 1`.

The code keeps the split between clients and master: the ``client_*`` functions act on the
clients' own numbers (vectorised over clients, "in parallel"), :func:`secure_sum` is the only
way anything reaches the master, and :func:`master_scale` receives only those sums. The
:class:`AOCSResult` carries the transcript of what the master received and broadcast, and
:func:`replay_master` recomputes every broadcast from the received sums alone.

Why it reaches the optimum: every :math:`p` it produces has the form
:math:`\min\{c\,u_i, 1\}`; the sum :math:`\sum_i p_i` never exceeds :math:`m`, and
:math:`C \le 1` means :math:`\sum_i p_i = m`, which together with that form is the KKT
system of eq. (7). Each iteration with :math:`C > 1` either truncates at least one more
client or makes the next :math:`C` equal to 1, so the loop stops after at most
:math:`n - l + 1` iterations (:math:`l` of eq. (7)).

Two details the printed algorithm leaves open: with zero norms :math:`u = 0` or :math:`P = 0`
would give :math:`0/0`; a client with :math:`u_i = 0` gets :math:`p_i = 0` and the master,
receiving :math:`P = 0`, has nothing to rescale and stops (:math:`C = 1`). In floating point
an exact rescale gives :math:`C = 1 \pm` a few ulps, so the test is :math:`C \le 1 + \text{rtol}`.

Scale: the probabilities are invariant under :math:`u \mapsto \lambda u`. Line 6 is evaluated
as :math:`m\,(u_i/u)` (never :math:`m u_i`, which can overflow), and a round whose sum
:math:`u` could overflow (:math:`n \max_i u_i \ge 2^{1022}`) first has all its norms
multiplied by one power of two (exact: a choice of units, which changes no probability); its
transcript then records :math:`u` in those units. Everything after line 6 is dimensionless.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fedtheory.sampling.ocs import _check_norms, _top_exponent
from fedtheory.validation import nonnegative_integer

__all__ = [
    "AOCSResult",
    "aocs_iteration_study",
    "aocs_probabilities",
    "client_initial_probabilities",
    "client_message",
    "client_recalibrate",
    "master_scale",
    "replay_master",
    "secure_sum",
]


@dataclass(frozen=True)
class AOCSResult:
    """What :func:`aocs_probabilities` returns.

    Attributes
    ----------
    p:
        The probabilities after the last iteration (shape of ``norms``).
    iterations:
        Loop iterations :math:`j` run (per round for 2-D input): the :math:`j` at which the
        master saw :math:`C \\le 1`, or :math:`j_{\\max}` if it never did.
    converged:
        Whether the master saw :math:`C \\le 1` (or had nothing left to rescale): then ``p``
        is the optimum of eq. (7).
    transcript:
        Everything the master received (sums) and broadcast, in order.
    """

    p: np.ndarray
    iterations: Any
    converged: Any
    transcript: list[dict[str, Any]] = field(default_factory=list, repr=False)


def secure_sum(messages: np.ndarray) -> np.ndarray:
    """Aggregate client messages (clients on the last axis): the only thing the master sees.

    >>> secure_sum(np.array([[1.0, 2.0], [3.0, 4.0]]))
    array([3., 7.])
    """
    return np.asarray(messages, dtype=float).sum(axis=-1)


def client_initial_probabilities(norms: np.ndarray, total: np.ndarray | float,
                                 m: float) -> np.ndarray:
    r"""Line 6: :math:`p_i = \min\{m u_i / u, 1\}` (0 for every client when :math:`u = 0`).

    Evaluated as :math:`m\,(u_i / u)`: :math:`u_i/u \le 1`, so nothing overflows.

    >>> client_initial_probabilities(np.array([1e308, 1e308]), 1e308 * 1.5, 2.0)
    array([1., 1.])
    """
    total = np.asarray(total, dtype=float)[..., None]
    safe = np.where(total > 0, total, 1.0)
    return np.where(total > 0, np.minimum(m * (norms / safe), 1.0), 0.0)


def client_message(p: np.ndarray) -> np.ndarray:
    """Line 8: :math:`t_i = (1, p_i)` if :math:`p_i < 1`, else :math:`(0, 0)`; shape (2, ..., n)."""
    below = p < 1.0
    return np.stack([below.astype(float), np.where(below, p, 0.0)])


def master_scale(count: np.ndarray | float, mass: np.ndarray | float, m: float,
                 n: int) -> np.ndarray:
    r"""Line 10, on aggregated sums only: :math:`C = (m - n + I)/P`; 1 when :math:`P = 0`.

    >>> master_scale(2.0, 0.5, 2.0, 3)
    array(2.)
    """
    count = np.asarray(count, dtype=float)
    mass = np.asarray(mass, dtype=float)
    safe = np.where(mass > 0, mass, 1.0)
    with np.errstate(over="ignore"):  # a subnormal P can overflow C to +inf: see recalibrate
        # m + (I - n): the integer part first, so that a tiny m is not rounded away
        return np.where(mass > 0, (m + (count - n)) / safe, 1.0)


def client_recalibrate(p: np.ndarray, scale: np.ndarray | float) -> np.ndarray:
    r"""Line 12: :math:`p_i \leftarrow \min\{C p_i, 1\}` for the clients with :math:`p_i < 1`."""
    c = np.asarray(scale, dtype=float)[..., None]
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = np.where(p > 0, np.minimum(c * p, 1.0), 0.0)  # a zero p stays 0 (never NaN)
    return np.where(p < 1.0, scaled, p)


def aocs_probabilities(
    norms: np.ndarray | Sequence[float], m: float, j_max: int = 4, rtol: float = 1e-10
) -> AOCSResult:
    r"""Run Algorithm 2 (AOCS) of seed 002 for one round, or for many rounds at once.

    Parameters
    ----------
    norms:
        :math:`u_i = w_i\|\mathbf U_i\| \ge 0`, shape ``(n,)`` or ``(rounds, n)``.
    m:
        Budget on the expected number of participants, :math:`0 < m \le n`.
    j_max:
        Maximum number of iterations (the seed's experiments use 4).
    rtol:
        The stopping test :math:`C \le 1` is evaluated as :math:`C \le 1 + \text{rtol}`
        (rounding of an exact rescale).

    Returns
    -------
    AOCSResult
        ``p``, the iterations used, whether the optimum was reached, and the transcript.

    Examples
    --------
    >>> res = aocs_probabilities([1.0, 1.0, 10.0], 2, j_max=4)
    >>> res.p, res.iterations, res.converged
    (array([0.5, 0.5, 1. ]), 2, True)
    >>> aocs_probabilities([0.0, 0.0, 0.0], 1).p
    array([0., 0., 0.])
    >>> aocs_probabilities([1e308, 1e308, 1e308], 1).p  # the sum overflows in float64
    array([0.33333333, 0.33333333, 0.33333333])
    """
    u, m, umax = _check_norms(norms, m)
    nonnegative_integer("j_max", j_max)
    if not (np.isfinite(rtol) and rtol >= 0):
        raise ValueError(f"rtol must be a non-negative number, got {rtol!r}")
    n = u.shape[-1]
    rows = u.shape[:-1]
    transcript: list[dict[str, Any]] = []
    # rounds whose sum could overflow: one power of two per round (exact; see the module doc)
    shift = _top_exponent(n) - np.frexp(umax)[1].astype(np.int64)
    if np.any(shift < 0):
        u = np.ldexp(u, np.minimum(shift, 0)[..., None])

    total = secure_sum(u)  # lines 3-5: the master sees only the sum of the norms
    transcript.append({"step": 0, "received": {"u": total}, "broadcast": {"u": total}})
    p = client_initial_probabilities(u, total, m)

    running = np.ones(rows, dtype=bool)
    converged = np.zeros(rows, dtype=bool)
    iterations = np.zeros(rows, dtype=np.int64)
    for j in range(1, j_max + 1):
        if not running.any():
            break
        count, mass = secure_sum(client_message(p))  # lines 8-9
        scale = master_scale(count, mass, m, n)  # line 10 (master, sums only)
        scale = np.where(running, scale, 1.0)  # finished rounds are left alone
        transcript.append({"step": j, "received": {"I": count, "P": mass},
                           "broadcast": {"C": scale}, "running": running.copy()})
        p = np.where(running[..., None], client_recalibrate(p, scale), p)  # line 12
        iterations = np.where(running, j, iterations)
        stop = running & (scale <= 1.0 + rtol)  # line 13
        # stopping is not reaching the optimum when C overflowed (subnormal P) and the
        # saturation overshot the budget: only a feasible fixed point counts as converged
        feasible = p.sum(axis=-1) <= m * (1.0 + 1e-12)
        converged |= stop & feasible
        running &= ~stop

    if u.ndim == 1:
        return AOCSResult(p, int(iterations), bool(converged), transcript)
    return AOCSResult(p, iterations, converged, transcript)


def replay_master(transcript: Sequence[dict[str, Any]], m: float, n: int) -> list[np.ndarray]:
    """Recompute every broadcast :math:`C` from the sums the master received, and nothing else.

    Returns the list of recomputed broadcasts (one per iteration); equal to the transcript's
    when the master used only the aggregated sums.
    """
    out = []
    for entry in transcript:
        if entry["step"] == 0:
            continue
        rec = entry["received"]
        scale = master_scale(rec["I"], rec["P"], m, n)
        out.append(np.where(entry["running"], scale, 1.0))
    return out


def aocs_iteration_study(
    rng: np.random.Generator,
    ns: Sequence[int],
    m_fractions: Sequence[float],
    sigmas: Sequence[float],
    rounds: int,
    j_budget: int = 4,
) -> dict[str, np.ndarray]:
    r"""How many iterations AOCS needs, as :math:`n`, :math:`m` and the spread of norms vary.

    For every :math:`(n, m/n, \sigma)` it draws ``rounds`` rounds of log-normal norms
    :math:`u_i = e^{\sigma Z_i}`, runs AOCS to completion (:math:`j_{\max} = n + 1`, enough by
    the bound :math:`j \le n - l + 1`) and with the budget ``j_budget`` (the seed uses 4), and
    records the iterations used, whether the budget sufficed, and the excess variance
    :math:`V(p_{\text{AOCS}})/V^\star - 1` left by the budget.

    Returns
    -------
    dict
        Flat arrays, one entry per setting: ``n``, ``m``, ``sigma``, ``mean_iterations``,
        ``max_iterations``, ``bound_violations`` (runs with :math:`j > n - l + 1`),
        ``max_error`` (:math:`\max|p - p^\star|` at completion), ``within_budget`` (fraction
        of rounds certified, :math:`C \le 1` seen, within ``j_budget``),
        ``reached_within_budget`` (fraction whose :math:`p` already equals :math:`p^\star` after
        ``j_budget`` iterations, certified or not: the last iteration only confirms) and
        ``excess_at_budget`` (mean).
    """
    from fedtheory.sampling.ocs import (  # local: keeps the protocol module light
        independent_sampling_variance,
        ocs_threshold,
        optimal_probabilities,
        optimal_variance,
    )

    keys = ("n", "m", "sigma", "mean_iterations", "max_iterations", "bound_violations",
            "max_error", "within_budget", "reached_within_budget", "excess_at_budget")
    out: dict[str, list[float]] = {k: [] for k in keys}
    for n in ns:
        for frac in m_fractions:
            m = float(max(1.0, round(frac * n)))
            for sigma in sigmas:
                u = np.exp(sigma * rng.standard_normal((rounds, n)))
                full = aocs_probabilities(u, m, j_max=n + 1)
                opt = optimal_probabilities(u, m)
                ell = ocs_threshold(u, m)
                cut = aocs_probabilities(u, m, j_max=j_budget)
                v_opt = np.asarray(optimal_variance(u, m))
                v_cut = np.asarray(independent_sampling_variance(u, cut.p))
                excess = np.where(v_opt > 0, v_cut / np.where(v_opt > 0, v_opt, 1.0) - 1.0, 0.0)
                out["n"].append(n)
                out["m"].append(m)
                out["sigma"].append(sigma)
                out["mean_iterations"].append(float(np.mean(full.iterations)))
                out["max_iterations"].append(float(np.max(full.iterations)))
                out["bound_violations"].append(float(np.sum(full.iterations > n - ell + 1)))
                out["max_error"].append(float(np.max(np.abs(full.p - opt))))
                out["within_budget"].append(float(np.mean(cut.converged)))
                reached = np.max(np.abs(cut.p - opt), axis=-1) <= 1e-9
                out["reached_within_budget"].append(float(np.mean(reached)))
                out["excess_at_budget"].append(float(np.mean(excess)))
    return {k: np.asarray(v) for k, v in out.items()}

r"""Seed 002, Theorems 13, 15, 17 and 18: one step from a fixed iterate, computed exactly.

On a :class:`LineInstance` (clients on a line, :math:`f_i(x) = \tfrac{a_i}{2}(x - c_i)^2`, two-point
noise :math:`\xi = \pm\tau(g)` with :math:`\tau(g)^2 = M g^2 + \sigma^2`, the bound of
Assumptions 7/8 attained) every random quantity of one DSGD step or one FedAvg round takes
finitely many values: :math:`2^n` noise sign patterns for DSGD, :math:`2^{nR}` for FedAvg's
local paths. Given the updates, the optimal probabilities (7) and the sampling's first two
moments are closed forms (eq. (6)):

.. math:: \mathbb E_S\|x - \eta_g\textstyle\sum_{i\in S}\frac{w_i}{p_i}U_i - x^\star\|^2
          = \|x - \eta_g\textstyle\sum_i w_iU_i - x^\star\|^2
          + \eta_g^2\textstyle\sum_i w_i^2\frac{1-p_i}{p_i}\|U_i\|^2,

and :math:`\mathbb E_S f(\cdot)` the same with :math:`f`'s curvature on the variance term. So
the left-hand side of each theorem, the improvement factor
:math:`\gamma = m/(\alpha(n-m)+m)` (:math:`\alpha` the ratio of the expected variances,
Definition 11) and hence the theorem's step sizes and right-hand side are exact rationals: no
confidence interval, no Monte Carlo error. The same code runs in floating point (``exact=False``,
or :func:`float_step` on an instance's floats) for the adversarial search
(:mod:`fedtheory.experiments.ocs_theorem_exact`), whose best instance is then re-checked
exactly; with many noise sign patterns the float run is on arrays over the patterns, its
operations in the order of the exact code's (the same floats, bit for bit).

Where :math:`M g^2 + \sigma^2` is not the square of a rational, :math:`\tau` is rounded *down*
to a rational (relative error below :math:`10^{-9}`): the noise still meets the assumption
(``\le``), and the instance stays admissible.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from fedtheory.problems import QuadraticProblem, RelativeNoise
from fedtheory.theory.ocs_theorems import NEXT_LOSS, DsgdTheorem, FedavgTheorem
from fedtheory.validation import integer_in, nonnegative_numbers, positive_integer

__all__ = [
    "LineInstance",
    "dsgd_exact",
    "fedavg_exact",
    "float_step",
    "ocs_probabilities",
    "sqrt_above",
    "sqrt_below",
]

_DIGITS = 10**9


def sqrt_below(v: Any) -> Any:
    r"""A rational :math:`\tau \le \sqrt v` (exact when :math:`v` is a rational square) for a
    :class:`Fraction` ``v``; ``math.sqrt`` for a float.

    >>> s = sqrt_below(Fraction(2))
    >>> sqrt_below(Fraction(9, 4)), s * s <= 2 < (s + Fraction(1, 10**9)) ** 2
    (Fraction(3, 2), True)
    """
    if not isinstance(v, Fraction):
        return math.sqrt(v)
    if v < 0:
        raise ValueError(f"v must be >= 0, got {v}")
    a, b = math.isqrt(v.numerator), math.isqrt(v.denominator)
    if a * a == v.numerator and b * b == v.denominator:
        return Fraction(a, b)
    return Fraction(math.isqrt(v.numerator * _DIGITS**2 // v.denominator), _DIGITS)


def sqrt_above(v: Any) -> Any:
    r"""A rational :math:`\ge \sqrt v` (exact for a rational square); ``math.sqrt`` for a float.

    >>> sqrt_above(Fraction(9, 4)), sqrt_above(Fraction(2))**2 >= 2
    (Fraction(3, 2), True)
    """
    if not isinstance(v, Fraction):
        return math.sqrt(v)
    s = sqrt_below(v)
    return s if s * s == v else s + Fraction(1, _DIGITS)


def ocs_probabilities(norms: Sequence[Any], m: int) -> list[Any]:
    r"""The optimal probabilities (7) for norms :math:`u_i \ge 0` (the main text's "j-th
    smallest" ordering), exact for rationals, also for floats: :math:`p_i = 1` for the
    :math:`n - l` largest norms, :math:`(m + l - n)u_i/\sum_{j\le l}u_{(j)}` for the others,
    0 for a zero norm.

    >>> ocs_probabilities([Fraction(1), Fraction(1), Fraction(2)], 1)
    [Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)]

    Degenerate inputs: zero norms get 0 (all of them zero: every p is 0); a NaN, infinite,
    negative or complex norm is no norm (a ``ValueError`` naming it, never a silent answer):

    >>> ocs_probabilities([0.0, 0.0], 1), ocs_probabilities([0.0, 3.0, 1.0], 2)
    ([0.0, 0.0], [0.0, 1.0, 1.0])
    >>> ocs_probabilities([1.0, float("nan")], 1)
    Traceback (most recent call last):
    ...
    ValueError: norms must be finite real numbers >= 0, got nan (at index 1)
    >>> ocs_probabilities([1, -2], 1)
    Traceback (most recent call last):
    ...
    ValueError: norms must be finite real numbers >= 0, got -2 (at index 1)
    """
    norms = nonnegative_numbers("norms", norms)
    n = len(norms)
    if isinstance(m, (bool, np.bool_)) or not isinstance(m, (int, np.integer)) \
            or not 1 <= m <= n:
        raise ValueError(f"m must be in [1, n = {n}] (an integer), got {m!r}")
    s = sorted(norms)
    ell, total = 0, 0 * s[0]
    for ll in range(1, n + 1):
        total_l = total + s[ll - 1]
        if m + ll - n > 0 and (m + ll - n) * s[ll - 1] <= total_l:
            ell = ll
        total = total_l
    total = sum(s[:ell], 0 * s[0])
    thr = s[ell - 1]
    one = norms[0] ** 0
    out = []
    for u in norms:
        if u > thr:
            out.append(one)
        elif total == 0:
            out.append(0 * one)
        else:
            out.append(min((m + ell - n) * u / total, one))
    return out


@dataclass(frozen=True)
class LineInstance:
    r"""``n`` clients on a line: :math:`f_i(x) = \tfrac{a_i}{2}(x - c_i)^2`, weights :math:`w`,
    the fixed iterate :math:`x^k`, the budget :math:`m` and the noise's :math:`M, \sigma^2`.

    Numbers are stored exactly (anything :class:`Fraction` accepts); :meth:`numbers` gives
    them as fractions or floats. :math:`L = \max_i|a_i|`; :math:`f` has curvature
    :math:`\bar a = \sum_i w_ia_i` (:math:`\mu = \bar a` when positive);
    :math:`Z_i = \tfrac{a_i}{2}(x^\star - c_i)^2` needs :math:`a_i \ge 0`;
    :math:`\rho = \bar a^2\sum_i w_i(c_i - \bar c)^2` is finite when every :math:`a_i` is
    the same.
    """

    weights: tuple[Fraction, ...]
    curvatures: tuple[Fraction, ...]
    centers: tuple[Fraction, ...]
    x: Fraction
    m: int
    M: Fraction = Fraction(0)
    sigma2: Fraction = Fraction(0)

    def __post_init__(self) -> None:
        for name in ("weights", "curvatures", "centers"):
            object.__setattr__(self, name, tuple(Fraction(v) for v in getattr(self, name)))
        for name in ("x", "M", "sigma2"):
            object.__setattr__(self, name, Fraction(getattr(self, name)))
        n = len(self.weights)
        if n < 1 or len(self.curvatures) != n or len(self.centers) != n:
            raise ValueError(f"weights, curvatures and centers must have one entry per client, "
                             f"got lengths {n}, {len(self.curvatures)}, {len(self.centers)}")
        if any(w < 0 for w in self.weights) or sum(self.weights) != 1:
            raise ValueError(f"weights must be non-negative and sum to 1, got {self.weights}")
        if sum(w * a for w, a in zip(self.weights, self.curvatures, strict=True)) == 0:
            raise ValueError("curvatures must not average to 0 (f would be linear)")
        integer_in("m", self.m, 1, n)
        if self.M < 0 or self.sigma2 < 0:
            raise ValueError(f"M and sigma2 must be >= 0, got {self.M}, {self.sigma2}")

    @property
    def n(self) -> int:
        return len(self.weights)

    def numbers(self, exact: bool = True) -> dict[str, Any]:
        """The instance's numbers as fractions (``exact``) or floats."""
        cv = Fraction if exact else float
        return {"w": [cv(v) for v in self.weights], "a": [cv(v) for v in self.curvatures],
                "c": [cv(v) for v in self.centers], "x": cv(self.x), "M": cv(self.M),
                "sigma2": cv(self.sigma2)}

    def quantities(self, exact: bool = True) -> dict[str, Any]:
        """What the theorems read (:func:`fedtheory.theory.ocs_theorems.problem_quantities`
        and ``point_quantities``), exact or in floats."""
        return _quantities(self.numbers(exact))

    @staticmethod
    def _loss(v: dict[str, Any], y: Any) -> Any:
        return sum(wi * ai / 2 * (y - ci) ** 2
                   for wi, ai, ci in zip(v["w"], v["a"], v["c"], strict=True))

    def problem(self) -> QuadraticProblem:
        """The same instance as a (float) :class:`~fedtheory.problems.QuadraticProblem`."""
        v = self.numbers(False)
        return QuadraticProblem(np.asarray(v["a"])[:, None], np.asarray(v["c"])[:, None],
                                weights=np.asarray(v["w"]))

    def noise(self) -> RelativeNoise:
        """Its noise for the Monte Carlo draws: ``sphere`` (in one dimension, :math:`\\pm\\tau`)."""
        return RelativeNoise(float(self.M), float(self.sigma2), "sphere")

    def describe(self) -> dict[str, Any]:
        """The instance in plain strings (re-runnable)."""
        return {"weights": [str(v) for v in self.weights],
                "curvatures": [str(v) for v in self.curvatures],
                "centers": [str(v) for v in self.centers], "x_k": str(self.x), "m": self.m,
                "M": str(self.M), "sigma2": str(self.sigma2)}


def _quantities(v: dict[str, Any]) -> dict[str, Any]:
    """:meth:`LineInstance.quantities` of the numbers ``v`` (:meth:`LineInstance.numbers`)."""
    w, a, c, x = v["w"], v["a"], v["c"], v["x"]
    abar = sum(wi * ai for wi, ai in zip(w, a, strict=True))
    xs = sum(wi * ai * ci for wi, ai, ci in zip(w, a, c, strict=True)) / abar
    convex = all(ai >= 0 for ai in a)
    Z = [ai / 2 * (xs - ci) ** 2 for ai, ci in zip(a, c, strict=True)] if convex else None
    same = len({ai for wi, ai in zip(w, a, strict=True) if wi > 0}) == 1
    cbar = sum(wi * ci for wi, ci in zip(w, c, strict=True))
    fx = LineInstance._loss(v, x)
    return {
        "L": max(abs(ai) for ai in a), "mu": abar if abar > 0 else 0 * abar,
        "mu_clients": min(a), "M": v["M"], "sigma2": v["sigma2"], "W": max(w),
        "S2": sum(wi * wi for wi in w),
        "S2Z": None if Z is None else sum(wi * wi * z for wi, z in zip(w, Z, strict=True)),
        "SZ": None if Z is None else sum(wi * z for wi, z in zip(w, Z, strict=True)),
        "rho": (abar**2 * sum(wi * (ci - cbar) ** 2 for wi, ci in zip(w, c, strict=True))
                if same else None),
        "r2": (x - xs) ** 2, "gap": fx - LineInstance._loss(v, xs), "gf2": (abar * (x - xs)) ** 2,
        "fx": fx, "x_star": xs, "abar": abar,
    }


# ----------------------------------------------------------------------------- the patterns
# Exact arithmetic runs pattern by pattern on Fractions (lists of rows ``(probability, mean,
# A, B)``); floating point runs on arrays over the patterns (:class:`_FloatRows`), with every
# operation in the order of the exact code, so that a float evaluation is the exact code's run
# on the instance's floats, bit for bit (sums over clients and patterns taken sequentially,
# squares through the C library's ``pow`` as Python's ``**`` does: :func:`_pow2`).
def _amplitude(g: Any, M: Any, sigma2: Any) -> Any:
    return sqrt_below(M * g * g + sigma2)


def _signs(k: int, noisy: bool) -> list[tuple[int, ...]]:
    return list(itertools.product((1, -1), repeat=k)) if noisy else [(1,) * k]


def _moments(w: list[Any], U: Sequence[Any], m: int) -> tuple[Any, Any, Any]:
    r"""Given the updates: :math:`\sum_i w_iU_i`, the sampling variance
    :math:`A = \sum_i w_i^2\frac{1-p_i}{p_i}U_i^2` (the OCS variance of Definition 11) and
    the uniform sampling's :math:`B = \frac{n-m}{m}\sum_i w_i^2U_i^2`."""
    n = len(w)
    u = [wi * abs(Ui) for wi, Ui in zip(w, U, strict=True)]
    p = ocs_probabilities(u, m)
    var = sum((ui * ui * (1 - pi) / pi for ui, pi in zip(u, p, strict=True) if pi > 0), 0 * u[0])
    mean = sum((wi * Ui for wi, Ui in zip(w, U, strict=True)), 0 * u[0])
    B = Fraction(n - m, m) * sum((ui * ui for ui in u), 0 * u[0])
    return mean, var, B


class _FloatRows(NamedTuple):
    """The rows of a float evaluation as arrays over the patterns."""

    pr: np.ndarray
    mean: np.ndarray
    var: np.ndarray
    B: np.ndarray


#: float evaluations with more sign patterns than this run on arrays, the others row by row
_VECTOR_ROWS = 8
_TWOS: dict[tuple[int, ...], np.ndarray] = {}
_PICKS: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}


def _pow2(x: np.ndarray) -> np.ndarray:
    """``x ** 2`` element by element as Python computes a float's square (the C library's
    ``pow``; numpy's ``x ** 2`` multiplies, which differs in the last bit now and then)."""
    two = _TWOS.get(x.shape)
    if two is None:
        two = _TWOS[x.shape] = np.full(x.shape, 2.0)
    return np.power(x, two)


def _pick(paths: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays taking each client's path for every combination, in the order of
    ``itertools.product`` (the first client slowest)."""
    key = (paths, n)
    if key not in _PICKS:
        _PICKS[key] = (np.arange(n)[:, None], np.indices((paths,) * n).reshape(n, -1))
    return _PICKS[key]


def _ocs_probabilities_rows(u: np.ndarray, m: int) -> np.ndarray:
    """:func:`ocs_probabilities` of every row of ``u`` (patterns x clients), in floats."""
    n = u.shape[1]
    s = np.sort(u, axis=1)
    total = np.cumsum(s, axis=1)  # sequential, as the exact code's running total
    ell = np.zeros(u.shape[0], dtype=np.int64)
    for ll in range(1, n + 1):
        if m + ll - n > 0:
            ell = np.where((m + ll - n) * s[:, ll - 1] <= total[:, ll - 1], ll, ell)
    rows, at = np.arange(u.shape[0]), (ell - 1) % n
    thr = s[rows, at][:, None]
    tot = np.where(ell > 0, total[rows, at], 0.0)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.minimum((m + ell - n)[:, None] * u / tot, 1.0)
    return np.where(u > thr, 1.0, np.where(tot == 0, 0.0, share))


def _moments_rows(w: list[float], U: np.ndarray, m: int) -> tuple[np.ndarray, ...]:
    """:func:`_moments` of every row of ``U`` (patterns x clients), in floats."""
    n = len(w)
    u = np.abs(U) * np.asarray(w)
    p = _ocs_probabilities_rows(u, m)
    var, mean, sq = (np.zeros(U.shape[0]) for _ in range(3))
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(n):
            ui, pi = u[:, i], p[:, i]
            var = var + np.where(pi > 0, ui * ui * (1 - pi) / pi, 0.0)
            mean = mean + w[i] * U[:, i]
            sq = sq + ui * ui
    return mean, var, float(Fraction(n - m, m)) * sq


def _total(values: np.ndarray, start: Any = 0) -> Any:
    """``start`` plus ``values`` from first to last (as the exact code adds them)."""
    for value in values.tolist():
        start += value
    return start


def _gamma(rows: list[tuple[Any, Any, Any, Any]] | _FloatRows, n: int, m: int) -> Any:
    """gamma = m / (alpha (n - m) + m), alpha = E[A] / E[B] over the rows
    ``(probability, mean, A, B)``; 1 when m >= n or every update is zero."""
    if isinstance(rows, _FloatRows):
        EA, EB = _total(rows.pr * rows.var), _total(rows.pr * rows.B)
    else:
        EA = sum(pr * A for pr, _, A, _ in rows)
        EB = sum(pr * B for pr, _, _, B in rows)
    if m >= n or EB == 0:
        return EB**0
    return m / ((EA / EB) * (n - m) + m)


def _next(v: dict[str, Any], q: dict[str, Any], rows: list[Any] | _FloatRows,
          step: Any) -> tuple[Any, Any]:
    r""":math:`\mathbb E\|x^{k+1} - x^\star\|^2` and :math:`\mathbb E f(x^{k+1})` for
    :math:`x^{k+1} = x - \text{step}\sum_{i\in S}\frac{w_i}{p_i}U_i` over the rows
    ``(probability, mean, variance, B)``."""
    x, xs, abar = v["x"], q["x_star"], q["abar"]
    if isinstance(rows, _FloatRows):
        y = x - step * rows.mean
        f = np.zeros(y.shape)
        for wi, ai, ci in zip(v["w"], v["a"], v["c"], strict=True):
            f = f + wi * ai / 2 * _pow2(y - ci)
        dist = _total(rows.pr * (_pow2(y - xs) + step * step * rows.var), 0 * x)
        loss = _total(rows.pr * (f + abar / 2 * step * step * rows.var), 0 * x)
        return dist, loss
    dist = loss = 0 * x
    for pr, mean, var, _ in rows:
        y = x - step * mean
        dist += pr * ((y - xs) ** 2 + step * step * var)
        loss += pr * (LineInstance._loss(v, y) + abar / 2 * step * step * var)
    return dist, loss


def _dsgd_rows(v: dict[str, Any], m: int, exact: bool) -> list[Any] | _FloatRows:
    w, a, c, x = v["w"], v["a"], v["c"], v["x"]
    n = len(w)
    grads = [ai * (x - ci) for ai, ci in zip(a, c, strict=True)]
    tau = [_amplitude(g, v["M"], v["sigma2"]) for g in grads]
    noisy = any(t != 0 for t in tau)
    if not exact and noisy and 2**n > _VECTOR_ROWS:
        signs = np.array(_signs(n, noisy), dtype=float)
        mean, var, B = _moments_rows(w, np.asarray(grads) + signs * np.asarray(tau), m)
        return _FloatRows(np.full(len(signs), 0.5**n), mean, var, B)
    pr = (Fraction(1, 2**n) if exact else 0.5**n) if noisy else (Fraction(1) if exact else 1.0)
    rows = []
    for s in _signs(n, noisy):
        g = [gi + si * ti for gi, si, ti in zip(grads, s, tau, strict=True)]
        rows.append((pr, *_moments(w, g, m)))
    return rows


def _result(theorem: DsgdTheorem | FedavgTheorem, q: dict[str, Any], dist: Any, loss: Any,
            bound: tuple[Any, Any], **extra: Any) -> dict[str, Any]:
    lhs = loss if theorem.bounds is NEXT_LOSS else dist
    rhs, inc = bound
    base = rhs - inc
    if inc > 0:
        ratio = (lhs - base) / inc
    else:  # no increment: attained (1) when equal, else 0 or infinite
        ratio = lhs**0 if lhs == base else (0 * lhs if lhs < base else math.inf)
    return {"lhs": lhs, "rhs": rhs, "increment": inc, "ratio": ratio, "holds": lhs <= rhs,
            **extra}


def dsgd_exact(theorem: DsgdTheorem, inst: LineInstance, theta: Any = 1,
               exact: bool = True) -> dict[str, Any]:
    r"""One DSGD + OCS step from ``inst.x`` against a DSGD ``theorem``, exactly (or in floats).

    The step is ``theta`` times the theorem's largest (:meth:`DsgdTheorem.step_max`, at the
    exact :math:`\gamma^k`; any ``theta > 0`` for Theorem 15, ``0 < theta <= 1`` otherwise).
    Returns ``lhs`` (the bounded quantity's conditional expectation), ``rhs``, ``increment``,
    ``ratio`` (:math:`(\text{lhs} - \text{rhs} + \text{increment})/\text{increment}`: above 1
    exactly when the bound fails), ``holds``, ``gamma`` and ``eta``.

    >>> F = Fraction
    >>> inst = LineInstance([F(3, 4), F(1, 4)], [1, 1], [0, 1], F(1, 2), 1)
    >>> from fedtheory.theory.ocs_theorems import THEOREM_13
    >>> out = dsgd_exact(THEOREM_13, inst)
    >>> out["lhs"], out["rhs"], out["holds"]
    (Fraction(93, 2048), Fraction(327, 8192), False)
    """
    _check_dsgd_theta(theorem, theta)
    return _dsgd_step(theorem, inst.numbers(exact), inst.m, theta, exact)


def _check_dsgd_theta(theorem: DsgdTheorem, theta: Any) -> None:
    if theorem.step is not None and not 0 < theta <= 1:
        raise ValueError(f"theta must be in (0, 1] for {theorem.label}, got {theta!r}")


def _dsgd_step(theorem: DsgdTheorem, v: dict[str, Any], m: int, theta: Any,
               exact: bool) -> dict[str, Any]:
    rows = _dsgd_rows(v, m, exact)
    q = _quantities(v)
    gamma = _gamma(rows, len(v["w"]), m)
    eta = theta * theorem.step_max(q, gamma)
    dist, loss = _next(v, q, rows, eta)
    return _result(theorem, q, dist, loss, theorem.bound(q, eta, gamma), gamma=gamma, eta=eta)


def _fedavg_rows(v: dict[str, Any], m: int, eta_l: Any, R: int,
                 exact: bool) -> list[Any] | _FloatRows:
    """Rows ``(probability, mean, variance, B)`` of the updates after ``R`` local steps."""
    w, a, c, x = v["w"], v["a"], v["c"], v["x"]
    noisy = v["M"] != 0 or v["sigma2"] != 0
    signs = _signs(R, noisy)
    n, n_paths = len(w), len(signs)
    if not exact and n_paths**n > _VECTOR_ROWS:
        S = np.array(signs, dtype=float)  # (paths, R)
        y = np.full((n, n_paths), x)
        ac, cc = np.asarray(a)[:, None], np.asarray(c)[:, None]
        for r in range(R):
            g = ac * (y - cc)
            y = y - eta_l * (g + S[:, r] * np.sqrt(v["M"] * g * g + v["sigma2"]))
        client, pick = _pick(n_paths, n)
        U_rows = (x - y)[client, pick].T  # (combinations, clients)
        mean, var, B = _moments_rows(w, U_rows, m)
        pr = math.prod([1.0 / n_paths] * n)
        return _FloatRows(np.full(U_rows.shape[0], pr), mean, var, B)
    per_client = []
    for ai, ci in zip(a, c, strict=True):
        paths = []
        pr = Fraction(1, len(signs)) if exact else 1.0 / len(signs)
        for s in signs:
            y = x
            for sr in s:
                g = ai * (y - ci)
                y = y - eta_l * (g + sr * _amplitude(g, v["M"], v["sigma2"]))
            paths.append((pr, x - y))
        per_client.append(paths)
    rows = []
    for combo in itertools.product(*per_client):
        pr = _prod(p for p, _ in combo) if exact else math.prod(p for p, _ in combo)
        rows.append((pr, *_moments(w, [U for _, U in combo], m)))
    return rows


def _prod(values: Any) -> Fraction:
    out = Fraction(1)
    for val in values:
        out *= val
    return out


def fedavg_exact(theorem: FedavgTheorem, inst: LineInstance, R: int, theta: Any = 1,
                 g_scale: Any = 1, exact: bool = True, iterations: int = 12) -> dict[str, Any]:
    r"""One FedAvg + OCS round (``R`` local steps) from ``inst.x`` against a FedAvg ``theorem``.

    The steps: :math:`\eta_g` = ``g_scale`` (:math:`\ge 1`) times the theorem's smallest
    (rounded up to a rational), :math:`\eta` = ``theta`` times its largest, :math:`\eta_l =
    \eta/(R\eta_g)`. Both limits depend on :math:`\gamma`, which depends on :math:`\eta_l`:
    a fixed-point iteration evaluates them at the last :math:`\gamma` (with a relative margin
    that grows from 0 when an iterate misses) until the conditions hold exactly at the
    :math:`\gamma` of the steps taken (``ok``; if they never do, ``ok`` is False and the
    instance claims nothing: ``holds`` is True).
    Returns as :func:`dsgd_exact`, with ``eta_l``, ``eta_g`` and ``ok``.
    """
    _check_fedavg_steps(R, theta, g_scale)
    return _fedavg_step(theorem, inst.numbers(exact), inst.m, R, theta, g_scale, exact,
                        iterations)


def _check_fedavg_steps(R: Any, theta: Any, g_scale: Any) -> None:
    if not 0 < theta <= 1 or g_scale < 1:
        raise ValueError(f"need 0 < theta <= 1 and g_scale >= 1, got {theta!r}, {g_scale!r}")
    positive_integer("R", R)


def _fedavg_step(theorem: FedavgTheorem, v: dict[str, Any], m: int, R: int, theta: Any,
                 g_scale: Any, exact: bool, iterations: int = 12) -> dict[str, Any]:
    q = _quantities(v)
    n = len(v["w"])
    cv = Fraction if exact else float
    one = cv(1)
    gamma = cv(Fraction(m, n))
    ok, rows, eta, eta_l, eta_g = False, [], one, one, one
    for k in range(iterations):
        margin = 0 * one if k == 0 else cv(Fraction(1, 10**6)) * 4 ** (k - 1)
        eta_g = g_scale * sqrt_above(theorem.eta_g_sq_of(q, min(one, gamma * (1 + margin))))
        eta = theta * theorem.step_max(q, gamma * (1 - min(margin, one / 2)), R)
        eta_l = eta / (R * eta_g)
        rows = _fedavg_rows(v, m, eta_l, R, exact)
        new = _gamma(rows, n, m)
        ok = eta <= theorem.step_max(q, new, R) and eta_g**2 >= theorem.eta_g_sq_of(q, new)
        gamma = new
        if ok:
            break
    dist, loss = _next(v, q, rows, eta_g)
    out = _result(theorem, q, dist, loss, theorem.bound(q, eta, gamma, R), gamma=gamma, eta=eta,
                  eta_l=eta_l, eta_g=eta_g, ok=ok)
    if not ok:
        out["holds"] = True  # steps not certified: nothing is claimed on this instance
    return out


def float_step(theorem: DsgdTheorem | FedavgTheorem, numbers: dict[str, Any], m: int,
               R: int | None = None, theta: float = 1.0, g_scale: float = 1.0
               ) -> dict[str, Any]:
    r""":func:`dsgd_exact` (``R`` None) or :func:`fedavg_exact` in floating point on an
    instance given by its float numbers (the keys of :meth:`LineInstance.numbers`: ``w``,
    ``a``, ``c``, ``x``, ``M``, ``sigma2``): what ``exact=False`` computes on the
    :class:`LineInstance` of those numbers, bit for bit, without building it (the adversarial
    search's inner loop). The numbers are taken as an admissible instance's (not validated).

    >>> F = Fraction
    >>> from fedtheory.theory.ocs_theorems import THEOREM_13
    >>> inst = LineInstance([F(3, 4), F(1, 4)], [1, 1], [0, 1], F(1, 2), 1)
    >>> float_step(THEOREM_13, inst.numbers(False), 1) == dsgd_exact(THEOREM_13, inst,
    ...                                                               exact=False)
    True
    """
    n = len(numbers["w"])
    integer_in("m", m, 1, n)
    if R is None:
        if not isinstance(theorem, DsgdTheorem):
            raise ValueError(f"R is None (a DSGD step), got {theorem.label}")
        _check_dsgd_theta(theorem, theta)
        return _dsgd_step(theorem, numbers, m, theta, False)
    if not isinstance(theorem, FedavgTheorem):
        raise ValueError(f"R = {R!r} (a FedAvg round), got {theorem.label}")
    _check_fedavg_steps(R, theta, g_scale)
    return _fedavg_step(theorem, numbers, m, R, theta, g_scale, False)

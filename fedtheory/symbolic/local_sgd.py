r"""Closed forms of :math:`K` local SGD steps on a one-dimensional quadratic (``rsolve``),
and the symbols of the lecture's FedAvg derivations (seed 003).

One-dimensional clients :math:`f_i = \tfrac{a_i}2(x-c_i)^2` suffice: FedAvg on a diagonal
quadratic runs coordinate by coordinate, so a per-coordinate identity gives the vector one by
summing over coordinates. The other FedAvg derivations (:mod:`fedtheory.symbolic.fedavg_drift`,
:mod:`~fedtheory.symbolic.scaffold_fixed_point`, :mod:`~fedtheory.symbolic.fedavg_round_map`,
:mod:`~fedtheory.symbolic.fedavg_rate_constants`,
:mod:`~fedtheory.symbolic.fedavg_update_variance`) build on :func:`derive_local_sgd` and use
the symbols defined here.

>>> loc = derive_local_sgd()
>>> one_step = x_sym - gamma * loc["a"] * (x_sym - loc["c"])
>>> sp.simplify(loc["y_K"].subs({K: 1, loc["delta"]: 0}) - one_step)
0
"""

from __future__ import annotations

import functools
from typing import Any

import sympy as sp

__all__ = [
    "K",
    "clients",
    "derive_local_sgd",
    "gamma",
    "is_zero",
    "local_end",
    "m_sym",
    "n_sym",
    "sigma2",
    "x_sym",
    "zeta2",
]

gamma = sp.Symbol(r"\gamma", positive=True)
K = sp.Symbol("K", integer=True, positive=True)
sigma2 = sp.Symbol(r"\sigma^2", positive=True)
zeta2 = sp.Symbol(r"\zeta^2", nonnegative=True)
n_sym, m_sym = sp.symbols("n m", integer=True, positive=True)
x_sym = sp.Symbol("x", real=True)
_k = sp.Symbol("k", integer=True, nonnegative=True)
_y = sp.Function("y")



def is_zero(expr: Any) -> bool:
    """Whether ``expr`` simplifies to 0.

    >>> is_zero((gamma + 1) ** 2 - gamma**2 - 2 * gamma - 1)
    True
    """
    return sp.simplify(sp.expand(expr)) == 0


def clients(n: int) -> tuple[list[sp.Symbol], list[sp.Symbol]]:
    """Curvatures :math:`a_1..a_n` (positive) and centers :math:`c_1..c_n` (real) of ``n``
    one-dimensional clients.

    >>> clients(2)
    ([a_1, a_2], [c_1, c_2])
    """
    a = [sp.Symbol(f"a_{i}", positive=True) for i in range(1, n + 1)]
    c = [sp.Symbol(f"c_{i}", real=True) for i in range(1, n + 1)]
    return a, c


# A pure memo (one process): the value is a function of the arguments only, never of what
# ran before, and is not modified by its readers (issue 18: the one cache keeps the rest).
@functools.lru_cache(maxsize=1)
def derive_local_sgd() -> dict[str, sp.Expr]:
    r"""Closed forms of :math:`K` local steps on :math:`f = \tfrac a2 (y-c)^2`, by ``rsolve``.

    Noise-free, with a constant correction :math:`\delta` added to every gradient (SCAFFOLD's
    :math:`\delta = \bar u - u_i`; :math:`\delta = 0` is plain local SGD):

    .. math:: y^{k+1} = y^k - \gamma\big(a(y^k - c) + \delta\big),\quad y^0 = x,

    and the variance :math:`v^k` that i.i.d. gradient noise of variance :math:`\sigma^2` leaves
    in :math:`y^k`: :math:`v^{k+1} = (1-\gamma a)^2 v^k + \gamma^2\sigma^2`, :math:`v^0 = 0`.
    Returns ``y_K`` (with ``delta``), ``v_K`` and the symbols ``a, c, delta``.
    """
    a, c, delta = sp.Symbol("a", positive=True), sp.Symbol("c", real=True), sp.Symbol(
        r"\delta", real=True)
    y_sol = sp.rsolve(_y(_k + 1) - _y(_k) + gamma * (a * (_y(_k) - c) + delta), _y(_k),
                      {_y(0): x_sym})
    v_sol = sp.rsolve(_y(_k + 1) - (1 - gamma * a) ** 2 * _y(_k) - gamma**2 * sigma2, _y(_k),
                      {_y(0): 0})
    return {"a": a, "c": c, "delta": delta, "y_K": y_sol.subs(_k, K), "v_K": v_sol.subs(_k, K)}



def local_end(a: sp.Expr, c: sp.Expr, delta: sp.Expr = 0, x: sp.Expr = x_sym) -> sp.Expr:
    """:math:`y^K` of :func:`derive_local_sgd` for curvature ``a``, center ``c``, correction
    ``delta`` and start ``x``."""
    loc = derive_local_sgd()
    return loc["y_K"].subs({loc["a"]: a, loc["c"]: c, loc["delta"]: delta, x_sym: x},
                           simultaneous=True)


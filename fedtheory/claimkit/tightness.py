r"""The tightness search: how close a bound comes to its quantity over a box of parameters.

A bound check states :math:`Q(\theta) \le B(\theta)` (an upper bound; :math:`\ge` a lower one)
for every :math:`\theta` in a box :math:`\Theta = \prod_j [l_j, u_j]` (a parameter may be an
integer: then it takes the integers of its interval). Its **tightness** is

.. math:: \tau = \sup_{\theta \in \Theta} r(\theta), \qquad
          r = Q / B \ \text{(upper)}, \qquad r = B / Q \ \text{(lower)},

so :math:`\tau \le 1` when the bound holds on the box, :math:`\tau = 1` when it is attained and
:math:`\tau > 1` at a counterexample (a zero denominator gives 1 when the numerator is 0 too,
:math:`\pm\infty` by the numerator's sign otherwise, as in the bound check of
:mod:`fedtheory.claimkit.checks`). :func:`tightest` finds it in three steps:

1. **grid**: :math:`r` on the product grid of ``grid`` points per continuous parameter (the
   interval's ends included) and every integer of an integer parameter's interval (``grid``
   evenly spread ones when there are more), in one call of the quantity and the bound on arrays
   of the grid's points when they are vectorised (``vectorised=True``), else one call a point;
2. **local refinement**: from the best grid point, :math:`-r` is minimised by
   :func:`scipy.optimize.minimize` (L-BFGS-B, bounded by the box) over the continuous
   parameters, the integer ones held at their grid values; the refined point is kept only if
   its ratio is larger (a maximum on the box's boundary stays there: the bounds clip it);
3. **exact re-check** (``exact=True``): the quantity and the bound are called once more at the
   best point, its coordinates as :class:`fractions.Fraction` (the exact binary rationals of
   the floats: no rounding), and at the nearest simple rationals (denominators up to
   :math:`10^6`, inside the box), whichever ratio is larger (the simple point on a tie: the
   grid's ``0.49999999999999994`` is re-checked as ``1/2``); the ratio is the exact quotient
   of the two values (a ``Fraction`` or a sympy number, whatever the two return).

A NaN from the quantity or the bound, anywhere the search looks, is a ``ValueError`` naming
the point, never a ratio. The result (:class:`Tightness`) gives what an
:class:`~fedtheory.claimkit.evidence.Evidence` wants: ``ratio``, ``instance`` (the tightest
point, with the measured and stated values there) and ``search`` (what the search covered):
``Evidence(ok, measured, stated, detail, **t.evidence_fields())``; or the bound check itself,
:meth:`Tightness.evidence` (:func:`~fedtheory.claimkit.checks.check_bound` on
:meth:`Tightness.bound_inputs`, the exact values at the tightest point, with its instance).
Every point evaluated is kept (:attr:`Tightness.points`).

Examples
--------
A ratio largest on the box's boundary, :math:`\frac{x/(1+x)}{x} = \frac1{1+x}` on
:math:`[\frac12, 3]`, reached at :math:`x = \frac12` and re-checked exactly:

>>> t = tightest(lambda x: x / (1 + x), lambda x: x, {"x": (0.5, 3.0)}, exact=True)
>>> t.ratio, t.exact_ratio, t.instance["x"]
(0.6666666666666666, Fraction(2, 3), 0.5)
>>> t.grid_size, t.best_grid
(9, {'x': 0.5})

A flat ratio (:math:`2ab / 4ab`): every point is as tight, the first grid point is returned:

>>> t = tightest(lambda a, k: 2 * a * k, lambda a, k: 4 * a * k,
...              {"a": (1.0, 3.0), "k": (1, 4)}, integers=("k",), exact=True)
>>> t.exact_ratio, t.instance["a"], t.instance["k"], t.grid_size
(Fraction(1, 2), 1.0, 1, 36)

A NaN from the quantity is refused, naming the point:

>>> import numpy as np
>>> tightest(lambda x: np.where(x < 1, np.nan, x), lambda x: x + 1, {"x": (0.0, 2.0)})
Traceback (most recent call last):
...
ValueError: the quantity is NaN at x=0.0 (a NaN is never a ratio: restrict the box)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory.claimkit.checks import check_bound
from fedtheory.claimkit.evidence import Evidence

__all__ = ["Tightness", "tightest"]

_SIDES = ("upper", "lower")


@dataclass(frozen=True)
class Tightness:
    """The result of :func:`tightest`: the tightest point of the box and its ratio, with a
    record of the search."""

    #: The largest measured/stated (upper; stated/measured for a lower bound) found, as a
    #: float (the exact ratio's value when it was re-checked exactly).
    ratio: float
    #: The tightest point: the parameters, then ``measured`` and ``stated`` there.
    instance: dict[str, Any]
    side: str
    #: The exact ratio at the tightest point (``exact=True``), else None.
    exact_ratio: Any
    #: Grid points, the calls of the quantity made in all (grid, refinement, exact re-check).
    grid_size: int
    evaluations: int
    #: The best grid point, and the point the refinement ended at (None: not run, or no gain).
    best_grid: dict[str, Any]
    refined: dict[str, Any] | None
    #: The box searched: name -> (low, high), and which names are integers.
    box: dict[str, tuple[Any, Any]] = field(repr=False)
    integers: tuple[str, ...] = ()
    #: Every point evaluated by the grid and the refinement, with its measured and stated values
    #: (for the bound check: :meth:`bound_inputs`).
    points: tuple[dict[str, Any], ...] = field(default=(), repr=False)

    @property
    def search(self) -> str:
        """What the search covered, for ``Evidence.search``."""
        box = ", ".join(f"{k} in [{lo}, {hi}]" + (" (integer)" if k in self.integers else "")
                        for k, (lo, hi) in self.box.items())
        refined = ("no gain" if self.refined is None
                   else ", ".join(f"{k}={v:.6g}" for k, v in self.refined.items()))
        exact = "" if self.exact_ratio is None else f"; exact ratio {self.exact_ratio}"
        return (f"tightness search over {box}: {self.grid_size} grid points, "
                f"{self.evaluations} evaluations, best grid point "
                f"{_fmt_point(self.best_grid)}, refined to {refined}; "
                f"largest {self._what()} {self.ratio:.6g}{exact}")

    def _what(self) -> str:
        return "measured/stated" if self.side == "upper" else "stated/measured"

    def evidence_fields(self) -> dict[str, Any]:
        """``ratio``, ``instance`` and ``search``, the fields of an
        :class:`~fedtheory.claimkit.evidence.Evidence` that a tightness fills."""
        return {"ratio": self.ratio, "instance": dict(self.instance), "search": self.search}

    def bound_inputs(self) -> dict[str, Any]:
        """The bound check's inputs (``quantity``, ``stated``, ``instances``, ``side``: the
        keyword arguments of ``fedtheory.claimkit.checks.check_bound``) at the tightest point,
        in exact values: the largest ratio decides the bound on the box. ``ValueError``
        without the exact re-check (``exact=True``): the floats of a deterministic quantity are
        neither exact values nor Monte Carlo samples."""
        if self.exact_ratio is None:
            raise ValueError("bound_inputs() needs the exact re-check (tightest(..., "
                             "exact=True)): the search's floats are not exact values, nor "
                             "samples")
        params = {k: v for k, v in self.instance.items() if k not in ("measured", "stated")}
        return {"quantity": [self.instance["measured"]], "stated": [self.instance["stated"]],
                "instances": [params], "side": self.side}

    def evidence(self, what: str = "the quantity") -> Evidence:
        """The bound check (:func:`fedtheory.claimkit.checks.check_bound`) at the tightest point,
        in exact values (:meth:`bound_inputs`): passed when the largest ratio is at most 1,
        else refuted with that point as the counterexample; ``ratio`` and ``instance`` the
        check's, ``search`` this search's record. The counterexample's ``measured`` and
        ``bound`` are the exact values as text (a report's JSON would show them as floats).
        Needs ``exact=True``.

        >>> from fractions import Fraction as F
        >>> t = tightest(lambda x: x * x, lambda x: x + F(1, 3), {"x": (0.5, 3.0)}, exact=True)
        >>> ev = t.evidence("x^2 <= x + 1/3")
        >>> ev.passed, round(ev.ratio, 6), ev.counterexample
        (False, 2.7, {'x': 3.0, 'measured': '9', 'bound': '10/3'})
        """
        ev = check_bound(**self.bound_inputs(), what=what)
        ev.search = self.search
        if ev.counterexample is not None:
            ev.counterexample = {**ev.counterexample, "measured": str(self.instance["measured"]),
                                 "bound": str(self.instance["stated"])}
        return ev

    def to_dict(self) -> dict[str, Any]:
        """The record of the search (JSON-ready but for exact numbers, shown as strings)."""
        return {"ratio": self.ratio, "exact_ratio": None if self.exact_ratio is None
                else str(self.exact_ratio), "instance": _jsonable(self.instance),
                "side": self.side, "grid_size": self.grid_size, "evaluations": self.evaluations,
                "best_grid": _jsonable(self.best_grid),
                "refined": None if self.refined is None else _jsonable(self.refined)}


def _jsonable(d: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v if isinstance(v, (int, float, str)) else str(v) for k, v in d.items()}


def _fmt_point(p: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in p.items())


def _ratio(num: Any, den: Any) -> Any:
    """num/den with the zero-denominator conventions (exact numbers stay exact)."""
    if den == 0:
        return 1.0 if num == 0 else math.copysign(math.inf, float(num))
    return num / den


def _axes(box: Mapping[str, tuple[Any, Any]], integers: Sequence[str], grid: int
          ) -> dict[str, np.ndarray]:
    axes = {}
    for name, bounds in box.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"box parameter names must be identifiers, got {name!r}")
        try:
            lo, hi = bounds
        except (TypeError, ValueError):
            raise ValueError(f"box[{name!r}] must be (low, high), got {bounds!r}") from None
        if not (np.isfinite(float(lo)) and np.isfinite(float(hi)) and lo <= hi):
            raise ValueError(f"box[{name!r}] must be finite with low <= high, got {bounds!r}")
        if name in integers:
            if int(lo) != lo or int(hi) != hi:
                raise ValueError(f"box[{name!r}] is an integer parameter: its ends must be "
                                 f"integers, got {bounds!r}")
            vals = np.arange(int(lo), int(hi) + 1)
            if vals.size > grid:
                vals = np.unique(np.round(np.linspace(lo, hi, grid)).astype(int))
            axes[name] = vals
        else:
            axes[name] = np.linspace(float(lo), float(hi), grid if hi > lo else 1)
    unknown = set(integers) - set(box)
    if unknown:
        raise ValueError(f"integers names parameters not in the box: {sorted(unknown)}")
    return axes


def tightest(measured: Callable[..., Any], stated: Callable[..., Any],
             box: Mapping[str, tuple[Any, Any]], *, side: str = "upper", grid: int = 9,
             integers: Sequence[str] = (), refine: bool = True, exact: bool = False,
             vectorised: bool = True) -> Tightness:
    r"""Maximise measured/stated (``side="upper"``; stated/measured for ``"lower"``) over
    ``box`` (name -> (low, high)): a grid of ``grid`` points a continuous parameter, local
    refinement (L-BFGS-B, bounded), then, with ``exact``, an exact re-check at the best point
    (see the module's docstring for the math and examples).

    ``measured(**params)`` and ``stated(**params)`` take the parameters by name: arrays of the
    grid's points when ``vectorised`` (returning an array of as many values, or a scalar for a
    bound that does not depend on them), floats (ints for ``integers``) otherwise, and
    ``Fraction`` values in the exact re-check. A bad box, side or grid, and a NaN anywhere, are
    a ``ValueError`` naming it, before any ratio is reported."""
    if side not in _SIDES:
        raise ValueError(f"side must be one of {_SIDES}, got {side!r}")
    if not isinstance(grid, int) or isinstance(grid, bool) or grid < 2:
        raise ValueError(f"grid must be an integer >= 2 (points a parameter), got {grid!r}")
    if not box:
        raise ValueError("box must name at least one parameter")
    integers = tuple(integers)
    axes = _axes(box, integers, grid)
    names = list(axes)
    mesh = [a.ravel() for a in np.meshgrid(*axes.values(), indexing="ij")]
    calls = [0]

    def values(params: dict[str, Any], vector: bool) -> tuple[Any, Any]:
        calls[0] += 1
        out = []
        for what, fn in (("quantity", measured), ("bound", stated)):
            v = fn(**params)
            if vector:
                arr = np.broadcast_to(np.asarray(v, dtype=float), mesh[0].shape)
                bad = np.flatnonzero(np.isnan(arr))
            else:
                bad = [0] if _isnan(v) else []
            if len(bad):
                k = int(bad[0])
                at = {n: (m[k] if vector else params[n]) for n, m in zip(names, mesh,
                                                                           strict=True)}
                raise ValueError(f"the {what} is NaN at {_fmt_point(_plain(at, integers))} "
                                 "(a NaN is never a ratio: restrict the box)")
            out.append(arr if vector else _scalar(v))
        return out[0], out[1]

    def ratio_of(m: Any, s: Any) -> Any:
        return _ratio(m, s) if side == "upper" else _ratio(s, m)

    points: list[dict[str, Any]] = []
    if vectorised:
        m, s = values({n: mesh[j] for j, n in enumerate(names)}, True)
        calls[0] = mesh[0].size
        r = np.array([ratio_of(a, b) for a, b in zip(m, s, strict=True)], dtype=float)
        for k in range(mesh[0].size):
            points.append({**_plain({n: mesh[j][k] for j, n in enumerate(names)}, integers),
                           "measured": float(m[k]), "stated": float(s[k])})
    else:
        rs = []
        for k in range(mesh[0].size):
            p = _plain({n: mesh[j][k] for j, n in enumerate(names)}, integers)
            m1, s1 = values(p, False)
            rs.append(float(ratio_of(m1, s1)))
            points.append({**p, "measured": m1, "stated": s1})
        r = np.array(rs)
    k = int(np.argmax(r))
    best_grid = {n: points[k][n] for n in names}
    best, best_r = dict(points[k]), float(r[k])
    refined = None
    free = [n for n in names if n not in integers and box[n][1] > box[n][0]]
    if refine and free and np.isfinite(best_r):
        best, best_r, refined = _refine(values, ratio_of, best, best_r, free, names, box,
                                        points)
    exact_ratio = None
    if exact:
        exact_ratio, best = _exact(values, ratio_of, best, names, box, integers)
        best_r = float(exact_ratio)
    return Tightness(best_r, best, side, exact_ratio, int(mesh[0].size), calls[0], best_grid,
                     refined, {n: tuple(box[n]) for n in names}, integers, tuple(points))


def _refine(values: Callable[..., Any], ratio_of: Callable[..., Any], best: dict[str, Any],
            best_r: float, free: list[str], names: list[str],
            box: Mapping[str, tuple[Any, Any]], points: list[dict[str, Any]]
            ) -> tuple[dict[str, Any], float, dict[str, Any] | None]:
    """Step 2 of :func:`tightest`: L-BFGS-B on -r over the free parameters from ``best``."""
    from scipy.optimize import minimize

    def at(z: np.ndarray) -> dict[str, Any]:
        p = {n: best[n] for n in names}
        p.update({n: float(v) for n, v in zip(free, z, strict=True)})
        return p

    def neg(z: np.ndarray) -> float:
        m, s = values(at(z), False)
        r = float(ratio_of(float(m), float(s)))
        return -r if np.isfinite(r) else -1e300

    x0 = np.array([best[n] for n in free], dtype=float)
    res = minimize(neg, x0, method="L-BFGS-B",
                   bounds=[(float(box[n][0]), float(box[n][1])) for n in free])
    z = np.clip(res.x, [float(box[n][0]) for n in free], [float(box[n][1]) for n in free])
    r = -neg(z)
    if not r > best_r:
        return best, best_r, None
    p = at(z)
    m, s = values(p, False)
    point = {**p, "measured": float(m), "stated": float(s)}
    points.append(point)
    return point, r, {n: p[n] for n in free}


def _exact(values: Callable[..., Any], ratio_of: Callable[..., Any], best: dict[str, Any],
           names: list[str], box: Mapping[str, tuple[Any, Any]], integers: tuple[str, ...]
           ) -> tuple[Any, dict[str, Any]]:
    """Step 3 of :func:`tightest`: the exact ratio at the best point (its floats' exact
    rationals), or at the nearest simple rationals (denominators up to 10**6, inside the box)
    when their ratio is at least as large (``0.49999999999999994`` is then ``1/2``)."""
    binary = {n: int(best[n]) if n in integers else Fraction(best[n]) for n in names}
    simple = {n: v if n in integers else min(max(v.limit_denominator(10**6),
                                                 Fraction(box[n][0])), Fraction(box[n][1]))
              for n, v in binary.items()}
    found = []
    for params in ([simple, binary] if simple != binary else [binary]):
        m1, s1 = values(params, False)
        found.append((ratio_of(m1, s1), {**params, "measured": m1, "stated": s1}))
    r, point = max(found, key=lambda t: t[0])  # the simple point on a tie (listed first)
    return r, {**{n: float(point[n]) if n not in integers else point[n] for n in names},
               "measured": point["measured"], "stated": point["stated"]}


def _plain(p: Mapping[str, Any], integers: Sequence[str]) -> dict[str, Any]:
    return {k: int(v) if k in integers else float(v) for k, v in p.items()}


def _scalar(v: Any) -> Any:
    """A 0-d or one-element array as its element (a vectorised quantity called at one point)."""
    if isinstance(v, np.ndarray):
        if v.size != 1:
            raise ValueError(f"the quantity at one point must be one value, got shape {v.shape}")
        return v.reshape(()).item() if v.dtype != object else v.ravel()[0]
    return v


def _isnan(v: Any) -> bool:
    try:
        return bool(np.any(np.isnan(np.asarray(v, dtype=float))))
    except (TypeError, ValueError):
        return False

"""Argument checks shared by the library: a ``ValueError`` naming the argument and its value.

>>> positive_real("lr", 0.5)
0.5
>>> positive_real("lr", 0)
Traceback (most recent call last):
...
ValueError: lr must be a positive real number, got 0
>>> integer_at_least("rounds", 0, 0)
0
>>> probabilities("p", [0.5, 1.5])
Traceback (most recent call last):
...
ValueError: p must be in (0, 1], got 1.5 (at index 1)
>>> finite_array("x0", [1.0, float("nan"), 3.0], [(3,)])
Traceback (most recent call last):
...
ValueError: x0 must be finite, but it has 1 NaN entry (at index 1)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "build_registered",
    "finite_array",
    "equal_across",
    "finite_real",
    "integer_at_least",
    "integer_in",
    "nonnegative_array",
    "nonnegative_integer",
    "nonnegative_numbers",
    "nonnegative_real",
    "per_replica",
    "positive_integer",
    "positive_real",
    "positive_reals",
    "probabilities",
    "probability",
    "real_array",
    "stack_replicas",
    "whole_block",
]

#: Indices of non-finite entries named in a message before it is shortened.
_MAX_LISTED = 5


def _float(value: Any) -> float:
    """``float(value)``, or a ``TypeError`` / ``ValueError``; a complex number (whose real part
    numpy's ``float`` would keep, silently dropping the imaginary one) is a ``TypeError``."""
    if isinstance(value, (complex, np.complexfloating)) or (
            isinstance(value, np.ndarray) and np.iscomplexobj(value)):
        raise TypeError("complex")
    return float(value)


def finite_real(name: str, value: Any) -> float:
    """``value`` as a finite float (not complex), or a ValueError naming ``name``.

    >>> finite_real("offset", -2)
    -2.0
    >>> finite_real("offset", 1 + 2j)
    Traceback (most recent call last):
    ...
    ValueError: offset must be a finite real number, got (1+2j)
    """
    try:
        v = _float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite real number, got {value!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return v


def positive_real(name: str, value: Any) -> float:
    """``value`` as a finite float > 0, or a ValueError naming ``name``."""
    try:
        v = _float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive real number, got {value!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a positive real number, got {value!r}")
    return v


def positive_reals(name: str, value: Any) -> float | np.ndarray:
    """``value`` as a finite float > 0, or a read-only 1-D array of such (one per replica),
    or a ``ValueError`` naming ``name``.

    >>> positive_reals("lr", [0.1, 0.2]).tolist(), positive_reals("lr", 0.5)
    ([0.1, 0.2], 0.5)
    """
    if isinstance(value, (list, tuple, np.ndarray)):
        try:
            a = np.array(real_array(name, value))
        except ValueError:
            a = np.array([np.nan])
        if a.ndim != 1 or a.size == 0 or not (np.isfinite(a).all() and (a > 0).all()):
            raise ValueError(f"{name} must be a positive real number or a 1-D array of them "
                             f"(one per replica), got {value!r}")
        a.flags.writeable = False
        return a
    return positive_real(name, value)


def whole_block(start: int, stop: int, replicas: int) -> bool:
    """Whether replicas ``start .. stop - 1`` are all ``replicas`` of a run (the block a
    component with one part per replica returns itself for), or a ``ValueError`` when they
    are no block of it.

    >>> whole_block(0, 4, 4), whole_block(1, 3, 4)
    (True, False)
    """
    if not 0 <= start < stop <= replicas:
        raise ValueError(f"start, stop must satisfy 0 <= start < stop <= {replicas}, "
                         f"got {start}, {stop}")
    return (start, stop) == (0, replicas)


def per_replica(name: str, items: Any, what: str) -> tuple[Any, ...]:
    """``items`` as a tuple, one entry per replica of a run (the parts of a replica stack:
    :class:`~fedtheory.problems.ProblemStack`, :class:`~fedtheory.algorithms.RuleStack`,
    :class:`~fedtheory.participation.ProcessStack`), or a ValueError naming ``name`` when it
    is no non-empty sequence (a string is none).

    >>> per_replica("rules", ["a", "b"], "rules")
    ('a', 'b')
    >>> per_replica("rules", "ab", "rules")
    Traceback (most recent call last):
    ...
    ValueError: rules must be a non-empty sequence of rules, got 'ab'
    """
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence) or len(items) == 0:
        raise ValueError(f"{name} must be a non-empty sequence of {what}, got {items!r}")
    return tuple(items)


def equal_across(name: str, items: Sequence[Any], *attrs: str) -> tuple[int, ...]:
    """The common integer values of the attributes ``attrs`` of the entries of ``items`` (the
    parts of a replica stack), or a ValueError naming ``name`` and the first entry that
    differs from ``items[0]``.

    >>> from types import SimpleNamespace as NS
    >>> equal_across("problems", [NS(n=3, d=2), NS(n=3, d=2)], "n", "d")
    (3, 2)
    >>> equal_across("processes", [NS(n=3), NS(n=4)], "n")
    Traceback (most recent call last):
    ...
    ValueError: processes must have equal n: processes[0] has n = 3, processes[1] has n = 4
    """
    values = [tuple(int(getattr(item, a)) for a in attrs) for item in items]
    bad = [k for k, v in enumerate(values) if v != values[0]]
    if bad:
        def show(v: tuple[int, ...]) -> str:
            return str(v[0]) if len(v) == 1 else "(" + ", ".join(map(str, v)) + ")"
        names = attrs[0] if len(attrs) == 1 else "(" + ", ".join(attrs) + ")"
        raise ValueError(f"{name} must have equal {' and '.join(attrs)}: {name}[0] has "
                         f"{names} = {show(values[0])}, {name}[{bad[0]}] has {names} = "
                         f"{show(values[bad[0]])}")
    return values[0]


def stack_replicas(replicas: Any, expected: int, part: str) -> None:
    """A ValueError unless a run's ``replicas`` are a replica stack's ``expected`` (one
    ``part`` per replica).

    >>> stack_replicas(3, 2, "rule")
    Traceback (most recent call last):
    ...
    ValueError: replicas must be the stack's 2 (one rule per replica; see for_replicas), got 3
    """
    if replicas != expected:
        raise ValueError(f"replicas must be the stack's {expected} (one {part} per replica; "
                         f"see for_replicas), got {replicas!r}")


def nonnegative_real(name: str, value: Any) -> float:
    """``value`` as a finite float >= 0, or a ValueError naming ``name``."""
    try:
        v = _float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a non-negative real number, got {value!r}") from None
    if not (math.isfinite(v) and v >= 0):
        raise ValueError(f"{name} must be a non-negative real number, got {value!r}")
    return v


def _integer(name: str, value: Any, minimum: int, what: str) -> int:
    """``value`` as an int >= ``minimum`` (bools rejected), or ``ValueError("{name} must be
    {what}, got {value!r}")``: the one integer check behind the three below."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return int(value)


def integer_at_least(name: str, value: Any, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum`` (bools rejected), or a ValueError naming ``name``."""
    return _integer(name, value, minimum, f"an integer >= {minimum}")


def positive_integer(name: str, value: Any) -> int:
    """``value`` as an int >= 1 (bools rejected), or a ValueError naming ``name``.

    >>> positive_integer("rounds", 3)
    3
    >>> positive_integer("rounds", True)
    Traceback (most recent call last):
    ...
    ValueError: rounds must be a positive integer, got True
    """
    return _integer(name, value, 1, "a positive integer")


def nonnegative_integer(name: str, value: Any) -> int:
    """``value`` as an int >= 0 (bools rejected), or a ValueError naming ``name``.

    >>> nonnegative_integer("seed", 0)
    0
    >>> nonnegative_integer("seed", -1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be a non-negative integer, got -1
    """
    return _integer(name, value, 0, "a non-negative integer")


def integer_in(name: str, value: Any, low: int, high: int, what: str | None = None) -> int:
    """``value`` as an int in ``[low, high]`` (bools rejected), or ``ValueError("{name} must be
    {what}, got {value!r}")``, ``what`` by default ``"an integer in [low, high]"``.

    >>> integer_in("b", 2, 1, 3)
    2
    >>> integer_in("b", 4, 1, 3, "an integer in [1, n=3]")
    Traceback (most recent call last):
    ...
    ValueError: b must be an integer in [1, n=3], got 4
    """
    what = f"an integer in [{low}, {high}]" if what is None else what
    v = _integer(name, value, low, what)
    if v > high:
        raise ValueError(f"{name} must be {what}, got {value!r}")
    return v


def build_registered(registry: Any, name: Any, params: dict[str, Any], what: str,
                     short: str) -> Any:
    """``registry[name](**params)``, or a ValueError naming ``what`` (an unknown name: the
    registered ones are listed) or the ``short`` kind and the parameters it refused.

    >>> build_registered({"pair": tuple}, "pair", {}, "thing", "thing")
    ()
    >>> build_registered({"pair": tuple}, "trio", {}, "thing", "thing")
    Traceback (most recent call last):
    ...
    ValueError: thing must be one of ['pair'], got 'trio'
    """
    if name not in registry:
        raise ValueError(f"{what} must be one of {sorted(registry)}, got {name!r}")
    try:
        return registry[name](**params)
    except TypeError as exc:
        raise ValueError(f"bad parameters {params!r} for {short} {name!r}: {exc}") from None


def _where(mask: np.ndarray) -> str:
    """The indices where ``mask`` holds, for a message: ``1``, ``(0, 2)``, shortened if many."""
    idx = np.argwhere(mask)
    items = [str(int(i[0])) if mask.ndim == 1 else str(tuple(int(k) for k in i))
             for i in idx[:_MAX_LISTED]]
    more = f", ... ({len(idx)} in all)" if len(idx) > _MAX_LISTED else ""
    return ("index " if len(idx) == 1 else "indices ") + ", ".join(items) + more


def _short(value: Any) -> str:
    """``repr(value)`` for a message, cut to a line (an array of a million entries is not
    printed)."""
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def real_array(name: str, value: Any) -> np.ndarray:
    """``value`` as a float array, or a ValueError naming ``name`` when it is not numbers:
    complex (numpy's cast would silently drop the imaginary part), strings, or anything
    ``float`` refuses. Entries may be non-finite (see :func:`finite_array`).

    >>> real_array("hessians", [1, 2]).dtype
    dtype('float64')
    >>> real_array("A", np.array([1.0, 2j]))
    Traceback (most recent call last):
    ...
    ValueError: A must be an array of real numbers, got complex values: array([1.+0.j, 0.+2.j])
    """
    raw = value if isinstance(value, np.ndarray) else None
    if raw is None:
        try:
            raw = np.asarray(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be an array of real numbers, got "
                             f"{_short(value)}") from None
    if raw.dtype.kind == "c":
        raise ValueError(f"{name} must be an array of real numbers, got complex values: "
                         f"{_short(value)}")
    if raw.dtype.kind in "USVMm":
        raise ValueError(f"{name} must be an array of real numbers, got {raw.dtype} values: "
                         f"{_short(value)}")
    try:
        return np.asarray(raw, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an array of real numbers, got "
                         f"{_short(value)}") from None


def nonnegative_array(name: str, value: Any, ndims: Sequence[int] = (1,),
                      allow_empty: bool = False) -> np.ndarray:
    """``value`` as a float array of finite entries >= 0 with one of the numbers of axes
    ``ndims``, or a ValueError naming ``name`` and the first bad entry (where it is).

    >>> nonnegative_array("norms", [1.0, 0.0])
    array([1., 0.])
    >>> nonnegative_array("norms", [1.0, -2.0])
    Traceback (most recent call last):
    ...
    ValueError: norms must be finite and >= 0, got -2.0 (at index 1)
    """
    arr = real_array(name, value)
    if arr.ndim not in tuple(ndims):
        raise ValueError(f"{name} must have {' or '.join(str(k) for k in ndims)} axes, got "
                         f"shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must be non-empty, got shape {arr.shape}")
    bad = ~(np.isfinite(arr) & (arr >= 0))
    if bad.any():
        first = float(arr[bad].ravel()[0])
        raise ValueError(f"{name} must be finite and >= 0, got {first!r} (at {_where(bad)})")
    return arr


def nonnegative_numbers(name: str, values: Any) -> list[Any]:
    """``values`` as a non-empty list of finite real numbers >= 0 of any exact or float type
    (int, :class:`fractions.Fraction`, float, numpy reals, sympy rationals), kept as given;
    or a ValueError naming ``name`` and the first bad entry (complex, NaN, infinite, negative,
    not a number).

    >>> from fractions import Fraction
    >>> nonnegative_numbers("norms", [Fraction(1, 3), 2])
    [Fraction(1, 3), 2]
    >>> nonnegative_numbers("norms", [1.0, float("nan")])
    Traceback (most recent call last):
    ...
    ValueError: norms must be finite real numbers >= 0, got nan (at index 1)
    """
    try:
        items = list(values)
    except TypeError:
        raise ValueError(f"{name} must be a sequence of real numbers >= 0, got "
                         f"{_short(values)}") from None
    if not items:
        raise ValueError(f"{name} must be non-empty, got {_short(values)}")
    for i, v in enumerate(items):
        ok = not isinstance(v, (bool, np.bool_, complex, np.complexfloating, str, bytes))
        if ok:
            try:
                ok = bool(v >= 0) and math.isfinite(_float(v))
            except OverflowError:  # an exact number beyond the float range: finite
                ok = bool(v >= 0)
            except (TypeError, ValueError):
                ok = False
        if not ok:
            raise ValueError(f"{name} must be finite real numbers >= 0, got {v!r} "
                             f"(at index {i})")
    return items


def finite_array(name: str, value: Any, shapes: Sequence[tuple[int, ...]],
                 shape_text: str | None = None) -> np.ndarray:
    """``value`` as a float array of one of the ``shapes`` with finite entries only.

    Otherwise a ValueError naming ``name``: not numbers; the wrong shape (described by
    ``shape_text``, default the shapes themselves); or NaN / infinite entries, counted and
    located (their indices, the first few).

    >>> finite_array("x0", [[0.0, 1.0], [float("inf"), float("-inf")]], [(2, 2)])
    Traceback (most recent call last):
    ...
    ValueError: x0 must be finite, but it has 2 infinite entries (at indices (1, 0), (1, 1))
    >>> finite_array("x0", [1.0, 2.0], [(3,)])
    Traceback (most recent call last):
    ...
    ValueError: x0 must be finite with shape (3,), got shape (2,)
    """
    arr = real_array(name, value)
    if arr.shape not in [tuple(s) for s in shapes]:
        text = shape_text or " or ".join(str(tuple(s)) for s in shapes)
        raise ValueError(f"{name} must be finite with shape {text}, got shape {arr.shape}")
    finite = np.isfinite(arr)
    if not finite.all():
        parts = []
        for label, mask in (("NaN", np.isnan(arr)), ("infinite", np.isinf(arr))):
            count = int(mask.sum())
            if count:
                plural = "entry" if count == 1 else "entries"
                parts.append(f"{count} {label} {plural} (at {_where(mask)})")
        raise ValueError(f"{name} must be finite, but it has {' and '.join(parts)}")
    return arr


def probability(name: str, value: Any) -> float:
    """``value`` as a float in :math:`(0, 1]`, or a ValueError naming ``name``.

    >>> probability("p", 0.1)
    0.1
    >>> probability("p", 0)
    Traceback (most recent call last):
    ...
    ValueError: p must be in (0, 1], got 0
    """
    try:
        v = _float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number in (0, 1], got {value!r}") from None
    if not (math.isfinite(v) and 0.0 < v <= 1.0):
        raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    return v


def probabilities(name: str, value: Any, n: int | None = None, *,
                  shape: tuple[int, ...] | None = None, allow_zero: bool = False) -> np.ndarray:
    r"""``value`` as a float array of probabilities, or a ValueError naming ``name``.

    Entries must be finite and in :math:`(0, 1]` (in :math:`[0, 1]` with ``allow_zero``: a
    client that is never sampled). Without ``shape``: a non-empty 1-D array, of ``n`` entries
    when ``n`` is given, or a scalar broadcast to ``n`` entries. With ``shape``: exactly that
    shape. The message names the first bad entry and where it is.

    >>> probabilities("p", 0.5, 3)
    array([0.5, 0.5, 0.5])
    >>> probabilities("p", [0.0, 1.0], allow_zero=True)
    array([0., 1.])
    """
    arr = real_array(name, value)
    if shape is not None:
        if arr.shape != tuple(shape):
            raise ValueError(f"{name} must have shape {tuple(shape)}, got shape {arr.shape}")
    else:
        if arr.ndim == 0:
            if n is None:
                raise ValueError(f"n must be given when {name} is a scalar, got {name}={value!r}")
            arr = np.full(integer_at_least("n", n), float(arr))
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"{name} must be a non-empty 1-D array (or a scalar with n), got "
                             f"shape {arr.shape}")
        if n is not None and arr.shape[0] != n:
            raise ValueError(f"{name} must have n={n} entries, got {arr.shape[0]}")
    low_ok = arr >= 0.0 if allow_zero else arr > 0.0
    bad = ~(np.isfinite(arr) & low_ok & (arr <= 1.0))
    if bad.any():
        interval = "[0, 1]" if allow_zero else "(0, 1]"
        first = float(arr[bad].ravel()[0])
        raise ValueError(f"{name} must be in {interval}, got {first!r} (at {_where(bad)})")
    return arr

"""Exact rational linear algebra for the certificates: a PSD test, a linear solve, rounding.

Everything here works on :class:`fractions.Fraction` entries (lists of lists), so that a
certificate accepted here is a proof, not a floating-point opinion.

>>> from fractions import Fraction as Fr
>>> is_psd([[Fr(2), Fr(1)], [Fr(1), Fr(2)]]), is_psd([[Fr(1), Fr(2)], [Fr(2), Fr(1)]])
(True, False)
>>> is_psd([[Fr(0), Fr(0)], [Fr(0), Fr(1)]])
True
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

__all__ = ["is_psd", "rationalize", "solve_exact"]

Matrix = list[list[Fraction]]


def is_psd(S: Sequence[Sequence[Fraction]]) -> bool:
    """Whether the symmetric rational matrix ``S`` is positive semidefinite, exactly.

    Symmetric Gaussian elimination (an :math:`LDL^T` factorisation with diagonal pivots): a
    negative pivot, or a zero pivot whose row is not zero, means an indefinite matrix.

    .. math::

        S \\succeq 0 \\iff S = L D L^\\top,\\ D \\ge 0.
    """
    A = [[Fraction(v) for v in row] for row in S]
    n = len(A)
    if any(len(row) != n for row in A):
        raise ValueError(f"S must be square, got rows of lengths {[len(r) for r in A]}")
    for i in range(n):
        for j in range(i + 1, n):
            if A[i][j] != A[j][i]:
                raise ValueError(f"S must be symmetric, S[{i}][{j}] = {A[i][j]} != "
                                 f"S[{j}][{i}] = {A[j][i]}")
    for k in range(n):
        piv = A[k][k]
        if piv < 0:
            return False
        if piv == 0:
            if any(A[k][j] != 0 for j in range(k + 1, n)):
                return False
            continue
        for i in range(k + 1, n):
            if A[i][k] == 0:
                continue
            r = A[i][k] / piv
            for j in range(k + 1, n):
                A[i][j] -= r * A[k][j]
    return True


def solve_exact(A: Sequence[Sequence[Fraction]], b: Sequence[Fraction]
                ) -> list[Fraction] | None:
    """One exact solution ``x`` of ``A x = b`` (free variables set to 0), or None when the
    system is inconsistent (Gauss-Jordan elimination in rationals)."""
    rows = [[Fraction(v) for v in row] + [Fraction(bi)] for row, bi in zip(A, b, strict=True)]
    m = len(rows)
    ncol = len(rows[0]) - 1 if rows else 0
    pivots: list[int] = []
    r = 0
    for col in range(ncol):
        p = next((i for i in range(r, m) if rows[i][col] != 0), None)
        if p is None:
            continue
        rows[r], rows[p] = rows[p], rows[r]
        pv = rows[r][col]
        rows[r] = [v / pv for v in rows[r]]
        for i in range(m):
            if i != r and rows[i][col] != 0:
                f = rows[i][col]
                rows[i] = [a - f * c for a, c in zip(rows[i], rows[r], strict=True)]
        pivots.append(col)
        r += 1
        if r == m:
            break
    if any(all(v == 0 for v in row[:-1]) and row[-1] != 0 for row in rows):
        return None
    x = [Fraction(0)] * ncol
    for i, col in enumerate(pivots):
        x[col] = rows[i][-1]
    return x


def rationalize(x: float | np.ndarray, max_den: int) -> Fraction | list[Fraction]:
    """The nearest fraction(s) with denominator at most ``max_den``.

    >>> rationalize(0.33333333, 10)
    Fraction(1, 3)
    """
    if max_den < 1:
        raise ValueError(f"max_den must be >= 1, got {max_den}")
    if np.ndim(x) == 0:
        return Fraction(float(x)).limit_denominator(max_den)
    return [Fraction(float(v)).limit_denominator(max_den) for v in np.ravel(x)]

"""Certificates as a report carries them (hostile input), read and checked: fractions, vectors
and matrices of bounded size checked before any arithmetic, and the one-step certificates' two sides
(:func:`_upper`: rational multipliers; :func:`_lower`: a rational instance) checked exactly
against a rebuilt PEP. Used by :mod:`~.recheck` and :mod:`~.lyapunov` (rate certificates).

(Formerly ``fedtheory.certify.checks``, a name that read as the claims' statistics-to-evidence
step, :mod:`fedtheory.claimkit.checks`; the old module is a deprecated shim.)
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from .pep import Pep

__all__ = ["MAX_DIGITS", "MAX_DIM", "CertificateError"]

#: The longest fraction string read (numerator, slash and denominator).
MAX_DIGITS = 4000
#: The most columns of a factor ``V`` or of an explicit quadratic's Hessian.
MAX_DIM = 64
_FRACTION = re.compile(r"-?[0-9]+(/[0-9]+)?")


class CertificateError(ValueError):
    """A certificate that is malformed, or proves something other than its report says."""


def _frac(x: Any, where: str) -> Fraction:
    if not isinstance(x, str) or len(x) > MAX_DIGITS or not _FRACTION.fullmatch(x):
        raise CertificateError(f"{where}: expected a fraction string of at most {MAX_DIGITS} "
                               f"characters, got {type(x).__name__}")
    v = Fraction(x)
    return v


def _vector(x: Any, size: int | None, where: str) -> list[Fraction]:
    if not isinstance(x, list) or (size is not None and len(x) != size) or len(x) > 10**4:
        raise CertificateError(f"{where}: expected a list of {size} fractions")
    return [_frac(v, f"{where}[{k}]") for k, v in enumerate(x)]


def _matrix(x: Any, rows: int, cols: int | None, where: str) -> list[list[Fraction]]:
    if not isinstance(x, list) or len(x) != rows:
        raise CertificateError(f"{where}: expected {rows} rows")
    if cols is None:
        first = x[0] if x else []
        cols = len(first) if isinstance(first, list) else -1
        if not 1 <= cols <= MAX_DIM:
            raise CertificateError(f"{where}: rows must have 1 to {MAX_DIM} entries")
    return [_vector(row, cols, f"{where}[{k}]") for k, row in enumerate(x)]


def _lower(pep: Pep, low: Any) -> tuple[Fraction, str]:
    """The value the lower certificate proves, and what was checked."""
    if not isinstance(low, dict):
        raise CertificateError("certificate.lower: expected an object")
    F = _vector(low.get("values"), pep.n_val, "certificate.lower.values")
    target, what = pep, ""
    if "moduli" in low:
        try:
            target = pep.lifted(_vector(low["moduli"], None, "certificate.lower.moduli"))
        except ValueError as exc:
            raise CertificateError(f"certificate.lower.moduli: {exc}") from None
        what = "the lifted subclass's "
    elif pep.interpolation != "exact" and "functions" not in low:
        raise CertificateError("certificate.lower: the class's interpolation is only "
                               "necessary; a lower certificate needs explicit functions")
    if "matrix" in low:
        G = _matrix(low["matrix"], pep.n_vec, pep.n_vec, "certificate.lower.matrix")
        if any(G[i][j] != G[j][i] for i in range(len(G)) for j in range(i)):
            raise CertificateError("certificate.lower.matrix: not symmetric")
        val = target.check_gram(G, F)
        what += "Gram matrix PSD exactly and every constraint"
    elif "vectors" in low:
        V = _matrix(low["vectors"], pep.n_vec, None, "certificate.lower.vectors")
        if "functions" in low and "moduli" not in low:
            fns = low["functions"]
            if not isinstance(fns, list) or len(fns) != len(pep.functions):
                raise CertificateError(f"certificate.lower.functions: expected "
                                       f"{len(pep.functions)} quadratics")
            r = len(V[0])
            parsed = []
            for k, f in enumerate(fns):
                if not isinstance(f, dict):
                    raise CertificateError(f"certificate.lower.functions[{k}]: an object")
                w = f"certificate.lower.functions[{k}]"
                parsed.append({"hessian": _matrix(f.get("hessian"), r, r, w + ".hessian"),
                               "linear": _vector(f.get("linear"), r, w + ".linear"),
                               "constant": _frac(f.get("constant"), w + ".constant")})
            val = pep.check_witness(V, F, parsed)
            what += "explicit quadratics in the class, their gradients and values, and " \
                    "every constraint"
        else:
            val = target.check_primal(V, F)
            what += "vectors (G = V V^T) and every constraint"
    else:
        raise CertificateError("certificate.lower: expected a 'matrix' or 'vectors'")
    if val is None:
        raise CertificateError(f"certificate.lower: fails ({what} checked)")
    return val, what


def _upper(pep: Pep, up: Any) -> tuple[Fraction, str]:
    if not isinstance(up, dict) or not isinstance(up.get("multipliers"), list):
        raise CertificateError("certificate.upper: expected multipliers")
    m = len(pep.all_constraints())
    lam = [Fraction(0)] * m
    for k, item in enumerate(up["multipliers"]):
        if (not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], int)
                or isinstance(item[0], bool) or not 0 <= item[0] < m):
            raise CertificateError(f"certificate.upper.multipliers[{k}]: expected "
                                   f"[constraint index < {m}, fraction]")
        lam[item[0]] = _frac(item[1], f"certificate.upper.multipliers[{k}]")
    bound = pep.check_dual(lam)
    if bound is None:
        raise CertificateError("certificate.upper: fails (multipliers >= 0, values "
                               "cancelling, S PSD checked)")
    used = sum(1 for v in lam if v)
    return bound, (f"{used} multipliers >= 0 of {m} constraints, the function values "
                   "cancelling, S PSD exactly")


def _short(x: Any, limit: int = 40) -> str:
    """A value from the report, shortened, for an error message (the caller escapes)."""
    s = repr(x)
    return s if len(s) <= limit else s[:limit - 3] + "..."

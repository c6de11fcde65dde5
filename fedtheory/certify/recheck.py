"""Re-check a report's certificates in exact arithmetic, without a solver.

A certified instance of a report (``verify --certify``) carries its ``certificate``
(:func:`~.onestep.certify_instance`): the rational multipliers of the upper bound and the
rational instance of the lower one. The report is hostile input, so nothing in it is
trusted but the certificate itself, and that only after its shape is checked:

* the problem is **rebuilt from the claim**, never read from the report: the instance's
  parameters must be one of the claim's own grid rows (quick or full preset, or beyond the
  stated condition), so their sizes are the toolkit's;
* every fraction is a string of at most :data:`MAX_DIGITS` characters of the form
  ``-p/q``; every matrix has the rebuilt problem's size (at most :data:`MAX_DIM` columns
  for a factor or an explicit quadratic); the multipliers index existing constraints;
* then the upper certificate (values cancel, :math:`S \\succeq 0`, the bound) and the lower
  one (a Gram matrix checked PSD where interpolation is exact, the lifted subclass's Gram
  matrix, or explicit quadratics checked in the class) are checked exactly
  (:meth:`~.pep.Pep.check_dual`, :meth:`~.pep.Pep.check_gram`,
  :meth:`~.pep.Pep.check_witness`), and the reported bounds, status and stated side must be
  the ones they prove.

Other kinds of certificate (a certificate's ``kind``; ``"pep"`` here) register a checker
in :data:`CHECKERS`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from .onestep import OneStep, _fmt
from .pep import Pep

__all__ = ["CHECKERS", "MAX_DIGITS", "MAX_DIM", "CertificateError", "recheck_row"]

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


def _row_params(step: OneStep, params: Any) -> dict[str, Any] | None:
    """The claim's own grid row whose text is ``params`` (None if there is none)."""
    grids = [step.grid(True), step.grid(False)]
    if step.beyond is not None:
        grids += [step.beyond(True), step.beyond(False)]
    for grid in grids:
        for row in grid:
            if _fmt(row) == params:
                return row
    return None


def recheck_row(step: OneStep, row: Any) -> dict[str, Any]:
    """Re-check one certified instance of a report against the claim's ``step``: a dict
    with ``params`` (the claim's own row, as text), ``status`` (``"ok"`` or ``"failed"``)
    and ``checked`` (what was checked, or why it failed). Raises nothing for a bad row."""
    try:
        if not isinstance(row, dict) or not isinstance(row.get("certificate"), dict):
            raise CertificateError("no certificate (an instance certified before "
                                   "certificates were written)")
        params = _row_params(step, row.get("params"))
        if params is None:
            raise CertificateError("its parameters are not one of the claim's instances")
        cert = row["certificate"]
        kind = cert.get("kind", "pep")
        if kind not in CHECKERS:
            raise CertificateError(f"unknown certificate kind (known: {sorted(CHECKERS)})")
        return {"params": _fmt(params), **CHECKERS[kind](step, params, row)}
    except CertificateError as exc:
        shown = row.get("params") if isinstance(row, dict) else None
        return {"params": shown if isinstance(shown, dict) else None, "status": "failed",
                "checked": str(exc)}


def _check_pep(step: OneStep, params: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    built = step.build(params)
    pep = built.pep
    cert = row["certificate"]
    if cert.get("gram_size") != pep.n_vec or cert.get("constraints") != len(
            pep.all_constraints()):
        raise CertificateError("the certificate is for another problem (sizes differ from "
                               "the rebuilt PEP)")
    if row.get("stated") != str(built.stated):
        raise CertificateError(f"stated side: the report says {row.get('stated')!r}, the "
                               f"claim {built.stated}")
    done = []
    upper = lower = None
    if "upper" in cert:
        upper, what = _upper(pep, cert["upper"])
        if row.get("upper") != str(upper) or cert["upper"].get("bound") != str(upper):
            raise CertificateError(f"upper: the multipliers prove {upper}, the report says "
                                   f"{row.get('upper')!r}")
        done.append(f"upper {upper}: {what}")
    elif row.get("upper") is not None:
        raise CertificateError("upper: the report gives a bound without its multipliers")
    if "lower" in cert:
        lower, what = _lower(pep, cert["lower"])
        if row.get("lower") != str(lower) or cert["lower"].get("value") != str(lower):
            raise CertificateError(f"lower: the instance attains {lower}, the report says "
                                   f"{row.get('lower')!r}")
        done.append(f"lower {lower}: {what}")
    elif row.get("lower") is not None:
        raise CertificateError("lower: the report gives a value without its instance")
    if lower is not None and upper is not None:
        status = "exact" if lower == upper else "sandwich"
    else:
        status = "upper bound only" if upper is not None else (
            "lower bound only" if lower is not None else "unverified")
    if row.get("status") != status:
        raise CertificateError(f"status: the certificates give {status!r}, the report says "
                               f"{row.get('status')!r}")
    ce = row.get("counterexample")
    if ce is not None:
        if lower is None or not lower > built.stated or not isinstance(ce, dict) or \
                ce.get("value") != str(lower):
            raise CertificateError("counterexample: not the lower certificate above the "
                                   "stated side")
        done.append(f"refutes: {lower} > stated {built.stated}")
    return {"status": "ok", "checked": f"{status}; " + "; ".join(done)}


#: ``kind -> checker(step, params, row) -> {"status": "ok", "checked": ...}`` (raising
#: :class:`CertificateError`): the certificate kinds ``fedtheory recheck`` knows.
CHECKERS: dict[str, Callable[[OneStep, dict[str, Any], dict[str, Any]], dict[str, Any]]] = {
    "pep": _check_pep}

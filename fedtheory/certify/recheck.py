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

A **rate** certificate (kind ``"lyapunov"``, :func:`~.lyapunov.certify_rate_instance`) is
re-checked the same way (:func:`recheck_rate_row`): its parameters one of the claim's
:class:`~.lyapunov.RateStep` grid rows, the round's PEP rebuilt, the potential's terms and
the stated rate, constant and potential read off the claim (never the report); then the
multipliers certify exactly that :math:`\\mathbb E V_{t+1} - \\rho V_t (+ \\pi_t) \\le c`
for the reported rate, potential and constant, the instance attains ``constant_lower``,
the same holds for the stated potential's constant where the report gives it, and
``stated_certified`` is what these prove; the lower certificate on the rate is recomputed
from the claim's code (an exact check on a linear instance, no SDP).

A **proof for every n** (an entry's ``derived``, :func:`~.symmetric.prove`) is not a
certificate that can be read from a report: it is a sympy proof over rational functions of
n, p, ... . :func:`recheck_proofs` re-derives it from the claim's own code (exact, no
solver: the claim's :attr:`~.onestep.OneStep.prove`) and compares the report's result
with it, so its line says "re-derived".

Other kinds of certificate (a certificate's ``kind``: ``"pep"``, ``"lyapunov"``) register
a checker in :data:`CHECKERS`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from .onestep import OneStep, _fmt
from .pep import Pep

__all__ = ["CHECKERS", "MAX_DIGITS", "MAX_DIM", "CertificateError", "recheck_proofs",
           "recheck_rate_row", "recheck_row"]

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


def _rate_fmt(params: dict[str, Any]) -> dict[str, str]:
    """A rate instance's parameters as :func:`~.lyapunov.certify_rate_instance` writes
    them."""
    return {k: str(v) for k, v in params.items()}


def _row_params(step: Any, params: Any) -> dict[str, Any] | None:
    """The claim's own grid row whose text is ``params`` (None if there is none)."""
    fmt = _fmt if isinstance(step, OneStep) else _rate_fmt
    grids = [step.grid(True), step.grid(False)]
    if getattr(step, "beyond", None) is not None:
        grids += [step.beyond(True), step.beyond(False)]
    for grid in grids:
        for row in grid:
            if fmt(row) == params:
                return row
    return None


def recheck_row(step: Any, row: Any, default_kind: str = "pep") -> dict[str, Any]:
    """Re-check one certified instance of a report against the claim's ``step`` (its
    :class:`~.onestep.OneStep`, or its :class:`~.lyapunov.RateStep` for a rate
    certificate): a dict with ``params`` (the claim's own row, as text), ``status``
    (``"ok"`` or ``"failed"``) and ``checked`` (what was checked, or why it failed).
    Raises nothing for a bad row."""
    try:
        if not isinstance(row, dict) or not isinstance(row.get("certificate"), dict):
            raise CertificateError("no certificate (an instance certified before "
                                   "certificates were written)")
        params = _row_params(step, row.get("params"))
        if params is None:
            raise CertificateError("its parameters are not one of the claim's instances")
        cert = row["certificate"]
        kind = cert.get("kind", default_kind)
        if not isinstance(kind, str) or kind not in CHECKERS:
            raise CertificateError(f"unknown certificate kind (known: {sorted(CHECKERS)})")
        fmt = _fmt if isinstance(step, OneStep) else _rate_fmt
        return {"params": fmt(params), **CHECKERS[kind](step, params, row)}
    except CertificateError as exc:
        shown = row.get("params") if isinstance(row, dict) else None
        return {"params": shown if isinstance(shown, dict) else None, "status": "failed",
                "checked": str(exc)}


def _check_pep(step: Any, params: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(step, OneStep):
        raise CertificateError("a one-step certificate where the claim describes a rate")
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


def _rate_multipliers(pep: Pep, items: Any, where: str) -> list[Fraction]:
    """The multipliers ``[[index, label, fraction], ...]`` of a rate certificate, each index
    a constraint of the rebuilt PEP with that label, none twice."""
    cons = pep.all_constraints()
    m = len(cons)
    if not isinstance(items, list) or len(items) > m:
        raise CertificateError(f"{where}: expected a list of at most {m} multipliers")
    lam = [Fraction(0)] * m
    seen: set[int] = set()
    for k, item in enumerate(items):
        if (not isinstance(item, list) or len(item) != 3 or not isinstance(item[0], int)
                or isinstance(item[0], bool) or not 0 <= item[0] < m or item[0] in seen
                or item[1] != cons[item[0]][1]):
            raise CertificateError(f"{where}[{k}]: expected [constraint index < {m} (once), "
                                   "its label in the rebuilt PEP, fraction]")
        seen.add(item[0])
        lam[item[0]] = _frac(item[2], f"{where}[{k}]")
    return lam


def _rate_constant(built: Any, rho: Fraction, v: list[Fraction], cert: Any, where: str
                   ) -> tuple[Fraction, Fraction | None, str]:
    """The constant the certificate ``cert`` proves for the potential ``v`` at ``rho`` (its
    multipliers), and the value its instance attains (None without one)."""
    from .lyapunov import _objective

    if not isinstance(cert, dict):
        raise CertificateError(f"{where}: expected an object")
    pep = built.pep
    pep.maximize(_objective(built, rho, v, built.progress is None))
    lam = _rate_multipliers(pep, cert.get("multipliers"), f"{where}.multipliers")
    bound = pep.check_dual(lam)
    if bound is None:
        raise CertificateError(f"{where}: fails (multipliers >= 0, values cancelling, S PSD "
                               "checked)")
    used = sum(1 for x in lam if x)
    what = f"{used} multipliers >= 0, values cancelling, S PSD exactly"
    low = None
    if "lower" in cert:
        low, lwhat = _lower(pep, cert["lower"])
        what += f"; instance: {lwhat}"
    return bound, low, what


def _check_rate(step: Any, params: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """A rate certificate (kind ``"lyapunov"``; module docstring)."""
    from .lyapunov import RateStep

    if not isinstance(step, RateStep):
        raise CertificateError("a rate certificate where the claim describes no rate")
    built = step.build(params)
    pep, cert = built.pep, row["certificate"]
    names = [name for name, _ in built.terms]
    if cert.get("gram_size") != pep.n_vec or cert.get("constraints") != len(
            pep.all_constraints()) or row.get("terms") != names:
        raise CertificateError("the certificate is for another round (sizes or potential "
                               "terms differ from the rebuilt PEP)")
    if row.get("status") != "certified":
        raise CertificateError(f"status {_short(row.get('status'))} with a certificate")
    stated = {k: [str(x) for x in v] if isinstance(v, (list, tuple)) else str(v)
              for k, v in built.stated.items()}
    if row.get("stated") != stated:
        raise CertificateError(f"stated: the report's differ from the claim's {stated}")
    linear = built.progress is None
    rho = _frac(row.get("rho"), "rho")
    if (linear and not 0 < rho <= 1) or (not linear and rho != 1):
        raise CertificateError(f"rho {rho}: a linear rate in (0, 1], a telescoping one 1")
    pot = row.get("potential")
    if not isinstance(pot, dict) or not set(pot) <= set(names):
        raise CertificateError(f"potential: expected coefficients of the terms {names}")
    v = [_frac(pot[n], f"potential[{n!r}]") if n in pot else Fraction(0) for n in names]
    if any(x < 0 for x in v) or (linear and v[built.anchor] != 1):
        raise CertificateError("potential: coefficients >= 0 (the anchor's 1 for a linear "
                               "rate)")
    if row.get("gamma") != (None if linear else "1"):
        raise CertificateError("gamma: 1 for a telescoping rate, none for a linear one")
    up, low, what = _rate_constant(built, rho, v, cert, "certificate")
    if row.get("constant") != str(up):
        raise CertificateError(f"constant: the multipliers prove {up}, the report says "
                               f"{_short(row.get('constant'))}")
    if row.get("constant_lower") != (None if low is None else str(low)) or \
            row.get("constant_tight") is not (low is not None and low == up):
        raise CertificateError(f"constant_lower: the instance attains {low}, the report "
                               f"says {_short(row.get('constant_lower'))}")
    done = [f"rho {rho}, constant {up}" + ("" if low is None else f" (attained: {low})")
            + f": {what}"]
    proven: bool | None = None
    if linear and "rho" in built.stated:
        proven = rho <= Fraction(built.stated["rho"])
    sv = built.stated.get("potential")
    if sv is not None and not linear:
        at = row.get("at_stated_potential")
        if not isinstance(at, dict) or at.get("potential") != [str(x) for x in sv]:
            raise CertificateError("at_stated_potential: missing, or not the claim's "
                                   "stated potential")
        su = sl = None
        if at.get("constant") is not None:
            su, sl, _ = _rate_constant(built, rho, [Fraction(x) for x in sv],
                                       at.get("certificate"), "at_stated_potential.certificate")
        if at.get("constant") != (None if su is None else str(su)) or \
                at.get("constant_lower") != (None if sl is None else str(sl)):
            raise CertificateError("at_stated_potential: its constants are not the ones its "
                                   "certificate proves")
        sc = built.stated.get("constant")
        if sc is not None and su is not None:
            sc = Fraction(sc)
            proven = True if su <= sc else (False if sl is not None and sl > sc else None)
        if su is not None:
            done.append(f"the stated potential's constant {su}")
    if row.get("stated_certified", None) is not proven:
        raise CertificateError(f"stated_certified: the certificates give {proven}, the "
                               f"report says {_short(row.get('stated_certified'))}")
    if built.lower_rate is not None:
        lr = built.lower_rate()
        want = None if lr is None else str(lr["rho"])
        if row.get("rho_lower") != want or (lr is not None and row.get("rho_tight")
                                            is not (lr["rho"] == rho)):
            raise CertificateError(f"rho_lower: the claim's lower certificate gives {want}, "
                                   f"the report says {_short(row.get('rho_lower'))}")
        if lr is not None:
            done.append(f"rate lower bound {want} recomputed from the claim (exact)")
    elif "rho_lower" in row:
        raise CertificateError("rho_lower: the claim has no lower certificate on the rate")
    return {"status": "ok", "checked": "rate certified; " + "; ".join(done)}


def recheck_rate_row(step: Any, row: Any) -> dict[str, Any]:
    """Re-check one instance of a report's ``certified.rate`` against the claim's
    :class:`~.lyapunov.RateStep` (:func:`recheck_row` with kind ``"lyapunov"``)."""
    return recheck_row(step, row, default_kind="lyapunov")


def recheck_proofs(step: Any, entry: Any) -> dict[str, Any]:
    """Re-derive the claim's proofs for every n (module docstring) and compare the report's
    ``derived`` entry with them: ``{"status": "ok" | "failed", "checked": ...}``."""
    try:
        if not isinstance(step, OneStep) or step.prove is None:
            raise CertificateError("the claim has no proof for every n to re-derive")
        derived = entry.get("derived") if isinstance(entry, dict) else None
        if not isinstance(derived, list):
            raise CertificateError("the report gives no derived entry")
        proofs = step.prove()
        got = [d for d in derived if isinstance(d, dict)
               and d.get("derivation") == "proof for every n"]
        if len(got) != len(proofs) or len(derived) != len(proofs):
            raise CertificateError(f"the report has {len(got)} proofs of {len(derived)} "
                                   f"derived, the claim's code {len(proofs)}")
        for k, (mine, theirs) in enumerate(zip(proofs, got, strict=True)):
            if mine.get("derivation") != "proof for every n":
                raise CertificateError(f"proof {k + 1}: fails when re-derived (checks: "
                                       f"{mine.get('checks')})")
            for key in ("worst", "range", "multipliers", "closed_form_equal", "attained"):
                if theirs.get(key) != mine.get(key):
                    raise CertificateError(f"proof {k + 1}: the report's {key} differs from "
                                           "the re-derived one")
        return {"status": "ok", "checked": (
            f"{len(proofs)} proof(s) for every n re-derived from the claim's code (sympy, "
            "exact, no solver; not read from the report): worst "
            + "; ".join(_short(p["worst"], 60) for p in proofs))}
    except CertificateError as exc:
        return {"status": "failed", "checked": str(exc)}


def _short(x: Any, limit: int = 40) -> str:
    """A value from the report, shortened, for an error message (the caller escapes)."""
    s = repr(x)
    return s if len(s) <= limit else s[:limit - 3] + "..."


#: ``kind -> checker(step, params, row) -> {"status": "ok", "checked": ...}`` (raising
#: :class:`CertificateError`; ``step`` the claim's OneStep or RateStep, ``params`` its own
#: grid row): the certificate kinds ``fedtheory recheck`` knows.
CHECKERS: dict[str, Callable[[Any, dict[str, Any], dict[str, Any]], dict[str, Any]]] = {
    "pep": _check_pep, "lyapunov": _check_rate}

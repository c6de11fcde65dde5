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
re-checked the same way (:func:`recheck_rate_row`, built on
:func:`~.lyapunov.check_rate_certificate`, which :func:`~.lyapunov.recheck_rate_instance`
also uses): its parameters one of the claim's
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

from collections.abc import Callable
from typing import Any

from .lyapunov import check_rate_certificate
from .onestep import OneStep, _fmt
from .reported_certificates import MAX_DIGITS, MAX_DIM, CertificateError, _lower, _short, _upper

__all__ = ["CHECKERS", "MAX_DIGITS", "MAX_DIM", "CertificateError", "recheck_proofs",
           "recheck_rate_row", "recheck_row"]


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
    found: dict[str, Any] = {"upper": None, "lower": None}
    for side, recheck, key, proves, missing in (
            ("upper", _upper, "bound", "the multipliers prove", "a bound without its multipliers"),
            ("lower", _lower, "value", "the instance attains", "a value without its instance")):
        if side in cert:
            value, what = recheck(pep, cert[side])
            if row.get(side) != str(value) or cert[side].get(key) != str(value):
                raise CertificateError(f"{side}: {proves} {value}, the report says "
                                       f"{row.get(side)!r}")
            done.append(f"{side} {value}: {what}")
            found[side] = value
        elif row.get(side) is not None:
            raise CertificateError(f"{side}: the report gives {missing}")
    upper, lower = found["upper"], found["lower"]
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


#: ``kind -> checker(step, params, row) -> {"status": "ok", "checked": ...}`` (raising
#: :class:`CertificateError`; ``step`` the claim's OneStep or RateStep, ``params`` its own
#: grid row): the certificate kinds ``fedtheory recheck`` knows.
CHECKERS: dict[str, Callable[[Any, dict[str, Any], dict[str, Any]], dict[str, Any]]] = {
    "pep": _check_pep,
    "lyapunov": lambda step, params, row: {
        "status": "ok", "checked": check_rate_certificate(step, params, row)}}

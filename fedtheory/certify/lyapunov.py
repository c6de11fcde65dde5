r"""Rate certificates across rounds: a quadratic potential found by an SDP, checked exactly.

A recursion across rounds (a step with random participation, memory tables, ...) is
described by one round's PEP (:class:`RateBuilt`): its leaves, function classes and
constraints, the terms :math:`\phi_j` a potential is made of at round t (each
:math:`\ge 0`: squared distances, function gaps, memory errors) and their expectations at
round t+1, and optionally a progress measure :math:`\pi` (e.g. :math:`\|\nabla f\|^2`). A
**rate certificate** is a potential :math:`V = \sum_j v_j\phi_j` (:math:`v \ge 0`) with

.. math::

    \mathbb E V_{t+1} \le \rho V_t - \gamma\pi_t + c \quad\text{for every instance of the
    class},

proved like a one-step PEP bound: for fixed :math:`\rho` the condition is an LMI in
:math:`(v, \gamma, c)` and the interpolation multipliers :math:`\lambda` (S-procedure: the
quadratic part of :math:`\sum_k\lambda_kC_k - (\mathbb EV_{t+1} - \rho V_t + \gamma\pi)`
PSD, the function values cancelling). :func:`certify_rate`

* with :math:`\gamma = 0` (a linear rate): fixes the anchor coefficient :math:`v_a = 1` (so
  :math:`V \ge \phi_a`), bisects on :math:`\rho` for the smallest feasible one, then
  minimises :math:`c` there;
* with a progress measure (:math:`\rho = 1`, telescoping: :math:`\frac1T\sum_t\mathbb E\pi_t
  \le \frac{V_0}{\gamma T} + \frac c\gamma`): fixes :math:`\gamma = 1` and minimises
  :math:`c` over :math:`v`;

and then rounds :math:`\rho` up to a nearby simple fraction and :math:`v` to rationals and
certifies :math:`c` **exactly**: the PEP maximising :math:`\mathbb EV_{t+1} - \rho V_t +
\gamma\pi` with those rational coefficients gets an exact upper certificate (rational
multipliers, values cancelling, PSD by exact :math:`LDL^\top`), and a lower one (a rational
instance attaining a value: :math:`c` cannot be lowered for this :math:`V`). A lower
certificate on the **rate** itself, for any potential between two multiples of the state's
squared norm, is a linear instance whose mean-square iteration contracts no faster
(:func:`mean_square_lower`: a rational :math:`\Sigma \succeq 0` with
:math:`\mathbb E[T\Sigma T^\top] \succeq r\Sigma`, checked exactly).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from fedtheory import solver_log

from .exact import is_psd
from .onestep import _gram_or_factor, _text
from .pep import Expr, Pep, _solve_quietly
from .reported_certificates import CertificateError, _frac, _lower, _short

__all__ = ["RateBuilt", "RateOutOfScope", "RateStep", "certify_rate", "certify_rate_instance",
           "check_rate_certificate", "gradient_descent_model", "mean_square_lower",
           "recheck_rate_instance"]


@dataclass(frozen=True)
class RateBuilt:
    """One round of a recursion as a PEP (no objective): ``terms`` (name, :math:`\\phi_j`
    at round t), ``nexts`` (:math:`\\mathbb E\\phi_j` at round t+1, same order), ``progress``
    (:math:`\\pi_t`, or None for a linear rate), ``anchor`` (the term whose coefficient is
    1 for a linear rate), and the stated rate, constant and coefficients for comparison."""

    pep: Pep
    terms: tuple[tuple[str, Expr], ...]
    nexts: tuple[Expr, ...]
    progress: Expr | None = None
    anchor: int = 0
    #: the stated ``rho``, ``constant`` and (telescoping) ``potential`` coefficients
    stated: dict[str, Any] = field(default_factory=dict)
    progress_text: str = ""
    #: an exact lower certificate on the rate: ``() -> {"rho": Fraction, "from": str}``
    lower_rate: Callable[[], dict[str, Any] | None] | None = None
    #: an explicit instance ``(V, F)`` (rational leaves and values) for the lower side of
    #: the constant (e.g. a quadratic at its minimiser), checked exactly
    instance: tuple[list[list[Fraction]], list[Fraction]] | None = None


@dataclass(frozen=True)
class RateStep:
    """A claim's rate, as :func:`certify_rate` takes it: ``build(params) -> RateBuilt`` and
    the ``grid(quick)`` of exact parameters; ``description`` names the class, the method and
    the potential's terms."""

    description: str
    build: Callable[[dict[str, Any]], RateBuilt]
    grid: Callable[[bool], list[dict[str, Any]]]
    notes: tuple[str, ...] = ()
    #: the best rate, potential and constant the instances should certify exactly
    #: (``closed_form(params) -> {"rho"?, "potential"?: [...], "constant"?}``), with its text
    closed_form: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    closed_form_text: str = ""


@dataclass(frozen=True)
class RateOutOfScope:
    """A rate statement the Lyapunov search does not take, and why."""

    reason: str


def _dense(pep: Pep, e: Expr) -> tuple[np.ndarray, np.ndarray, float]:
    return pep._dense(e)


def _lmi(built: RateBuilt, rho: float | None, minimise_c: bool = True,
         ) -> tuple[str, np.ndarray | None, float | None, np.ndarray | None]:
    """Solve the LMI at ``rho`` (None: the telescoping form, rho = 1, gamma = 1): status,
    the potential's coefficients and the constant."""
    import cvxpy as cp

    pep = built.pep
    cons = pep.all_constraints()
    d = pep.n_vec
    Qk, Ak, Ck = zip(*(_dense(pep, e) for e, _ in cons), strict=True)
    Qm = np.array([Q.ravel() for Q in Qk])
    J = len(built.terms)
    phi = [_dense(pep, e) for _, e in built.terms]
    nxt = [_dense(pep, e) for e in built.nexts]
    r = 1.0 if rho is None else rho
    v = cp.Variable(J, nonneg=True)
    lam = cp.Variable(len(cons), nonneg=True)
    c = cp.Variable()
    parts = []
    Qo: Any = 0
    ao: Any = 0
    co: Any = 0
    for j in range(J):
        Qo = Qo + v[j] * (nxt[j][0] - r * phi[j][0])
        ao = ao + v[j] * (nxt[j][1] - r * phi[j][1])
        co = co + v[j] * (nxt[j][2] - r * phi[j][2])
    if built.progress is not None and rho is None:
        Qp, ap, cp_ = _dense(pep, built.progress)
        Qo, ao, co = Qo + Qp, ao + ap, co + cp_
    else:
        parts.append(v[built.anchor] == 1)
    S = cp.reshape(Qm.T @ lam, (d, d), order="C") - Qo
    parts += [(S + S.T) / 2 >> 0, co - np.array(Ck) @ lam <= c]
    if pep.n_val:
        parts.append(np.array(Ak).reshape(len(cons), pep.n_val).T @ lam == ao)
    # the constant first, then the simplest potential (the fewest, smallest terms)
    prob = cp.Problem(cp.Minimize((c if minimise_c else 0) + 1e-4 * cp.sum(v)
                                  + 1e-6 * cp.sum(lam)), parts)
    try:
        _solve_quietly(prob, cp.CLARABEL)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # noqa: BLE001 - an infeasible rho: the bisection's answer
        solver_log.record("lyapunov lmi", "CLARABEL", "solver_error")
        return "error", None, None, None
    solver_log.record("lyapunov lmi", "CLARABEL", str(prob.status))
    if prob.status not in ("optimal", "optimal_inaccurate") or v.value is None:
        return str(prob.status), None, None, None
    return (str(prob.status), np.maximum(np.array(v.value), 0.0), float(c.value),
            np.maximum(np.array(lam.value), 0.0))


def _bisect(built: RateBuilt, lo: float = 0.0, hi: float = 1.0, tol: float = 1e-7
            ) -> float | None:
    """The smallest rho in [lo, hi] where the LMI is feasible with c = 0 allowed (any c:
    the rate first), to ``tol``; None when even ``hi`` fails."""
    if _lmi(built, hi)[1] is None:
        return None
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if _lmi(built, mid)[1] is not None:
            hi = mid
        else:
            lo = mid
    return hi


def _candidates(x: float) -> list[Fraction]:
    """Simple fractions at or just above ``x`` (the closest first): its best approximations
    of small denominators and roundings up."""
    tol = 1e-6 * max(1.0, abs(x))
    out = {Fraction(x).limit_denominator(den) for den in (10, 100, 1000, 10**4)}
    out |= {Fraction(int(np.ceil(x * den - 1e-9)), den) for den in (100, 10**4, 10**6)}
    return sorted(f for f in out if f >= x - tol)[:8]


def _exact(built: RateBuilt, rho: Fraction, v: Sequence[Fraction], linear: bool,
           lam: np.ndarray | None = None
           ) -> tuple[Fraction | None, Fraction | None, Any, dict[str, Any] | None]:
    """The constant certified exactly for the rational potential ``v`` at ``rho``: (upper
    from rational multipliers, lower from a rational instance, the multipliers, the
    instance as :func:`~.onestep._gram_or_factor` writes it)."""
    pep = built.pep
    pep.maximize(_objective(built, rho, v, linear))
    try:
        sol = pep.solve("lyapunov")
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException:  # noqa: BLE001 - unbounded for this rounding: no certificate
        return None, None, None, None
    rp = pep.round_primal(sol)
    low = None if rp is None else rp[0]
    if built.instance is not None:
        made = pep.check_primal(*built.instance)
        if made is not None and (low is None or made > low):
            low, rp = made, (made, built.instance[0], built.instance[1])
    up = None if lam is None else pep.round_dual(lam, target=low)
    if up is None:
        up = pep.round_dual(sol.duals, target=low)
    if up is None or (low is not None and up[0] > low):
        lam = pep.sparse_dual(float(low if low is not None else sol.value) + 1e-9)
        up2 = None if lam is None else pep.round_dual(lam, target=low)
        if up2 is not None and (up is None or up2[0] < up[0]):
            up = up2
    inst = None if rp is None else _gram_or_factor(pep, rp)
    return (None if up is None else up[0]), low, None if up is None else up[1], inst


def _objective(built: RateBuilt, rho: Fraction, v: Sequence[Fraction], linear: bool) -> Expr:
    r""":math:`\sum_j v_j(\mathbb E\phi_j^+ - \rho\phi_j)` (+ the progress measure)."""
    obj = Expr()
    for vj, (_, e), ne in zip(v, built.terms, built.nexts, strict=True):
        obj = obj + (ne - e * rho) * vj
    if not linear:
        assert built.progress is not None
        obj = obj + built.progress
    return obj


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


def check_rate_certificate(step: Any, params: dict[str, Any], row: dict[str, Any]) -> str:
    """Re-check a report's rate instance ``row`` (kind ``"lyapunov"``) at ``params``, one of
    ``step``'s own grid rows, in exact arithmetic without a solver: the round rebuilt from
    ``step``; the reported rate, potential and constant certified exactly by the multipliers
    (values cancelling, PSD exactly); ``constant_lower`` attained by the instance; the stated
    potential's constants likewise; ``stated_certified`` what these prove; the rate's lower
    certificate recomputed from ``step``. Returns what was checked; raises
    :class:`~.checks.CertificateError` (saying what failed) for anything else."""
    if not isinstance(step, RateStep):
        raise CertificateError("a rate certificate where the claim describes no rate")
    cert = row.get("certificate")
    if not isinstance(cert, dict) or cert.get("kind", "lyapunov") != "lyapunov":
        raise CertificateError("not a rate certificate (kind 'lyapunov')")
    built = step.build(params)
    pep = built.pep
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
    shape = f"E V+ <= {rho} V" if linear else "E V+ <= V - progress"
    done = [f"{shape} + {up}" + ("" if low is None else f" (attained: {low})") + ", V = "
            + " + ".join(f"{x} ({n})" for x, n in zip(v, names, strict=True) if x) + f": {what}"]
    proven: bool | None = None
    if linear and "rho" in built.stated:
        proven = rho <= Fraction(built.stated["rho"])
        done.append(f"the stated rate {built.stated['rho']} {'' if proven else 'not '}reached")
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
            done.append(f"the stated potential {', '.join(str(x) for x in sv)} gives {su}"
                        + ("" if sl is None else f" (attained: {sl})")
                        + ("" if sc is None else f" against the stated {sc}"))
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
    return "rate certified; " + "; ".join(done)


def recheck_rate_instance(step: RateStep, row: dict[str, Any]) -> bool:
    """Whether a reported rate instance ``row`` re-checks (:func:`check_rate_certificate`) at
    the one of ``step``'s grid rows whose parameters it names (False for any other)."""
    rows = [q for quick in (True, False) for q in step.grid(quick)
            if isinstance(row, dict) and {k: str(v) for k, v in q.items()} == row.get("params")]
    if not rows or not isinstance(row.get("certificate"), dict):
        return False
    try:
        check_rate_certificate(step, rows[0], row)
    except CertificateError:
        return False
    return True


def _rate_certificate(built: RateBuilt, mult: Sequence[Fraction] | None,
                      inst: dict[str, Any] | None) -> dict[str, Any]:
    """A rate certificate in exact form (fractions as strings), for ``fedtheory recheck``
    (kind ``"lyapunov"``): the sizes of the round's PEP, the nonzero multipliers
    ``[[constraint index, its label, value], ...]`` certifying the constant, and the
    instance attaining ``constant_lower`` (a Gram ``matrix`` or ``vectors``, with the
    ``values``) where there is one."""
    labels = [lab for _, lab in built.pep.all_constraints()]
    out: dict[str, Any] = {"kind": "lyapunov", "gram_size": built.pep.n_vec,
                           "values": built.pep.n_val, "constraints": len(labels),
                           "multipliers": [[k, labels[k], str(x)] for k, x in
                                           enumerate(mult or []) if x]}
    if inst is not None:
        out["lower"] = _text(inst)
    return out


def certify_rate_instance(step: RateStep, params: dict[str, Any]) -> dict[str, Any]:
    """Search and certify the rate at one set of parameters (module docstring)."""
    t0 = time.perf_counter()
    built = step.build(params)
    linear = built.progress is None
    out: dict[str, Any] = {"params": {k: str(v) for k, v in params.items()},
                           "terms": [name for name, _ in built.terms],
                           "progress": None if linear else built.progress_text,
                           "stated": {k: [str(x) for x in v] if isinstance(v, (list, tuple))
                                      else str(v) for k, v in built.stated.items()}}
    if linear:
        rho_num = _bisect(built)
        if rho_num is None:
            return {**out, "status": "no certificate", "reason": "no potential of these "
                    "terms contracts (rho <= 1 infeasible)",
                    "seconds": round(time.perf_counter() - t0, 3)}
        out["rho_solver"] = rho_num
        tries = _candidates(rho_num)
        lr = built.lower_rate() if built.lower_rate is not None else None
        if lr is not None and abs(float(lr["rho"]) - rho_num) <= 1e-5 * max(1.0, rho_num):
            tries = [lr["rho"], *(t for t in tries if t != lr["rho"])]  # tight if it holds
    else:
        tries = [Fraction(1)]
    best = None
    # the potential at the solver's rate (feasible), else at each candidate
    at_num = _lmi(built, out["rho_solver"]) if linear else None
    for rho in tries:
        here = _lmi(built, None if not linear else float(rho))
        vs = [(r_[1], r_[3]) for r_ in (here, at_num) if r_ is not None and r_[1] is not None]
        for v, lam in vs:
            c_num = here[2] if here[1] is not None else None
            seen: set[tuple[Fraction, ...]] = set()
            for den in (1, 2, 4, 8, 12, 16, 100, 10**4, 10**6):
                vr = [Fraction(float(x)).limit_denominator(den) for x in v]
                if linear:
                    vr[built.anchor] = Fraction(1)
                if tuple(vr) in seen:
                    continue
                seen.add(tuple(vr))
                up, low, mult, inst = _exact(built, rho, vr, linear, lam)
                if up is not None and (best is None or up < best[2]):
                    best = (rho, vr, up, low, mult, inst)
                # a linear rate: the first certificate; a constant: the smallest, until it
                # reaches the solver's
                if best is not None and (linear or c_num is None
                                         or float(best[2]) <= c_num + 1e-7):
                    break
            if best is not None:
                break
        if best is not None:
            break
    if best is None:
        return {**out, "status": "unverified", "reason": "no rounding certified exactly",
                "seconds": round(time.perf_counter() - t0, 3)}
    rho, vr, up, low, mult, inst = best
    sv = built.stated.get("potential")
    if sv is not None and not linear:
        # the constant the stated potential coefficients certify (exactly)
        su, sl, smult, sinst = _exact(built, rho, [Fraction(x) for x in sv], linear)
        out["at_stated_potential"] = {"potential": [str(x) for x in sv],
                                      "constant": None if su is None else str(su),
                                      "constant_lower": None if sl is None else str(sl),
                                      "certificate": _rate_certificate(built, smult, sinst)}
        sc = built.stated.get("constant")
        if sc is not None and su is not None:
            # True: the stated bound follows from this certificate at this instance; False:
            # the one-round inequality with the stated potential fails at an instance (not
            # by itself a refutation of an averaged bound)
            sc = Fraction(sc)
            out["stated_certified"] = True if su <= sc else (
                False if sl is not None and sl > sc else None)
    out.update({
        "status": "certified", "rho": str(rho), "potential": {
            name: str(x) for (name, _), x in zip(built.terms, vr, strict=True) if x},
        "constant": str(up), "constant_lower": None if low is None else str(low),
        "constant_tight": low is not None and low == up,
        "gamma": None if linear else "1",
        "certificate": _rate_certificate(built, mult, inst),
    })
    if linear and "rho" in built.stated:
        out["stated_certified"] = rho <= Fraction(built.stated["rho"])
    if built.lower_rate is not None:
        lr = built.lower_rate()
        if lr is not None:
            out["rho_lower"] = str(lr["rho"])
            out["rho_lower_from"] = lr["from"]
            out["rho_tight"] = lr["rho"] == rho
    out["seconds"] = round(time.perf_counter() - t0, 3)
    return out


def certify_rate(step: RateStep | RateOutOfScope | None, quick: bool = True
                 ) -> dict[str, Any]:
    """The report's ``certified.rate`` entry: every grid instance certified (rate, potential,
    constant, lower certificates) or the reason the claim is out of scope."""
    t0 = time.perf_counter()
    if step is None or isinstance(step, RateOutOfScope):
        return {"status": "out of scope", "reason": "no rate declared" if step is None
                else step.reason, "instances": [], "seconds": 0.0}
    rows = []
    for q in step.grid(quick):
        row = certify_rate_instance(step, q)
        if step.closed_form is not None and row["status"] == "certified":
            row["closed_form_holds"] = _matches(row, step.closed_form(q))
        rows.append(row)
    ok = all(r["status"] == "certified" for r in rows)
    out = {"status": "certified" if ok else "unverified", "description": step.description,
           "instances": rows, "notes": list(step.notes),
           "seconds": round(time.perf_counter() - t0, 3)}
    if step.closed_form is not None:
        out["closed_form"] = {"text": step.closed_form_text, "holds": bool(rows) and all(
            r.get("closed_form_holds") for r in rows)}
    return out


def _matches(row: dict[str, Any], cf: dict[str, Any]) -> bool:
    """Whether the certified rate, potential and constant equal the closed form exactly."""
    if "rho" in cf and Fraction(row["rho"]) != Fraction(cf["rho"]):
        return False
    if "constant" in cf and Fraction(row["constant"]) != Fraction(cf["constant"]):
        return False
    if "potential" in cf:
        got = [Fraction(row["potential"].get(name, "0")) for name in row["terms"]]
        return got == [Fraction(v) for v in cf["potential"]]
    return True


def gradient_descent_model(L: Any, mu: Any, eta: Any) -> RateBuilt:
    r"""Gradient descent :math:`x^+ = x - \eta\nabla f(x)` on an L-smooth, mu-strongly convex
    f (class ``smooth_strongly_convex``), :math:`x^\star = 0`: terms
    :math:`\|x - x^\star\|^2` and :math:`f(x) - f^\star`; the lower certificate is the
    quadratic of curvature mu or L (:math:`\rho \ge \max(|1-\eta L|, |1-\eta\mu|)^2`)."""
    from .pep import Vec, as_fraction

    L, mu, eta = as_fraction(L, "L"), as_fraction(mu, "mu"), as_fraction(eta, "eta")
    pep = Pep()
    f = pep.function("smooth_strongly_convex", L, mu)
    x = pep.vector("x")
    g = pep.vector("g")
    fx = pep.value()
    fs = pep.value()
    f.add_point(Vec(), Vec(), fs)
    f.add_point(x, g, fx)
    xn = x - g * eta
    gn, fn = f.oracle(xn)
    del gn

    def lower() -> dict[str, Any] | None:
        worst = max(abs(1 - eta * L), abs(1 - eta * mu)) ** 2
        return {"rho": worst, "from": "the quadratic (a/2)||x||^2, a in {mu, L} (x+ = (1 - "
                "eta a) x exactly)"}

    return RateBuilt(pep, (("||x - x*||^2", x.sq()), ("f(x) - f*", fx - fs)),
                     (xn.sq(), fn - fs), anchor=0,
                     stated={"rho": max(abs(1 - eta * L), abs(1 - eta * mu)) ** 2},
                     lower_rate=lower)


def mean_square_lower(maps: Sequence[tuple[Fraction, Sequence[Sequence[Fraction]]]],
                      block: Sequence[int], den: int = 10**4) -> dict[str, Any] | None:
    r"""An exact lower certificate on the mean-square rate of a linear random recursion
    :math:`z_{t+1} = T_S z_t` (``maps``: (probability, rational :math:`T_S`)):
    :math:`\Phi(\Sigma) = \sum_S P(S)T_S\Sigma T_S^\top` preserves the PSD order, so a
    rational :math:`\Sigma \succeq 0` with :math:`\Phi(\Sigma) - r\Sigma \succeq 0` (exact)
    gives :math:`\mathbb E z_tz_t^\top \succeq r^t\Sigma`: a potential between multiples of
    :math:`\|z\|^2` contracts no faster than ``r`` (when :math:`\Sigma` charges ``block``,
    the coordinates the potential's anchor measures). ``{"rho": r, "from": ...}`` or None."""
    Ts = [(float(p), np.array([[float(x) for x in row] for row in T])) for p, T in maps]
    d = Ts[0][1].shape[0]
    Phi = sum(p * np.kron(T, T) for p, T in Ts)
    w, U = np.linalg.eig(Phi)
    k = int(np.argmax(np.abs(w)))
    Sig = np.real(U[:, k]).reshape(d, d)
    Sig = (Sig + Sig.T) / 2
    if np.trace(Sig) < 0:
        Sig = -Sig
    r_num = float(np.real(w[k]))
    S = [[Fraction(float(x)).limit_denominator(den) for x in row] for row in Sig]
    if not is_psd(S) or all(S[i][i] == 0 for i in block):
        return None
    exact = [(p, [[Fraction(x) for x in row] for row in T]) for p, T in maps]

    def phi(M: list[list[Fraction]]) -> list[list[Fraction]]:
        out = [[Fraction(0)] * d for _ in range(d)]
        for p, T in exact:
            TM = [[sum((T[i][a] * M[a][b] for a in range(d)), Fraction(0)) for b in range(d)]
                  for i in range(d)]
            for i in range(d):
                for j in range(d):
                    out[i][j] += p * sum((TM[i][b] * T[j][b] for b in range(d)), Fraction(0))
        return out

    P = phi(S)
    cands = {Fraction(r_num).limit_denominator(dd) for dd in (1, 4, 16, 100, 10**4, 10**6)}
    cands |= {c - Fraction(1, 10**6) for c in cands}
    for r in sorted(cands, reverse=True):  # the largest that holds
        if r > 0 and is_psd([[P[i][j] - r * S[i][j] for j in range(d)] for i in range(d)]):
            return {"rho": r, "from": "a linear instance: Φ(Σ) ⪰ rΣ (exact)"}
    return None

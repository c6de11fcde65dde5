r"""Seed 002, corrected Theorem 17 (FedAvg with OCS, strongly convex quadratics): the recursion
*proved* from a repaired chain of lemmas, for given constants and step limit (or not proved).

The chain is Appendix D.1 with its gaps closed (see ``ocs.fedavg_strongly_convex.corrected``)
and three free Young parameters :math:`\varepsilon_1, \varepsilon_2, \delta > 0` where the seed
uses 1, and a sharper drift sum. With :math:`a = M/R`, :math:`c = (1+a)/\gamma - 1`,
:math:`D = f(x) - f^\star`, :math:`\mathcal E` the drift (36), :math:`\eta_g \ge \max\{1,
\sqrt{\gamma/\sum_i w_i^2}\}`, quadratic :math:`f_i` and :math:`\eta_lL \le 1`:

* (Lemma 21) :math:`\mathcal A_1 \le -2\eta(D + \frac\mu4\|r\|^2) + 2L\eta\mathcal E`;
* (Definition 11, Assumption 8, the noise/gradient cross terms :math:`\le 0` for quadratics,
  Jensen, Young) :math:`\mathcal A_2/\eta^2 \le \frac{\sigma^2}{R\gamma}\sum_i w_i^2 +
  L^2X\mathcal E + 2LYD + 2Lc(1+\varepsilon_1)(1+\delta)\sum_i w_i^2Z_i` with
  :math:`X = c(1+1/\varepsilon_1)W + 1 + 1/\varepsilon_2`,
  :math:`Y = c(1+\varepsilon_1)(1+1/\delta)W + 1 + \varepsilon_2`
  (Bregman: :math:`\sum_i w_i^2\|\nabla f_i(x)\|^2 \le (1+1/\delta)2LWD + (1+\delta)2L
  \sum_i w_i^2Z_i`);
* (drift) :math:`e_r = \mathbb E\|y_{i,r} - x\|^2 \le q\,e_{r-1} + B_i`,
  :math:`q = 1 + \frac{b}{R-1}`, :math:`b = 1 + 2t_3`, whence
  :math:`\mathcal E \le \kappa\big(4(1+a)\eta^2L(D + \sum_i w_iZ_i) +
  \eta^2\sigma^2/(R\eta_g^2)\big)` with :math:`\kappa = e^b/2`
  (:math:`\frac1R\sum_{r<R}\sum_{\tau<r}q^\tau \le \frac{R-1}{2}q^{R-2} \le \frac{R-1}{2}e^b`);
* the step condition, :math:`\eta \le \frac s8\min\{\frac{1}{L(2+a)},
  \frac{\gamma}{(1+2W(1+a))L}\}` (:math:`s` = 1 as stated, 2 relaxed), bounds
  :math:`t_1 = \eta L \le s/16`, :math:`t_2 = \eta LcW \le s/16`,
  :math:`t_3 = (1+a)(\eta L)^2 \le s^2/256` (each proved with sympy).

Collecting, the recursion holds with constants (``gap`` :math:`c_g`, ``beta1_sigma``
:math:`c_\sigma`, ``beta1_Z`` :math:`c_Z`, ``beta2`` :math:`c_2`) whenever, with
:math:`X' = t_2(1+1/\varepsilon_1) + t_1(1+1/\varepsilon_2)` and
:math:`Y' = t_2(1+\varepsilon_1)(1+1/\delta) + t_1(1+\varepsilon_2)` at those maxima (every
condition is increasing in :math:`t_1, t_2, t_3`):

(i) :math:`-2 + 2Y' + 8\kappa t_3(1 + X'/2) \le -c_g` (the :math:`D` coefficient),
(ii) :math:`2(1+\varepsilon_1)(1+\delta) \le c_Z`, (iii) :math:`8\kappa(1 + X'/2) \le c_2`,
(iv) :math:`1 + 2\kappa t_1(1 + X'/2) \le c_\sigma`.

:func:`prove_fedavg_corrected_recursion` searches a grid of rational
:math:`(\varepsilon_1, \varepsilon_2, \delta)` and checks (i)-(iv) in exact arithmetic with a
rational :math:`\bar\kappa \ge e^b/2`; a parameter triple that satisfies them is the proof.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import sympy as sp

from fedtheory.symbolic.inequality import prove_nonnegative

__all__ = ["FedavgProof", "prove_fedavg_corrected_recursion"]

#: The Young parameters tried (rationals).
_GRID = tuple(Fraction(v) for v in ("1/16", "1/8", "1/4", "1/3", "1/2", "2/3", "1", "3/2", "2",
                                    "3", "4", "8"))


class FedavgProof:
    """The outcome: ``proved``, ``proof`` (the certificate, when proved), ``lemmas`` (each
    step-bound lemma and its sympy status) and ``values`` (the four conditions' two sides at
    the certificate, or at the best triple tried)."""

    def __init__(self, proved: bool, lemmas: dict[str, str], params: dict[str, Fraction] | None,
                 values: dict[str, tuple[Fraction, Fraction]]) -> None:
        self.proved, self.lemmas, self.params, self.values = proved, lemmas, params, values
        self.proof = None
        if proved and params is not None:
            self.proof = ("repaired chain of Appendix D.1 with Young parameters "
                          + ", ".join(f"{k} = {v}" for k, v in params.items())
                          + "; step lemmas by sympy sign inference; conditions (i)-(iv) exact: "
                          + "; ".join(f"{k}: {lhs} <= {rhs}" for k, (lhs, rhs) in values.items()))

    @property
    def summary(self) -> str:
        vals = "; ".join(f"{k}: {float(lhs):.4f} <= {float(rhs):.4f}"
                         for k, (lhs, rhs) in self.values.items())
        return (f"{'proved' if self.proved else 'not proved'}; lemmas: "
                + ", ".join(f"{k} {v}" for k, v in self.lemmas.items()) + f"; {vals}")


def _step_lemmas(s: Fraction) -> dict[str, str]:
    """The bounds t1 <= s/16, t2 <= s/16, t3 <= s^2/256 from the step condition (sympy)."""
    a, W = sp.Symbol("a", nonnegative=True), sp.Symbol("W", positive=True)
    ss = sp.Rational(s)
    claims = {
        "eta L <= s/16": ss / 16 - ss / (8 * (2 + a)),
        "eta L c W <= s/16": ss / 16 - ss * W * (1 + a) / (8 * (1 + 2 * W * (1 + a))),
        "(1+a)(eta L)^2 <= s^2/256": ss**2 / 256 - (1 + a) * ss**2 / (64 * (2 + a) ** 2),
    }
    out = {}
    for name, slack in claims.items():
        num, den = sp.fraction(sp.factor(sp.together(slack)))
        res = prove_nonnegative(num, {sym: (0, 4) for sym in num.free_symbols}, grid=2,
                                random_points=20) if num.free_symbols else None
        ok = (num >= 0 if res is None else res.status == "proved") and den.is_positive
        out[name] = "proved" if ok else "NOT proved"
    return out


def _kappa_bar(s: Fraction) -> tuple[Fraction, bool]:
    """A rational upper bound of e^b / 2, b = 1 + s^2/128 (checked by sympy)."""
    b = 1 + s * s / 128
    k = Fraction(int(float(sp.exp(sp.Rational(b)) / 2 * 1000)) + 1, 1000)
    return k, bool(sp.exp(sp.Rational(b)) / 2 <= sp.Rational(k))


def _conditions(c: Mapping[str, Fraction], s: Fraction, kappa: Fraction, e1: Fraction,
                e2: Fraction, d: Fraction) -> dict[str, tuple[Fraction, Fraction]]:
    t1 = t2 = s / 16
    t3 = s * s / 256
    X = t2 * (1 + 1 / e1) + t1 * (1 + 1 / e2)
    Y = t2 * (1 + e1) * (1 + 1 / d) + t1 * (1 + e2)
    return {
        "(i) D coefficient": (-2 + 2 * Y + 8 * kappa * t3 * (1 + X / 2), -c["gap"]),
        "(ii) Z coefficient": (2 * (1 + e1) * (1 + d), c["beta1_Z"]),
        "(iii) beta_2": (8 * kappa * (1 + X / 2), c["beta2"]),
        "(iv) sigma^2 coefficient": (1 + 2 * kappa * t1 * (1 + X / 2), c["beta1_sigma"]),
    }


def prove_fedavg_corrected_recursion(c: Mapping[str, Any], step_scale: Any = 1) -> FedavgProof:
    r"""The corrected (27) with constants ``c`` at steps up to ``step_scale`` times the stated
    limit: proved (a certificate) or not (see the module docstring).

    >>> from fractions import Fraction as F
    >>> c = {"gap": F(3, 8), "beta1_sigma": F(17, 8), "beta1_Z": F(8), "beta2": F(72)}
    >>> prove_fedavg_corrected_recursion(c).proved
    True
    >>> prove_fedavg_corrected_recursion({**c, "beta1_Z": F(2)}).proved
    False
    """
    s = Fraction(step_scale)
    cc = {k: Fraction(v) for k, v in c.items()}
    lemmas = _step_lemmas(s)
    kappa, kappa_ok = _kappa_bar(s)
    lemmas[f"e^(1+s^2/128)/2 <= {kappa}"] = "proved" if kappa_ok else "NOT proved"
    best: tuple[Fraction, dict[str, Fraction], dict[str, tuple[Fraction, Fraction]]] | None = None
    for e1, e2, d in itertools.product(_GRID, repeat=3):
        vals = _conditions(cc, s, kappa, e1, e2, d)
        worst = max(lhs - rhs for lhs, rhs in vals.values())
        if best is None or worst < best[0]:
            best = (worst, {"epsilon_1": e1, "epsilon_2": e2, "delta": d}, vals)
        if worst <= 0:
            break
    assert best is not None
    proved = best[0] <= 0 and all(v == "proved" for v in lemmas.values())
    return FedavgProof(proved, lemmas, best[1], best[2])

r"""Evidence, what one check found, and the one way to combine sub-results of a check.

:class:`Evidence` (re-exported by :mod:`fedtheory.claimkit.core` and :mod:`fedtheory.claims`)
is what a check returns.

A check often tests a statement on several instances or sub-statements ("all of these must
hold"). :func:`all_of` combines their evidence with one rule:

* it fails when any part fails (the first failing part's counterexample, tagged with the part's
  name), is undecided when no part fails but one is undecided (saying which parts, and why:
  an ``unproven`` part stays unproven, never a failure), and passes otherwise;
* its tightness ``ratio`` is the largest of the parts' (with that part's instance), and it is a
  proof only when every part is;
* a part that cannot discriminate (``not testable``) is set aside, and the whole is not
  testable only when every part is; a pass with a part of low power is of low power;
* its false-alarm level is the **Bonferroni sum** of the parts' levels,

  .. math:: \Pr[\text{some part falsely fails}] \le \sum_k \alpha_k ,

  the true level of the combined test whatever the dependence between the parts (parts without
  a level, exact symbolic or convex sub-checks, contribute 0).

Figure checks return :meth:`Evidence.illustration` (neutral: they show, they do not test).
A check does not draw: it returns a :class:`Figure`, the data of a picture and the name of
what draws it (a plotter of :mod:`fedtheory.plotting.figures`, a layer above the claims), and
the run draws it once the verdict is known (the figure's title then names the claim and its
verdict). A file already drawn may be given by its path instead (a claim of one's own that
draws itself, with :meth:`~fedtheory.claimkit.core.Context.figure_path`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fedtheory.symbolic.identity import IdentityResult
from fedtheory.verdicts import CHECK_GRADES, LOW_POWER, NOT_TESTABLE

__all__ = ["Evidence", "Figure", "all_of", "combined_alpha", "derivation_evidence",
           "identity_evidence"]


_PLOTTER = re.compile(r"[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


@dataclass(eq=False)
class Figure:
    """A figure a check asks for: what draws it, the data it draws, its file name and caption.

    The claims do not draw (plotting sits above them, :mod:`fedtheory.plotting`): a check
    returns this value among its evidence's ``figures``, and the layer that runs the claims
    draws it once the verdict is known (:func:`fedtheory.plotting.figures.draw_result`, which
    :func:`fedtheory.runner.verify_one` calls), into ``<figure dir>/<claim id with _>__<name>``
    ``.png`` and ``.pdf``, its title naming the claim and the verdict, ``caption`` below it.

    Parameters
    ----------
    plotter:
        The plotter's name in :data:`fedtheory.plotting.figures.PLOTTERS` (``"family.what"``).
    name:
        The file name without the claim's prefix and suffix (letters, digits, ``_``, ``-``).
    data:
        The plotter's keyword arguments (arrays, records: the numbers the figure shows).
    caption:
        What the figure shows, in a sentence or two: what a marked threshold or divergence
        means, which curve the claim says should be lowest.

    >>> Figure("ocs.sqrt_n", "sqrt_n", {"sw": None}).plotter
    'ocs.sqrt_n'
    >>> Figure("sqrt_n", "sqrt_n")
    Traceback (most recent call last):
    ...
    ValueError: plotter must be 'family.what' (lower case), got 'sqrt_n'
    """

    plotter: str
    name: str
    data: Mapping[str, Any] = field(default_factory=dict)
    caption: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.plotter, str) or not _PLOTTER.fullmatch(self.plotter):
            raise ValueError(f"plotter must be 'family.what' (lower case), got {self.plotter!r}")
        if not isinstance(self.name, str) or not _NAME.fullmatch(self.name):
            raise ValueError(f"name must be letters, digits, '_' or '-', got {self.name!r}")
        if not isinstance(self.data, Mapping):
            raise ValueError(f"data must be a mapping of the plotter's keyword arguments, "
                             f"got {type(self.data).__name__}")
        self.data = dict(self.data)


@dataclass
class Evidence:
    """What one check measured, beside what theory says it should be.

    ``passed`` is True (the statement survived), False (it failed: give a
    ``counterexample``, an admissible instance where the statement fails) or None (this check
    could not decide; ``undecided`` says why, e.g. ``"unproven"``).
    ``alpha`` is the per-check false-alarm level of a statistical check: the probability
    that it reports a failure when the statement is true.
    """

    passed: bool | None
    measured: Any
    theoretical: Any
    detail: str = ""
    tolerance: float | None = None
    alpha: float | None = None
    counterexample: dict[str, Any] | None = None
    #: What it shows: :class:`Figure` values (drawn by the layer above) or paths of files
    #: already drawn.
    figures: list[str | Figure] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    #: A figure that shows rather than tests: it neither confirms nor refutes (``passed`` None)
    #: and does not make the verdict inconclusive.
    neutral: bool = False
    #: Tightness of a bound check: the largest measured/stated over its instances (for a lower
    #: bound stated/measured; 1 = attained), and the instance where it is reached.
    ratio: float | None = None
    instance: dict[str, Any] | None = None
    #: How the check proved the statement exactly (sympy sign argument, exact enumeration of
    #: every admissible case), if it did; a proof is what lets a mutant count as "still true".
    proof: str | None = None
    #: An exact adversarial search that found no violation: what it covered and the largest
    #: ratio (weaker than a proof, yet evidence that a mutant it could not refute holds).
    search: str | None = None
    #: Why an undecided check (``passed`` None) could not decide: ``"unproven"`` (the
    #: derivation does not reach the stated side: not a refutation), ``"not resolved"`` (an
    #: interval too wide), ...
    undecided: str | None = None
    #: The statistical tests the check decided on, one small record each (the test, its
    #: hypothesis and margin, the estimate and its limits, the level, the smallest detectable
    #: effect, the outcome): :func:`fedtheory.claimkit.checks.compare_paired` fills it; reports
    #: keep it.
    tests: list[dict[str, Any]] = field(default_factory=list)
    #: The grade of the outcome (:data:`fedtheory.verdicts.CHECK_GRADES`): ``"consistent (low
    #: power)"`` for a pass that could not have detected a violation of the size that matters
    #: (``passed`` True), ``"not testable"`` for a check that cannot discriminate on this
    #: set-up (``passed`` None: :meth:`not_testable`); None: a plain outcome (a pass is then
    #: ``confirmed``).
    grade: str | None = None

    def __post_init__(self) -> None:
        if self.grade is None:
            return
        if self.grade not in CHECK_GRADES:
            raise ValueError(f"grade must be one of {CHECK_GRADES} or None, got {self.grade!r}")
        if self.grade == NOT_TESTABLE and self.passed is not None:
            raise ValueError(f"a not-testable outcome decides nothing (passed None), got "
                             f"passed={self.passed!r}")
        if self.grade != NOT_TESTABLE and self.passed is not True:
            raise ValueError(f"grade {self.grade!r} grades a pass (passed True), got "
                             f"passed={self.passed!r}")

    @classmethod
    def not_testable(cls, measured: Any, theoretical: Any, detail: str, why: str,
                     data: dict[str, Any] | None = None,
                     tests: Sequence[dict[str, Any]] = ()) -> Evidence:
        """The outcome of a check that cannot discriminate here (declared so on the set-up
        card, or shown so by the run: every method within the margin of the best, no
        headroom): never a refutation, never a confirmation; counted apart. ``why`` says
        which.

        >>> ev = Evidence.not_testable(0.0, "gain > 0.1", "A vs B", "no headroom")
        >>> ev.passed, ev.grade, ev.undecided
        (None, 'not testable', 'not testable: no headroom')
        """
        return cls(None, measured, theoretical, detail, data=dict(data or {}),
                   undecided=f"not testable: {why}", grade=NOT_TESTABLE, tests=list(tests))

    @classmethod
    def unproven(cls, measured: Any, theoretical: Any, detail: str,
                 data: dict[str, Any] | None = None) -> Evidence:
        """The outcome of a check whose derivation does not reach the stated side (the stated
        bound is sharper than what the argument gives): "not implied by our derivation" is
        *unproven*, never false. It neither confirms nor refutes the claim, and does not
        catch a mutant; a refutation needs an admissible counterexample."""
        return cls(None, measured, theoretical, detail, data=dict(data or {}),
                   undecided="unproven")

    @classmethod
    def illustration(cls, figures: Sequence[str | Figure], measured: Any = None,
                     detail: str = "", data: dict[str, Any] | None = None) -> Evidence:
        """The outcome of a figure check: what it shows (:class:`Figure` values, or paths of
        files it drew) and the numbers it shows, no verdict."""
        return cls(None, measured, "figure", detail, figures=list(figures),
                   data=dict(data or {}), neutral=True)




def combined_alpha(parts: Sequence[Evidence]) -> float | None:
    """The Bonferroni level of "all parts pass": the sum of the parts' levels (None if none
    has a level).

    >>> combined_alpha([Evidence(True, 0, 0, alpha=1e-6), Evidence(True, 0, 0, alpha=2e-6),
    ...                 Evidence(True, 0, 0)])
    3e-06
    >>> combined_alpha([Evidence(True, 0, 0)]) is None
    True
    """
    alphas = [float(ev.alpha) for ev in parts if ev.alpha is not None]
    return float(sum(alphas)) if alphas else None


def all_of(parts: Sequence[tuple[str, Evidence]]) -> Evidence:
    """Combine named sub-evidence of one check: fail if any fails, undecided if any is
    undecided; the level is the Bonferroni sum (see the module docstring).

    >>> ok = Evidence(True, 1.0, 1.0, "fine", alpha=1e-6)
    >>> bad = Evidence(False, 2.0, 1.0, "off", alpha=1e-6, counterexample={"n": 3})
    >>> ev = all_of([("a", ok), ("b", bad)])
    >>> ev.passed, ev.alpha, ev.counterexample
    (False, 2e-06, {'n': 3, 'case': 'b'})
    >>> ev.measured
    {'a': 1.0, 'b': 2.0}
    """
    if not parts:
        raise ValueError("all_of needs at least one part, got none")
    evs = [ev for _, ev in parts]
    testable = [ev for ev in evs if ev.grade != NOT_TESTABLE]
    if not testable:  # every part cannot discriminate: neither can the whole
        return Evidence.not_testable(
            {name: ev.measured for name, ev in parts},
            {name: ev.theoretical for name, ev in parts},
            "; ".join(f"[{name}] {ev.detail}" for name, ev in parts),
            "; ".join(f"{name}: {ev.undecided}" for name, ev in parts),
            data={name: ev.data for name, ev in parts if ev.data},
            tests=[{**t, "part": f"{name}/{t['part']}" if t.get("part") else name}
                   for name, ev in parts for t in ev.tests])
    if any(ev.passed is False for ev in testable):
        passed: bool | None = False
    elif any(ev.passed is None for ev in testable):
        passed = None
    else:
        passed = True
    ce = None
    for name, ev in parts:
        if ev.passed is False:
            ce = dict(ev.counterexample or {})
            ce["case"] = name
            break
    rated = [(name, ev) for name, ev in parts if ev.ratio is not None]
    ratio, instance = None, None
    if rated:
        name, best = max(rated, key=lambda t: t[1].ratio)
        ratio, instance = best.ratio, {"case": name, **(best.instance or {})}
    proofs = [ev.proof for ev in evs]
    undecided = None
    if passed is None:
        reasons = [f"{name}: {ev.undecided or 'not resolved'}" for name, ev in parts
                   if ev.passed is None and ev.grade != NOT_TESTABLE]
        undecided = "; ".join(reasons)
    grade = None
    if passed is True and any(ev.grade == LOW_POWER for ev in testable):
        grade = LOW_POWER
    tests = [{**t, "part": f"{name}/{t['part']}" if t.get("part") else name}
             for name, ev in parts for t in ev.tests]
    return Evidence(
        passed,
        {name: ev.measured for name, ev in parts},
        {name: ev.theoretical for name, ev in parts},
        detail="; ".join(f"[{name}] {ev.detail}" for name, ev in parts),
        alpha=combined_alpha(evs),
        counterexample=ce,
        figures=[f for ev in evs for f in ev.figures],
        data={name: ev.data for name, ev in parts if ev.data},
        ratio=ratio,
        instance=instance,
        proof="; ".join(f"[{n}] {ev.proof}" for n, ev in parts) if all(proofs) else None,
        undecided=undecided,
        tests=tests,
        grade=grade,
    )


def derivation_evidence(ok: bool, measured: Any, theoretical: Any, detail: str) -> Evidence:
    """An identity of the derivation (not of the statement): passed when it holds, unproven
    when it does not (the derivation then does not reach the statement; that refutes
    nothing)."""
    if ok:
        return Evidence(True, measured, theoretical, detail)
    return Evidence.unproven(measured, theoretical, detail + ": the derivation's identity is "
                             "not obtained, so this check proves nothing (not a refutation)")


def identity_evidence(res: IdentityResult, *, measured: Any, theoretical: Any, detail: str,
                      counterexample: dict[str, Any] | None = None) -> Evidence:
    """Evidence of an identity of the statement (:func:`fedtheory.symbolic.identity.prove_zero`):
    passed with its proof, failed at the concrete point where the two sides differ
    (``counterexample`` describes that instance), or unproven (no proof, and the sides agree
    at the point): never a refutation without an instance."""
    text = f"{detail}: {res.status}"
    if res.status == "not proved":
        return Evidence.unproven(measured, theoretical, text + " (sympy does not simplify the "
                                 "difference to 0, and the sides agree at the test point)")
    return Evidence(res.verdict, measured, theoretical, text, proof=res.proof,
                    counterexample=None if res.verdict else {
                        **(counterexample or {}), "point": res.at,
                        "difference_there": str(res.value)})

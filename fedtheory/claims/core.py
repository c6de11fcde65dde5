"""Claim, Check, Evidence and Verdict: the vocabulary every family module uses.

A :class:`Claim` is one statement of a seed document, registered once under the id that
``docs/claims.md`` gives it. Its checks are plain functions ``check(ctx) -> Evidence``; each
gathers one kind of evidence (symbolic, exact, convex, Monte Carlo or a figure).
:meth:`Claim.verify` runs the checks and combines their evidence into a :class:`Verdict`:

* ``confirmed``: every check passed;
* ``refuted``: at least one check failed; the failing evidence carries a counterexample
  (concrete inputs a reader can re-run and the numbers measured on them). A check that raised
  beside it does not hide the refutation: it is listed with it;
* ``inconclusive``: no check failed, but one could not decide (for instance a Monte Carlo
  interval too wide to say anything, or a derivation that does not reach the stated bound:
  "unproven", :meth:`Evidence.unproven`, which is never a refutation);
* ``error``: a check raised, or a solver failed, and no other check refuted the claim.

Every failed check's counterexample carries ``replay``: the command (and the Python call) that
re-runs exactly that check with the same preset and seed, and prints the measured and stated
values.
"""

from __future__ import annotations

import enum
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from fedtheory import commands, sandbox, solver_log, streams, verdicts
from fedtheory.cache import PROCESS_CACHE, Cache
from fedtheory.claims import checks
from fedtheory.claims.evidence import Evidence, Figure
from fedtheory.claims.setup import SetupCard
from fedtheory.claims.stated import Erratum, Mutant, Stated
from fedtheory.validation import integer_at_least

__all__ = [
    "BOUND_KINDS", "CHECK_KINDS", "MUTANT_READ", "PRESETS", "Check", "CheckResult", "Claim",
    "ClaimKind", "ClaimResult", "Context", "Evidence", "Figure", "KindMismatch", "Verdict",
    "combine", "grade", "replay_command", "tightness",
]

#: The kinds of evidence a check may gather (the ``kind`` field of the JSON report):
#:
#: * ``symbolic``: a sympy derivation from the statement's ingredients;
#: * ``exact``: exact (rational) arithmetic, enumeration of every case or an exact chain;
#: * ``convex``: a convex program solved (cvxpy), its status recorded: a check of this kind
#:   that solves none is an error (:mod:`fedtheory.solver_log`);
#: * ``monte_carlo``: a simulation judged at a stated false-alarm level;
#: * ``figure``: a picture (neutral: it shows, it does not test).
CHECK_KINDS = ("symbolic", "exact", "convex", "monte_carlo", "figure")

PRESETS = ("quick", "full")


class ClaimKind(str, enum.Enum):
    """What sort of mathematical statement a claim is."""

    IDENTITY = "identity"
    UPPER_BOUND = "upper bound"
    LOWER_BOUND = "lower bound"
    CLOSED_FORM = "closed form"
    QUALITATIVE = "qualitative"


class Verdict(str, enum.Enum):
    """The outcome of verifying a claim."""

    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    INCONCLUSIVE = "inconclusive"
    ERROR = "error"


#: What :attr:`Context.reads` records when a check looks at the running mutant itself
#: (``ctx.mutant``): its outcome may then depend on any mutant.
MUTANT_READ = "(the running mutant)"


@dataclass(init=False)
class Context:
    """What a check is given: the size preset, the seed, where figures go.

    The random streams are derived from ``(seed, claim id, stream name)`` with
    :class:`numpy.random.SeedSequence`, so a check sees the same numbers whatever other claims
    ran before it, and the same seed always gives the same report.

    ``stated`` holds the claim's stated constants, factors and step condition (see
    :mod:`fedtheory.claims.stated`), ``mutant`` the mutant of them being run (``--power``), if
    any. :attr:`reads` records which stated parts a check read (and whether it looked at the
    mutant itself): a check that read none of a mutant's part gives the same outcome under it,
    which :func:`fedtheory.claims.power.power` uses to run only the checks a mutant can change.
    """

    preset: str
    seed: int
    claim_id: str
    figure_dir: Path | None
    #: The claim's kind (what a Monte Carlo test of it must be: see :meth:`check_mean`).
    kind: ClaimKind | None
    stated: Stated | None
    _mutant: Mutant | None = field(repr=False)
    _shared: dict[Any, Any] = field(repr=False)
    _shared_reads: dict[Any, set[str]] = field(repr=False)
    #: The run's cache (:class:`~fedtheory.cache.Cache`: its datasets' data and the task
    #: results it handed in); :data:`~fedtheory.cache.PROCESS_CACHE` outside a run.
    cache: Cache = field(repr=False)
    #: The stated parts (constant, factor and step names) read since the check began.
    reads: set[str] = field(repr=False)
    #: The stated parts whose value the running mutant changed at a read (a factor dropped
    #: where it was not 1, a constant or a step limit scaled where it was not 0).
    changed: set[str] = field(repr=False)

    def __init__(self, preset: str = "quick", seed: int = 0, claim_id: str = "",
                 figure_dir: Path | None = None, kind: ClaimKind | None = None,
                 stated: Stated | None = None, mutant: Mutant | None = None,
                 cache: Cache | None = None) -> None:
        if preset not in PRESETS:
            raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}")
        integer_at_least("seed", seed, 0)
        self.preset, self.seed, self.claim_id = preset, seed, claim_id
        self.figure_dir, self.kind, self.stated = figure_dir, kind, stated
        self._mutant = mutant
        self._shared = {}
        self._shared_reads = {}
        if cache is not None and not isinstance(cache, Cache):
            raise ValueError(f"cache must be a fedtheory.cache.Cache, got {cache!r}")
        self.cache = PROCESS_CACHE if cache is None else cache
        self.reads = set()
        self.changed = set()

    @property
    def mutant(self) -> Mutant | None:
        """The mutant being run (``--power``), or None; reading it is recorded (a check that
        branches on it may change under any mutant)."""
        self.reads.add(MUTANT_READ)
        return self._mutant

    @property
    def quick(self) -> bool:
        return self.preset == "quick"

    def size(self, quick: Any, full: Any) -> Any:
        """Return ``quick`` in the quick preset and ``full`` in the full one."""
        return quick if self.quick else full

    def seed_sequence(self, stream: str = "") -> np.random.SeedSequence:
        return streams.seed_sequence(self.seed, self.claim_id, stream)

    def rng(self, stream: str = "") -> np.random.Generator:
        """A fresh generator for the named stream (PCG64, the numpy default)."""
        return streams.stream_rng(self.seed, self.claim_id, stream)

    # -- the stated side, as the claim declares it (mutated under --power) ------------------
    def const(self, name: str) -> Fraction:
        """The stated constant ``name`` (exact), scaled when the running mutant targets it.

        >>> ctx = Context(stated=Stated({"half": "1/2"}))
        >>> ctx.const("half")
        Fraction(1, 2)
        >>> Context(stated=Stated({"half": "1/2"}), mutant=Mutant("constant", "half",
        ...         Fraction(7, 10))).const("half")
        Fraction(7, 20)
        """
        if self.stated is None or name not in self.stated.constants:
            declared = sorted(self.stated.constants) if self.stated else []
            raise ValueError(f"claim {self.claim_id!r} declares no constant {name!r} "
                             f"(declared: {declared})")
        value = self.stated.constants[name]
        self.reads.add(name)
        m = self._mutant
        if m is not None and m.kind == "constant" and m.target == name:
            if value != 0:
                self.changed.add(name)
            return value * m.scale
        return value

    def factor(self, name: str, value: Any) -> Any:
        """``value``, or 1 (of the same type: ``value ** 0``) when the running mutant drops the
        stated factor ``name``."""
        if self.stated is None or name not in self.stated.factors:
            declared = list(self.stated.factors) if self.stated else []
            raise ValueError(f"claim {self.claim_id!r} declares no factor {name!r} "
                             f"(declared: {declared})")
        self.reads.add(name)
        m = self._mutant
        if m is not None and m.kind == "factor" and m.target == name:
            one = value**0
            if _differs(one, value):
                self.changed.add(name)
            return one
        return value

    def step_limit(self, value: Any) -> Any:
        """The largest step the statement allows, ``value``; relaxed (``value * scale``) when
        the running mutant relaxes the step condition. Checks take their largest step here."""
        if self.stated is None or self.stated.step is None:
            raise ValueError(f"claim {self.claim_id!r} declares no step condition")
        self.reads.add(self.stated.step)
        m = self._mutant
        if m is not None and m.kind == "step":
            relaxed = value * (float(m.scale) if isinstance(value, float) else m.scale)
            if _differs(relaxed, value):
                self.changed.add(self.stated.step)
            return relaxed
        return value

    def shared(self, key: Any, compute: Callable[[], Any]) -> Any:
        """Data several checks of one claim use, computed once per verification.

        ``compute()`` must depend only on this context (preset, seed, streams), so that a check
        run alone (``fedtheory replay``) sees the same data as in a full run.

        >>> ctx = Context(claim_id="x.demo")
        >>> calls = []
        >>> ctx.shared("n", lambda: calls.append(1) or 42), ctx.shared("n", lambda: 0), calls
        (42, 42, [1])
        """
        if key not in self._shared:
            outer, self.reads = self.reads, set()
            try:
                self._shared[key] = compute()
            finally:  # what the computation read is read by every check that uses it
                self._shared_reads[key], self.reads = self.reads, outer | self.reads
        else:
            self.reads |= self._shared_reads[key]
        return self._shared[key]

    def check_mean(self, samples: Any, stated: Any, **kw: Any) -> Evidence:
        """The Monte Carlo test the claim's kind calls for, on per-replica ``samples``.

        Upper bound: one-sided, refuted when the lower confidence limit exceeds ``stated``;
        lower bound: the mirror image; identity and closed form: two-sided. Keyword arguments
        go to :func:`fedtheory.claims.checks.check_upper_bound` / ``check_lower_bound`` /
        ``check_identity``.
        """
        if self.kind is ClaimKind.UPPER_BOUND:
            return checks.check_upper_bound(samples, stated, **kw)
        if self.kind is ClaimKind.LOWER_BOUND:
            return checks.check_lower_bound(samples, stated, **kw)
        if self.kind in (ClaimKind.IDENTITY, ClaimKind.CLOSED_FORM):
            return checks.check_identity(samples, stated, **kw)
        raise ValueError(f"claim {self.claim_id!r} of kind {self.kind} has no default Monte "
                         "Carlo test: call the one of fedtheory.claims.checks that fits")

    def figure_path(self, name: str) -> Path | None:
        """Where a figure named ``name`` (without suffix) goes, or None to skip saving: for a
        check that draws itself (the built-in checks return a :class:`Figure` instead, drawn
        by the layer above)."""
        if self.figure_dir is None:
            return None
        self.figure_dir.mkdir(parents=True, exist_ok=True)
        safe = self.claim_id.replace(".", "_")
        return self.figure_dir / f"{safe}__{name}"


@dataclass(frozen=True)
class Check:
    """One way of gathering evidence about a claim."""

    name: str
    kind: str
    func: Callable[[Context], Evidence]
    description: str = ""

    def __post_init__(self) -> None:
        if self.kind not in CHECK_KINDS:
            raise ValueError(f"check kind must be one of {CHECK_KINDS}, got {self.kind!r}")


@dataclass
class CheckResult:
    """A check's evidence, with its name, kind and timing, ready for a report."""

    name: str
    kind: str
    passed: bool | None
    measured: Any
    theoretical: Any
    detail: str
    tolerance: float | None = None
    alpha: float | None = None
    counterexample: dict[str, Any] | None = None
    figures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    neutral: bool = False
    ratio: float | None = None
    instance: dict[str, Any] | None = None
    proof: str | None = None
    search: str | None = None
    #: The stated constants, factors and step condition the check read (see ``--power``).
    reads: list[str] = field(default_factory=list)
    #: Those of them whose value the running mutant changed where the check read them.
    mutated: list[str] = field(default_factory=list)
    #: Why it could not decide, when ``passed`` is None (``"unproven"``, ...).
    undecided: str | None = None
    #: The convex programs it solved (problem, solver, status): :mod:`fedtheory.solver_log`.
    solves: list[dict[str, Any]] = field(default_factory=list)
    #: The statistical tests it decided on (:attr:`Evidence.tests`).
    tests: list[dict[str, Any]] = field(default_factory=list)
    #: Its grade (:data:`fedtheory.verdicts.CHECK_GRADES`: ``consistent (low power)`` for a
    #: pass that could not have failed, ``not testable`` for a check that cannot
    #: discriminate here), or None (a plain outcome).
    grade: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = _jsonable(asdict(self))
        if d["grade"] is None:  # the key appears only when graded (older reports lack it)
            del d["grade"]
        return d


@dataclass
class ClaimResult:
    """The verdict on a claim and the evidence behind it."""

    id: str
    family: str
    seed_ref: str
    kind: str
    statement: str
    verdict: Verdict
    checks: list[CheckResult]
    counterexample: dict[str, Any] | None
    preset: str
    seed: int
    seconds: float
    title: str = ""
    derivation: str = ""
    finding: str = ""
    #: For a bound: the largest ratio over its checks, ``{"ratio", "check", "instance"}``.
    tightness: dict[str, Any] | None = None
    #: ``fedtheory verify --power``: one entry per mutant (see :mod:`fedtheory.claims.power`).
    power: list[dict[str, Any]] | None = None
    erratum: dict[str, Any] | None = None
    #: An experiment claim's set-up card (:class:`~fedtheory.claims.setup.SetupCard`) for the
    #: preset run.
    setup: dict[str, Any] | None = None
    #: Where the claim restates the paper's statement rather than testing it as printed, and
    #: why (empty when it tests it as printed).
    restatement: str = ""
    #: ``fedtheory verify --certify``: the certified worst case of the claim's one-step
    #: inequality (:func:`fedtheory.certify.certify`); None when not asked.
    certified: dict[str, Any] | None = None
    #: The figures its checks asked for and nobody drew yet, as ``(check name, figure)``: the
    #: layer above draws them (:func:`fedtheory.plotting.figures.draw_result`, which adds
    #: their paths to the checks' ``figures``). Not part of the report.
    drawings: list[tuple[str, Figure]] = field(default_factory=list, repr=False)
    #: The grade of the verdict (:func:`fedtheory.verdicts.grade_of`): ``confirmed`` or
    #: ``consistent (low power)`` for a confirmed claim, ``not testable`` for an
    #: inconclusive one whose deciding checks all are; None otherwise.
    grade: str | None = None
    #: The readings the claim declares (:mod:`fedtheory.claims.readings`), each with its own
    #: verdict: ``{"name", "lines", "text", "checks", "verdict", "grade"}``; None: one
    #: reading.
    readings: list[dict[str, Any]] | None = None

    @property
    def errors(self) -> list[CheckResult]:
        """The checks that raised (listed beside a refutation, or the cause of ``error``)."""
        return [c for c in self.checks if c.error is not None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "family": self.family,
            "seed_ref": self.seed_ref,
            "kind": self.kind,
            "title": self.title,
            "statement": self.statement,
            "derivation": self.derivation,
            "finding": self.finding,
            "verdict": self.verdict.value,
            "checks": [c.to_dict() for c in self.checks],
            "counterexample": _jsonable(self.counterexample),
            "errors": [{"check": c.name, "detail": c.detail} for c in self.errors],
            "tightness": _jsonable(self.tightness),
            "erratum": _jsonable(self.erratum),
            "setup": _jsonable(self.setup),
            "restatement": self.restatement,
            "power": _jsonable(self.power),
            **({} if self.certified is None else {"certified": _jsonable(self.certified)}),
            **({} if self.grade is None else {"grade": self.grade}),
            **({} if self.readings is None else {"readings": _jsonable(self.readings)}),
            "preset": self.preset,
            "seed": self.seed,
            "seconds": round(self.seconds, 3),
        }


@dataclass
class Claim:
    """One statement of a seed document, with the checks that test it.

    Parameters
    ----------
    id:
        The id given in ``docs/claims.md`` (e.g. ``"ocs.closed_form"``).
    family:
        The family (``"is"``, ``"ocs"``, ...); the id's prefix.
    seed_ref:
        Seed file and place, e.g. ``"002, eq. (7)"``.
    title:
        A one-line statement for tables.
    statement:
        The full statement in LaTeX, as the seed states it.
    kind:
        A :class:`ClaimKind`.
    derivation:
        How the statement is derived and checked here (plain text or Markdown); where the seed is
        ambiguous, which reading is taken and why.
    finding:
        What the verification found, in a sentence or two a referee would write (for a refuted
        claim: what is wrong and where the corrected statement is). Shown in reports.
    expected:
        The verdict this claim reaches with the quick preset and seed 0, pinned: a refuted claim
        stays refuted unless someone shows why the seed is right after all, and a confirmed
        claim that starts failing is a regression (the test suite checks it).
    expected_full:
        The verdict the full preset reaches, where it differs from ``expected`` (the quick
        preset too small to resolve what the full one does, say: the quick one is then honestly
        ``inconclusive``); None when both presets reach ``expected``.
    stated:
        The statement's constants, factors and step condition (:class:`Stated`), read by the
        checks through the context, so that ``--power`` can mutate them.
    erratum:
        For a refuted claim: what kind of error it is (:class:`Erratum`).
    setup:
        For an experiment: its set-up card (:class:`~fedtheory.claims.setup.SetupCard`), the
        paper's set-up, the authors' code's and this run's, every deviation with its reason.
    restatement:
        Where the claim tests a reformulation of the paper's statement rather than the
        statement as printed (say what, and why it is equivalent or what it loses).
    contract:
        The statement to verify in words, as the contract (``docs/claims.md``, generated from
        it) lists it after the id: it may start with the place in the seed in parentheses.
        Empty: the title is the contract's text.
    """

    id: str
    family: str
    seed_ref: str
    title: str
    statement: str
    kind: ClaimKind
    derivation: str = ""
    checks: list[Check] = field(default_factory=list)
    finding: str = ""
    expected: Verdict | None = None
    expected_full: Verdict | None = None
    stated: Stated | None = None
    erratum: Erratum | None = None
    setup: SetupCard | None = None
    restatement: str = ""
    contract: str = ""
    #: The datasets (:func:`fedtheory.tasks.dataset`) the checks read: a run plans their
    #: tasks (:func:`fedtheory.tasks.plan_claim`) and hands in their results.
    datasets: tuple[Any, ...] = ()
    #: How the statement reads as a one-step inequality over a function class, for
    #: ``verify --certify`` (a :class:`fedtheory.certify.OneStep`, or an
    #: :class:`fedtheory.certify.OutOfScope` saying why it does not); None: not described.
    one_step: Any = None
    #: How the statement reads as a rate across rounds, for ``verify --certify`` (a
    #: :class:`fedtheory.certify.lyapunov.RateStep`, or a
    #: :class:`~fedtheory.certify.lyapunov.RateOutOfScope` saying why not); None: not a rate.
    rate: Any = None
    #: Where the seed admits more than one reading (a definition printed one way and used
    #: another, an ambiguous index, an unstated constant): the readings
    #: (:class:`fedtheory.claims.readings.Reading`), each with the seed's lines that support
    #: it and the checks that test it; each gets its own verdict. Empty: one reading.
    readings: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if not self.id.startswith(self.family + "."):
            raise ValueError(f"claim id {self.id!r} must start with its family {self.family!r}.")
        self.kind = ClaimKind(self.kind)
        self.readings = tuple(self.readings)
        if self.expected is not None:
            self.expected = Verdict(self.expected)
        if self.expected_full is not None:
            if self.expected is None:
                raise ValueError(f"claim {self.id}: expected_full needs expected (the quick "
                                 "preset's verdict)")
            self.expected_full = Verdict(self.expected_full)

    def expected_at(self, preset: str) -> Verdict | None:
        """The pinned verdict of ``preset`` (``expected``, or ``expected_full`` for the full
        preset when it is given)."""
        if preset not in PRESETS:
            raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}")
        if preset == "full" and self.expected_full is not None:
            return self.expected_full
        return self.expected

    def check(
        self, kind: str, name: str | None = None
    ) -> Callable[[Callable[[Context], Evidence]], Callable[[Context], Evidence]]:
        """Decorator: register ``func(ctx) -> Evidence`` as a check of this claim."""

        def decorate(func: Callable[[Context], Evidence]) -> Callable[[Context], Evidence]:
            check_name = name or func.__name__.lstrip("_")
            if any(c.name == check_name for c in self.checks):
                raise ValueError(f"claim {self.id} already has a check named {check_name!r}")
            doc = (func.__doc__ or "").strip()
            self.checks.append(Check(check_name, kind, func, doc))
            return func

        return decorate

    def verify(
        self,
        preset: str = "quick",
        seed: int = 0,
        figure_dir: Path | str | None = None,
        only: Sequence[str] | None = None,
        mutant: Mutant | None = None,
        reuse: Mapping[str, CheckResult] | None = None,
        cache: Cache | None = None,
    ) -> ClaimResult:
        """Run the checks (all, or those named in ``only``) and return the verdict; with
        ``mutant``, against that mutant of the stated side (see :mod:`fedtheory.claims.power`).
        ``reuse`` (check name -> result) gives results known to be the same for this run (a
        check that did not read the part a mutant changes, in a run of the same preset and
        seed): they are taken as they are instead of running the check again. ``cache``: the
        run's cache (:class:`~fedtheory.cache.Cache`; default: the process's).
        ``figure_dir``: where a check that draws itself saves (:meth:`Context.figure_path`);
        the :class:`Figure` values the checks return are not drawn here (the claims do not
        draw) but kept in the result's ``drawings``, which the layer above draws into the same
        place (:func:`fedtheory.runner.verify_one` does,
        :func:`fedtheory.plotting.figures.draw_result`).
        """
        if only is not None:
            names = [c.name for c in self.checks]
            unknown = [o for o in only if o not in names]
            if unknown:
                raise ValueError(
                    f"claim {self.id} has no check named {unknown[0]!r} (its checks: "
                    f"{', '.join(names)})")
        ctx = Context(
            preset=preset,
            seed=seed,
            claim_id=self.id,
            figure_dir=Path(figure_dir) if figure_dir is not None else None,
            kind=self.kind,
            stated=self.stated,
            mutant=mutant,
            cache=cache,
        )
        start = time.perf_counter()
        results: list[CheckResult] = []
        drawings: list[tuple[str, Figure]] = []
        for chk in self.checks:
            if only is not None and chk.name not in only:
                continue
            if reuse is not None and chk.name in reuse:
                results.append(replace(reuse[chk.name]))
                continue
            ctx.reads, ctx.changed = set(), set()
            res, figures = _run_check(chk, ctx)
            drawings += [(chk.name, f) for f in figures]
            res.reads = sorted(ctx.reads)
            res.mutated = sorted(ctx.changed)
            if res.passed is False:
                # stamped here, once, so that no check has to: how to re-create this case
                ce = res.counterexample = dict(res.counterexample or {})
                ce.setdefault("seed", seed)
                ce.setdefault("preset", preset)
                ce["replay"] = replay_command(self.id, chk.name, preset, seed)
            results.append(res)
        verdict, counterexample = combine(results)
        return ClaimResult(
            id=self.id,
            family=self.family,
            seed_ref=self.seed_ref,
            kind=self.kind.value,
            statement=self.statement,
            verdict=verdict,
            checks=results,
            counterexample=counterexample,
            preset=preset,
            seed=seed,
            seconds=time.perf_counter() - start,
            title=self.title,
            derivation=self.derivation,
            finding=self.finding,
            tightness=tightness(self.kind, results),
            erratum=self.erratum.to_dict() if self.erratum is not None else None,
            setup=self.setup.to_dict(preset) if self.setup is not None else None,
            restatement=self.restatement,
            drawings=drawings,
            grade=grade(results),
            readings=(_reading_verdicts(self.readings, [c.name for c in self.checks], results)
                      if self.readings else None),
        )


#: The claim kinds whose checks report a tightness ratio.
BOUND_KINDS = (ClaimKind.UPPER_BOUND, ClaimKind.LOWER_BOUND)


def tightness(kind: ClaimKind, results: Sequence[CheckResult]) -> dict[str, Any] | None:
    """A bound claim's tightness: the largest ratio any of its checks reached, with the check
    and the instance (None for other kinds, or when no check reported a ratio)."""
    if kind not in BOUND_KINDS:
        return None
    k = verdicts.tightest([r.ratio for r in results])
    if k is None:
        return None
    best = results[k]
    return {"ratio": best.ratio, "check": best.name, "instance": best.instance}


def replay_command(claim_id: str, check: str, preset: str, seed: int,
                   claims: str | None = None) -> dict[str, str]:
    """How to re-run exactly one check: a shell command and the equivalent Python call, as a
    report keeps them (:mod:`fedtheory.commands`; ``claims``: the file that defines a claim
    from outside the package, loaded first with ``--claims``).

    The checks draw every random number from ``(seed, claim id, stream)``, so the same preset and
    seed reproduce the same inputs and the same measured values.

    >>> replay_command("ocs.closed_form", "kkt", "quick", 0)["command"]
    'fedtheory replay ocs.closed_form --check kkt --preset quick --seed 0'
    """
    return {
        "command": commands.replay(claim_id, check, preset, seed, claims, prog=commands.RECORD),
        "python": commands.replay_python(claim_id, check, preset, seed, claims),
    }


class KindMismatch(TypeError):
    """A check's evidence is not of the kind it declares (a ``convex`` check that solved no
    convex program)."""


def _differs(a: Any, b: Any) -> bool:
    """Whether two values of a stated part differ (numbers, arrays, sympy expressions; True
    when they cannot be compared)."""
    try:
        return bool(np.any(np.asarray(a != b)))
    except Exception:  # noqa: BLE001 - incomparable values count as different
        return True


def _run_check(chk: Check, ctx: Context) -> tuple[CheckResult, list[Figure]]:
    """Run one check: its result, and the figures it asks the layer above to draw.

    The check is a sandbox of its claim (:mod:`fedtheory.sandbox`): whatever it raises
    (``SystemExit``, a ``KeyboardInterrupt`` of its own, ...) is its error, except the user's
    interrupt, which stops the run; over the run's time limit it is stopped, an error naming
    the check (and the mutant)."""
    t0 = time.perf_counter()
    solves: list[dict[str, Any]] = []
    mutant = ctx._mutant.name if ctx._mutant is not None else None
    what = f"check {chk.name} of {ctx.claim_id}" + (f" (mutant {mutant})" if mutant else "")
    sandbox.running(ctx.claim_id, chk.name, mutant)
    try:
        with solver_log.recording() as solves, sandbox.time_limit(sandbox.current_limit(),
                                                                  what):
            ev = chk.func(ctx)
        if not isinstance(ev, Evidence):
            raise TypeError(f"check {chk.name} returned {type(ev).__name__}, not Evidence")
        if ev.neutral and ev.passed is not None:
            raise TypeError(f"check {chk.name}: a neutral (figure) outcome must have passed=None")
        if chk.kind == "convex" and not solves:
            raise KindMismatch(f"check {chk.name} is of kind 'convex' but solved no convex "
                               "program (exact arithmetic is kind 'exact')")
        bad = [f for f in ev.figures if not isinstance(f, (str, Path, Figure))]
        if bad:
            raise TypeError(f"check {chk.name}: figures must be Figure values or paths, got "
                            f"{type(bad[0]).__name__}")
    except BaseException as exc:  # a crashing check is an 'error' verdict, never a silent pass
        if not sandbox.own_error(exc):
            raise  # the user's Ctrl-C / SIGTERM: the run stops
        return CheckResult(
            name=chk.name,
            kind=chk.kind,
            passed=None,
            measured=None,
            theoretical=None,
            detail=f"{type(exc).__name__}: {exc}",
            seconds=time.perf_counter() - t0,
            error="".join(traceback.format_exception(exc))[-4000:],
            solves=list(solves),
        ), []
    sandbox.raise_if_interrupted()  # a check that swallowed the user's Ctrl-C: the run stops
    if ev.passed is False and ev.counterexample is None:
        ev.counterexample = {"note": "check failed without a recorded counterexample"}
    return CheckResult(
        name=chk.name,
        kind=chk.kind,
        passed=None if ev.passed is None else bool(ev.passed),
        measured=_jsonable(ev.measured),
        theoretical=_jsonable(ev.theoretical),
        detail=ev.detail,
        tolerance=ev.tolerance,
        alpha=ev.alpha,
        counterexample=_jsonable(ev.counterexample),
        figures=[str(f) for f in ev.figures if not isinstance(f, Figure)],
        seconds=time.perf_counter() - t0,
        neutral=bool(ev.neutral),
        ratio=None if ev.ratio is None else float(ev.ratio),
        instance=_jsonable(ev.instance),
        proof=ev.proof,
        search=ev.search,
        undecided=(None if ev.passed is not None or ev.neutral
                   else ev.undecided or ("not testable" if ev.grade == verdicts.NOT_TESTABLE
                                         else "not resolved")),
        solves=list(solves),
        tests=_jsonable(list(ev.tests)),
        grade=ev.grade,
    ), [f for f in ev.figures if isinstance(f, Figure)]


def combine(results: Sequence[CheckResult]) -> tuple[Verdict, dict[str, Any] | None]:
    """Combine check results: refuted > error > inconclusive > confirmed.

    A failed check refutes the claim even when another check raised: the counterexample is
    kept and the errors are listed beside it (:attr:`ClaimResult.errors`). ``error`` means that
    a check raised and nothing refuted the claim.
    """
    verdict, k = verdicts.verdict_of(_outcomes(results))
    if k is None:
        return Verdict(verdict), None
    ce = dict(results[k].counterexample or {})
    ce.setdefault("check", results[k].name)
    return Verdict(verdict), ce


def _outcomes(results: Sequence[CheckResult]) -> list[tuple[Any, ...]]:
    return [(r.passed, r.error is not None, r.neutral, r.grade) for r in results]


def grade(results: Sequence[CheckResult]) -> str | None:
    """The grade of the verdict :func:`combine` gives (:func:`fedtheory.verdicts.grade_of`)."""
    return verdicts.grade_of(_outcomes(results))


def _reading_verdicts(readings: Sequence[Any], check_names: Sequence[str],
                      results: Sequence[CheckResult]) -> list[dict[str, Any]]:
    """Each reading's verdict and grade, from the results of its own checks (those run)."""
    from fedtheory.claims.readings import check_readings, reading_verdicts

    check_readings(readings, check_names)
    return reading_verdicts(readings, results)


def _jsonable(obj: Any) -> Any:
    """Turn numpy scalars/arrays, sympy numbers, paths and tuples into JSON-ready values."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):  # np.float64 is a float subclass: return a plain float
        return float(obj) if np.isfinite(obj) else repr(float(obj))
    if isinstance(obj, np.generic):
        return _jsonable(obj.item())
    if isinstance(obj, np.ndarray):
        return [_jsonable(x) for x in obj.tolist()] if obj.ndim else _jsonable(obj.item())
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(x) for x in obj]
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, enum.Enum):
        return obj.value
    try:  # sympy numbers and other numeric types
        return float(obj)
    except (TypeError, ValueError):
        return str(obj)

"""A claim: one statement of a seed document, its checks, and :meth:`Claim.verify`, which runs
them and combines their evidence into a verdict."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from fedtheory.cache import Cache
from fedtheory.claimkit.context import Context
from fedtheory.claimkit.evidence import Evidence, Figure
from fedtheory.claimkit.results import CheckResult, ClaimResult, combine, grade, tightness
from fedtheory.claimkit.running import Check, _reading_verdicts, _run_check, replay_command
from fedtheory.claimkit.setup import SetupCard
from fedtheory.claimkit.stated import Erratum, Mutant, Stated
from fedtheory.vocabulary import PRESETS, ClaimKind, Verdict

__all__ = ["Claim"]


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
        For an experiment: its set-up card (:class:`~fedtheory.claimkit.setup.SetupCard`), the
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
    #: (:class:`fedtheory.claimkit.readings.Reading`), each with the seed's lines that support
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
        ``mutant``, against that mutant of the stated side (see :mod:`fedtheory.claimkit.power`).
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

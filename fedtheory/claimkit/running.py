"""One check and its run: what a check is (:class:`Check`), running it in its sandbox into a
:class:`~fedtheory.claimkit.results.CheckResult`, and the command that replays it."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fedtheory import commands, sandbox, solver_log, verdicts
from fedtheory.claimkit.context import Context
from fedtheory.claimkit.evidence import Evidence, Figure
from fedtheory.claimkit.results import CheckResult, _jsonable
from fedtheory.vocabulary import CHECK_KINDS, kinds_where

__all__ = ["Check", "KindMismatch", "replay_command"]


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


class KindMismatch(TypeError):
    """A check's evidence is not of the kind it declares (a ``convex`` check that solved no
    convex program)."""


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
        if chk.kind in kinds_where("solves") and not solves:
            raise KindMismatch(f"check {chk.name} is of kind {chk.kind!r} but solved no convex "
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


def _reading_verdicts(readings: Sequence[Any], check_names: Sequence[str],
                      results: Sequence[CheckResult]) -> list[dict[str, Any]]:
    """Each reading's verdict and grade, from the results of its own checks (those run)."""
    from fedtheory.claimkit.readings import check_readings, reading_verdicts

    check_readings(readings, check_names)
    return reading_verdicts(readings, results)

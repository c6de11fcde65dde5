"""The context a check is given: the preset, the seed, its random streams, the stated side (as
the running mutant changes it) and what the check read of it, data shared by the checks of one
verification, and the test a claim's kind calls for."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from fedtheory import streams
from fedtheory.cache import PROCESS_CACHE, Cache
from fedtheory.claimkit import checks
from fedtheory.claimkit.evidence import Evidence
from fedtheory.claimkit.stated import Mutant, Stated
from fedtheory.validation import integer_at_least
from fedtheory.vocabulary import PRESETS, ClaimKind

__all__ = ["MUTANT_READ", "Context"]


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
    :mod:`fedtheory.claimkit.stated`), ``mutant`` the mutant of them being run (``--power``), if
    any. :attr:`reads` records which stated parts a check read (and whether it looked at the
    mutant itself): a check that read none of a mutant's part gives the same outcome under it,
    which :func:`fedtheory.claimkit.power.power` uses to run only the checks a mutant can change.
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
        go to :func:`fedtheory.claimkit.checks.check_upper_bound` / ``check_lower_bound`` /
        ``check_identity``.
        """
        if self.kind is ClaimKind.UPPER_BOUND:
            return checks.check_upper_bound(samples, stated, **kw)
        if self.kind is ClaimKind.LOWER_BOUND:
            return checks.check_lower_bound(samples, stated, **kw)
        if self.kind in (ClaimKind.IDENTITY, ClaimKind.CLOSED_FORM):
            return checks.check_identity(samples, stated, **kw)
        raise ValueError(f"claim {self.claim_id!r} of kind {self.kind} has no default Monte "
                         "Carlo test: call the one of fedtheory.claimkit.checks that fits")

    def figure_path(self, name: str) -> Path | None:
        """Where a figure named ``name`` (without suffix) goes, or None to skip saving: for a
        check that draws itself (the built-in checks return a :class:`Figure` instead, drawn
        by the layer above)."""
        if self.figure_dir is None:
            return None
        self.figure_dir.mkdir(parents=True, exist_ok=True)
        safe = self.claim_id.replace(".", "_")
        return self.figure_dir / f"{safe}__{name}"


def _differs(a: Any, b: Any) -> bool:
    """Whether two values of a stated part differ (numbers, arrays, sympy expressions; True
    when they cannot be compared)."""
    try:
        return bool(np.any(np.asarray(a != b)))
    except Exception:  # noqa: BLE001 - incomparable values count as different
        return True

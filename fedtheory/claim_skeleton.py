r"""``fedtheory new FAMILY.NAME --kind KIND``: the skeleton of a claim file, ready to be filled
(not SCAFFOLD, the algorithm: that is :mod:`fedtheory.algorithms.scaffold`).

The skeleton has the right shape for its kind: the statement, its stated side (``Stated``: the
constants and factors ``verify --power`` mutates), one symbolic check and one Monte Carlo
check. Each check raises ``NotImplementedError`` until it is written, so that a skeleton is
reported as ``error`` (never confirmed): an unwritten check proves nothing.

>>> text = skeleton("mine.demo", "upper-bound")
>>> "kind=ClaimKind.UPPER_BOUND" in text and text.count("NotImplementedError(") == 2
True
>>> compile(text, "mine_demo.py", "exec") is not None
True
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["KINDS", "file_name", "skeleton", "write_skeleton"]

#: ``--kind`` values and the :class:`~fedtheory.claims.ClaimKind` member each names.
KINDS = {"identity": "IDENTITY", "upper-bound": "UPPER_BOUND", "lower-bound": "LOWER_BOUND",
         "closed-form": "CLOSED_FORM", "qualitative": "QUALITATIVE"}

_ID = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)+$")

#: What each kind's statement looks like, and what its checks compare.
_SHAPES = {
    "identity": (r"\mathbb E[X] = c\,p", "equal", "(derived - stated) simplifies to 0"),
    "upper-bound": (r"\mathbb E[X] \le c\,p", "bound", "stated - derived >= 0 (a bound is an "
                    "inequality: prove it, do not compare values)"),
    "lower-bound": (r"\mathbb E[X] \ge c\,p", "bound", "derived - stated >= 0"),
    "closed-form": (r"x^\star = c\,p", "equal", "(derived - stated) simplifies to 0"),
    "qualitative": (r"\text{A beats B}", "compare", "a paired comparison (stats.compare_paired)"),
}


def file_name(claim_id: str) -> str:
    """The file a claim lives in outside the package: ``mine.demo`` -> ``mine_demo.py``."""
    return claim_id.replace(".", "_") + ".py"


def skeleton(claim_id: str, kind: str) -> str:
    """The text of a claim file for ``claim_id`` (``family.name``) of ``kind`` (a key of
    :data:`KINDS`). ``ValueError`` naming the argument for a bad id or kind."""
    if not isinstance(claim_id, str) or not _ID.match(claim_id):
        raise ValueError(f"claim id must be FAMILY.NAME in lower case (letters, digits, _), "
                         f"got {claim_id!r}")
    if kind not in KINDS:
        raise ValueError(f"--kind must be one of {', '.join(KINDS)}, got {kind!r}")
    family = claim_id.split(".", 1)[0]
    statement, _, how = _SHAPES[kind]
    mc_call = ("ctx.check_mean(samples, stated)" if kind != "qualitative" else
               "stats.compare_paired(a, b, 'better', margin=..., alpha=ctx.alpha)")
    return f'''"""{claim_id}: <one line saying what the statement is, and where it comes from>.

Written from ``fedtheory new {claim_id} --kind {kind}``. Fill in the statement, the stated
side and the two checks; until a check is written it raises NotImplementedError and the claim
is reported as ``error``.
"""

import numpy as np
import sympy as sp

from fedtheory import stats
from fedtheory.claims import Claim, ClaimKind, Evidence, Stated

CLAIM = Claim(
    id="{claim_id}", family="{family}", seed_ref="<paper, section, equation>",
    title="<a short title>", kind=ClaimKind.{KINDS[kind]},
    statement=r"{statement}",
    # the stated side, read by the checks through ctx.const / ctx.factor / ctx.step_limit,
    # so that `fedtheory verify --power` can mutate it (constants, droppable factors, step)
    stated=Stated({{"c": 1}}, factors=()),
)


@CLAIM.check("symbolic")
def derived(ctx):
    """Derive the quantity from its ingredients with sympy; {how}."""
    p = sp.symbols("p", positive=True)
    stated = sp.Rational(ctx.const("c")) * p
    raise NotImplementedError("derive the left-hand side from its ingredients, then return "
                              "Evidence(passed, measured, stated, detail)")


@CLAIM.check("monte_carlo")
def simulated(ctx):
    """Simulate the quantity and test it against the statement at level ctx.alpha."""
    rng = ctx.rng("draws")  # every random number from (seed, claim id, stream name)
    n = ctx.size(quick=100_000, full=1_000_000)
    raise NotImplementedError("draw n replicas of the quantity, then return "
                              "{mc_call}")
'''


def write_skeleton(claim_id: str, kind: str, folder: str | Path = ".") -> Path:
    """Write :func:`skeleton` to ``folder/<family>_<name>.py`` and return the path; an
    existing file is never overwritten (``ValueError`` naming it)."""
    text = skeleton(claim_id, kind)
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"--dir {str(folder)!r} is not a directory")
    path = folder / file_name(claim_id)
    if path.exists():
        raise ValueError(f"{path} exists: not overwritten (remove it, or choose another id)")
    path.write_text(text, encoding="utf-8")
    return path

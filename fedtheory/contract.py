"""The generated files of the repository: ``CATALOGUE.md`` and the generated part of the
contract ``docs/claims.md``, both derived from the claim files, so that a claim is one file.

A claim declares what the two files show of it: its contract text (``Claim.contract``: the
statement to verify in words; else its title), its seed reference, its kind, its statement and
the verdict it reaches (``expected=``, which the test suite holds to a quick run). A family
declares its title, its place and the reading order of its claims in its package
(:mod:`fedtheory.claims.family_packages`); the seeds a family covers are the ones its claims
cite. The contract's hand-written prose (what a claim must do, the notation) stays outside the
generated regions, between which :func:`render_contract` replaces the text::

    <!-- begin generated: seeds -->  ...  <!-- end generated: seeds -->
    <!-- begin generated: families -->  ...  <!-- end generated: families -->

One command rewrites both files (:data:`REGENERATE_COMMAND`:
``python -m fedtheory catalogue --regenerate``); ``tests/test_catalogue.py`` and
``tests/test_claims_doc.py`` compare the committed files with :func:`generated_files` and name
it when they differ.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from fedtheory.catalogue import (
    DECLARED_PROVENANCE,
    REGENERATE_COMMAND,
    _family_order,
    _md,
    _wrap,
    declared_verdicts,
    family_seeds,
    render_catalogue,
)
from fedtheory.claimkit.core import Claim
from fedtheory.claims.family_packages import declaration
from fedtheory.papers import PAPERS
from fedtheory.report import atomic_write_text

__all__ = ["CATALOGUE_FILE", "CONTRACT_FILE", "REGENERATE_COMMAND", "REGIONS", "contract_text",
           "generated_files", "package_claims", "regenerate", "render_contract"]

#: The two generated files, relative to the repository root.
CATALOGUE_FILE = "CATALOGUE.md"
CONTRACT_FILE = "docs/claims.md"

#: The generated regions of the contract, in the order they appear.
REGIONS = ("seeds", "families")


def _begin(name: str) -> str:
    return f"<!-- begin generated: {name} (`{REGENERATE_COMMAND}`; edit the claim files) -->"


def _end(name: str) -> str:
    return f"<!-- end generated: {name} -->"


def package_claims() -> list[Claim]:
    """The claims of the package's claim files (discovery's), in the registry's order: what
    the generated files describe (not a claim file given on a command line, nor an installed
    package's)."""
    from fedtheory.claims.registry import all_claims, discovered

    found = discovered()
    return [c for c in all_claims() if c.id in found]


def contract_text(claim: Claim) -> str:
    """The contract's line for ``claim`` (Markdown, unwrapped): ``- `id`: text``, its declared
    ``contract`` text (Markdown, which may open with the place in parentheses) or its title
    (plain text, escaped)."""
    text = claim.contract.strip()
    if not text:
        return f"- `{claim.id}`: {_md(claim.title)}"
    return f"- `{claim.id}`" + (" " if text.startswith("(") else ": ") + " ".join(text.split())


def _seeds_table(claims: Sequence[Claim]) -> list[str]:
    families = _family_order(claims)
    out = ["| seed | title | authors | kind | families |", "|---|---|---|---|---|"]
    for key in sorted(PAPERS):
        p = PAPERS[key]
        who = p.author_line + (f" (dated {p.date})" if p.date else "")
        who += f" (arXiv {p.arxiv})" if p.arxiv else ""
        fams = ", ".join(f"`{f}`" for f in families if key in family_seeds(f, claims))
        cells = [key, p.title, who, p.kind, fams]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return out


def _families(claims: Sequence[Claim]) -> list[str]:
    out: list[str] = []
    for fam in _family_order(claims):
        decl = declaration(fam)
        seeds = family_seeds(fam, claims)
        where = f" (seed{'s' if len(seeds) > 1 else ''} {', '.join(seeds)})" if seeds else ""
        out += ["", f"## Family `{fam}`" + (f": {decl.title}" if decl.title else "") + where]
        if decl.intro.strip():
            out += ["", *_wrap(" ".join(decl.intro.split()))]
        out.append("")
        for c in claims:
            if c.family == fam and not c.id.endswith(".corrected"):
                out += _wrap(contract_text(c), first="", rest="  ")
    return out[1:]


def render_contract(text: str, claims: Sequence[Claim]) -> str:
    """``text`` (the contract, ``docs/claims.md``) with its generated regions rendered anew
    from ``claims``; the hand-written text around them is kept as it is.

    Raises
    ------
    ValueError
        A region's markers are missing, repeated or out of order (the message says which).
    """
    bodies = {"seeds": _seeds_table(claims), "families": _families(claims)}
    for name in REGIONS:
        begin, end = _begin(name), _end(name)
        pattern = re.compile(r"^<!-- begin generated: " + re.escape(name) + r"\b.*?-->\n"
                             r"(.*?)^" + re.escape(end) + r"$", re.M | re.S)
        found = pattern.findall(text)
        if len(found) != 1:
            raise ValueError(f"{CONTRACT_FILE}: the generated region {name!r} must appear once "
                             f"between a line `{begin}` and a line `{end}` "
                             f"(found {len(found)})")
        text = pattern.sub(lambda _m, n=name: "\n".join([_begin(n), *bodies[n], _end(n)]),
                           text)
    return text


def generated_files(root: Path, claims: Sequence[Claim] | None = None) -> dict[str, str]:
    """Path (relative to ``root``, the repository) -> the text it must hold: the catalogue
    with the declared verdicts and the contract with its regions rendered from ``claims``
    (default: :func:`package_claims`)."""
    claims = package_claims() if claims is None else list(claims)
    catalogue = render_catalogue(claims, declared_verdicts(claims), DECLARED_PROVENANCE)
    contract = render_contract((root / CONTRACT_FILE).read_text(encoding="utf-8"), claims)
    return {CATALOGUE_FILE: catalogue, CONTRACT_FILE: contract}


def repository_root() -> Path:
    """The checkout the running package belongs to (the folder above ``fedtheory/`` holding
    ``pyproject.toml`` and ``docs/claims.md``); ``ValueError`` for an installed package."""
    from fedtheory.claim_files import package_dir

    root = package_dir().parent
    if not (root / "pyproject.toml").is_file() or not (root / CONTRACT_FILE).is_file():
        raise ValueError(f"--regenerate rewrites the files of a checkout; {root} is not one "
                         f"(no pyproject.toml and {CONTRACT_FILE}): run it from a clone")
    return root


def regenerate(root: Path | None = None, check: bool = False) -> list[str]:
    """Rewrite the generated files of the checkout ``root`` (default :func:`repository_root`)
    that are out of date, and return their relative paths; with ``check``, write nothing."""
    root = repository_root() if root is None else root
    stale = []
    for rel, text in generated_files(root).items():
        path = root / rel
        old = path.read_text(encoding="utf-8") if path.is_file() else None
        if old != text:
            stale.append(rel)
            if not check:
                atomic_write_text(path, text, rel)
    return stale

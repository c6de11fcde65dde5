"""The repository is self-contained: the contract (docs/claims.md) is in it, its generated
regions are current with the claim files (fedtheory/contract.py), and it agrees with
fedtheory/papers.py and the registry; no doc or test names a file outside the repository."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from fedtheory.claims import CATALOG, Claim, ClaimKind, all_claims
from fedtheory.claims.family_packages import Family, declaration, declared_families
from fedtheory.contract import (
    CONTRACT_FILE,
    REGENERATE_COMMAND,
    generated_files,
    package_claims,
    render_contract,
)
from fedtheory.papers import PAPERS

from ._tracked import read_text, repository_files

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "docs" / "claims.md"


def _contract() -> str:
    return CONTRACT.read_text(encoding="utf-8")


def test_the_contract_is_current_with_the_claim_files() -> None:
    """The generated regions of docs/claims.md are what the claim files declare now; the
    failure names the one command that rewrites them."""
    committed, fresh = _contract(), generated_files(ROOT)[CONTRACT_FILE]
    if fresh != committed:
        diff = "".join(list(difflib.unified_diff(
            committed.splitlines(keepends=True), fresh.splitlines(keepends=True),
            f"{CONTRACT_FILE} (committed)", f"{CONTRACT_FILE} (claim files now)", n=1))[:40])
        pytest.fail(f"{CONTRACT_FILE} is out of date with the claim files: run "
                    f"`{REGENERATE_COMMAND}` to regenerate it.\nFirst differences:\n{diff}")


def test_the_contract_lists_the_catalogs_ids_in_its_order() -> None:
    ids = list(dict.fromkeys(re.findall(r"`([a-z]+\.[a-z_0-9]+)`", _contract())))
    assert ids == [i for fam in CATALOG.values() for i in fam]


def test_every_registered_claim_is_in_the_contract_or_corrects_one() -> None:
    text = _contract()
    for c in all_claims():
        base = c.id.removesuffix(".corrected")
        assert f"`{base}`" in text, c.id


def test_families_and_seeds_match_the_claims_and_the_papers() -> None:
    """A family's heading names the seeds its claims cite; the seeds table, the papers."""
    text = _contract()
    headings = re.findall(r"^## Family `([a-z]+)`: .*\((seeds? [0-9, ]+)\)$", text, re.M)
    assert [f for f, _ in headings] == list(CATALOG) == declared_families()
    cited: dict[str, set[str]] = {}
    for c in package_claims():
        cited.setdefault(c.family, set()).update(re.findall(r"(?:^|; )(\d{3})", c.seed_ref))
    for family, seeds in headings:
        assert set(re.findall(r"\d{3}", seeds)) == cited[family], family
        assert declaration(family).title and declaration(family).title in text, family
    table = {m[0]: m[1] for m in re.findall(r"^\| (\d{3}) \| ([^|]+?) \|", text, re.M)}
    assert table == {k: p.title for k, p in PAPERS.items()}
    for key, paper in PAPERS.items():
        row = next(line for line in text.splitlines() if line.startswith(f"| {key} |"))
        families = re.findall(r"`([a-z]+)`", row.rsplit("|", 2)[-2])
        assert families == [f for f, _ in headings if key in cited[f]], key
        for author in paper.authors:
            assert author in row, (key, author)


def _new(claim_id: str, **kw: object) -> Claim:
    return Claim(id=claim_id, family=claim_id.split(".")[0], seed_ref="002, eq. (6)",
                 title="a_b < c is *new*", statement="a = b", kind=ClaimKind.IDENTITY,
                 expected="confirmed", **kw)  # type: ignore[arg-type]


def test_a_new_claim_needs_no_edit_of_the_contract() -> None:
    """A claim's line comes from its own declaration (its contract text, else its title,
    escaped), in its family's section, in the family's reading order (after the ones the family
    names); a claim of a family without a section gets one; the prose is kept."""
    claims = package_claims()
    extra = [_new("is.demo_extra"), _new("zz.other", contract="(eq. 9): x holds.")]
    text = render_contract(_contract(), [*claims, *extra])
    is_part = text.split("## Family `is`", 1)[1].split("## Family", 1)[0]
    assert "- `is.demo_extra`: a_b < c is \\*new\\*" in is_part
    assert is_part.index("`is.variance_without_replacement`") < is_part.index("`is.demo_extra`")
    assert "## Family `zz` (seed 002)\n\n- `zz.other` (eq. 9): x holds." in text
    assert text.split("<!-- begin generated", 1)[0] == _contract().split("<!-- begin gen", 1)[0]
    assert render_contract(text, claims) == _contract()  # and back


def test_the_contract_refuses_a_broken_region() -> None:
    text = _contract()
    with pytest.raises(ValueError, match="'families' must appear once"):
        render_contract(text.replace("<!-- end generated: families -->", ""), [])
    with pytest.raises(ValueError, match="'seeds' must appear once"):
        render_contract(text + text, [])


def test_family_declarations_are_checked() -> None:
    with pytest.raises(TypeError, match="position"):
        Family(title="t", position="1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="twice"):
        Family(order=("a", "a"))
    assert declaration("no_such_family") == Family()
    assert declared_families(["zz"])[-1] == "zz"


#: Paths the repository's files must not name: files outside it.
OUTSIDE = re.compile(r"\.\./shared|shared/seeds|shared/CLAIMS|\bCLAIMS\.md\b|/work/")

#: Files of other branches that still name them; the lead fixes them when merging (then
#: remove them from here: the test fails while a listed file no longer names one).
PENDING: dict[str, str] = {}

_TEXT = {".py", ".md", ".toml", ".ipynb", ".txt", ".cfg", ".ini", ".yml", ".yaml", ".sh", ""}


def _repository_files() -> list[str]:
    """The repository's text files (tracked by git: tests/_tracked.py)."""
    return [n for n in repository_files(ROOT) if Path(n).suffix in _TEXT]


def test_no_file_names_a_file_outside_the_repository() -> None:
    offenders = {}
    for name in _repository_files():
        text = read_text(ROOT, name)
        if text is None:
            continue
        found = sorted({m.group(0) for m in OUTSIDE.finditer(text)})
        if found and name != "tests/test_claims_doc.py":  # this file names them to find them
            offenders[name] = found
    unexpected = {k: v for k, v in offenders.items() if k not in PENDING}
    assert not unexpected, f"the repository must hold every file it names: {unexpected}"
    fixed = sorted(set(PENDING) - set(offenders))
    assert not fixed, f"{fixed} no longer name a file outside the repository: remove them " \
                      "from PENDING in tests/test_claims_doc.py"

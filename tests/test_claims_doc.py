"""The repository is self-contained: the contract (docs/claims.md) is in it and agrees with
fedtheory/claims/catalog.py, fedtheory/papers.py and the registry; no doc or test names a file
outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

from fedtheory.claims import CATALOG, all_claims
from fedtheory.claims.catalog import SEEDS
from fedtheory.papers import PAPERS

from ._tracked import read_text, repository_files

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "docs" / "claims.md"


def _contract() -> str:
    return CONTRACT.read_text(encoding="utf-8")


def test_the_contract_lists_the_catalogs_ids_in_its_order() -> None:
    ids = list(dict.fromkeys(re.findall(r"`([a-z]+\.[a-z_0-9]+)`", _contract())))
    assert ids == [i for fam in CATALOG.values() for i in fam]


def test_every_registered_claim_is_in_the_contract_or_corrects_one() -> None:
    text = _contract()
    for c in all_claims():
        base = c.id.removesuffix(".corrected")
        assert f"`{base}`" in text, c.id


def test_families_and_seeds_match_the_catalog_and_the_papers() -> None:
    text = _contract()
    headings = re.findall(r"^## Family `([a-z]+)`: .*\((seeds? [0-9, ]+)\)$", text, re.M)
    assert [f for f, _ in headings] == list(CATALOG)
    for family, seeds in headings:
        assert tuple(re.findall(r"\d{3}", seeds)) == SEEDS[family], family
    table = {m[0]: m[1] for m in re.findall(r"^\| (\d{3}) \| ([^|]+?) \|", text, re.M)}
    assert table == {k: p.title for k, p in PAPERS.items()}
    for key, paper in PAPERS.items():
        row = next(line for line in text.splitlines() if line.startswith(f"| {key} |"))
        families = re.findall(r"`([a-z]+)`", row.rsplit("|", 2)[-2])
        assert families == [f for f, s in SEEDS.items() if key in s], key
        for author in paper.authors:
            assert author in row, (key, author)


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

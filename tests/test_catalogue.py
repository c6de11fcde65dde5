"""``CATALOGUE.md``, :mod:`fedtheory.catalogue` and :mod:`fedtheory.papers`.

The committed catalogue must be current: it is what the claim files declare now (their
verdicts the declared ones, ``expected=``), as ``python -m fedtheory catalogue --regenerate``
writes it; no verification run is needed to add a claim.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

from fedtheory.catalogue import (
    DATA_MARKER,
    DECLARED_PROVENANCE,
    REGENERATE_COMMAND,
    declared_verdicts,
    family_seeds,
    parse_catalogue,
    read_report,
    render_catalogue,
)
from fedtheory.claims import CATALOG, Claim, ClaimKind, all_claims
from fedtheory.claims import all_claims as _all_claims
from fedtheory.contract import CATALOGUE_FILE, generated_files, package_claims
from fedtheory.papers import PAPERS, Paper, paper_for, place_in_paper, references, seed_keys

EXPECTED = {c.id: c.expected.value for c in _all_claims()}

CATALOGUE = Path(__file__).resolve().parents[1] / "CATALOGUE.md"

PROVENANCE = {
    "fedtheory_version": "0.1.0",
    "commit": "0123456789abcdef",
    "dirty": True,
    "preset": "quick",
    "seed": 0,
    "time": "2024-01-01T00:00:00+00:00",
    "python": "3.11.4",
    "packages": {"numpy": "1.26.4", "cvxpy": None},
    "argv": ["fedtheory", "verify", "--quick", "--json", "REPORT.json"],
    "note": "tricky: --> <!-- a--b > < | * _x` \\ ünïcode",
}


@pytest.fixture(scope="module")
def claims() -> list[Claim]:
    return all_claims()


@pytest.fixture(scope="module")
def committed() -> str:
    if not CATALOGUE.exists():
        pytest.fail(f"{CATALOGUE.name} is missing; generate it with `{REGENERATE_COMMAND}`")
    return CATALOGUE.read_text(encoding="utf-8")


# ------------------------------------------------------------------- (a) the file is current


def test_committed_catalogue_is_current(committed: str) -> None:
    fresh = generated_files(CATALOGUE.parent)[CATALOGUE_FILE]
    if fresh != committed:
        diff = "".join(
            list(
                difflib.unified_diff(
                    committed.splitlines(keepends=True),
                    fresh.splitlines(keepends=True),
                    "CATALOGUE.md (committed)",
                    "CATALOGUE.md (registry now)",
                    n=1,
                )
            )[:60]
        )
        pytest.fail(
            f"CATALOGUE.md is out of date with the claim files: run `{REGENERATE_COMMAND}` "
            f"to regenerate it (no verification run needed).\nFirst differences:\n{diff}"
        )


# --------------------------------------------------------------- (b) its verdicts are pinned


def test_committed_verdicts_match_pinned(claims: list[Claim], committed: str) -> None:
    verdicts, provenance = parse_catalogue(committed)
    assert provenance.get("preset") == "quick", provenance
    assert provenance.get("seed") == 0, provenance
    wrong = {
        c.id: (verdicts.get(c.id), EXPECTED.get(c.id))
        for c in claims
        if verdicts.get(c.id) != EXPECTED.get(c.id)
    }
    assert not wrong, (
        f"catalogue verdict != the pinned verdict (Claim.expected), (catalogue, pinned): {wrong}; "
        f"regenerate with `{REGENERATE_COMMAND}`"
    )


# ------------------------------------------------------------ (c) papers and ids are covered


def test_every_claim_resolves_to_a_paper(claims: list[Claim]) -> None:
    for c in claims:
        paper = paper_for(c.seed_ref)
        assert isinstance(paper, Paper)
        assert paper.key in seed_keys(c.seed_ref)
        assert place_in_paper(c.seed_ref), f"{c.id}: empty place in {c.seed_ref!r}"
        for p, place in references(c.seed_ref):
            assert p.key in PAPERS and place, f"{c.id}: {c.seed_ref!r}"


def test_every_catalog_id_and_paper_appears(claims: list[Claim], committed: str) -> None:
    missing = [i for ids in CATALOG.values() for i in ids if f"`{i}`" not in committed]
    assert not missing, f"CATALOG ids missing from CATALOGUE.md: {missing}"
    for c in claims:
        assert f"### `{c.id}`" in committed, c.id
    for key, paper in PAPERS.items():
        assert f'<a name="seed-{key}"></a>' in committed, key
        assert paper.title in committed.replace("\n", " "), paper.title


def test_the_catalogue_takes_the_declared_verdicts_and_a_new_claim_needs_no_run() -> None:
    """The catalogue's verdicts are the ones the claims declare; a new claim (here one made in
    this process, as a new file's would be) is listed under its family with its declared
    verdict, and a claim of a new family gets a section, with the seeds its claim cites."""
    claims = package_claims()
    assert declared_verdicts(claims) == {c.id: c.expected.value for c in claims}
    assert DECLARED_PROVENANCE["preset"] == "quick" and DECLARED_PROVENANCE["seed"] == 0
    extra = [Claim(id=i, family=i.split(".")[0], seed_ref="003, Theorem 9", title="t",
                   statement="a = b", kind=ClaimKind.IDENTITY, expected="refuted")
             for i in ("is.demo_extra", "zz.other")]
    text = render_catalogue([*claims, *extra], declared_verdicts([*claims, *extra]),
                            DECLARED_PROVENANCE)
    row = "| [`is.demo_extra`](#claim-is.demo_extra) | [003](#seed-003) | identity | refuted |"
    is_part = text.split('<a name="family-is"></a>', 1)[1].split('<a name="family-', 1)[0]
    assert row in is_part and "### `is.demo_extra`" in is_part
    assert "## Family `zz`" in text and family_seeds("zz", extra) == ("003",)
    assert parse_catalogue(text)[0]["zz.other"] == "refuted"


def test_family_titles_moved_to_the_family_packages() -> None:
    import fedtheory.catalogue as catalogue

    with pytest.warns(DeprecationWarning, match="declares its title"):
        titles = catalogue.FAMILY_TITLES
    assert titles["ocs"] == "optimal client sampling" and list(titles) == list(CATALOG)


def test_papers_metadata() -> None:
    assert sorted(PAPERS) == ["000", "001", "002", "003", "004"]
    for key, paper in PAPERS.items():
        assert paper.key == key and paper.title and paper.short and paper.covers
        assert paper.seed_file.startswith(f"{key}_")
    assert PAPERS["000"].authors == () and PAPERS["000"].author_line == "unsigned notes"
    assert PAPERS["002"].authors == ("Wenlin Chen", "Samuel Horváth", "Peter Richtárik")
    with pytest.raises(ValueError, match="three digits"):
        Paper("2", "x", "t", (), (), "paper", "2_x.txt", "c")


# --------------------------------------------------------- (d) deterministic, round-tripping


def test_render_is_deterministic_and_round_trips(claims: list[Claim]) -> None:
    verdicts = {**EXPECTED, "gone.claim": "refuted"}
    first = render_catalogue(claims, verdicts, PROVENANCE)
    assert render_catalogue(list(claims), dict(verdicts), dict(PROVENANCE)) == first
    parsed_v, parsed_p = parse_catalogue(first)
    assert parsed_v == verdicts
    assert parsed_p == json.loads(json.dumps(PROVENANCE))
    assert render_catalogue(claims, parsed_v, parsed_p) == first
    assert first.count(DATA_MARKER) == 1 and first.rstrip().endswith("-->")
    assert first.count("-->") == first.count("<!--")  # the tricky string did not close it
    assert "`gone.claim`" in first  # a verdict without a claim is reported


def test_provenance_keys_are_sorted(claims: list[Claim]) -> None:
    text = render_catalogue(claims[:2], None, PROVENANCE)
    section = text.split("## Provenance of the verdicts", 1)[1].split("\n## ", 1)[0]
    keys = [line.split("`")[1] for line in section.splitlines() if line.startswith("- `")]
    assert keys == sorted(keys) and "packages.numpy" in keys and "time" in keys


def test_none_is_empty_and_missing_verdicts_show(claims: list[Claim]) -> None:
    text = render_catalogue(claims, None, None)
    assert text == render_catalogue(claims, {}, {})
    assert parse_catalogue(text) == ({}, {})
    assert "**Verdict (preset not recorded):** **not run**" in text


def test_lines_are_reasonably_short(committed: str) -> None:
    prose = [
        line
        for line in committed.splitlines()
        if len(line) > 100 and not line.startswith("|") and "](#claim-" not in line
    ]
    # LaTeX tokens without spaces may exceed the width; prose may not by much.
    assert all(len(line) <= 200 for line in prose), prose


def test_parse_rejects_text_without_data() -> None:
    with pytest.raises(ValueError, match="regenerate"):
        parse_catalogue("# just some markdown\n")
    with pytest.raises(ValueError, match="not valid JSON"):
        parse_catalogue(f"{DATA_MARKER}\n{{oops\n-->\n")


def test_render_rejects_bad_inputs(claims: list[Claim]) -> None:
    with pytest.raises(TypeError, match="plain JSON"):
        render_catalogue(claims[:1], None, {"time": object()})
    with pytest.raises(TypeError, match="verdicts"):
        render_catalogue(claims[:1], {"x": 1}, None)  # type: ignore[dict-item]


def test_read_report_recomputes_and_refuses_what_does_not_hold(tmp_path: Path,
                                                                claims: list[Claim]) -> None:
    """read_report takes a finished report's verdicts from its checks (an edited verdict is
    refused, naming the file, the claim and the field), and refuses a partial report."""
    from fedtheory.report import write_json
    from fedtheory.runner import Job, run_jobs
    from fedtheory.schema import digest

    ids = ("mifa.biased", "ocs.closed_form")
    results = run_jobs([Job(i, "quick", 0) for i in ids])
    path = tmp_path / "report.json"
    write_json(path, results, 0, "quick", PROVENANCE)
    verdicts, prov = read_report(path, claims)
    assert verdicts == {"mifa.biased": "confirmed", "ocs.closed_form": "refuted"}
    assert prov == {**json.loads(json.dumps(PROVENANCE)), "path": str(path.resolve())}
    text = render_catalogue(claims, verdicts, prov)
    assert parse_catalogue(text) == (verdicts, json.loads(json.dumps(prov)))

    doc = json.loads(path.read_text())
    doc["claims"][1]["verdict"] = "confirmed"
    doc["claims"][1]["digest"] = digest(doc["claims"][1])  # even with its digest redone
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"report .*report.json: claims\[1\] "
                                         r"\(ocs.closed_form\): verdict: 'confirmed' is not "
                                         r"what its checks give \('refuted'\)"):
        read_report(path, claims)
    write_json(path, results, 0, "quick", PROVENANCE, complete=False)
    with pytest.raises(ValueError, match="did not finish"):
        read_report(path, claims)
    path.write_text(json.dumps({"claims": [{"id": "x"}]}))
    with pytest.raises(ValueError, match="version"):
        read_report(path)
    path.write_text("not json")
    with pytest.raises(ValueError, match="not readable JSON"):
        read_report(path)


# ---------------------------------------------------------------------- (e) bad seed_ref


@pytest.mark.parametrize("seed_ref", ["999, eq. (1)", "eq. (7)", "", "2, eq. (1)"])
def test_bad_seed_ref_raises(seed_ref: str) -> None:
    with pytest.raises(ValueError, match="seed_ref") as info:
        paper_for(seed_ref)
    assert repr(seed_ref) in str(info.value)
    with pytest.raises(ValueError):
        place_in_paper(seed_ref)


def test_render_rejects_claim_with_unknown_seed() -> None:
    bad = Claim(id="x.y", family="x", seed_ref="042, eq. (1)", title="t", statement="a = b",
                kind=ClaimKind.IDENTITY)
    with pytest.raises(ValueError, match="'042'"):
        render_catalogue([bad], None, None)


def test_place_in_paper() -> None:
    assert place_in_paper("002, eq. (7)") == "eq. (7)"
    assert place_in_paper("003") == ""
    assert seed_keys("000, a; 002, b; 000, c") == ("000", "002")

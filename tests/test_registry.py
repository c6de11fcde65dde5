"""Registry-driven tests: every claim of a finished family is registered, has checks, and
verifies (quick preset) to the verdict pinned in ``expected_verdicts.py``."""

import re
from pathlib import Path

import pytest

from fedtheory.claims import CATALOG, CHECK_KINDS, FINISHED_FAMILIES, Verdict, all_claims
from fedtheory.claims.registry import get_claim, select

from .expected_verdicts import EXPECTED

CLAIMS_MD = Path(__file__).resolve().parents[2] / "shared" / "CLAIMS.md"
ALL = all_claims()


def test_catalog_matches_claims_md():
    if not CLAIMS_MD.exists():
        pytest.skip(f"{CLAIMS_MD} not present (only in the development checkout)")
    ids = list(dict.fromkeys(re.findall(r"`([a-z]+\.[a-z_0-9]+)`", CLAIMS_MD.read_text())))
    assert ids == [i for fam in CATALOG.values() for i in fam] or sorted(ids) == sorted(
        i for fam in CATALOG.values() for i in fam
    )


@pytest.mark.parametrize("family", FINISHED_FAMILIES)
def test_finished_family_fully_registered(family):
    registered = {c.id for c in ALL}
    missing = [i for i in CATALOG[family] if i not in registered]
    assert not missing, f"claims of {family} not registered: {missing}"


def test_every_claim_is_well_formed():
    known = {i for fam in CATALOG.values() for i in fam}
    for c in ALL:
        assert c.checks, f"{c.id} has no check"
        assert c.id in known or (c.id.endswith(".corrected") and
                                 c.id.removesuffix(".corrected") in known), c.id
        assert c.statement.strip() and c.title.strip() and c.seed_ref.strip(), c.id
        assert all(ch.kind in CHECK_KINDS for ch in c.checks)
        assert len({ch.name for ch in c.checks}) == len(c.checks)


def test_every_registered_claim_has_a_pinned_verdict():
    assert sorted(EXPECTED) == sorted(c.id for c in ALL)


@pytest.mark.parametrize("claim", ALL, ids=[c.id for c in ALL])
def test_quick_verdict(claim, tmp_path):
    res = claim.verify(preset="quick", seed=0, figure_dir=tmp_path)
    errors = [f"{c.name}: {c.error}" for c in res.checks if c.error]
    assert res.verdict is not Verdict.ERROR, "\n".join(errors)
    assert res.verdict.value == EXPECTED[claim.id], [
        (c.name, c.passed, c.detail) for c in res.checks
    ]
    if res.verdict is Verdict.REFUTED:
        assert res.counterexample, "a refuted claim must carry a counterexample"
    for c in res.checks:
        if c.passed is not False:
            continue
        # Every counterexample re-runs: its replay reproduces exactly that check's numbers.
        replay = c.counterexample["replay"]
        assert replay["command"] == (f"fedtheory replay {claim.id} --check {c.name} "
                                     "--preset quick --seed 0")
        (again,) = claim.verify(preset="quick", seed=0, only=[c.name]).checks
        assert _without_seconds(again.to_dict()) == _without_seconds(c.to_dict()), c.name
    for c in res.checks:
        for fig in c.figures:
            assert Path(fig).exists(), fig


def _without_seconds(d):
    return {k: v for k, v in d.items() if k not in ("seconds", "figures")}


@pytest.mark.slow
@pytest.mark.parametrize("claim", ALL, ids=[c.id for c in ALL])
def test_full_verdict(claim, tmp_path):
    """The seed's own sizes reach the same verdict as the quick preset (about 40 CPU-minutes in
    all; CI runs these with two workers)."""
    res = claim.verify(preset="full", seed=0, figure_dir=tmp_path)
    errors = [f"{c.name}: {c.error}" for c in res.checks if c.error]
    assert res.verdict is not Verdict.ERROR, "\n".join(errors)
    assert res.verdict.value == EXPECTED[claim.id], [
        (c.name, c.passed, c.detail) for c in res.checks
    ]


def test_unknown_id_and_family_give_close_matches():
    with pytest.raises(ValueError, match="closest matches: ocs.closed_form"):
        get_claim("ocs.closed_from")
    with pytest.raises(ValueError, match="unknown family"):
        select(family="osc")

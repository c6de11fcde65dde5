"""The licence and the citation file: LICENSE is MIT, as pyproject.toml says, and CITATION.cff
(Citation File Format 1.2.0, what GitHub and Zenodo read) cites this version."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11 (3.10 has no TOML reader)
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_the_licence_is_mit_as_pyproject_says() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n"), text[:40]
    assert re.search(r"^Copyright \(c\) 2026 the fedtheory authors$", text, re.M)
    assert "THE SOFTWARE IS PROVIDED \"AS IS\"" in text
    assert _pyproject()["license"] == {"text": "MIT"}


def test_the_citation_file_is_cff_1_2_and_cites_this_version() -> None:
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    # the schema's required keys (cff-version, message, title, authors) and their types
    assert cff["cff-version"] == "1.2.0"
    assert isinstance(cff["message"], str) and cff["message"].strip()
    assert isinstance(cff["title"], str) and "fedtheory" in cff["title"]
    assert cff["authors"] == [{"name": "The fedtheory authors"}]  # an entity, not a person
    assert cff["type"] == "software"
    assert cff["license"] == "MIT"
    assert str(cff["version"]) == _pyproject()["version"]

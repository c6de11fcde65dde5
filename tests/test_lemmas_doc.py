"""docs/lemmas.md is run: its Python blocks, in order, in one namespace, from a folder outside
the source tree (what a reader pastes must work)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "lemmas.md"


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def test_the_toolbox_page_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    blocks = _blocks()
    assert len(blocks) >= 8, "the page shows every building block with an example"
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "lemmas_doc"}
    for k, block in enumerate(blocks):
        exec(compile(block, f"{DOC.name} block {k + 1}", "exec"), namespace)  # noqa: S102
    out = capsys.readouterr().out.split()
    assert "proved" in out  # the bound's slack is proved, not only searched
    assert namespace["result"].verdict.value == "confirmed"


def test_the_page_names_only_what_exists() -> None:
    """Every file the page links is in the repository."""
    text = DOC.read_text(encoding="utf-8")
    for link in re.findall(r"\]\(([^)#]+)\)", text):
        assert (DOC.parent / link).exists(), link

"""docs/architecture.md's layer table is the layer contract of pyproject.toml.

The table (section "The layers") has one row per group of layers; its modules cell lists the
group's layers from top to bottom separated by ``>``, the independent siblings of one layer by
``\\|``, each module in backticks (a package with a trailing ``/``). Read top to bottom, the
rows must give exactly the contract's ``layers``: the same modules, each in the same layer, the
layers in the same order; and the contract must name every top-level module of ``fedtheory``.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11 (3.10 has no TOML reader)

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"

Layers = list[frozenset[str]]


def contract_layers(pyproject: str) -> Layers:
    """The ``layers`` of the contract with id ``layers`` in ``[tool.importlinter]``."""
    contracts = tomllib.loads(pyproject)["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contracts if c.get("id") == "layers"]
    return [frozenset(m.strip() for m in layer.split("|")) for layer in layers]


def doc_layers(markdown: str) -> Layers:
    """The layers of the table of the section "## The layers", top to bottom.

    >>> layers = doc_layers("## The layers\\n\\n| layer | modules | what |\\n|---|---|---|\\n"
    ...                     "| a | `x` > `y/` \\\\| `z` | text |\\n| b | `w` | text |\\n"
    ...                     "\\n## Next\\n")
    >>> [sorted(layer) for layer in layers]
    [['x'], ['y', 'z'], ['w']]
    """
    section = re.split(r"^## The layers$", markdown, maxsplit=1, flags=re.M)[1]
    section = re.split(r"^## ", section, maxsplit=1, flags=re.M)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    header, rule, *body = rows
    assert "modules" in header and set(rule) <= set("|-: "), "the table's header is missing"
    out = []
    for row in body:
        cells = re.split(r"(?<!\\)\|", row.strip())[1:-1]
        for layer in cells[1].split(">"):
            names = {name.strip().strip("`").rstrip("/") for name in re.split(r"\\\||,", layer)}
            assert all(re.fullmatch(r"\w+", n) for n in names), f"not a module name: {row}"
            out.append(frozenset(names))
    return out


def differences(doc: Layers, contract: Layers) -> list[str]:
    """What the table gets wrong against the contract, one line each (none: they agree): the
    modules only one of them names, then, over the modules both name, each run of layers
    that differs (a layer split, merged, moved or given other modules).

    >>> differences([frozenset({"a"}), frozenset({"b", "c"}), frozenset({"e"})],
    ...             [frozenset({"a"}), frozenset({"b"}), frozenset({"e", "d"})])
    ['c: in the table, not in the contract', 'd: in the contract, not in the table']
    >>> differences([frozenset({"a", "b"}), frozenset({"c"})],
    ...             [frozenset({"a"}), frozenset({"b"}), frozenset({"c"})])
    ['layers: the table has `a | b`, the contract `a` > `b`']
    """
    in_doc, in_contract = set().union(*doc), set().union(*contract)
    out = [f"{m}: in the table, not in the contract" for m in sorted(in_doc - in_contract)]
    out += [f"{m}: in the contract, not in the table" for m in sorted(in_contract - in_doc)]
    both = in_doc & in_contract
    a = [" | ".join(sorted(layer & both)) for layer in doc if layer & both]
    b = [" | ".join(sorted(layer & both)) for layer in contract if layer & both]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            out.append(f"layers: the table has {' > '.join(f'`{x}`' for x in a[i1:i2]) or 'none'}"
                       f", the contract {' > '.join(f'`{x}`' for x in b[j1:j2]) or 'none'}")
    return out


def top_level_modules() -> set[str]:
    """Every module and package directly under ``fedtheory/`` (``__init__`` aside)."""
    package = ROOT / "fedtheory"
    files = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    return files | {p.parent.name for p in package.glob("*/__init__.py")}


def test_the_layer_table_is_the_contract() -> None:
    doc = doc_layers(DOC.read_text(encoding="utf-8"))
    contract = contract_layers((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    wrong = differences(doc, contract)
    assert not wrong, ("docs/architecture.md's layer table and pyproject.toml's "
                       "[tool.importlinter] layers differ:\n" + "\n".join(wrong))


def test_the_contract_names_every_top_level_module() -> None:
    contract = contract_layers((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set().union(*contract)
    assert listed == top_level_modules(), (
        f"not in the contract: {sorted(top_level_modules() - listed)}; "
        f"in the contract, not in fedtheory/: {sorted(listed - top_level_modules())}")

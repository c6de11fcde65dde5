"""The public API (docs/api.md) held to the code and to the pages that teach it.

* every name of docs/api.md imports from its one documented module, without a deprecation;
* every ``from fedtheory... import ...`` / ``import fedtheory...`` of the documentation (README,
  CONTRIBUTING, docs/*.md, the worked lemmas docs/lemmas/**/*.py) and of the skeleton ``fedtheory
  new`` writes names a listed name at its documented module;
* every moved name (``fedtheory.deprecation.MOVED``, shown in docs/api.md's last table) still
  imports from its old place, as the same object, with a ``DeprecationWarning`` naming the new
  place; every module that calls ``moved`` has its rows in the table.
"""

from __future__ import annotations

import ast
import importlib
import re
import warnings
from pathlib import Path

import pytest

from fedtheory.claim_skeleton import KINDS, skeleton
from fedtheory.claims import MOVED as CLAIMS_MOVED
from fedtheory.deprecation import MOVED, moves_of

ROOT = Path(__file__).resolve().parent.parent
API = ROOT / "docs" / "api.md"

_HEADING = re.compile(r"^##\s+`(fedtheory(?:\.\w+)*)`\s*$")
_ROW = re.compile(r"^\|\s*`(\w+)`\s*\|(.*)\|\s*$")
_MOVED_ROW = re.compile(r"^\|\s*`([\w.:]+)`\s*\|\s*`([\w.:]+)`\s*\|")
_FROM = re.compile(r"^[ \t]*(?:>>> |\.\.\. )?from[ \t]+(fedtheory(?:\.\w+)*)[ \t]+import[ \t]+"
                   r"(\([^)]*\)|[^\n#]*)", re.M)
_IMPORT = re.compile(r"^[ \t]*(?:>>> |\.\.\. )?import[ \t]+(fedtheory[\w. \t,]*)", re.M)


def documented(text: str) -> dict[tuple[str, str], str]:
    """``(module, name) -> what it is`` of the tables under the ``## `module``` headings."""
    out: dict[tuple[str, str], str] = {}
    module = None
    for line in text.splitlines():
        if line.startswith("## "):
            m = _HEADING.match(line)
            module = m.group(1) if m else None
        elif module is not None and (m := _ROW.match(line)):
            key = (module, m.group(1))
            assert key not in out, f"docs/api.md lists {module}:{m.group(1)} twice"
            out[key] = m.group(2).strip()
    return out


def moved_rows(text: str) -> dict[str, str]:
    """The rows of docs/api.md's "Moved names" table: old place -> new place."""
    _, _, section = text.partition("## Moved names")
    return {m.group(1): m.group(2) for line in section.splitlines()
            if (m := _MOVED_ROW.match(line))}


def imported(text: str) -> set[tuple[str, str]]:
    """``(module, name)`` of every fedtheory import in ``text`` (Markdown or Python, doctest
    prompts too): ``from m import a, b as c`` gives ``(m, a), (m, b)``; ``import m.x`` gives
    ``(m, x)``; ``import fedtheory`` alone gives nothing.

    >>> sorted(imported("from fedtheory.claims import (Claim,\\n    Stated as S)\\n"
    ...                 ">>> import fedtheory.stats as st, fedtheory\\n"))
    [('fedtheory', 'stats'), ('fedtheory.claims', 'Claim'), ('fedtheory.claims', 'Stated')]
    """
    out = set()
    for m in _FROM.finditer(text):
        for part in m.group(2).strip().strip("()").replace("\n", " ").split(","):
            name = part.split(" as ")[0].strip()
            if name:
                out.add((m.group(1), name))
    for m in _IMPORT.finditer(text):
        for part in m.group(1).split(","):
            dotted = part.split(" as ")[0].strip()
            if "." in dotted:
                out.add(tuple(dotted.rsplit(".", 1)))
    return out


def pages() -> dict[str, str]:
    """The documentation users read, by path (relative to the repository), and the skeletons of
    ``fedtheory new``."""
    files = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "docs" / "lemmas").rglob("*.py"))]
    out = {str(f.relative_to(ROOT)): f.read_text(encoding="utf-8") for f in files}
    out.update({f"fedtheory new --kind {kind}": skeleton("mine.demo", kind) for kind in KINDS})
    return out


def load(module: str, name: str) -> object:
    """What ``from module import name`` gives (a submodule too)."""
    mod = importlib.import_module(module)
    if hasattr(mod, name):
        return getattr(mod, name)
    return importlib.import_module(f"{module}.{name}")


API_NAMES = documented(API.read_text(encoding="utf-8")) if API.is_file() else {}


def test_the_page_lists_names() -> None:
    assert API.is_file(), "docs/api.md, the list of public names, is missing"
    assert len(API_NAMES) > 40 and all(API_NAMES.values()), "every row says what the name is"


@pytest.mark.parametrize("module,name", sorted(API_NAMES), ids=":".join)
def test_every_documented_name_imports_from_its_place(module: str, name: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert load(module, name) is not None
    moved = [w for w in caught if "has moved" in str(w.message)]
    assert not moved, f"{module}:{name} is documented at an old place: {moved[0].message}"


def test_the_documentation_imports_only_documented_names() -> None:
    used = {path: imported(text) for path, text in pages().items()}
    assert used["docs/lemmas.md"] and used["docs/lemmas/hetero_fixed_point.py"], "scan sees none"
    wrong = sorted(f"{path}: from {m} import {n}" for path, names in used.items()
                   for m, n in names if (m, n) not in API_NAMES)
    hint = {n: m for m, n in API_NAMES}
    assert not wrong, ("not documented in docs/api.md (or not at that module): " + "; ".join(
        w + (f" (documented at {hint[w.rsplit(' ', 1)[1]]})" if w.rsplit(" ", 1)[1] in hint
             else "") for w in wrong))


def test_the_scan_sees_every_form_of_import() -> None:
    text = ("```python\nfrom fedtheory.x import (\n    A,\n    b as c,\n)\n```\n"
            "    >>> from fedtheory import y  # a comment\n"
            "import fedtheory.z.w as q\n")
    assert imported(text) == {("fedtheory.x", "A"), ("fedtheory.x", "b"), ("fedtheory", "y"),
                              ("fedtheory.z", "w")}


def _moved_names() -> list[tuple[str, str]]:
    """Every old place of :data:`MOVED` as ``("old.module:name", "new.module:name")``: a whole
    module's row stands for each public name of its new module."""
    out = []
    for old, new in sorted(MOVED.items()):
        if old in CLAIMS_MOVED:  # no file at the old place: fedtheory.claims' import hook
            continue             # serves the module itself (tests/test_claimkit.py)
        if ":" in old:
            out.append((old, new))
            continue
        target = importlib.import_module(new)
        names = getattr(target, "__all__", None) or [
            n for n in vars(target) if not n.startswith("_")]
        out.extend((f"{old}:{n}", f"{new}:{n}") for n in names)
    return out


@pytest.mark.parametrize("old,new", _moved_names())
def test_a_moved_name_still_imports_from_its_old_place(old: str, new: str) -> None:
    old_module, _, old_name = old.partition(":")
    new_module, _, new_name = new.partition(":")
    with pytest.warns(DeprecationWarning) as caught:
        value = getattr(importlib.import_module(old_module), old_name)
    assert value is getattr(importlib.import_module(new_module), new_name)
    messages = [str(w.message) for w in caught if w.category is DeprecationWarning]
    assert any(f"from {new_module} import {new_name}" in m for m in messages), messages


def test_the_moved_table_is_the_documented_one() -> None:
    text = API.read_text(encoding="utf-8")
    assert moved_rows(text) == MOVED, "docs/api.md's 'Moved names' table and " \
                                      "fedtheory.deprecation.MOVED differ"


def test_every_shim_has_its_rows() -> None:
    """A module that calls ``moved(...)`` has rows in MOVED, and the names it passes itself are
    rows too (the documentation and the tests read the table)."""
    shims = []
    for path in sorted((ROOT / "fedtheory").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "moved"):
                continue
            shims.append(module)
            whole, names = moves_of(module)
            assert whole is not None or names, f"{module} calls moved() but has no row in MOVED"
            if len(node.args) > 1 and isinstance(node.args[1], ast.Dict):
                given = ast.literal_eval(node.args[1])
                missing = {k: v for k, v in given.items() if names.get(k) != v}
                assert not missing, f"{module}: moves {missing} not in fedtheory.deprecation.MOVED"
    assert "fedtheory.scaffold" in shims
    registered = {key.split(":", 1)[0] for key in MOVED} - set(CLAIMS_MOVED)
    assert registered <= set(shims), f"rows of MOVED without a shim: {registered - set(shims)}"
    # the framework's old places are served by fedtheory.claims' import hook, from this table
    assert CLAIMS_MOVED and all(MOVED[old] == new for old, new in CLAIMS_MOVED.items())

"""The claim index (fedtheory.index): ids from file names, the cached texts, and the command
line's fast start: ``--help``, ``--version``, ``list``, ``show ID`` and an unknown id answered
without importing the claims, and still right when claim files are added, edited or removed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fedtheory import index
from fedtheory.claims import all_claims, registry
from tests._demo import CLAIM_TEMPLATE as _CLAIM
from tests._demo import demo_package


def test_every_claim_file_is_named_after_its_claim() -> None:
    """The listing the command line reads without importing is the registry's discovery."""
    assert index.file_ids() == dict(sorted(registry.discovered().items()))
    assert {c.id for c in all_claims()} >= set(index.file_ids())


@pytest.mark.parametrize("module,claim_id", [
    ("fedtheory.claims.ocs.closed_form", "ocs.closed_form"),
    ("fedtheory.claims.ocs.closed_form_corrected", "ocs.closed_form.corrected"),
    ("fedtheory.claims.is.unbiased", "is.unbiased"),
    ("fedtheory.claims.power", None),
    ("fedtheory.claims.demo._corrected", "demo._corrected"),
])
def test_claim_id_for_module(module: str, claim_id: str | None) -> None:
    assert index.claim_id_for_module(module) == claim_id
    with pytest.raises(ValueError, match="not under fedtheory.claims"):
        index.claim_id_for_module("fedtheory.report")


def test_the_index_holds_what_list_and_show_print() -> None:
    infos = {i.id: i for i in index.load_index()}
    assert list(infos) == [c.id for c in all_claims()]
    for c in all_claims():
        i = infos[c.id]
        assert (i.family, i.kind, i.title, i.seed_ref, i.statement, i.finding, i.derivation) == (
            c.family, c.kind.value, c.title, c.seed_ref, c.statement, c.finding, c.derivation)
        assert [(k.name, k.kind, k.description) for k in i.checks] == [
            (k.name, k.kind, k.description) for k in c.checks]
        assert i.expected == c.expected.value and i.module == registry.discovered()[c.id]


def test_unknown_ids_and_families_fail_with_the_closest_matches() -> None:
    with pytest.raises(ValueError, match=r"unknown claim id 'ocs.closed_from'; closest matches: "
                                         r"ocs.closed_form"):
        index.check_ids(["ocs.closed_form", "ocs.closed_from"])
    with pytest.raises(ValueError, match=r"unknown family 'oc' \(known: "):
        index.check_family("oc")
    index.check_family("ocs")


def _run(root: Path, *args: str, code: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    argv = ["-c", code] if code else ["-m", "fedtheory", *args]
    return subprocess.run([sys.executable, *argv], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)


#: What the fast commands may import: no claim module, and none of the heavy libraries.
_HEAVY = ("fedtheory.claims", "numpy", "sympy", "scipy", "cvxpy")


def _imports(root: Path, *args: str) -> list[str]:
    code = (f"import sys\nfrom fedtheory.cli import main\ntry:\n    main({list(args)!r})\n"
            "except SystemExit:\n    pass\nprint('IMPORTED', ' '.join(sorted(sys.modules)))")
    proc = _run(root, code=code)
    line = [x for x in proc.stdout.splitlines() if x.startswith("IMPORTED ")]
    assert line, proc.stderr[-2000:]
    return [m for m in line[0].split()[1:] if m.startswith(_HEAVY)]


def test_verifying_one_claim_imports_its_module_alone(tmp_path: Path) -> None:
    """``verify ID`` (and a worker's ``get_claim``) imports the claim's own module, not every
    claim: the second demo claim is never imported, and the run's verdict is the claim's."""
    root = demo_package(tmp_path, {n: _CLAIM.format(name=n, slow=False, what="")
                                   for n in ("one", "two")})
    mods = [m for m in _imports(root, "verify", "demo.one", "--quick", "--no-record",
                                "--no-progress", "--jobs", "1")
            if m.startswith("fedtheory.claims.demo.")]
    assert mods == ["fedtheory.claims.demo.one"]
    proc = _run(root, "verify", "demo.one", "--quick", "--no-record", "--no-progress")
    assert proc.returncode == 0 and "confirmed: 1" in proc.stdout, proc.stderr[-2000:]
    # a file holding another claim than its name says is refused, as by discovery
    demo = root / "fedtheory" / "claims" / "demo"
    (demo / "two.py").write_text(_CLAIM.format(name="one", slow=False, what=""))
    proc = _run(root, "verify", "demo.two", "--quick", "--no-record", "--no-progress")
    assert proc.returncode == 2 and "this file must hold 'demo.two'" in proc.stderr, proc.stderr


def test_fast_commands_import_no_claim(tmp_path: Path) -> None:
    """--help, --version, an unknown id (in a fresh copy: no cache), then, once the cache is
    built, list and show ID: none imports a claim, numpy, sympy, scipy or cvxpy. A new claim
    file is listed (the cache is rebuilt), an edited title shown, a removed claim gone."""
    root = demo_package(tmp_path, {"one": _CLAIM.format(name="one", slow=False, what="")})
    for args in (["--help"], ["--version"], ["show", "demo.on"], ["verify", "demo.on"],
                 ["replay", "demo.x", "--check", "c"], ["list", "--family", "dmo"]):
        assert _imports(root, *args) == [], args
    proc = _run(root, "show", "demo.on")
    assert proc.returncode == 2
    assert proc.stderr == ("fedtheory: error: unknown claim id 'demo.on'; closest matches: "
                           "demo.one\n")
    assert "demo.one" in _run(root, "list").stdout  # builds the cache
    assert index.cache_path(root / "fedtheory").exists()
    assert _imports(root, "list") == [] and _imports(root, "show", "demo.one") == []
    assert "demo one" in _run(root, "show", "demo.one").stdout

    demo = root / "fedtheory" / "claims" / "demo"
    (demo / "two.py").write_text(_CLAIM.format(name="two", slow=False, what=""))
    out = _run(root, "list").stdout
    assert "demo.two" in out and "2 claims" in out
    (demo / "one.py").write_text(_CLAIM.format(name="one", slow=False, what="").replace(
        'title="demo one"', 'title="edited title"'))
    assert "edited title" in _run(root, "list").stdout
    assert "edited title" in _run(root, "show", "demo.one").stdout
    (demo / "two.py").unlink()
    out = _run(root, "list").stdout
    assert "demo.two" not in out and "1 claims" in out
    assert _run(root, "show", "demo.two").returncode == 2


def test_show_with_a_stale_index_imports_only_its_claim(tmp_path: Path) -> None:
    root = demo_package(tmp_path, {n: _CLAIM.format(name=n, slow=False, what="")
                                   for n in ("one", "two")})
    code = ("import sys\nfrom fedtheory.cli import main\nmain(['show', 'demo.two'])\n"
            "print('IMPORTED', ' '.join(m for m in sys.modules if 'claims.demo.' in m))")
    proc = _run(root, code=code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines()[-1] == "IMPORTED fedtheory.claims.demo.two"
    assert not index.cache_path(root / "fedtheory").exists()  # show does not build it


def test_a_claim_file_named_after_another_claim_is_refused(tmp_path: Path) -> None:
    root = demo_package(tmp_path, {"one": _CLAIM.format(name="two", slow=False, what="")})
    proc = _run(root, "verify", "demo.one", "--quick")
    assert proc.returncode != 0
    assert "one.py defines claim 'demo.two', but a claim file is named after its claim: this " \
           "file must hold 'demo.one'" in proc.stderr


def _package_files(pkg: Path) -> set[str]:
    """The files of a package folder, byte code aside."""
    return {p.relative_to(pkg).as_posix() for p in pkg.rglob("*")
            if p.is_file() and p.suffix != ".pyc"}


def test_nothing_is_written_inside_the_package(tmp_path: Path) -> None:
    """``list`` and ``verify`` keep the index in the cache folder (FEDTHEORY_CACHE_DIR here),
    never in the package: a file left in an installed package outlives ``pip uninstall`` and
    makes the leftover folder a namespace package that hides the next install."""
    root = demo_package(tmp_path / "src", {"one": _CLAIM.format(name="one", slow=False,
                                                                what="")})
    pkg = root / "fedtheory"
    before = _package_files(pkg)
    env = {**os.environ, "PYTHONPATH": str(root), index.CACHE_ENV: str(tmp_path / "c")}
    for args in (["list"], ["list"], ["verify", "--quick", "--no-progress", "--no-record"]):
        proc = subprocess.run([sys.executable, "-m", "fedtheory", *args], env=env,
                              cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0 and "demo.one" in proc.stdout, proc.stderr
    assert _package_files(pkg) == before
    assert index.cache_path(pkg).name in {p.name for p in (tmp_path / "c").iterdir()} <= {
        index.cache_path(pkg).name, "numba"}  # (numba: the compiled kernels, if installed)


def test_the_cache_folder_is_the_users_unless_told(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(index.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    from platformdirs import user_cache_dir

    assert index.cache_dir() == Path(user_cache_dir("fedtheory", appauthor=False))
    monkeypatch.setenv(index.CACHE_ENV, str(tmp_path / "mine"))
    assert index.cache_dir() == tmp_path / "mine"
    assert index.cache_path().parent == tmp_path / "mine"


def test_two_installs_never_share_an_index(tmp_path: Path, monkeypatch) -> None:
    """One file per package folder and version."""
    import fedtheory

    a, b = index.cache_path(tmp_path / "a"), index.cache_path(tmp_path / "b")
    assert a != b and a.parent == b.parent == index.cache_dir()
    monkeypatch.setattr(fedtheory, "__version__", "0.0.0+other")
    assert index.cache_path(tmp_path / "a") != a


def test_an_unwritable_cache_folder_is_no_error(tmp_path: Path, monkeypatch) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv(index.CACHE_ENV, str(blocked / "cache"))
    infos = index.load_index()
    assert infos and index._write_cache(index.package_dir(), "fp", infos) is None
    assert index._read_cache(index.package_dir(), "fp") is None
    assert index._read_cache(index.package_dir(), "other") is None

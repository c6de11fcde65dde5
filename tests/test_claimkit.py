"""The claim framework in its own package (fedtheory.claimkit), the families in fedtheory.claims:
the public names keep their documented place without a warning, the framework's old module
paths keep working with a DeprecationWarning naming the new place, and the built-in claims use
none of them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import fedtheory

_ROOT = str(Path(fedtheory.__file__).parent.parent)


def _run(code: str, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": _ROOT}
    return subprocess.run([sys.executable, *flags, "-c", code], env=env, capture_output=True,
                          text=True, timeout=600)


def test_the_public_names_import_without_a_warning() -> None:
    done = _run("import fedtheory.claims as c\n"
                "from fedtheory.claims import *\n"
                "from fedtheory.claims import Claim, Context, Evidence, Stated, checks\n"
                "assert checks.__name__ == 'fedtheory.claimkit.checks'\n"
                "print(sorted(c.__all__))", "-W", "error::DeprecationWarning")
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_old_module_paths_warn_and_give_the_moved_module() -> None:
    code = """
import importlib, json, warnings
import fedtheory.claims
out = {}
for old, new in sorted(fedtheory.claims.MOVED.items()):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    out[old] = [module is importlib.import_module(new), module.__spec__.name,
                [str(w.message) for w in caught if w.category is DeprecationWarning]]
from fedtheory.claims.stated import Stated
from fedtheory.claims.core import ClaimResult
out["names"] = [Stated.__module__, ClaimResult.__module__]
print(json.dumps(out))
"""
    done = _run(code)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    names = out.pop("names")
    assert set(out) == {f"fedtheory.claims.{m}" for m in (
        "checks", "core", "evidence", "headroom", "power", "readings", "setup", "stated")}
    for old, (same, spec, warned) in out.items():
        new = old.replace("fedtheory.claims.", "fedtheory.claimkit.")
        assert same and spec == new, old
        assert len(warned) == 1 and f"has moved to {new}" in warned[0], (old, warned)
    assert names == ["fedtheory.claimkit.stated", "fedtheory.claimkit.results"]


def test_the_old_path_warning_names_the_importer() -> None:
    done = _run("import warnings\nwarnings.simplefilter('always')\n"
                "import fedtheory.claims.stated\n")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "fedtheory.claims.stated has moved to fedtheory.claimkit.stated" in done.stderr
    assert "frozen importlib" not in done.stderr and "claims/__init__" not in done.stderr


def test_the_built_in_claims_use_no_old_path() -> None:
    done = _run("from fedtheory.claims import registry\n"
                "print(len(registry.all_claims()))", "-W", "error::DeprecationWarning")
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout.strip().splitlines()[-1]) > 50

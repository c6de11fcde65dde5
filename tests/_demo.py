"""A copy of the package whose only claims are a demo family's, for tests that run the
command line in a fresh interpreter without importing the real claims."""

from __future__ import annotations

import shutil
from pathlib import Path

import fedtheory

#: A demo claim: ``name``, and ``slow``: whether it sleeps when told to (it writes its pid to
#: the file named by FEDTHEORY_TEST_SLEEP, then sleeps ten minutes).
CLAIM_TEMPLATE = '''"""demo.{name}: a test claim{what}."""

import os
import time
from pathlib import Path

from fedtheory.claims import Claim, ClaimKind, Evidence

CLAIM = Claim(id="demo.{name}", family="demo", seed_ref="001, test", title="demo {name}",
              kind=ClaimKind.IDENTITY, expected="confirmed", statement="1 + 1 = 2")


@CLAIM.check("exact")
def adds(ctx):
    """1 + 1 = 2."""
    if {slow} and os.environ.get("FEDTHEORY_TEST_SLEEP"):
        Path(os.environ["FEDTHEORY_TEST_SLEEP"]).write_text(str(os.getpid()))
        time.sleep(600)
    return Evidence(1 + 1 == 2, 2, 2, "exact")
'''


def demo_package(root: Path, claims: dict[str, str]) -> Path:
    """A copy of the package under ``root`` whose claims are only ``claims`` (module name ->
    source) in the family ``demo``; returns ``root``."""
    src = Path(fedtheory.__file__).resolve().parent
    dst = root / "fedtheory"
    families = {p for p in (src / "claims").iterdir()
                if p.is_dir() and (p / "__init__.py").exists()}

    def ignore(folder: str, names: list[str]) -> set[str]:
        return {n for n in names if n == "__pycache__" or Path(folder) / n in families}

    shutil.copytree(src, dst, ignore=ignore)
    demo = dst / "claims" / "demo"
    demo.mkdir()
    (demo / "__init__.py").write_text('"""A demo family."""\n')
    for name, text in claims.items():
        (demo / f"{name}.py").write_text(text)
    return root

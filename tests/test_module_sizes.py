"""One room per job (issue 31): no module of the package over 600 lines."""

from __future__ import annotations

from pathlib import Path

import fedtheory

#: The most lines a module may have.
MAX_LINES = 600



def test_no_module_over_600_lines() -> None:
    root = Path(fedtheory.__file__).parent
    long = {}
    for path in sorted(root.rglob("*.py")):
        name = path.relative_to(root).as_posix()
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            long[name] = lines
    assert not long, f"modules over {MAX_LINES} lines: {long}"

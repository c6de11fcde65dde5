"""The derivation notebooks are committed without outputs, and execute top to bottom (nbclient).

Executing them (a kernel each, about a minute of CPU in all) repeats what the default run
tests already: their numbers are the claims' checks (verified once per session by
tests/test_registry.py) and the derivations of :mod:`fedtheory.symbolic` (tested by the
claims' symbolic checks and the doctests). So the execution runs in the slow step
(``pytest -m slow``, run by ``.ci/run``); the cheap check of what is committed runs always.
"""

from pathlib import Path

import nbformat
import pytest

from ._tracked import repository_paths

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = repository_paths("notebooks", "*.ipynb")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_committed_without_outputs(path):
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, f"{path.name} has outputs"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_executes(path):
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT)}}).execute()

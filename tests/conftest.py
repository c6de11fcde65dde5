import os

import pytest

os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Keep `fedtheory show`'s cache of last verdicts out of the user's home during tests."""
    monkeypatch.setenv("FEDTHEORY_CACHE", str(tmp_path / "cache" / "last_results.json"))

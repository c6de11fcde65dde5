import os

import pytest
from hypothesis import settings

os.environ.setdefault("MPLBACKEND", "Agg")

# Property tests draw the same examples on every run (a default test run is never flaky);
# HYPOTHESIS_PROFILE=explore draws fresh ones, to look for new counterexamples.
settings.register_profile("default", derandomize=True)
settings.register_profile("explore", derandomize=False, max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Tests run in a fresh working directory with a fresh home: `fedtheory verify` writes its
    run record (.fedtheory/last_run.json) in the working directory, and nothing may reach the
    user's home or the checkout."""
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home" / ".cache"))
    monkeypatch.chdir(tmp_path)


def _share_the_cores_among_xdist_workers():
    """Under pytest-xdist (the default, see pyproject.toml), give each worker its share of the
    cores for BLAS/OpenMP threads: N workers each running one OpenBLAS thread per core would
    oversubscribe the cores N-fold, and OpenBLAS threads spin while they wait (the suite then
    runs several times slower). Scripts and notebook kernels started by the tests inherit the
    limit. An explicit OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS wins; a serial
    run is left alone. Results do not depend on the thread count (tests/test_blas_invariance.py).
    """
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    names = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
    if not workers or any(name in os.environ for name in names):
        return
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    threads = max(1, (cpus or 1) // max(1, int(workers)))
    for name in names:
        os.environ[name] = str(threads)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover (a dependency of scikit-learn)
        return
    threadpool_limits(threads)  # the pools of libraries this worker has already loaded


_share_the_cores_among_xdist_workers()

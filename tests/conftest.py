import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import settings

from ._verified import Verified

try:  # pytest-xdist (a dev dependency; the default run needs it)
    from . import _xdist_groups
except ImportError:  # pragma: no cover
    _xdist_groups = None

os.environ.setdefault("MPLBACKEND", "Agg")

# Property tests draw the same examples on every run (a default test run is never flaky);
# HYPOTHESIS_PROFILE=explore draws fresh ones, to look for new counterexamples.
settings.register_profile("default", derandomize=True)
settings.register_profile("explore", derandomize=False, max_examples=2000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch):
    """Tests run in a fresh working directory with a fresh home: `fedtheory verify` writes its
    run record (.fedtheory/last_run.json) in the working directory and the claim index in the
    cache folder (FEDTHEORY_CACHE_DIR), and nothing may reach the user's home or the
    checkout."""
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home" / ".cache"))
    monkeypatch.setenv("FEDTHEORY_CACHE_DIR", str(tmp_path / "home" / ".cache" / "fedtheory"))
    monkeypatch.chdir(tmp_path)


# ------------------------------------------------------ xdist groups (tests/_xdist_groups.py)


def pytest_configure(config: pytest.Config) -> None:
    """The controller of a ``--dist loadgroup`` run makes the folder of the workers' group
    files."""
    if (_xdist_groups is not None and not hasattr(config, "workerinput")
            and config.getoption("dist", None) == "loadgroup"):
        config._xdist_groups = tempfile.mkdtemp(prefix="fedtheory-xdist-groups-")


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = getattr(config, "_xdist_groups", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    folder = getattr(node.config, "_xdist_groups", None)
    if folder:
        node.workerinput[_xdist_groups.KEY] = folder


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    folder = getattr(config, "_xdist_groups", None)
    return _xdist_groups.MarkedGroups(config, log, folder) if folder else None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _xdist_groups is None:
        return
    folder = getattr(config, "workerinput", {}).get(_xdist_groups.KEY)
    if folder:
        _xdist_groups.write_groups(folder, config.workerinput["workerid"], items)


# ---------------------------------------------------------------- per-test CPU time


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-log", metavar="PATH", default=None,
        help="append one line per test to PATH: node id, worker, wall seconds, CPU seconds of "
             "the test process and of the child processes it waited for (tests that run "
             "scripts, notebooks, the CLI). On a loaded machine CPU time is the measure.")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    path = item.config.getoption("--cpu-log")
    if not path:
        yield
        return
    import resource

    wall, cpu = time.perf_counter(), time.process_time()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    yield
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = "\t".join([item.nodeid, os.environ.get("PYTEST_XDIST_WORKER", "main"),
                      f"{time.perf_counter() - wall:.3f}", f"{time.process_time() - cpu:.3f}",
                      f"{after.ru_utime + after.ru_stime - kids.ru_utime - kids.ru_stime:.3f}"])
    with open(path, "a", encoding="utf-8") as f:  # one short write per line: no interleaving
        f.write(line + "\n")


@pytest.fixture(scope="session")
def verified(tmp_path_factory: pytest.TempPathFactory) -> Verified:
    """Each claim's verification (and power table), computed once per test session and shared
    by every test that reads it (``tests/_verified.py``): ``verified.result(claim)`` is
    ``claim.verify(preset="quick", seed=0, figure_dir=...)``, ``verified.power(claim)`` is
    ``power(claim, "quick", 0)``. Under pytest-xdist the workers share the results through a
    directory beside their own temporary roots (one session's ``basetemp``); tests of one claim
    family are sent to one worker (``xdist_group``, ``--dist loadgroup`` in pyproject.toml), so
    that the datasets a family's claims cache in memory are shared too."""
    root = tmp_path_factory.getbasetemp()
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    shared = Path(root).parent / "verified" if worker else None
    return Verified(tmp_path_factory.mktemp("verified-figures"), shared)


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

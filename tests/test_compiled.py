"""The optional compiled kernels (fedtheory.compiled): bitwise the numbers of the numpy code they
replace, so that a report does not depend on whether numba is installed."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory import compiled
from fedtheory.participation import BernoulliParticipation
from fedtheory.problems import GaussianNoise, QuadraticProblem
from fedtheory.simulate import simulate

try:
    import numba  # noqa: F401
except ImportError:  # the kernels need it; without it numpy runs
    HAS_NUMBA = False
else:
    HAS_NUMBA = True
needs_numba = pytest.mark.skipif(not HAS_NUMBA, reason="numba is not installed")


@pytest.fixture
def kernels_on():
    was = compiled.numba_enabled()
    assert compiled.use_numba(True)
    yield
    compiled.use_numba(was)


def _run(flag: bool, **kw):
    was = compiled.numba_enabled()
    compiled.use_numba(flag)
    try:
        prob = QuadraticProblem.heterogeneous(40, 12, L=1.0, mu=0.1, sigma_G2=1.0,
                                              rng=np.random.default_rng(0))
        return simulate(prob, kw.pop("rule"), BernoulliParticipation(kw.pop("p"), n=40),
                        rounds=25, replicas=5, lr=0.05, noise=GaussianNoise(1.0), seed=3, **kw)
    finally:
        compiled.use_numba(was)


@needs_numba
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("rule", ["umifa", "umifam", "mifa", "fedavg"])
@pytest.mark.parametrize("p", [0.5, "per-client"])
@pytest.mark.parametrize("extra", [{}, {"local_steps": 3}, {"workers": 2}])
def test_simulations_are_bitwise_the_same_with_and_without_the_kernels(dtype, rule, p, extra):
    p = np.linspace(0.2, 0.9, 40) if p == "per-client" else p
    a = _run(True, rule=rule, p=p, dtype=dtype, **extra)
    b = _run(False, rule=rule, p=p, dtype=dtype, **extra)
    assert np.array_equal(a.x, b.x)
    for key in ("f_gap", "grad_norm2", "dist2"):
        assert np.array_equal(getattr(a, key).mean, getattr(b, key).mean)


@needs_numba
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gradient_kernel_is_bitwise_numpy(kernels_on, dtype):
    rng = np.random.default_rng(1)
    a, c = rng.random((30, 7)).astype(dtype), rng.standard_normal((30, 7)).astype(dtype)
    idx = rng.integers(0, 30, 50).astype(np.intp)  # repeated clients are fine here
    want = lambda y: a[idx] * (y - c[idx])  # noqa: E731
    y = rng.standard_normal((50, 7)).astype(dtype)
    for yy in (y, np.broadcast_to(y[0], y.shape)):  # rows, and one row broadcast
        out = np.empty_like(y)
        assert compiled.diagonal_gradient_rows(a, c, idx, yy, out)
        assert np.array_equal(out, want(yy))
    expect = want(y)
    assert compiled.diagonal_gradient_rows(a, c, idx, y, y)  # in place: y is out
    assert np.array_equal(y, expect)


@needs_numba
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("per_client", [False, True])
def test_importance_kernel_is_bitwise_numpy(kernels_on, dtype, per_client):
    rng = np.random.default_rng(2)
    table = rng.standard_normal((60, 9)).astype(dtype)
    idx = rng.choice(60, 20, replace=False).astype(np.intp)  # distinct rows
    cols = rng.integers(0, 8, 20).astype(np.intp)
    coef = (1 / rng.uniform(0.1, 1, 8)).astype(dtype) if per_client else dtype(1 / 0.3)
    u = rng.standard_normal((20, 9)).astype(dtype)
    kappa = coef[cols][:, None] if per_client else coef
    old = table[idx]
    change_want = (u - old) * kappa
    table_want = table.copy()
    table_want[idx] = old + change_want
    total = rng.standard_normal((3, 9)).astype(dtype)
    w = dtype(0.125)
    total_want = total.copy()
    s = np.add.reduce(change_want, axis=0)
    s *= w
    total_want[1] += s
    for consume in (False, True):
        t, uu = table.copy(), u.copy()
        change = uu if consume else np.empty_like(uu)
        assert compiled.importance_rows(t, idx, uu, coef, cols, change)
        assert np.array_equal(change, change_want) and np.array_equal(t, table_want)
        t, uu, tot = table.copy(), u.copy(), total.copy()  # with the weighted row sum
        change = uu if consume else np.empty_like(uu)
        assert compiled.importance_rows(t, idx, uu, coef, cols, change, tot, 1, w)
        assert np.array_equal(change, change_want) and np.array_equal(t, table_want)
        assert np.array_equal(tot, total_want)
        t, uu, tot = table.copy(), u.copy(), total.copy()  # the row sum only: no change out
        assert compiled.importance_rows(t, idx, uu, coef, cols, None, tot, 1, w)
        assert np.array_equal(t, table_want) and np.array_equal(tot, total_want)
    with pytest.raises(ValueError, match="change must be an array"):
        compiled.importance_rows(t, idx, u, coef, cols, None)
    with pytest.raises(ValueError, match="weight must be a scalar"):
        compiled.importance_rows(t, idx, u, coef, cols, change, total, 1, np.ones(2))
    assert not compiled.importance_rows(t, idx[:0], u[:0], coef, cols[:0], change[:0])


def test_turned_off_the_kernels_do_nothing_and_say_so():
    was = compiled.numba_enabled()
    try:
        assert compiled.use_numba(False) is False and not compiled.numba_enabled()
        out = np.zeros((1, 1))
        assert not compiled.diagonal_gradient_rows(np.ones((1, 1)), np.ones((1, 1)),
                                                   np.array([0]), np.ones((1, 1)), out)
        assert not compiled.importance_rows(np.ones((1, 1)), np.array([0]), np.ones((1, 1)),
                                            1.0, np.array([0]), out)
        assert out.tolist() == [[0.0]]
        with pytest.raises(ValueError, match="change must be an array"):  # checked anyway
            compiled.importance_rows(out, np.array([0]), out, 1.0, np.array([0]), None)
    finally:
        compiled.use_numba(was)


def test_the_environment_variable_turns_them_off(monkeypatch):
    was = compiled.numba_enabled()
    try:
        monkeypatch.setenv("FEDTHEORY_NUMBA", "0")
        assert compiled.use_numba() is False
        monkeypatch.setenv("FEDTHEORY_NUMBA", "1")
        assert compiled.use_numba() is HAS_NUMBA
    finally:
        compiled.use_numba(was)


def test_the_switch_is_scoped_to_its_block_and_context():
    """numba_kernels: a context variable, restored at the end of the block; a thread started
    outside the block's context sees the default; simulate's worker threads see the caller's."""
    import contextvars
    import threading

    base = compiled.numba_enabled()
    with compiled.numba_kernels(False) as on:
        assert on is False and not compiled.numba_enabled()
        with compiled.numba_kernels(True) as inner:
            assert inner is HAS_NUMBA and compiled.numba_enabled() is HAS_NUMBA
        assert not compiled.numba_enabled()
        seen = []
        t = threading.Thread(target=lambda: seen.append(compiled._USE_NUMBA.get()))
        t.start()
        t.join()
        assert seen == [None]  # a new thread starts with the defaults
        ctx = contextvars.copy_context()
        assert ctx.run(compiled._USE_NUMBA.get) is False
        flags = []
        prob = QuadraticProblem.heterogeneous(6, 3, L=1.0, mu=0.1, sigma_G2=1.0,
                                              rng=np.random.default_rng(0))
        simulate(prob, "fedavg", BernoulliParticipation(0.5, n=6), rounds=2, replicas=4,
                 lr=0.1, chunk=1, workers=2,
                 extra_metrics={"flag": lambda x: flags.append(compiled._USE_NUMBA.get())
                                or np.zeros(x.shape[0])})
        assert flags and set(flags) == {False}  # the workers followed the caller's switch
    assert compiled.numba_enabled() is base
    with pytest.raises(ValueError, match="flag must be True, False or None"):
        with compiled.numba_kernels("off"):  # type: ignore[arg-type]
            pass
    with pytest.raises(ValueError, match="flag must be True, False or None"):
        compiled.use_numba(0)  # type: ignore[arg-type]


def test_no_mutable_module_globals_in_compiled():
    """The switch is not a module global any more (issue 18)."""
    assert not hasattr(compiled, "_ENABLED") and not hasattr(compiled, "_KERNELS")


def test_the_kernels_are_cached_in_fedtheorys_cache_folder(tmp_path) -> None:
    """numba's on-disk cache goes to the cache folder (as the claim index does), never beside
    compiled.py: nothing is written inside an installed package."""
    import os
    import subprocess
    import sys

    from fedtheory import index

    assert compiled.cache_dir() == str(index.cache_dir() / "numba")
    pytest.importorskip("numba")
    code = ("import numpy as np\nfrom fedtheory import compiled\n"
            "out = np.zeros((1, 2))\n"
            "assert compiled.diagonal_gradient_rows(np.ones((1, 2)), np.ones((1, 2)), "
            "np.array([0]), np.ones((1, 2)), out)\n"
            "import numba\nprint(repr(numba.config.CACHE_DIR))\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "FEDTHEORY_NUMBA")}
    env["FEDTHEORY_CACHE_DIR"] = str(tmp_path / "cache")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "''"  # numba's own setting is left as it was
    assert list((tmp_path / "cache" / "numba").rglob("*.nbi")), proc.stderr

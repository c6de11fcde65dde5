"""The test suite itself: no floating-point comparison that only one machine can pass.

A purely relative comparison with a tiny tolerance (``assert_allclose(a, b, rtol=1e-13)``,
whose ``atol`` defaults to 0) fails wherever an entry is the small difference of large terms
and another CPU, BLAS kernel or thread count sums them in another order (it did:
``test_client_gradients_blocks`` on an AMD EPYC with OpenBLAS's Zen kernel). Such a
comparison must use a tolerance derived from the computation (``tests/_tolerance.py``), or
carry an opt-out comment on (or just above) the call that gives the reason:
``# bit-identical: <why the code guarantees the bits>`` or ``# relative: <why a purely
relative tolerance is the derived one>`` (e.g. a value compared at its own tiny scale, computed
elementwise without sums).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
#: rtol (or pytest.approx's rel) below this with atol (abs) = 0 is a bit-for-bit comparison
TINY_RTOL = 1e-10
OPT_OUTS = ("# bit-identical:", "# relative:")

# name -> (positional index of rtol, of atol, keyword of rtol, of atol, default rtol, atol)
_CALLS = {
    "assert_allclose": (2, 3, "rtol", "atol", 1e-7, 0.0),
    "allclose": (2, 3, "rtol", "atol", 1e-5, 1e-8),
    "isclose": (2, 3, "rtol", "atol", 1e-5, 1e-8),
    "approx": (1, 2, "rel", "abs", 1e-6, 1e-12),
}


def _number(node: ast.expr) -> float | None:
    """The value of a numeric literal (``1e-13``, ``-0.0``, ``0``), else None."""
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _tolerances(call: ast.Call) -> tuple[float | None, float | None] | None:
    """``(rtol, atol)`` of a tolerance comparison call (None where not a literal), or None if
    ``call`` is not one of :data:`_CALLS` (or passes ``**kwargs``, which cannot be read)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in _CALLS or any(k.arg is None for k in call.keywords):
        return None
    i_rtol, i_atol, k_rtol, k_atol, d_rtol, d_atol = _CALLS[name]
    kw = {k.arg: k.value for k in call.keywords}
    values = []
    for index, key, default in ((i_rtol, k_rtol, d_rtol), (i_atol, k_atol, d_atol)):
        if key in kw:
            values.append(_number(kw[key]))
        elif len(call.args) > index:
            values.append(_number(call.args[index]))
        else:
            values.append(default)
    if name == "approx" and k_rtol not in kw and k_atol in kw:
        values[0] = 0.0  # pytest.approx with abs= only: no relative tolerance at all
    return values[0], values[1]


def bit_for_bit_comparisons(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every comparison in ``source`` with a literal ``atol`` of 0 (or
    ``assert_allclose``'s default 0) and a literal ``rtol`` below :data:`TINY_RTOL`, unless
    an opt-out comment (:data:`OPT_OUTS` and a reason) is on one of its lines or just above."""
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        tol = _tolerances(node)
        if tol is None:
            continue
        rtol, atol = tol
        if atol != 0.0 or rtol is None or rtol >= TINY_RTOL:
            continue
        first, last = node.lineno, node.end_lineno or node.lineno
        near = lines[max(first - 2, 0):last]
        if any(tag in text and text.split(tag, 1)[1].strip()
               for text in near for tag in OPT_OUTS):
            continue
        found.append((first, lines[first - 1].strip()))
    return sorted(found)


def test_no_bit_for_bit_float_comparisons_in_the_tests():
    offenders = [
        f"{path.relative_to(TESTS.parent)}:{line}: {text}"
        for path in sorted(TESTS.glob("*.py"))
        for line, text in bit_for_bit_comparisons(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, (
        "floating-point comparisons with atol=0 and rtol < 1e-10 fail on other CPUs, BLAS "
        "kernels and thread counts; use tests/_tolerance.py (a tolerance derived from the "
        "computation), or add '# bit-identical: <reason>' if the code guarantees the bits "
        "('# relative: <reason>' if a relative tolerance is the derived one):\n"
        + "\n".join(offenders)
    )


@pytest.mark.parametrize(
    "source, flagged",
    [
        ("np.testing.assert_allclose(a, b, rtol=1e-13)", True),  # the original failure
        ("np.testing.assert_allclose(a, b, rtol=1e-13, atol=0)", True),
        ("np.testing.assert_allclose(a, b, 1e-15, 0.0)", True),
        ("assert_allclose(a, b,\n    rtol=1e-12)", True),
        ("assert x == pytest.approx(y, rel=0, abs=0)", True),
        ("assert x == pytest.approx(y, abs=0)", True),
        ("np.allclose(a, b, rtol=1e-14, atol=0)", True),
        ("np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)", False),
        ("np.testing.assert_allclose(a, b, rtol=1e-9)", False),
        ("np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)", False),
        ("np.testing.assert_allclose(a, b, rtol=1e-13, atol=tol)", False),  # not a literal
        ("np.testing.assert_allclose(a, b, **tol)", False),
        ("assert x == pytest.approx(y, rel=1e-12)", False),  # abs defaults to 1e-12
        ("np.allclose(a, b, rtol=1e-14)", False),  # atol defaults to 1e-8
        ("np.testing.assert_allclose(a, b, rtol=1e-13)  # bit-identical: same call", False),
        ("# bit-identical: the same call twice\nnp.testing.assert_allclose(a, b, rtol=0)",
         False),
        ("np.testing.assert_allclose(a, b, rtol=1e-13)  # bit-identical:", True),  # no reason
        ("np.testing.assert_allclose(a, b, rtol=1e-12)  # relative: tiny value, no sums", False),
        ("# bit-identical: far above\n\nnp.testing.assert_allclose(a, b, rtol=1e-13)", True),
    ],
)
def test_the_scan_flags_the_pattern(source, flagged):
    assert bool(bit_for_bit_comparisons(source)) is flagged


def test_the_default_run_is_parallel():
    """The README's test command takes its options from pyproject.toml: pytest-xdist with one
    worker per CPU (a serial run took 11.5 minutes on a 2-core machine), the tests of a claim
    family on one worker (``--dist loadgroup``: each claim verified once, its family's cached
    datasets shared, tests/_verified.py), and the slow checks left to CI's second, bounded
    step."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11 (3.10 has no TOML reader)

    root = Path(__file__).resolve().parents[1]
    opts = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    addopts = opts["addopts"]
    assert "-n" in addopts and addopts[addopts.index("-n") + 1] in ("auto", "logical")
    assert "--dist" in addopts and addopts[addopts.index("--dist") + 1] == "loadgroup"
    assert "not slow" in addopts  # the full presets stay in the CI's second, bounded step
    ci = (root / ".ci" / "run").read_text()
    assert "-m slow" in ci and "timeout" in ci  # ... which runs every slow test, bounded


# ------------------------------------------------------------------ the shared verifications


def _counting_claim(calls: list[int]):
    from fedtheory.claimkit.stated import Stated
    from fedtheory.claims import Claim, ClaimKind, Evidence

    claim = Claim(id="demo.counted", family="demo", seed_ref="t", title="t", statement="x <= c",
                  kind=ClaimKind.UPPER_BOUND, stated=Stated({"c": 1}), expected="confirmed")

    @claim.check("exact")
    def _bound(ctx):
        calls.append(1)
        c = ctx.const("c")
        return Evidence(c >= 1, 1, float(c), "", ratio=1 / float(c),
                        counterexample={"c": str(c)}, instance={"x": 1})

    return claim


def test_verified_runs_a_claim_once_and_hands_out_copies(tmp_path):
    from ._verified import Verified

    calls: list[int] = []
    claim = _counting_claim(calls)
    v = Verified(tmp_path / "figures")
    a = v.result(claim)
    a.checks[0].detail = "edited by a test"
    b = v.result(claim)
    assert len(calls) == 1 and b.checks[0].detail != "edited by a test"
    assert [m["outcome"] for m in v.power(claim)] == ["caught"]  # base = the shared result
    assert len(calls) == 2  # the mutant only
    assert v.power(claim) == v.power(claim) and len(calls) == 2


def test_verified_is_shared_between_workers_through_the_directory(tmp_path):
    """Two workers (two Verified on one shared directory): the second reads the first's
    results, bit for bit, and computes nothing."""
    from ._verified import Verified

    calls: list[int] = []
    claim = _counting_claim(calls)
    first = Verified(tmp_path / "f1", tmp_path / "shared")
    second = Verified(tmp_path / "f2", tmp_path / "shared")
    res, out = first.result(claim), first.power(claim)
    assert len(calls) == 2 and first.computed
    again = second.result(claim)
    assert second.power(claim) == out and not second.computed and len(calls) == 2
    assert again.to_dict() == res.to_dict()
    assert second.result(claim, seed=1).seed == 1 and len(calls) == 3  # another key: computed


def test_xdist_groups_reach_the_scheduler(tmp_path):
    """The workers' group files (tests/_xdist_groups.py) put the tests of a group in one work
    unit; unmarked tests stay alone, and an id that carries ``@group`` keeps xdist's rule."""
    from types import SimpleNamespace

    import pytest as pt

    from . import _xdist_groups as xg

    def item(nodeid, *groups):
        marks = [pt.mark.xdist_group(g).mark for g in groups]
        return SimpleNamespace(nodeid=nodeid, iter_markers=lambda name: iter(marks))

    items = [item("t.py::a[ocs.x]", "ocs"), item("t.py::b[ocs_fig]", "ocs"), item("t.py::c"),
             item("t.py::d", "mifa", "fdms")]
    xg.write_groups(tmp_path, "gw0", items)
    xg.write_groups(tmp_path, "gw1", items)
    assert xg.read_groups(tmp_path) == {"t.py::a[ocs.x]": "ocs", "t.py::b[ocs_fig]": "ocs",
                                        "t.py::d": "fdms_mifa"}
    sched = xg.MarkedGroups.__new__(xg.MarkedGroups)  # the scope rule alone
    sched._folder, sched._groups = tmp_path, None
    scopes = [sched._split_scope(i.nodeid) for i in items] + [sched._split_scope("t.py::e@g")]
    assert scopes == ["ocs", "ocs", "t.py::c", "fdms_mifa", "g"]

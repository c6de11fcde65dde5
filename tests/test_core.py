import json

import numpy as np
import pytest

from fedtheory.claims import Claim, ClaimKind, Context, Evidence, Verdict
from fedtheory.report import to_json


def _claim(**kw):
    return Claim(id="x.demo", family="x", seed_ref="000", title="demo", statement="a=b",
                 kind=ClaimKind.IDENTITY, **kw)


def test_all_pass_is_confirmed():
    c = _claim()

    @c.check("symbolic")
    def ok(ctx):
        return Evidence(True, 1.0, 1.0, "fine")

    r = c.verify()
    assert r.verdict is Verdict.CONFIRMED and r.counterexample is None


def test_failure_is_refuted_with_counterexample():
    c = _claim()

    @c.check("monte_carlo")
    def bad(ctx):
        return Evidence(False, 2.0, 1.0, "off", counterexample={"n": 3, "x": np.array([1, 2])})

    @c.check("symbolic")
    def fine(ctx):
        return Evidence(True, 1.0, 1.0)

    r = c.verify()
    assert r.verdict is Verdict.REFUTED
    replay = r.counterexample.pop("replay")
    # the seed and preset are stamped in by verify, so that no check has to
    assert r.counterexample == {"n": 3, "x": [1, 2], "seed": 0, "preset": "quick",
                                "check": "bad"}
    assert replay["command"].startswith("fedtheory replay x.demo --check bad")
    json.dumps(to_json([r], 0, "quick"), allow_nan=False)


def test_crash_is_error_and_undecided_is_inconclusive():
    c = _claim()

    @c.check("convex")
    def boom(ctx):
        raise RuntimeError("solver failed")

    assert c.verify().verdict is Verdict.ERROR
    c2 = _claim()

    @c2.check("monte_carlo")
    def unsure(ctx):
        return Evidence(None, 1.0, 1.0)

    assert c2.verify().verdict is Verdict.INCONCLUSIVE


def test_context_streams_are_deterministic_and_distinct():
    a = Context(seed=3, claim_id="x.demo").rng("s").random(4)
    b = Context(seed=3, claim_id="x.demo").rng("s").random(4)
    c = Context(seed=3, claim_id="x.demo").rng("t").random(4)
    d = Context(seed=4, claim_id="x.demo").rng("s").random(4)
    assert np.array_equal(a, b) and not np.array_equal(a, c) and not np.array_equal(a, d)


def test_bad_context_and_claim_inputs():
    with pytest.raises(ValueError, match="preset"):
        Context(preset="medium")
    with pytest.raises(ValueError, match="seed"):
        Context(seed=-1)
    with pytest.raises(ValueError, match="family"):
        Claim(id="y.demo", family="x", seed_ref="", title="", statement="", kind="identity")
    with pytest.raises(ValueError, match="identity|ClaimKind|valid"):
        _claim().__class__(id="x.a", family="x", seed_ref="", title="", statement="",
                           kind="conjecture")
    c = _claim()
    with pytest.raises(ValueError, match="check kind"):
        c.check("numerology")(lambda ctx: Evidence(True, 0, 0))


def test_results_hold_plain_python_numbers():
    c = _claim()

    @c.check("monte_carlo")
    def bad(ctx):
        return Evidence(False, np.float64(2.0), np.float64(np.inf),
                        counterexample={"x": np.float64(0.5), "k": np.int64(3)})

    r = c.verify()
    r.counterexample.pop("replay")
    assert repr(r.counterexample) == (
        "{'x': 0.5, 'k': 3, 'seed': 0, 'preset': 'quick', 'check': 'bad'}")
    assert r.checks[0].theoretical == "inf"


def test_an_erroring_check_does_not_hide_a_refutation():
    """Issue 6.5: a failed check with a counterexample refutes, and the error is kept beside it."""
    c = _claim()

    @c.check("symbolic")
    def refutes(ctx):
        return Evidence(False, 3.0, 1.0, "3 > 1", counterexample={"x": 2})

    @c.check("convex")
    def boom(ctx):
        raise RuntimeError("solver failed")

    r = c.verify(seed=5)
    assert r.verdict is Verdict.REFUTED
    assert r.counterexample["x"] == 2 and r.counterexample["check"] == "refutes"
    assert [e.name for e in r.errors] == ["boom"]
    doc = r.to_dict()
    assert doc["errors"] == [{"check": "boom", "detail": "RuntimeError: solver failed"}]
    # an error alone (nothing refuted) is still an error
    c2 = _claim()

    @c2.check("symbolic")
    def fine(ctx):
        return Evidence(True, 1.0, 1.0)

    @c2.check("convex")
    def boom2(ctx):
        raise RuntimeError("solver failed")

    assert c2.verify().verdict is Verdict.ERROR


def test_failed_check_carries_a_replay_command():
    c = _claim()

    @c.check("monte_carlo")
    def bad(ctx):
        return Evidence(False, 2.0, 1.0, counterexample={"n": 3})

    r = c.verify(preset="full", seed=7)
    assert r.counterexample["replay"]["command"] == (
        "fedtheory replay x.demo --check bad --preset full --seed 7")
    assert "only=['bad']" in r.counterexample["replay"]["python"]
    with pytest.raises(ValueError, match="no check named 'nope'"):
        c.verify(only=["nope"])


def test_figure_checks_are_neutral_and_alpha_combines_by_bonferroni():
    from fedtheory.claims import all_of

    c = _claim()

    @c.check("figure")
    def drawing(ctx):
        return Evidence.illustration(["a.png"], measured=1.0, detail="shows")

    @c.check("monte_carlo")
    def ok(ctx):
        return all_of([("a", Evidence(True, 1, 1, alpha=1e-6)),
                       ("b", Evidence(True, 1, 1, alpha=1e-6))])

    r = c.verify()
    assert r.verdict is Verdict.CONFIRMED  # the figure neither confirms nor blocks
    fig, mc = r.checks
    assert fig.neutral and fig.passed is None and fig.figures == ["a.png"]
    assert mc.alpha == 2e-6
    c2 = _claim()
    c2.check("figure")(lambda ctx: Evidence.illustration([]))
    assert c2.verify().verdict is Verdict.INCONCLUSIVE  # nothing tested it
    with pytest.raises(ValueError, match="at least one"):
        all_of([])


def test_shared_data_is_computed_once_per_verification():
    calls = []
    c = _claim()

    def data(ctx):
        return ctx.shared("d", lambda: calls.append(1) or ctx.rng("d").random())

    c.check("monte_carlo", "one")(lambda ctx: Evidence(True, data(ctx), 0))
    c.check("monte_carlo", "two")(lambda ctx: Evidence(True, data(ctx), 0))
    r = c.verify()
    assert len(calls) == 1 and r.checks[0].measured == r.checks[1].measured
    # a check run alone sees the same data
    assert c.verify(only=["two"]).checks[0].measured == r.checks[1].measured


@pytest.mark.parametrize("kind,samples,stated,passed", [
    (ClaimKind.UPPER_BOUND, np.full(100, 1.0), 2.0, True),
    (ClaimKind.UPPER_BOUND, np.full(100, 3.0), 2.0, False),
    (ClaimKind.LOWER_BOUND, np.full(100, 1.0), 2.0, False),
    (ClaimKind.IDENTITY, np.full(100, 3.0), 2.0, False),
])
def test_check_mean_follows_the_claims_kind(kind, samples, stated, passed):
    rng = np.random.default_rng(0)
    x = samples + 0.01 * rng.standard_normal(samples.size)
    ctx = Context(claim_id="x.demo", kind=kind)
    assert ctx.check_mean(x, stated).passed is passed
    with pytest.raises(ValueError, match="no default Monte Carlo test"):
        Context(claim_id="x.demo", kind=ClaimKind.QUALITATIVE).check_mean(x, stated)

"""fedtheory.certify.lyapunov: rate certificates across rounds (potential search by SDP,
exact rational certificates), held against gradient descent's known rate and FL recursions."""

from __future__ import annotations

from fractions import Fraction as Fr

import pytest

from fedtheory.certify.lyapunov import (
    RateOutOfScope,
    RateStep,
    certify_rate,
    certify_rate_instance,
    gradient_descent_model,
    mean_square_lower,
    recheck_rate_instance,
)
from fedtheory.certify.rate_models import (
    fedavg_is_average_model,
    fedavg_is_strongly_convex_model,
    fedpgd_convex_average_model,
    fedpgd_nonconvex_average_model,
    mifa_memory_model,
)
from fedtheory.claims import get_claim


def _step(build) -> RateStep:  # noqa: ANN001
    return RateStep("test", build, lambda quick: [])


@pytest.mark.parametrize(("mu", "eta"), [(Fr(1, 10), Fr(1)), (Fr(1, 10), Fr(3, 2)),
                                         (Fr(1, 4), Fr(1, 2))])
def test_gradient_descent_rate_recovered(mu: Fr, eta: Fr) -> None:
    """L = 1: the search certifies exactly ρ = max(|1 - ηL|, |1 - ημ|)^2 with V = ||x - x*||^2
    (the other term's coefficient 0), and the quadratics attain it."""
    row = certify_rate_instance(_step(lambda q: gradient_descent_model(1, q["mu"], q["eta"])),
                                {"mu": mu, "eta": eta})
    rho = max(abs(1 - eta), abs(1 - eta * mu)) ** 2
    assert row["status"] == "certified" and Fr(row["rho"]) == rho == Fr(row["rho_lower"])
    assert row["rho_tight"] and row["potential"] == {"||x - x*||^2": "1"}
    assert Fr(row["constant"]) == 0


def test_gradient_descent_rate_never_below_the_lower_certificate() -> None:
    """At the optimal step's neighbour the certified rate stays >= the quadratics' rate (an
    upper certificate below a lower one would be a bug)."""
    row = certify_rate_instance(_step(lambda q: gradient_descent_model(1, Fr(1, 10), q["eta"])),
                                {"eta": Fr(18, 11)})
    assert Fr(row["rho"]) >= Fr(row["rho_lower"]) == Fr(2116, 3025)
    assert Fr(row["rho"]) - Fr(row["rho_lower"]) < Fr(1, 10**5)


def test_fedpgd_convex_average_certified_exactly() -> None:
    """Convex FedPGD, b of n uniformly: the best potential is ||x - x*||^2/(2η) with floor
    (η/2)(n/b - 1)/(n - 1) σ_G^2 (each attained); at the stated 1/η the floor is the stated
    η(n/b - 1)/(n - 1) σ_G^2, attained."""
    eta = Fr(1, 4)
    stated = {"potential": [1 / eta], "constant": eta * Fr(1, 3)}
    row = certify_rate_instance(_step(lambda q: fedpgd_convex_average_model(
        4, 2, eta, 1, stated=stated)), {})
    assert row["status"] == "certified" and row["potential"] == {"||x - x*||^2": "2"}
    assert Fr(row["constant"]) == Fr(1, 24) == Fr(row["constant_lower"])
    assert row["at_stated_potential"]["constant"] == "1/12"
    assert row["at_stated_potential"]["constant_lower"] == "1/12"
    assert row["stated_certified"] is True           # the stated bound follows, tight


def test_fedpgd_nonconvex_row_certified() -> None:
    """Non-convex FedPGD, n = 3, b = 1, η = 1/(2L): best v = 1/(η(1 - ηL/2)) = 8/3 with
    floor 1/3, attained; at the stated v = 2/η the constant is the stated ηL = 1/2 (tight)."""
    row = certify_rate_instance(_step(lambda q: fedpgd_nonconvex_average_model(
        3, 1, Fr(1, 2), 1, stated={"potential": [4], "constant": Fr(1, 2)})), {})
    assert row["potential"] == {"f(x) - f*": "8/3"} and row["constant"] == "1/3"
    assert row["constant_tight"]
    assert row["at_stated_potential"]["constant"] == "1/2" == row["at_stated_potential"][
        "constant_lower"]


def test_fedavg_is_average_floor() -> None:
    """FedAvg-IS, n = 2, p = 1/4, θ = 1 (η = 1/4, c = 3): best v = 64/11, floor 3/11; at the
    stated 2/η = 8 the certified floor is ηLc/2 = 3/8 (attained), above the printed 3/32."""
    eta = Fr(1, 4)
    row = certify_rate_instance(_step(lambda q: fedavg_is_average_model(
        2, Fr(1, 4), eta, 1, stated={"potential": [8], "constant": Fr(3, 32)})), {})
    assert row["potential"] == {"f(w) - f*": "64/11"} and row["constant"] == "3/11"
    assert row["constant_tight"]                  # attained: (L/2)||x||^2 at its minimiser
    assert row["at_stated_potential"]["constant"] == "3/8"
    assert Fr(row["at_stated_potential"]["constant_lower"]) == Fr(3, 8)
    assert row["stated_certified"] is False          # this potential cannot give 3/32


def test_fedavg_is_strongly_convex_rate_attained() -> None:
    """FedAvg-IS on L-smooth μ-strongly convex clients, n = 2, p = 1/2, η = 1/2, μ = 1/4:
    ρ = 99/128 certified and attained by identical quadratics of curvature μ."""
    row = certify_rate_instance(_step(lambda q: fedavg_is_strongly_convex_model(
        2, Fr(1, 2), Fr(1, 2), 1, Fr(1, 4))), {})
    assert row["status"] == "certified" and row["rho"] == "99/128" and row["rho_tight"]
    assert Fr(row["constant"]) > 0


def test_mean_square_lower_exact() -> None:
    """z+ = (1 - a 1_S) z with P(S) = 1/2: E(1 - a 1_S)^2 = 1 - a + a^2/2 exactly; a matrix
    that contracts by 1/4 in every direction certifies 1/4 and nothing larger."""
    a = Fr(1, 2)
    out = mean_square_lower([(Fr(1, 2), [[1 - a]]), (Fr(1, 2), [[Fr(1)]])], [0])
    assert out is not None and out["rho"] == 1 - a + a * a / 2
    out = mean_square_lower([(Fr(1), [[Fr(1, 2), Fr(0)], [Fr(0), Fr(1, 2)]])], [0])
    assert out is not None and out["rho"] == Fr(1, 4)


def test_rate_out_of_scope_and_claim_declarations() -> None:
    """Every rate claim of the issue declares a certificate or a reason."""
    assert certify_rate(RateOutOfScope("why"))["reason"] == "why"
    assert certify_rate(None)["status"] == "out of scope"
    ids = ["mifa.error_floor_average", "mifa.error_floor_average.corrected",
           "mifa.zero_floor.corrected", "mifa.rates_table", "mifa.rates_table.corrected",
           "ocs.fedavg_strongly_convex.corrected", "ocs.fedavg_nonconvex",
           "fedavg.local_steps", "fedavg.partial_participation", "fedavg.heterogeneity",
           "fdms.psi_bound.corrected"]
    for cid in ids:
        rate = get_claim(cid).rate
        assert isinstance(rate, (RateStep, RateOutOfScope)), cid
        if isinstance(rate, RateOutOfScope):
            assert len(rate.reason) > 40


@pytest.mark.slow
def test_rates_table_corrected_entry() -> None:
    """The claim's quick grid: certified, the closed form (v = 1/(2η), c = ηF/2) exact."""
    out = certify_rate(get_claim("mifa.rates_table.corrected").rate, quick=True)
    assert out["status"] == "certified" and out["closed_form"]["holds"]


def test_rate_certificate_rechecked_without_a_solver() -> None:
    """The reported multipliers re-check exactly; a constant below the certified one, or a
    tampered multiplier, does not."""
    step = get_claim("mifa.rates_table.corrected").rate
    row = certify_rate_instance(step, {"n": 3, "b": 1, "eta": Fr(1, 2)})
    assert recheck_rate_instance(step, row)
    assert not recheck_rate_instance(step, {**row, "constant": "1/5"})
    bad = [[k, lab, str(Fr(v) / 2)] for k, lab, v in row["certificate"]["multipliers"]]
    assert not recheck_rate_instance(step, {**row, "certificate": {"multipliers": bad}})


def test_mifa_memory_table_zero_floor() -> None:
    """A memory table across rounds: MIFA, n = 2, p = 1/2, η = 1/4, exact gradients; a
    potential in f(w) - f* and the memory error certifies E V+ <= V - ||∇f(w)||^2 with no
    floor (c = 0 exactly), using the memory term."""
    row = certify_rate_instance(_step(lambda q: mifa_memory_model(2, Fr(1, 2), Fr(1, 4), 1)),
                                {})
    assert row["status"] == "certified" and Fr(row["constant"]) == 0
    assert set(row["potential"]) == {"f(w) - f*", "Σ_i ||m_i - ∇f_i(w)||^2"}
    # the rebuilt problem comes from the step's own grid (here one row, no parameters)
    assert recheck_rate_instance(RateStep("test", lambda q: mifa_memory_model(
        2, Fr(1, 2), Fr(1, 4), 1), lambda quick: [{}]), {**row, "params": {}})

"""``ocs.aocs``: AOCS (Algorithm 2 of seed 002) reaches the closed form with aggregation only;
iterations against n, m and the spread of the norms."""

from __future__ import annotations

import numpy as np

from fedtheory.claims import Claim, ClaimKind, Context, Evidence, Figure
from fedtheory.sampling.aocs import (
    aocs_iteration_study,
    aocs_probabilities,
    client_message,
    master_scale,
    replay_master,
    secure_sum,
)
from fedtheory.sampling.ocs import ocs_threshold, optimal_probabilities
from fedtheory.theory.ocs import FLOAT_RTOL

CLAIM = Claim(
    id="ocs.aocs",
    family="ocs",
    seed_ref="002, Algorithm 2 and Section 2.2",
    title="AOCS (aggregation only) reaches the closed form; iterations vs n, m, spread",
    statement=(
        r"p_i\leftarrow\min\{m u_i/\textstyle\sum_j u_j,1\};\ \text{repeat } "
        r"C=\frac{m-n+I}{P},\ p_i\leftarrow\min\{Cp_i,1\}\ (p_i<1)\ \text{until } C\le1"
        r"\ \Rightarrow\ p=\text{eq. (7)};\ \text{the master sees only } \textstyle\sum_i u_i,"
        r"\ I=\sum_i 1[p_i<1],\ P=\sum_i p_i 1[p_i<1]"
    ),
    kind=ClaimKind.QUALITATIVE,
    contract=(
        "Algorithm 2 (AOCS, aggregation-only) reaches the closed form; how many iterations j it "
        "needs as n, m and the spread of norms vary; only sums cross the network."
    ),
    expected="confirmed",
    derivation=r"""
Every $p$ AOCS produces is $p_i = \min\{c\,u_i, 1\}$ for some $c$, and $\sum_i p_i \le m$
throughout; $C \le 1$ means $\sum_i p_i = m$, which with that form is the KKT system of eq. (7),
so a run that stops is exact (not approximate). Each iteration with $C > 1$ either truncates
another client or makes the next $C$ equal 1, hence at most $n - l + 1$ iterations. Checked: on
random and adversarial rounds (zeros, all-zero, ties, heavy tails) AOCS run to completion equals
the closed form, never exceeds $n - l + 1$ iterations and never produces NaN; the master's
computation is replayed from the sums it received alone; the iterations needed are tabulated and
plotted against $n$, $m$ and the log-normal spread, with the fraction of rounds the document's
$j_{\max} = 4$ completes and the variance it leaves otherwise. Zero norms: $u_i = 0$ and $P = 0$
would be $0/0$ in the printed algorithm; zero-norm clients get $p_i = 0$, and $P = 0$ means
nothing is left to rescale.
""",
)


def _aocs_instances(rng: np.random.Generator, quick: bool) -> list[tuple[str, np.ndarray, float]]:
    rounds = 40 if quick else 400
    out = []
    for n in ((10, 100, 1000) if quick else (10, 100, 1000, 10_000)):
        for sigma in (0.5, 1.0, 2.0, 3.0):
            for m in sorted({1.0, float(max(1, round(np.sqrt(n)))), float(max(1, n // 10)),
                             n / 2 + 0.5}):
                out.append((f"lognormal sigma={sigma}", rng.lognormal(0, sigma, (rounds, n)), m))
    out += [
        ("all zero", np.zeros((3, 8)), 2.0),
        ("some zero", rng.lognormal(0, 2, (rounds, 50)) * (rng.random((rounds, 50)) < 0.2), 5.0),
        ("ties", rng.integers(1, 4, (rounds, 30)).astype(float), 10.0),
        ("pareto a=0.7", rng.pareto(0.7, (rounds, 200)), 20.0),
        ("geometric", np.tile(np.geomspace(1, 1e9, 60), (2, 1)), 20.0),
    ]
    return out


@CLAIM.check("monte_carlo")
def _reaches_closed_form(ctx: Context) -> Evidence:
    """AOCS to completion equals eq. (7); iterations <= n - l + 1; never NaN (incl. zeros)."""
    rng = ctx.rng("aocs")
    inst = _aocs_instances(rng, ctx.quick)
    worst, bad, total, hist = 0.0, [], 0, {}
    for kind, u, m in inst:
        n = u.shape[-1]
        res = aocs_probabilities(u, m, j_max=n + 1)
        opt = optimal_probabilities(u, m)
        ell = np.asarray(ocs_threshold(u, m))
        err = np.max(np.abs(res.p - opt), axis=-1)
        worst = max(worst, float(err.max()))
        total += u.shape[0]
        for j in np.asarray(res.iterations).ravel():
            hist[int(j)] = hist.get(int(j), 0) + 1
        fail = (~np.asarray(res.converged)) | (err > FLOAT_RTOL) | np.isnan(res.p).any(-1) | (
            np.asarray(res.iterations) > n - ell + 1)
        if fail.any():
            r = int(np.flatnonzero(fail)[0])
            bad.append({"kind": kind, "norms": u[r], "m": m, "p_aocs": res.p[r], "p_opt": opt[r],
                        "iterations": int(np.asarray(res.iterations)[r]), "l": int(ell[r])})
    return Evidence(
        passed=not bad, measured=worst, theoretical=0.0, tolerance=FLOAT_RTOL,
        detail=(f"{total} rounds ({len(inst)} settings, n up to "
                f"{max(u.shape[-1] for _, u, _ in inst)}): all stop with C <= 1, max |p_AOCS - "
                f"p*| = {worst:.2g}, iterations <= n - l + 1; histogram of iterations "
                f"{dict(sorted(hist.items()))}"),
        counterexample=bad[0] if bad else None,
        data={"iteration_histogram": hist},
    )


@CLAIM.check("monte_carlo")
def _only_sums_cross_network(ctx: Context) -> Evidence:
    """The master receives per-round sums only; its broadcasts replay from them alone."""
    import inspect

    rng = ctx.rng("network")
    n, rounds, m = 64, 50, 8.0
    u = rng.lognormal(0, 2, (rounds, n))
    res = aocs_probabilities(u, m, j_max=n + 1)
    problems = []
    # 1. nothing the master received has a client axis
    for entry in res.transcript:
        for key, val in entry["received"].items():
            if np.shape(val) != (rounds,):
                problems.append(f"step {entry['step']}: {key} has shape {np.shape(val)}")
    # 2. the received values are the sums of the clients' messages, recomputed independently
    p = np.minimum(m * u / u.sum(-1, keepdims=True), 1.0)
    for entry in res.transcript[1:]:
        count, mass = secure_sum(client_message(p))
        if not (np.allclose(count, entry["received"]["I"], rtol=0, atol=0)
                and np.allclose(mass, entry["received"]["P"], rtol=FLOAT_RTOL, atol=0)):
            problems.append(f"step {entry['step']}: received sums differ from the clients' sums")
        c = entry["broadcast"]["C"][..., None]
        p = np.where(entry["running"][..., None] & (p < 1), np.minimum(c * p, 1.0), p)
    # 3. the master's broadcasts are a function of the received sums (and m, n) alone
    replay = replay_master(res.transcript, m, n)
    same = all(np.array_equal(a, e["broadcast"]["C"])
               for a, e in zip(replay, res.transcript[1:], strict=True))
    if not same:
        problems.append("replaying the master from the received sums gives other broadcasts")
    # 4. permuting the clients changes nothing the master sees (up to summation order)
    perm = aocs_probabilities(u[:, rng.permutation(n)], m, j_max=n + 1)
    if len(perm.transcript) != len(res.transcript):
        problems.append("the number of aggregation steps depends on the order of the clients")
    for a, b in zip(res.transcript, perm.transcript, strict=False):
        for key in a["received"]:
            if not np.allclose(a["received"][key], b["received"][key], rtol=FLOAT_RTOL):
                problems.append(f"step {a['step']}: {key} depends on the order of the clients")
    params = list(inspect.signature(master_scale).parameters)
    if params != ["count", "mass", "m", "n"]:
        problems.append(f"master_scale takes {params}")
    return Evidence(
        passed=not problems, measured=problems or "sums only", theoretical="sums only",
        detail=(f"{rounds} rounds, n={n}, m={m}: {len(res.transcript)} aggregation steps; every "
                f"value the master received has shape (rounds,) and equals the sum of the "
                f"clients' messages; master_scale(count, mass, m, n) replays every broadcast "
                f"from those sums; permuting clients leaves them unchanged"
                + (f"; problems: {problems}" if problems else "")),
        counterexample={"problems": problems} if problems else None,
    )


@CLAIM.check("monte_carlo")
def _iterations_vs_n_m_spread(ctx: Context) -> Evidence:
    """Iterations AOCS needs vs n, m and the spread; the document's j_max = 4 (data + figure).
    It tests as well as draws (no run may exceed n - l + 1 iterations or miss the closed
    form), so it is a simulation check, not a neutral figure."""
    rng = ctx.rng("study")
    ns = ctx.size(quick=(10, 100, 1000), full=(10, 100, 1000, 10_000))
    data = aocs_iteration_study(rng, ns, (0.01, 0.1, 0.3), (0.5, 1.0, 2.0, 3.0),
                                rounds=ctx.size(quick=30, full=300))
    figs = [Figure("ocs.aocs_iterations", "iterations", {"data": data},
                   caption="Left: the mean number of AOCS iterations until it stops, against "
                   "the log-normal spread of the update norms, per (n, m). Middle: with the "
                   "paper's budget j_max = 4, the fraction of rounds where the probabilities "
                   "already equal the optimum (solid) and where the master can certify it "
                   "(dotted). Right: the relative excess variance the budget leaves (exactly "
                   "0 is drawn at 1e-16).")]
    ok = bool(np.all(data["bound_violations"] == 0) and np.all(data["max_error"] <= FLOAT_RTOL))
    hard = np.argmax(data["mean_iterations"])
    return Evidence(
        passed=ok, measured=float(np.max(data["max_iterations"])), theoretical="<= n - l + 1",
        detail=(f"{len(data['n'])} settings: mean iterations grow with the spread and with m "
                f"(up to {data['mean_iterations'][hard]:.2f} at n={int(data['n'][hard])}, "
                f"m={int(data['m'][hard])}, sigma={data['sigma'][hard]}); with j_max = 4 the "
                f"master certifies (sees C <= 1) in {np.min(data['within_budget']):.0%}..100% "
                f"of rounds and p already equals the optimum in "
                f"{np.min(data['reached_within_budget']):.0%}..100%, leaving at most "
                f"{np.max(data['excess_at_budget']):.2g} relative excess variance"),
        figures=figs, data={k: v for k, v in data.items()},
        counterexample=None if ok else {"bound_violations": data["bound_violations"]},
    )

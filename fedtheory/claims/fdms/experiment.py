r"""``fdms.experiment`` (seed 004, Section 6): FL-FDMS against Full, Dropout and Stale for
dropout ratios 0.3, 0.5, 0.7 in the clustered and the general non-iid setting, the pairwise
similarity scores at the last round, the complexity reduction, reproduced as the paper's
public code ran them on an offline stand-in (digits, softmax regression; the set-up card lists
every deviation).

The runs are :func:`fedtheory.claims.fdms._data.paper_data`; the comparisons, the level
and the margins :mod:`fedtheory.claims.fdms._paper`; the figures
:mod:`fedtheory.plotting.fdms`.
"""

from __future__ import annotations

from fedtheory.claimkit.readings import Reading
from fedtheory.claimkit.stated import Erratum
from fedtheory.claims import Claim, ClaimKind, Context, Evidence, Figure
from fedtheory.claims.fdms._data import PAPER

from ._paper import (
    BETTER_MARGIN,
    CARD,
    EQUIV_MARGIN,
    FAMILY_LEVEL,
    LEVEL,
    N_TESTS,
    better,
    close_to_full,
    complexity,
    data,
    friends,
    observations,
)

DERIVATION = rf"""
What is tested. The paper's Section 6 compares, on MNIST and CIFAR-10 with CNNs, FL-FDMS
with Full participation, Dropout (the active clients' average) and Stale (a dropped client's
last upload), in a clustered setting (Fig. 1: 5 groups of 4 clients sharing 2 classes) and a
general one (Fig. 3), for $\alpha \in \{{0.3, 0.5, 0.7\}}$; shows the similarity scores at the
last round (Fig. 4) and the similarity computations with the complexity reduction (Fig. 5).
Its public code fixes what the text leaves open: 20 clients, 500 rounds, 5 local epochs of
batch 200 at lr 0.1, the splits, a first round of full participation, and a dropout process
that keeps at least one client of every group active (so Assumption 5 holds in every round),
and a Stale that averages the last uploaded local *models*.

How. `fedtheory.experiments.fdms_paper` runs every method on the code's splits and dropout
(`GroupedDropout`, the code's law exactly) with digits and softmax regression in place of
CIFAR-10 and a CNN (no download; a CNN does not fit the budget), a fresh split per seed,
every method of a seed on the same masks (common random numbers: paired comparisons). Two
numbers per run and seed, both read off the test-accuracy curve: *test accuracy*, its mean
over the last 10 % of the rounds; *convergence speed*, its mean over all rounds (the
normalised area under the curve). Each comparison is a paired Student $t$ test over the
seeds (`checks.compare_paired`) at {LEVEL:.2g} (family-wise {FAMILY_LEVEL}, Bonferroni over
{N_TESTS} tests): FL-FDMS *better* than Dropout and than Stale (one-sided, margin one test
image, {BETTER_MARGIN:.4f}: refuted when its advantage is shown below the margin), per
setting, $\alpha$ and metric; *close to Full* (equivalence within {EQUIV_MARGIN}, both
metrics, clustered); friends discovered (the scores within groups above those across, clustered
$\alpha = 0.5$); the complexity reduction (the code's threshold and $0.5\Theta_t$ save at
least 10 % of the scores, every reduction's test accuracy within {EQUIV_MARGIN} of FL-FDMS
without it, $0.5\Theta_t$ saves more than $\Theta_t$). Every comparison reports its smallest
detectable effect. Outside the verdict: the text's Stale (update substitution), the toolkit's
earlier uniform dropout (Assumption 5 failing), rounds to 99 % of Full's accuracy.

Why these set-ups and not the earlier ones: the toolkit's earlier runs (quadratic
federations, $\lfloor\alpha K\rfloor$ clients dropping uniformly, the tail loss, Theorem 2's
$\Theta_t$) broke Assumption 5 in most rounds at $\alpha = 0.7$ and measured something the
paper did not; the uniform-dropout run is kept as a labelled sensitivity run.
"""

CLAIM = Claim(
    datasets=PAPER,
    id="fdms.experiment", family="fdms", seed_ref="004, Section 6 (Figs. 1-5)",
    title="FL-FDMS beats Dropout and Stale in test accuracy and convergence speed, close to "
          "Full; general setting too; friends discovered; complexity reduced",
    statement=(r"\text{clustered and general, }\alpha\in\{0.3,0.5,0.7\}:\ "
               r"\mathrm{acc}_{\rm FL\text{-}FDMS} > \mathrm{acc}_{\rm Dropout},\ "
               r"\mathrm{acc}_{\rm Stale}\ \text{(test accuracy, convergence speed)};\ "
               r"\mathrm{acc}_{\rm FL\text{-}FDMS} \approx \mathrm{acc}_{\rm Full}"
               r"\ \text{(clustered)};\ R^{i,j}_T\ \text{larger within clusters};\ "
               r"\text{CR saves computations, similar accuracy}"),
    kind=ClaimKind.QUALITATIVE, expected="refuted",
    contract=(
        "20 clients in 5 clusters, dropout ratio α ∈ {0.3, 0.5, 0.7}: FL-FDMS vs Full, Dropout, "
        "Stale; the pairwise similarity heat map at the last round; the general non-iid setting."
    ),
    derivation=DERIVATION,
    finding=(
        "Per setting. Clustered (Fig. 1): reproduced where it matters most: with the code's "
        "friend-preserving dropout FL-FDMS converges faster (area under the test-accuracy "
        "curve) than Dropout and the code's Stale at every alpha, by more than a test image "
        "except where the report says 'better, below the margin'; it is equivalent to Full "
        "within one point; friends are discovered; the code's threshold and 0.5 Theta_t save "
        "computations at the same accuracy (Theorem 2's own Theta_t hardly eliminates within "
        "the run). Its final test accuracy is not testable against Dropout: on the convex "
        "stand-in every method that converges reaches the same optimum (the set-up card). "
        "General (Fig. 3): not reproduced against Dropout: FL-FDMS's convergence speed is "
        "significantly below Dropout's at alpha = 0.7, and at alpha = 0.3 and 0.5 no "
        "advantage is shown (ties within one test image, or not testable where Full itself "
        "beats Dropout by less than one image: in this setting there is almost nothing to "
        "win); it is better than the code's Stale. Every comparison reports its headroom "
        "(Full's advantage over the baseline) and, for the speed, the rounds to 99 % of Full, "
        "which can order the methods the other way (the card says why the verdict follows "
        "the area). Under the paper's text's Stale (the last update, not the last model) "
        "FL-FDMS is never better than Stale. The part that holds is fdms.experiment.corrected."),
    erratum=Erratum(
        "not reproduced",
        "Section 6, general setting (Fig. 3), 'The results confirm the superiority of "
        "FL-FDMS': on the stand-in (the authors' splits and dropout; digits and softmax "
        "regression for CIFAR-10 and a CNN) FL-FDMS's convergence speed (the area under the "
        "test-accuracy curve) is significantly below Dropout's at alpha = 0.7 (quick preset: "
        "-1.33 points, upper limit -0.32, where Full beats Dropout by 1.86; issue 29's "
        "full-size re-run: -0.81, upper limit -0.10). At alpha = 0.3 and 0.5 the tests show "
        "no advantage either way: a tie within one test image (the interval includes 0), or "
        "not testable where Full itself beats Dropout by less than one test image (quick: "
        "Full's advantage over Dropout is 0.28, 0.82 and 1.86 points of convergence speed at "
        "alpha = 0.3, 0.5, 0.7, and under 0.2 of final accuracy): the general setting leaves "
        "almost nothing to win on this stand-in. FL-FDMS is better than the code's Stale "
        "there. The clustered setting (Fig. 1) reproduces (fdms.experiment.corrected); the "
        "final test accuracy of converging methods is not testable on a convex stand-in (the "
        "set-up card)",
        quote="The results confirm the superiority of FL-FDMS.",
        location="Section 6, 'Performance Comparison.', general setting (Fig. 3)",
        intended_holds=None),
    setup=CARD,
    # per-setting verdicts: which of the two settings carries the claim's verdict
    readings=(
        Reading("clustered setting", lines="Section 6, 'Performance Comparison.', Fig. 1; "
                "'Friend Discovery.', Fig. 4; 'Computation Complexity.', Fig. 5",
                text="20 clients in 5 clusters, alpha in {0.3, 0.5, 0.7}",
                checks=("speed_clustered", "accuracy_clustered", "close_to_full",
                        "friends_discovered", "complexity_reduced"), kind="setting"),
        Reading("general setting", lines="Section 6, Fig. 3 ('The results confirm the "
                "superiority of FL-FDMS')", text="the general non-iid split, alpha in {0.3, "
                "0.5, 0.7}", checks=("speed_general", "accuracy_general"), kind="setting"),
    ),
    restatement=(
        "The paper reads its claims off curves; here each is a paired test on two numbers "
        "per seed read off the test-accuracy curve: 'test accuracy' = its mean over the last "
        "10 % of the rounds, 'convergence speed' = its mean over all rounds. 'Outperforms' "
        "is 'better by at least one test image' (1/299), 'close to Full' is 'equivalent "
        "within one point', 'significantly reduce the computation complexity' is 'saves at "
        "least 10 % of the similarity scores'. The general setting's 'confirm the "
        "superiority' is read as the clustered claim's 'outperforms Dropout and Stale'."),
)


@CLAIM.check("figure")
def _figures(ctx: Context) -> Evidence:
    """Test accuracy per round (Figs. 1 and 3), the similarity heat map (Fig. 4), the
    complexity reduction (Fig. 5)."""
    d = data(ctx)
    figs = [
        Figure("fdms.curves", "test_accuracy", {"data": d},
               caption="Mean test accuracy over the replicas (random seeds) with the 10-90% "
               "band, per round, for every method; rows: the setting (as titled), columns: "
               "the dropout ratio alpha (the paper's Figs. 1 and 3). The claim: FL-FDMS (red) "
               "converges faster and ends higher than Dropout and Stale, close to Full (black, "
               "dashed, drawn on top)."),
        Figure("fdms.heatmap", "similarity_heatmap", {"data": d},
               caption="FL-FDMS's similarity scores R^(i,j) at the last round (replica 0, "
               "alpha = 0.5), clients in their groups of 4 (the paper's Fig. 4): friends "
               "discovered show as bright blocks on the diagonal in the clustered setting."),
        Figure("fdms.complexity", "complexity", {"data": d},
               caption="Clustered setting, alpha = 0.5 (the paper's Fig. 5): cumulative "
               "similarity computations without and with the complexity reduction (left) "
               "and the test accuracy of each run (right; its title gives the largest "
               "difference to the run without reduction, as the curves coincide): the claim "
               "is that the reduction saves computations at the same accuracy."),
    ]
    return Evidence.illustration(figs, detail="test accuracy, similarity scores, computations")


@CLAIM.check("monte_carlo", "speed_general")
def _speed_general(ctx: Context) -> Evidence:
    """General setting: FL-FDMS's convergence speed (mean test accuracy over the rounds)
    above Dropout's and Stale's, per alpha (paired, one-sided, margin one test image; a tie,
    better below the margin, or not testable without headroom: fdms._paper.better)."""
    return better(ctx, "general", "convergence speed")


@CLAIM.check("monte_carlo", "accuracy_general")
def _accuracy_general(ctx: Context) -> Evidence:
    """General setting: FL-FDMS's test accuracy (the last 10 % of the rounds) above
    Dropout's and Stale's, every alpha."""
    return better(ctx, "general", "test accuracy")


@CLAIM.check("monte_carlo", "speed_clustered")
def _speed_clustered(ctx: Context) -> Evidence:
    """Clustered setting: FL-FDMS's convergence speed above Dropout's and Stale's, every
    alpha."""
    return better(ctx, "clustered", "convergence speed")


@CLAIM.check("monte_carlo", "accuracy_clustered")
def _accuracy_clustered(ctx: Context) -> Evidence:
    """Clustered setting: FL-FDMS's test accuracy above Dropout's and Stale's, every alpha."""
    return better(ctx, "clustered", "test accuracy")


@CLAIM.check("monte_carlo", "close_to_full")
def _close(ctx: Context) -> Evidence:
    """Clustered setting: FL-FDMS equivalent to Full within one point, both metrics, every
    alpha (TOST)."""
    return close_to_full(ctx)


CLAIM.check("monte_carlo", "friends_discovered")(friends)
CLAIM.check("monte_carlo", "complexity_reduced")(complexity)


@CLAIM.check("monte_carlo", "observations")
def _observations(ctx: Context) -> Evidence:
    """Outside the verdict (neutral: reported, not tested): every run's metrics, FL-FDMS
    against the text's Stale (update substitution) and under uniform dropout (Assumption 5
    failing), rounds to 99 % of Full's final accuracy, same-group substitutes, run time."""
    obs = observations(ctx)
    parts = []
    for setting, o in obs.items():
        for name, c in o["comparisons"].items():
            parts.append(f"{setting} {name}: gain {c['mean_gain']:+.4f} [{c['lower']:+.4f}, "
                         f"{c['upper']:+.4f}] ({c['outcome']})")
    return Evidence.illustration([], measured=obs, detail="; ".join(parts))

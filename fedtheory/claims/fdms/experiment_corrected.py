r"""``fdms.experiment.corrected``: the part of Section 6 that the faithful runs reproduce. In
the clustered setting, with the friend-preserving dropout of the authors' code (an active
client in every group of 4 in every round: Assumption 5), FL-FDMS converges faster than
Dropout and than Stale (the code's model substitution) and is equivalent to Full within one
point of test accuracy, at every dropout ratio; the similarity scores separate the groups.

The same runs and comparisons as ``fdms.experiment`` (:mod:`fedtheory.claims.fdms._paper`,
the dataset is shared): the clustered checks, at the parent claim's per-test level (13 of its
37 tests: family-wise at most 13/37 of 0.01 here).
"""

from __future__ import annotations

from fedtheory.claims import Claim, ClaimKind, Context, Evidence
from fedtheory.claims.fdms._data import PAPER

from ._paper import BETTER_MARGIN, CARD, EQUIV_MARGIN, LEVEL, better, close_to_full, friends

CLAIM = Claim(
    datasets=PAPER,
    id="fdms.experiment.corrected", family="fdms",
    seed_ref="004, Section 6 (Fig. 1, Fig. 4), with the authors' dropout (Assumption 5)",
    title="Clustered, friend-preserving dropout: FL-FDMS converges faster than Dropout and "
          "Stale and is equivalent to Full",
    statement=(r"\text{clustered, an active client in every group}:\ "
               r"\overline{\mathrm{acc}}_{\rm FL\text{-}FDMS} > "
               r"\overline{\mathrm{acc}}_{\rm Dropout},\ \overline{\mathrm{acc}}_{\rm Stale},\ "
               r"\mathrm{acc}_{\rm FL\text{-}FDMS} \approx_{0.01} \mathrm{acc}_{\rm Full}\ "
               r"(\alpha\in\{0.3,0.5,0.7\});\ R^{i,j}_T\ \text{larger within groups}"),
    kind=ClaimKind.QUALITATIVE, expected="confirmed",
    derivation=(
        "Why this part: FL-FDMS's gain is the gap between the friend bound alpha^2 sigma_F^2 "
        "(fdms.friend_error) and the Dropout bound alpha^2 sigma_P^2 (fdms.naive_error); it "
        "needs an active friend for each dropped client (Assumption 5), which the authors' "
        "dropout guarantees in the clustered setting (and nothing guarantees in the general "
        "one, where it is not reproduced). Its convergence speed is the mean test accuracy "
        "over the rounds (the normalised area under the curve), compared per seed "
        f"(paired t, margin one test image, {BETTER_MARGIN:.4f}); 'equivalent to Full' is a "
        f"TOST within {EQUIV_MARGIN} on the mean and on the final test accuracy; friends: "
        f"the mean score within groups above the mean across, per seed; each at {LEVEL:.2g}. "
        "Set-up: the parent claim's (its card). Not claimed: a higher final test accuracy "
        "than Dropout (on the convex stand-in both reach the same optimum), anything in the "
        "general setting, or against the paper's text's Stale (update substitution), which "
        "FL-FDMS does not beat."),
    finding=("Holds at every alpha: FL-FDMS's mean test accuracy over the rounds is "
             "significantly above Dropout's and the code's Stale's, by more than a test image "
             "except where the report says 'better, below the margin' (the quick preset: "
             "against Stale at alpha = 0.3; the claim is then graded consistent, low power), "
             "and within a point of Full's, as are its final accuracies; the scores within "
             "groups end far above those across (every client's group-mates above every other "
             "client). The rounds to 99 % of Full's accuracy, reported beside each comparison, "
             "do not show the gain (Dropout gets there about as soon or sooner): 'faster' "
             "follows the area under the curve, the reading of the paper's curves (the set-up "
             "card's metric row)."),
    setup=CARD,
    restatement=("'Converges faster' is a higher mean test accuracy over the rounds (the "
                 "paper's Fig. 1 curves' area), 'close to Full' an equivalence within one "
                 "point; the corrected claim keeps the clustered setting and convergence speed, "
                 "where the stand-in reproduces the paper."),
)


@CLAIM.check("monte_carlo", "speed_clustered")
def _speed(ctx: Context) -> Evidence:
    """FL-FDMS's convergence speed above Dropout's and Stale's (the code's), every alpha."""
    return better(ctx, "clustered", "convergence speed")


@CLAIM.check("monte_carlo", "close_to_full")
def _close(ctx: Context) -> Evidence:
    """FL-FDMS equivalent to Full within one point, both metrics, every alpha (TOST)."""
    return close_to_full(ctx)


CLAIM.check("monte_carlo", "friends_discovered")(friends)

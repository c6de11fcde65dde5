r"""Claim ``ocs.experiment``: seed 002's Section 5 experiment, re-run on a bundled data set.

FedAvg (Algorithm 3) with full participation, uniform(m), OCS(m) (Algorithm 1) and AOCS(m)
(Algorithm 2) on multinomial logistic regression over an unbalanced federated split of
scikit-learn's ``load_digits`` (the Section 5.2 recipe), and the :math:`m = O(\sqrt n)`
conjecture of Section 5.4. The simulation lives in :mod:`fedtheory.experiments.ocs_fedavg` and
:mod:`fedtheory.experiments.ocs_runs`, the figures in
:mod:`fedtheory.plotting.ocs` (also used by ``paper_figures/ocs_vs_uniform.py`` and
``paper_figures/ocs_sqrt_n.py``); this module states the claim and judges it with
:mod:`fedtheory.stats`.
"""

from __future__ import annotations

from fedtheory.claims import (
    Claim,
    ClaimKind,
    Context,
    Evidence,
    SetupCard,
    SetupRow,
)
from fedtheory.claims.ocs import _experiment_checks as _checks
from fedtheory.claims.ocs._data import EXPERIMENT
from fedtheory.claims.ocs._experiment_checks import (  # noqa: F401 (kept importable here)
    ACC_MARGIN,
    ALPHA,
    EQ_ACC_MARGIN,
    EQ_LOG_MARGIN,
    LOG_MARGIN,
    M_AT_32,
)

#: The seed's text file and the authors' code (read at this commit).
WHERE = "the paper"
CODE = "github.com/SamuelHorvath/FL-optimal-client-sampling"
CODE_COMMIT = "baa73e8c76301fca65e5f57bade5f42a3964b5cf"
EMNIST_MAIN = "emnist_fedavg_main_cookup.py"
TFF_ROUND = "simple_fedavg_tff.py (FedAvg.run_one_round and its computations)"

SETUP = SetupCard(
    rows=(
        SetupRow(
            "data",
            paper=("Federated EMNIST, its training set modified 'by removing some images from "
                   "some clients' into three unbalanced training sets (the procedure with "
                   "s ∈ (0, 1), a < b, footnote 6; their distributions in Figure 2); validation "
                   "on 'the unchanged EMNIST validation set, which consists of 40,832 images'"),
            paper_where=f"{WHERE}, Section 5.2 (line 363) and Figure 2",
            code=("EMNIST digits only (10 classes); the cooked sets cookup_train_1/2/3.h5: "
                  "'~10% clients hold ~82% data', '~20% clients hold ~90% data', '~50% "
                  "clients hold ~98% data'"),
            code_where=(f"{EMNIST_MAIN} (only_digits=True, dataset_filename); "
                        "dataset/readme.txt"),
            run=("scikit-learn's load_digits (1,797 8x8 images, 10 classes), a 20% stratified "
                 "validation hold-out (360 images), features standardised plus a bias; the "
                 "1,438 training images split over 32 clients by Dirichlet(0.5) label "
                 "proportions, then the Section 5.2 procedure with s = 0.5, a = 2, "
                 "b = ⌈1.5 × mean size⌉ = 68: for seed 0, 19 clients remain, 4 of 72-81 images "
                 "and 15 of 2; the largest 20% hold 91% of the data (87-93% for seeds 0-4)"),
            deviation=("no offline (F)EMNIST (nothing is downloaded at run time; the cooked sets "
                       "are on Harvard Dataverse): load_digits is the image set that ships "
                       "with scikit-learn. The paper gives the procedure but not s, a, b "
                       "(Figure 2 only shows the result); a = 2 reproduces the concentration "
                       "the authors' readme gives for Dataset 2 (~20% of clients hold ~90% of "
                       "the data)")),
        SetupRow(
            "model",
            paper="'We use the same CNN model as the one used in (McMahan et al., 2017)'",
            paper_where=f"{WHERE}, Section 5.2 (line 363)",
            code=("two 5x5 conv layers (32, 64 filters) with 2x2 max-pooling, dense 512, "
                  "softmax over 10 classes; sparse categorical cross-entropy"),
            code_where=f"{EMNIST_MAIN}: create_original_fedavg_cnn_model",
            run=("multinomial logistic regression (d = 650), ℓ2 λ = 1e-3, data-size weights "
                 "w_i = s_i / Σ_j s_j"),
            deviation=("the CNN is for 28x28 images; a convex model on digits keeps a run "
                       "within seconds and makes f* computable (Newton), so the loss is "
                       "measured as a suboptimality f(x^k) - f*")),
        SetupRow(
            "clients",
            paper="'In each communication round, n = 32 clients are sampled uniformly from "
                  "the client pool'",
            paper_where=f"{WHERE}, Section 5.2 (line 363); Appendix F.1 (line 848)",
            code=("train_clients_per_round = 32; per round np.random.choice(len(clients), "
                  "size=32, replace=False) from the ~3,400 writers"),
            code_where=f"{EMNIST_MAIN}: flags and main()",
            run="the whole federation every round: 19 clients for seed 0 (m/n = 3/19)",
            deviation=("1,438 training images cannot populate a pool from which 32 clients of "
                       "several local steps each are drawn every round: the federation is the "
                       "pool, every client available each round (m/n = 16% instead of "
                       "3/32 = 9%)")),
        SetupRow(
            "rounds",
            paper="'For each experiment, we run 151 communication rounds'",
            paper_where=f"{WHERE}, Appendix F.1 (line 848)",
            code="total_rounds = 151", code_where=f"{EMNIST_MAIN}: flags",
            run={"quick": "30", "full": "151"},
            deviation={"quick": "the quick preset's budget (about 20 CPU-seconds for the "
                                "claim)"}),
        SetupRow(
            "local steps",
            paper="'performs SGD for 1 epoch on its local training images with batch size 20'",
            paper_where=f"{WHERE}, Appendix F.1 (line 848)",
            code="client_epochs_per_round = 1, batch_size = 20 (shuffled, last batch partial)",
            code_where=f"{EMNIST_MAIN}: flags, preprocess_train_dataset",
            run=("1 epoch of batches of 20 on a fresh permutation per client and round: 4 "
                 "steps for the clients of 72-81 images, 1 for the others")),
        SetupRow(
            "participation",
            paper=("full participation; 'participating clients are sampled uniformly'; optimal "
                   "sampling, FedAvg 'with Algorithm 2'; 'the expected number of clients "
                   "allowed to communicate their updates back to the master is set to "
                   "m ∈ {3, 6}'; j_max = 4; 'the same random seed for all three methods in a "
                   "single run'"),
            paper_where=(f"{WHERE}, Section 5.1 (lines 337-339, footnote 4), Section 5.2 "
                         "(line 363)"),
            code=("expected_clients_per_round = 3; uniform p_i = m/n; optimal: p_i = min(1, "
                  "m u_i / Σ u_j) with u_i = ||Δ_i|| × (examples of i), then Algorithm 2's "
                  "rescaling for up to j_max = 4 iterations; client i sends iff a uniform is "
                  "below p_i, weight 1/p_i; the server averages Δ_i 1_i / p_i with weights "
                  "proportional to the examples"),
            code_where=f"{CODE} {TFF_ROUND}; {EMNIST_MAIN}: flags",
            run=("independent sampling: full p_i = 1; uniform p_i = m/n; OCS eq. (7) on "
                 "||w_i U_i|| (Algorithm 1); AOCS Algorithm 2 with j_max = 4; m = 3; the "
                 "server step x - Σ_{i sent} (w_i/p_i) U_i; common random numbers: every scheme "
                 "uses the same mini-batch permutations and the same uniforms V_i (client i "
                 "sends iff V_i < p_i)"),
            deviation=("m = 3 only: m = 6 of 19 clients would be a participation of 32% "
                       "(the paper's 6 of 32 is 19%), m = 3 keeps the paper's regime; OCS "
                       "(Algorithm 1) is run beside AOCS, as the paper's footnote 4 did")),
        SetupRow(
            "hyper-parameters",
            paper=("'we set η_g = 1 and tune η_l from the set of value {2^-1, ..., 2^-5}. If "
                   "the optimal step size hits a boundary value, then we try one more step "
                   "size by extending that boundary'; full and optimal sampling: 2^-3, "
                   "uniform: 2^-5 (Dataset 1), 2^-4 (Datasets 2, 3); 'we set j_max = 4'"),
            paper_where=f"{WHERE}, Appendix F.1 (line 848)",
            code=("server_learning_rate = 1.0; client_learning_rate (flag, 0.1 by default, set "
                  "per run); j_max_iter_greedy_alg = 4"),
            code_where=f"{EMNIST_MAIN}: flags",
            run=("η_g = 1; η_l tuned by the paper's procedure (fedtheory.experiments.ocs_fedavg."
                 "tune_local_lr: the grid {2^-1, ..., 2^-5} extended at a boundary; score the "
                 "mean hold-out accuracy over 151 rounds, 16 tuning replicas on their own "
                 "stream, seed-0 federation): full 2^2, uniform 2^0, OCS and AOCS 2^1; "
                 "j_max = 4; x^0 = 0; iterates and local training in float32 (the engine's dtype; "
                 "probabilities and metrics in float64)"),
            deviation=("the steps are this model's (larger than the CNN's), found by the "
                       "paper's procedure; the paper's full and optimal sampling share a step, "
                       "4x uniform's, here full's is 2x OCS's and OCS's 2x uniform's (the "
                       "neighbouring steps score within 0.0005-0.002 accuracy: near-ties); "
                       "'tuned on a holdout set' does not say the "
                       "score: the mean hold-out accuracy over the rounds; tuned once on the "
                       "seed-0 federation (the paper tunes once per data set)")),
        SetupRow(
            "metric",
            paper=("'validation accuracy and (local) training loss as a function of the number "
                   "of communication rounds and the number of bits communicated from clients to "
                   "the master'; 'the mean performance with standard deviation over 5 "
                   "independent runs'"),
            paper_where=f"{WHERE}, Section 5.1 (line 339); Appendix F.1 (line 848)",
            code=("training loss: the examples-weighted mean of the 32 clients' mini-batch "
                  "losses during the round; validation accuracy every 5 rounds"),
            code_where=f"{CODE} simple_fedavg_tf.py client_update; {EMNIST_MAIN}: main()",
            run={"quick": ("per replica and round: hold-out accuracy and f(x^k) - f* (the "
                           "global objective); bits client -> master at 32 per float (an "
                           "update d = 650 floats, OCS one more per client, AOCS two more per "
                           "client and iteration of Algorithm 2); summarised per replica as "
                           "the mean over rounds (per round) or over 64 bit budgets up to the "
                           "largest every partial scheme reached (per bit) of log(f - f*) and "
                           "of accuracy; 60 paired replicas"),
                 "full": ("as in quick (accuracy and f(x^k) - f* every round, bits, areas per "
                          "round and per bit); 100 paired replicas")},
            deviation=("f(x^k) - f* instead of the clients' local training loss: the quantity "
                       "the theory bounds, measured at the model the server holds; accuracy "
                       "every round (not every 5); many paired replicas instead of 5 runs, for "
                       "tests with stated power")),
        SetupRow(
            "threshold",
            paper=("'the performance of FedAvg with our proposed optimal client sampling "
                   "strategy is in between that with full and uniform partial participation'; "
                   "'significantly better than both the uniform sampling and full "
                   "participation strategies when we compare validation accuracy as a function "
                   "of the number of bits'; e.g. OCS 'reached around 85% validation accuracy "
                   "after 2^6 × 10^8 communicated bits'"),
            paper_where=f"{WHERE}, Section 5.4 (lines 371 and 375)",
            run=("paired t-tests at alpha = 1e-6 each (compare_paired): 'better' with margins "
                 "log(1.1) on the log-loss area and 1 accuracy point; full 'not worse' than "
                 "OCS with the same margins; AOCS 'equivalent' to OCS (TOST) within log(1.01) "
                 "and 0.1 point; no accuracy level (85% is FEMNIST's with the CNN); each "
                 "'better' graded by the margin (fedtheory.claimkit.headroom: better by the "
                 "margin, below it (consistent, low power), a tie, or not testable) with its "
                 "headroom, how far the best scheme of the run on that metric (full "
                 "participation per round) is from B"),
            deviation=("the paper shows mean ± sd bands of 5 runs and states no test or "
                       "margin: the margins are ours (derivation)")),
        SetupRow(
            "sweep (Section 5.4)",
            paper=("Shakespeare, 715 clients (unchanged sizes), GRU; n ∈ {32, 128}, "
                   "m ∈ {2, 4, 6, 12}: 'm = 6 and m = 12 match the performances of full "
                   "participation in the cases n = 32 and n = 128 ... We therefore conjecture "
                   "that m = O(√n) is sufficient'"),
            paper_where=f"{WHERE}, Section 5.3 (line 367), Section 5.4 (line 373)",
            code="shakespeare_fedavg_main.py: train_clients_per_round 32, batch 8, 151 rounds",
            code_where=f"{CODE} shakespeare_fedavg_main.py: flags",
            run={"quick": ("load_digits split by Dirichlet(0.5) into exactly n clients "
                           "(natural sizes, no removal), n ∈ {8, 16, 32}; m ∈ {1, 2, 3, 4} ∪ "
                           "{⌈c√n⌉}, c = 6/√32; 30 rounds, 30 paired replicas; η_l = 2^0 for "
                           "full, 2^-1 for OCS (tuned likewise on the 32-client split with "
                           "m = 6); "
                           "'matches': OCS(m) non-inferior to full within 1 accuracy point "
                           "(hold-out accuracy over the last 20% of rounds)"),
                 "full": ("as in quick with n ∈ {8, 16, 32, 64, 128}, m ∈ {1, 2, 3, 4, 6, 8, "
                          "12, 16, 24, 32} ∪ {⌈c√n⌉}, 100 rounds, 60 paired replicas")},
            deviation=("no offline Shakespeare (nor the GRU): digits split into n natural "
                       "clients (11 images each at n = 128); shorter runs than 151 rounds; "
                       "'match' read as non-inferiority within 1 accuracy point, the paper "
                       "gives no tolerance")),
    ),
    code_url=f"https://{CODE} (commit {CODE_COMMIT[:7]})",
    sensitivity=(),
    notes=("The authors' TFF code samples 32 clients per round from the pool and runs AOCS "
           "(Algorithm 2) as 'optimal sampling'; its aggregation is the examples-weighted mean "
           "over the 32 sampled clients of Δ_i 1_i/p_i, which is this run's "
           "Σ_{i sent} (w_i/p_i) U_i with w_i the data-size weights of the clients available "
           "that round. The previous set-up of this claim (a = ⌈mean/4⌉, the largest 20% of "
           "clients holding 62% of the data; one step η_l = 1 for every scheme) gave the "
           "same verdict."),
)

CLAIM = Claim(
    datasets=EXPERIMENT,
    id="ocs.experiment",
    family="ocs",
    seed_ref="002, Section 5 (5.1, 5.2, 5.4, footnote 4), Appendix F",
    title="FedAvg + OCS/AOCS(m): between full and uniform(m) per round, best per bit; "
          "AOCS = OCS; m = O(sqrt n) matches full",
    statement=(
        r"\text{FedAvg (Alg. 3), unbalanced data: } \mathcal L_{\rm full}(k) \le "
        r"\mathcal L_{\rm OCS(m)}(k) \le \mathcal L_{\rm unif(m)}(k) \text{ per round } k;\ "
        r"\mathcal L_{\rm OCS/AOCS(m)}(b) < \mathcal L_{\rm unif(m)}(b),\ "
        r"\mathcal L_{\rm full}(b) \text{ per bit budget } b;\ "
        r"\text{AOCS} \equiv \text{OCS};\ "
        r"m = O(\sqrt n) \text{ suffices for OCS(m) to match full participation's accuracy}"
    ),
    kind=ClaimKind.QUALITATIVE,
    contract=(
        "FedAvg with full, uniform (m) and optimal/AOCS (m) participation on an unbalanced "
        "federated data set (built the way Section 5.2 unbalances FEMNIST, from a data set that "
        "ships with a package): accuracy and loss against rounds and against bits sent "
        "client→master; and the conjecture that m = O(√n) matches full participation."
    ),
    expected="confirmed",
    setup=SETUP,
    restatement=(
        "The figures' statements are tested on paired replicas: 'in between' per round as OCS "
        "better than uniform and full not worse than OCS (areas of log(f - f*) and of accuracy "
        "over the rounds); 'better per bit' likewise on the areas against bits; 'identical' "
        "(footnote 4) as equivalence within stated margins; 'm = O(√n) suffices' in the "
        "quantitative form with the document's own constant c = 6/√32 (m = 6 at n = 32), since no "
        "finite sweep can prove an O(·)."),
    derivation=r"""
Set-up (`fedtheory.experiments.ocs_fedavg`; the set-up card lists every aspect against the
paper and the authors' code). Data: `load_digits`, 20% validation hold-out, features
standardised plus a bias; Dirichlet(0.5) label split into 32 clients, then the Section 5.2
unbalancing with $s = 0.5$, $a = 2$, $b = \lceil 1.5\,\text{mean size}\rceil = 68$ (medium
clients removed or cut to $a$ examples): for seed 0, 19 clients, 4 of 72–81 images and 15 of 2;
the largest 20% of the clients hold 91% of the data, the concentration the authors give for their
FEMNIST Dataset 2. Model: multinomial logistic regression, $\lambda = 10^{-3}$, data-size
weights $w_i = s_i/\sum_j s_j$. FedAvg as Algorithm 3: one local epoch of SGD (batch 20),
$\eta_g = 1$, $x^0 = 0$, $m = 3$, $j_{\max} = 4$. Local steps tuned per scheme by the document's
procedure (Appendix F.1: the grid $\{2^{-1}, \dots, 2^{-5}\}$ extended at a boundary until the
best step is interior; `tune_local_lr`, score the mean hold-out accuracy over 151 rounds, 16
replicas on their own stream): full $2^2$, uniform $2^0$, OCS and AOCS $2^1$ (the paper's full and
optimal sampling share a step larger than uniform's; here optimal sampling's is between the two; the
neighbouring steps score within 0.0005-0.002 accuracy of these, near-ties). Uniform sampling is
independent with $p_i = m/n$; OCS uses eq. (7) on $\|w_i U_i\|$; AOCS Algorithm 2. All schemes share
the mini-batch permutations and the uniforms deciding participation (common random numbers; the
seed: "the same random seed for all three methods in a single run"), so every comparison is paired
over replicas. Bits client → master: 32 per float, an update $d = 650$ floats, OCS one float more
per client and round, AOCS two more per client and executed iteration of Algorithm 2. The loss is
the suboptimality $f(x^k) - f^\star$ of the global objective (the seed plots the clients' "(local)
training loss"); accuracy is on the hold-out. Quick preset: 30 rounds, 60 replicas; full: 151 rounds
(Appendix F.1), 100 replicas.

Tests: paired Student-$t$ comparisons (`fedtheory.claimkit.checks.compare_paired`) at
$\alpha = 10^{-6}$ each, a check's level the sum over its comparisons (`all_of`). Per replica
two summaries of each curve: the mean over rounds (or over 64 bit budgets evenly spread up to
the largest budget every partial scheme reached, a scheme's value at budget $b$ being that of
its last round within $b$) of $\log(f - f^\star)$ and of the accuracy. The log is taken because
uniform sampling's loss curves have rare large spikes (a big client drawn with weight
$w_i n/m$); the log areas are close to normal.

* "In between full and uniform per round" (Section 5.4: "in between that with full and uniform
  partial participation", OCS "slightly worse than ... full"): OCS better than uniform
  (one-sided, "better") and full not worse than OCS (non-inferiority), on both summaries (4
  tests). Margins: $\log 1.1$ on the log-loss area (a 10% lower geometric-mean suboptimality)
  and 1 accuracy point: the smallest advantage called an improvement (our choice: the paper
  gives none; both are at or below the run-to-run spread of one run here, the per-replica
  standard deviation of OCS's areas being 0.22 and 1.1 points in the quick preset, so a
  smaller advantage could not show in a figure of a few runs); "better" is refuted when the
  advantage is shown to be below the margin, "not worse" when OCS is shown better than full
  by more than it.
* "Better per bit" (Section 5.4: "significantly better than both the uniform sampling and full
  participation strategies when we compare validation accuracy as a function of the number of
  bits"): OCS and AOCS each better than uniform and than full on both per-bit summaries (8
  tests), the same margins.
* "AOCS = OCS" (footnote 4: "their results are identical"): equivalence (TOST) of the per-round
  summaries within a tenth of the margins, $\log 1.01$ and 0.1 accuracy point (2 tests). How
  often Algorithm 2's $p$ equals eq. (7) on the same norms, and the per-bit difference (AOCS's
  extra floats), are reported.
* "$m = O(\sqrt n)$ suffices" (Section 5.4; read off Shakespeare, $n = 32$ needing $m = 6$ and
  $n = 128$ needing $m = 12$): for each $n$ of the sweep (Dirichlet(0.5) split into exactly $n$
  clients, natural sizes, no removal, as the Shakespeare data; $\eta_l = 2^0$ for full and
  $2^{-1}$ for OCS, as tuned likewise on the 32-client split with $m = 6$), OCS($m$)
  "matches" full participation when it is non-inferior within 1 accuracy point (hold-out
  accuracy over the last 20% of rounds, paired); $m^\star(n)$ is the smallest matching $m$ of
  the grid (every $m$ of $\{1, 2, 3, 4, 6, 8, 12\}$ up to the budget, and the budget). An
  $O(\cdot)$ statement cannot be proved by finitely many $n$, so the test is its quantitative
  form with the document's own constant $c = 6/\sqrt{32}$: confirmed if
  $m^\star(n) \le \lceil c\sqrt n\rceil$ for every $n$ tried; refuted if for some $n$
  OCS($\lceil c\sqrt n\rceil$) is worse than full by more than the tolerance; inconclusive
  otherwise. One test per $(n, m)$, level the sum (quick 13 tests, full 27). The log-log slope of
  $m^\star(n)$ is reported.

Measured (seed 0). Quick: per round OCS gains 1.99 over uniform on the log-loss area (limits
[1.59, 2.40], detectable effect 0.47) and 9.4 accuracy points ([6.5, 12.4], detectable 3.4);
full is ahead of OCS by 0.44 (log) and 0.7 point, within the margins' sense of "not worse".
Per bit OCS gains 1.92 (log) and 9.8 points over uniform, 2.05 and 20.9 points over full; AOCS
alike. AOCS's probabilities equal eq. (7) in every round (1800 of 1800); its per-round results
are bitwise OCS's. Sweep: $m^\star = 2, 3, 6$ for $n = 8, 16, 32$ against budgets 3, 5, 6.
Full: per round OCS gains 1.49 over uniform (log; [1.20, 1.79], detectable 0.34) and 2.5 points
([1.7, 3.2], detectable 0.85); full ahead of OCS by 0.30 (log) and 0.36 point. Per bit OCS gains
1.50 (log) and 2.5 points over uniform, 1.66 and 4.9 points over full. AOCS = eq. (7) in 15100 of
15100 rounds. Sweep: $m^\star = 1, 1, 2, 3, 3$ for $n = 8, \dots, 128$ against budgets 3, 5, 6,
9, 12 (slope 0.48). CPU time (one core): quick 27 s, full 310 s (the sweep most of it).

Power of the $\sqrt n$ check (the constant is $m(32) = 6$, $c = m(32)/\sqrt{32}$; a referee's
mutant would scale it by 0.7). In the full preset $0.7c$ and $0.4c$ hold as well ($m^\star(n)$
against $\lceil 0.4c\sqrt n\rceil = 2, 2, 3, 4, 5$): true statements on this data; OCS on
`load_digits` needs fewer clients than on Shakespeare, where the seed read off its constant, and
the gap to full participation exceeds the tolerance only at $m = 1$, so the check can refute
constants up to about $0.08c$ (full) or $0.17c$ (quick) only. In the quick preset (30 rounds,
30 replicas) the data supports $1.0c$ and leaves $0.7c$ undecided. The check reports both
numbers (the smallest constant the data supports, $\max_n m^\star(n)/\sqrt n$, and the largest
it could refute) and the outcome for $0.7c$ and $0.4c$ (in its data: `power`). The constant is
therefore not declared as a stated constant for `--power`: its mutant $0.7c$ would be
confirmed (full) or undecided (quick), never refuted, so "missed" by construction; the check's
own report is the evidence instead.
""",
)


@CLAIM.check("monte_carlo", "between_per_round")
def _between_per_round(ctx: Context) -> Evidence:
    """Per round, OCS(m) is better than uniform(m) and full participation is not worse than
    OCS(m): paired one-sided t-tests on the per-round areas of log(f - f*) and accuracy."""
    return _checks.between_per_round(ctx)


@CLAIM.check("monte_carlo", "best_per_bit")
def _best_per_bit(ctx: Context) -> Evidence:
    """Per bit sent client -> master, OCS(m) and AOCS(m) are better than uniform(m) and than
    full participation: paired one-sided t-tests on the areas under accuracy and log(f - f*)
    against bits."""
    return _checks.best_per_bit(ctx)


@CLAIM.check("monte_carlo", "aocs_matches_ocs")
def _aocs_matches_ocs(ctx: Context) -> Evidence:
    """AOCS's results equal OCS's (footnote 4): paired equivalence tests (TOST) of the
    per-round areas; how often Algorithm 2 gave eq. (7)'s probabilities is reported."""
    return _checks.aocs_matches_ocs(ctx)


@CLAIM.check("monte_carlo", "sqrt_n_conjecture")
def _sqrt_n_conjecture(ctx: Context) -> Evidence:
    """For several n, the smallest m at which OCS(m) matches full participation, vs c sqrt n."""
    return _checks.sqrt_n_conjecture(ctx)


@CLAIM.check("figure", "ocs_vs_uniform_figure")
def _figure_curves(ctx: Context) -> Evidence:
    """Accuracy and loss against rounds and against bits, bands over replicas."""
    return _checks.figure_curves(ctx)


@CLAIM.check("figure", "sqrt_n_figure")
def _figure_sqrt_n(ctx: Context) -> Evidence:
    """Accuracy gap to full participation against m for several n, and m*(n) against n."""
    return _checks.figure_sqrt_n(ctx)

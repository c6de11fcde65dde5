"""The lecture's two experiments (seed 003: the heterogeneity ablation, the SCAFFOLD table):
their splits, their runs on the engine, and the titles that say what the rate-structure claims
test."""

from __future__ import annotations

import numpy as np
import pytest

from fedtheory.claims import get_claim
from fedtheory.experiments import fedavg_lecture_tables as lt
from fedtheory.problems.clustered import digits_images


@pytest.fixture(scope="module")
def labels() -> np.ndarray:
    return np.asarray(digits_images()[1])


def test_similarity_split_sorts_the_non_iid_part(labels):
    rng = np.random.default_rng(0)
    for s in lt.SIMILARITIES:
        parts = lt.similarity_split(labels, lt.CLIENTS, s, rng)
        assert sorted(np.concatenate(parts).tolist()) == list(range(labels.size))
        assert max(len(p) for p in parts) - min(len(p) for p in parts) <= 2
        n_labels = [len(set(labels[p].tolist())) for p in parts]
        if s == 0.0:  # sorted: one or two labels per client
            assert max(n_labels) <= 2
        if s == 1.0:  # i.i.d.: every client sees (nearly) every label
            assert min(n_labels) >= 8
    with pytest.raises(ValueError, match="similarity"):
        lt.similarity_split(labels, 4, 1.5, rng)


def test_heterogeneity_split_partitions(labels):
    for alpha in lt.ALPHAS:
        parts = lt.heterogeneity_split(labels, lt.CLIENTS, alpha, np.random.default_rng(1))
        assert len(parts) == lt.CLIENTS and min(len(p) for p in parts) >= 2
        assert sorted(np.concatenate(parts).tolist()) == list(range(labels.size))


def test_table_run_is_paired_and_cut_into_replicas_bitwise():
    """Every method sees the same seeds' splits; a run over seeds 0-1 has seed 1's curves of a
    run over seed 1 alone (tasks can be cut anywhere)."""
    kw = {"similarity": 0.0, "preset": "quick", "entropy": (7,), "rounds": 3}
    both = lt.table_run(first=0, count=2, **kw)
    one = lt.table_run(first=1, count=1, **kw)
    assert set(both["acc"]) == {(m, e) for m, _, e in lt.METHODS}
    for key, acc in both["acc"].items():
        assert acc.shape == (4, 2)
        np.testing.assert_array_equal(acc[:, 1:], one["acc"][key])
        assert np.all(acc[0] == acc[0, 0])  # every seed starts from x = 0


def test_ablation_run_and_combine():
    kw = {"preset": "quick", "entropy": (3,), "first": 0, "count": 2, "rounds": 2}
    results = [lt.ablation_run(alpha=a, **kw) for a in lt.ALPHAS]
    data = lt.ablation_combine("quick", results)
    assert data["levels"] == ["alpha=0.1", "alpha=0.5", "alpha=2.5", "homog"]
    assert all(a.shape == (3, 2) for a in data["acc"].values())
    assert 0.9 < data["ceiling"] < 1.0
    with pytest.raises(ValueError, match="pieces per level"):
        lt.ablation_combine("quick", results[:3])


@pytest.mark.parametrize("claim_id", ["fedavg.heterogeneity", "fedavg.partial_participation",
                                      "fedavg.local_steps"])
def test_rate_structure_claims_say_what_they_test(claim_id):
    claim = get_claim(claim_id)
    assert claim.title.startswith("Rate structure on quadratics")
    assert "not" in claim.restatement and "quadratics" in claim.restatement


@pytest.mark.parametrize("claim_id", ["fedavg.heterogeneity_ablation", "fedavg.scaffold_table"])
def test_the_lecture_experiments_have_full_cards(claim_id):
    claim = get_claim(claim_id)
    assert claim.setup is not None and not claim.setup.missing()
    for preset in ("quick", "full"):
        card = claim.setup.to_dict(preset)
        assert all(r["run"] for r in card["rows"])
        assert all(r["paper_where"] for r in card["rows"])
    assert "lecture" in claim.title


def test_tuned_steps_cover_every_cell():
    assert set(lt.TABLE_LR) == {(s, m, e) for s in lt.SIMILARITIES for m, _, e in lt.METHODS}
    assert all(v in lt.TABLE["tuning"]["grid"] for v in lt.TABLE_LR.values())


def test_the_figures_draw_from_their_checks_data():
    from fedtheory.plotting.figures import PLOTTERS, plt

    c = np.linspace(0.5, 0.95, 11)
    fig = PLOTTERS["fedavg.ablation"](curves={"alpha=0.1": c, "homog": c + 0.01},
                                      budgets=[2, 5, 10],
                                      half_widths={"alpha=0.1": [0.01] * 3, "homog": [0.01] * 3},
                                      ceiling=0.97, seeds=4)
    assert fig.axes[0].get_legend() is not None
    plt.close(fig)
    fig = PLOTTERS["fedavg.scaffold_table"](curves={"0 % similarity": {"SGD E=1": c},
                                                    "100 % similarity": {"SGD E=1": c}},
                                            target=0.9, ceiling=0.97, seeds=4)
    assert len(fig.axes) == 2
    plt.close(fig)

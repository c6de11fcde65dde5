"""FedAvg's test accuracy per round for Dirichlet label splits (alpha 0.1, 0.5, 2.5) and a
homogeneous split, on digits (seed 003, line 153: the lecture's Table 2, Mendieta et al. 2022).

The claim ``fedavg.heterogeneity_ablation`` is verified (all its checks, on the preset's data)
and its figure drawn with its verdict in the heading; the per-check outcomes are printed.

Usage: python paper_figures/fedavg_heterogeneity_ablation.py [--quick] [--out DIR] [--seed S]
"""

from __future__ import annotations

import sys

from fedtheory.claims import get_claim
from fedtheory.plotting import figure_script_args
from fedtheory.plotting.figures import draw_result


def main(argv: list[str] | None = None) -> int:
    args = figure_script_args(__doc__, argv)
    preset = "quick" if args.quick else "full"
    res = get_claim("fedavg.heterogeneity_ablation").verify(preset=preset, seed=args.seed)
    paths = draw_result(res, args.out)
    print(f"{res.id}: {res.verdict.value}")
    for c in res.checks:
        print(f"  {c.name}: {c.passed} {c.undecided or ''}")
    print("\n".join(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())

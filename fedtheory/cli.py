"""The ``fedtheory`` command line: ``list``, ``show`` and ``verify``."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from fedtheory.claims.core import ClaimResult, Verdict
from fedtheory.claims.registry import get_claim, select
from fedtheory.report import (
    load_last_results,
    save_last_results,
    verdict_table,
    write_json,
    write_markdown,
)

__all__ = ["main"]


def _one_line(text: str, width: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def cmd_list(args: argparse.Namespace) -> int:
    claims = select(family=args.family)
    rows = [(c.id, c.seed_ref, c.kind.value, _one_line(c.title)) for c in claims]
    w = [max(len(r[i]) for r in rows) if rows else 0 for i in range(3)]
    for r in rows:
        print(f"{r[0].ljust(w[0])}  {r[1].ljust(w[1])}  {r[2].ljust(w[2])}  {r[3]}")
    print(f"\n{len(rows)} claims")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    c = get_claim(args.id)
    print(f"{c.id}  ({c.family}; seed {c.seed_ref}; {c.kind.value})\n")
    print(textwrap.fill(c.title, 100) + "\n")
    print("Statement (LaTeX):\n" + textwrap.indent(c.statement.strip(), "    ") + "\n")
    if c.derivation:
        print("How it is derived and checked:\n" + textwrap.indent(c.derivation.strip(), "    "))
        print()
    print("Checks:")
    for chk in c.checks:
        extra = " (full preset only)" if chk.full_only else ""
        print(f"  - {chk.name} [{chk.kind}]{extra}: {_one_line(chk.description, 90)}")
    last = load_last_results().get(c.id)
    print()
    if last is None:
        print(f"No verdict yet: run `fedtheory verify {c.id}`.")
        return 0
    print(f"Last verdict: {last['verdict']} (preset {last.get('preset')}, seed {last.get('seed')})")
    for chk in last.get("checks", []):
        print(f"  - {chk['name']} [{chk['kind']}] passed={chk['passed']}: {chk['detail']}")
    if last.get("counterexample"):
        print(f"  counterexample: {last['counterexample']}")
    return 0


def _init_worker() -> None:
    """One BLAS thread per worker process, so that workers do not oversubscribe the cores."""
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        pass


def _verify_one(job: tuple[str, str, int, str | None]) -> ClaimResult:
    claim_id, preset, seed, fig_dir = job
    return get_claim(claim_id).verify(preset=preset, seed=seed, figure_dir=fig_dir)


def cmd_verify(args: argparse.Namespace) -> int:
    claims = select(args.ids, family=args.family)
    if not claims:
        print("no claims selected", file=sys.stderr)
        return 2
    preset = "quick" if args.quick else "full"
    fig_dir = str(Path(args.report) / "figures") if args.report else None
    jobs = [(c.id, preset, args.seed, fig_dir) for c in claims]
    results: list[ClaimResult] = []
    from tqdm import tqdm

    bar = tqdm(total=len(jobs), desc="verifying", unit="claim", file=sys.stderr,
               disable=args.no_progress)
    if args.jobs > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=args.jobs, initializer=_init_worker) as pool:
            for res in pool.map(_verify_one, jobs):
                results.append(res)
                bar.set_postfix_str(f"{res.id}: {res.verdict.value}")
                bar.update()
    else:
        for job in jobs:
            bar.set_postfix_str(job[0])
            res = _verify_one(job)
            results.append(res)
            bar.update()
    bar.close()
    print(verdict_table(results))
    for r in results:
        if r.verdict is Verdict.REFUTED:
            print(f"\n{r.id} refuted; counterexample: {_one_line(str(r.counterexample), 400)}")
        if r.verdict is Verdict.ERROR:
            for c in r.checks:
                if c.error:
                    print(f"\n{r.id}: check {c.name} errored: {c.detail}", file=sys.stderr)
    save_last_results(results)
    if args.json:
        print(f"\nJSON report: {write_json(args.json, results, args.seed, preset)}")
    if args.report:
        print(f"Markdown report: {write_markdown(args.report, results, args.seed, preset)}")
    return 1 if any(r.verdict is Verdict.ERROR for r in results) else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="fedtheory",
        description="Verify the theory of federated learning under partial participation.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    pl = sub.add_parser("list", help="list the registered claims")
    pl.add_argument("--family", help="only this family (is, ocs, mifa, fedavg, ...)")
    pl.set_defaults(func=cmd_list)
    ps = sub.add_parser("show", help="show one claim, its checks and its last verdict")
    ps.add_argument("id")
    ps.set_defaults(func=cmd_show)
    pv = sub.add_parser("verify", help="run the checks and print the verdicts")
    pv.add_argument("ids", nargs="*", help="claim ids (default: all)")
    pv.add_argument("--family", help="only this family")
    pv.add_argument("--quick", action="store_true", help="small sizes (seconds per claim)")
    pv.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    pv.add_argument("--json", metavar="PATH", help="write the JSON report here")
    pv.add_argument("--report", metavar="DIR", help="write report.md and figures into DIR")
    pv.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                    help="worker processes (default: min(2, cores))")
    pv.add_argument("--no-progress", action="store_true", help="no progress bar")
    pv.set_defaults(func=cmd_verify)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "seed", 0) is not None and getattr(args, "seed", 0) < 0:
        parser.error(f"--seed must be non-negative, got {args.seed}")
    if getattr(args, "jobs", 1) < 1:
        parser.error(f"--jobs must be >= 1, got {args.jobs}")
    try:
        return args.func(args)
    except ValueError as exc:
        print(f"fedtheory: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

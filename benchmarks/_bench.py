"""What the benchmarks share: repeated measurements, their medians, and the target lines.

Every benchmark measures each quantity ``--repeat`` times and reports the median (with the
range, min..max, so that a noisy machine shows). Each target gets one line::

    TARGET  OCS / np.sort, n = 10^6, m = n/2  <= 2.00   median 0.83 (7 runs, 0.79..0.95)  MET

and the run ends with a summary of its targets; the exit code is 1 when one is not met.

Timings are wall clock by default. ``--clock cpu`` uses this process's CPU time (all its
threads), which other users of a shared machine disturb far less; for single-threaded code the
two agree on a quiet machine. A ratio of two timings (the code against this machine's own raw
limit, e.g. ``np.sort`` or the raw generator) is measured in pairs, back to back, and its
median is taken over the pairs, so that a slow moment of the machine enters both sides.
"""

from __future__ import annotations

import argparse
import operator
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Targets", "add_timing_args", "load_average", "paired", "timed"]

_OPS = {"<=": operator.le, ">=": operator.ge}


def add_timing_args(ap: argparse.ArgumentParser, repeat: int = 7) -> None:
    """``--repeat K`` (runs per measurement) and ``--clock wall|cpu``."""
    ap.add_argument("--repeat", type=int, default=repeat,
                    help=f"runs per measurement, the median reported (default {repeat})")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall clock (default) or this process's CPU time (shared machines)")


def _now(clock: str) -> Callable[[], float]:
    if clock not in ("wall", "cpu"):
        raise ValueError(f"clock must be 'wall' or 'cpu', got {clock!r}")
    return time.perf_counter if clock == "wall" else time.process_time


def timed(fn: Callable[[], object], repeat: int, clock: str = "wall",
          warmup: bool = True) -> list[float]:
    """Seconds of ``repeat`` calls of ``fn`` (after one untimed call when ``warmup``)."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    now = _now(clock)
    if warmup:
        fn()
    out = []
    for _ in range(repeat):
        t = now()
        fn()
        out.append(now() - t)
    return out


def paired(fn_a: Callable[[], object], fn_b: Callable[[], object], repeat: int,
           clock: str = "wall") -> tuple[list[float], list[float]]:
    """Seconds of ``repeat`` pairs of calls, ``fn_a`` then ``fn_b`` back to back."""
    now = _now(clock)
    fn_a(), fn_b()  # warm-up
    ta, tb = [], []
    for _ in range(repeat):
        t = now()
        fn_a()
        ta.append(now() - t)
        t = now()
        fn_b()
        tb.append(now() - t)
    return ta, tb


def load_average() -> str:
    """The machine's load averages (1, 5, 15 minutes), where the OS tells them."""
    try:
        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except (AttributeError, OSError):
        return ""


@dataclass
class Targets:
    """The targets of one benchmark run, checked and printed as they are measured."""

    lines: list[str] = field(default_factory=list)
    met: list[bool] = field(default_factory=list)

    def check(self, what: str, values: Sequence[float] | float, op: str, goal: float,
              fmt: str = ".2f", unit: str = "") -> bool:
        """Print the target line for the median of ``values`` against ``op goal``."""
        if op not in _OPS:
            raise ValueError(f"op must be one of {sorted(_OPS)}, got {op!r}")
        vals = np.atleast_1d(np.asarray(values, dtype=float))
        med = float(np.median(vals))
        ok = bool(_OPS[op](med, goal))
        spread = (f"{len(vals)} runs, {vals.min():{fmt}}..{vals.max():{fmt}}" if vals.size > 1
                  else "1 run")
        line = (f"TARGET  {what}  {op} {goal:{fmt}}{unit}   median {med:{fmt}}{unit} "
                f"({spread})  {'MET' if ok else 'NOT MET'}")
        print(line, flush=True)
        self.lines.append(line)
        self.met.append(ok)
        return ok

    def summary(self) -> int:
        """Print every target line again; 0 if all are met, else 1 (the exit code)."""
        print(f"\n{sum(self.met)} of {len(self.met)} targets met ({load_average()}):")
        for line in self.lines:
            print("  " + line)
        return 0 if all(self.met) else 1

"""Problems by name, for the command line and ``simulate(problem="...")``.

>>> get_problem("quadratic", n=4, d=3).n
4
>>> get_problem("quadratc")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: unknown problem 'quadratc'; known: ...; closest matches: quadratic
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

import numpy as np

from fedtheory.problems.clustered import clustered_digits
from fedtheory.problems.logistic import make_logistic_problem
from fedtheory.problems.quadratic import QuadraticProblem

__all__ = ["PROBLEMS", "get_problem"]


def _quadratic(n: int = 10, d: int = 10, L: float = 1.0, mu: float = 0.1,
               sigma_G2: float = 1.0, seed: int = 0, **kw: Any) -> QuadraticProblem:
    return QuadraticProblem.heterogeneous(n, d, L, mu, sigma_G2, np.random.default_rng(seed), **kw)


PROBLEMS: dict[str, Callable[..., Any]] = {
    "quadratic": _quadratic,
    "logistic_digits": lambda **kw: make_logistic_problem("digits", **kw),
    "logistic_breast_cancer": lambda **kw: make_logistic_problem("breast_cancer", **kw),
    "clustered_digits": clustered_digits,
}


def get_problem(name: str, **params: Any) -> Any:
    """Build the problem registered under ``name`` with keyword parameters ``params``."""
    try:
        factory = PROBLEMS[name]
    except (KeyError, TypeError):
        close = difflib.get_close_matches(str(name), list(PROBLEMS), n=3, cutoff=0.5)
        hint = f"; closest matches: {', '.join(close)}" if close else ""
        raise ValueError(
            f"unknown problem {name!r}; known: {', '.join(PROBLEMS)}{hint}"
        ) from None
    return factory(**params)

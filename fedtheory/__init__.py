"""fedtheory: check the theory of federated learning under partial client participation.

Each statement of the seed documents is a registered :class:`~fedtheory.claims.Claim` with
symbolic (sympy), convex (cvxpy) and Monte Carlo evidence; ``fedtheory verify`` runs them.
"""

from fedtheory.claims import Claim, Evidence, Verdict, all_claims, get_claim, select

__version__ = "0.1.0"

__all__ = ["Claim", "Evidence", "Verdict", "__version__", "all_claims", "get_claim", "select"]

"""Family ``fdms``: client dropout and friend model substitution (seed 004)."""

from fedtheory.claims.family_packages import Family

#: The family's title, place and reading order (:mod:`fedtheory.claims.family_packages`).
FAMILY = Family(
    title="client dropout and friend model substitution",
    position=5,
    order=(
        "dropout_is_substitution", "naive_error", "friend_error",
        "nonfriend_probability", "discovery_error", "psi_bound", "complexity_reduction",
        "experiment",
    ),
)

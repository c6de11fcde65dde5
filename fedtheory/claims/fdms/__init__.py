"""Family ``fdms``: client dropout and friend model substitution (seed 004)."""

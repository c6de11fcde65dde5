"""Optimisation problems: heterogeneous quadratics, logistic regression on real data."""
